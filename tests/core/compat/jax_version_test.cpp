// JAX version parsing and the behaviour-change table.
#include "compat/jax_version.h"

#include <doctest/doctest.h>

#include "base/error.h"

using namespace shardscope;

TEST_CASE("versions parse in the forms people write them") {
  CHECK(JaxVersion::parse("0.4.26") == JaxVersion{0, 4, 26});
  CHECK(JaxVersion::parse("v0.6.1") == JaxVersion{0, 6, 1});
  CHECK(JaxVersion::parse("jax-v0.7.0") == JaxVersion{0, 7, 0});
  CHECK(JaxVersion::parse("0.5") == JaxVersion{0, 5, 0});
  CHECK(JaxVersion::parse("0.11.1.dev") == JaxVersion{0, 11, 1});
  CHECK_THROWS_WITH_AS((void)JaxVersion::parse("latest"), doctest::Contains("'latest'"), Error);
  CHECK_THROWS_AS((void)JaxVersion::parse("0.4.x"), Error);
}

TEST_CASE("features switch on at the release that introduced them") {
  CHECK(JaxProfile().has(JaxFeature::kShortPartitionSpecRepr));
  CHECK_FALSE(JaxProfile(JaxVersion{0, 9, 0}).has(JaxFeature::kShortPartitionSpecRepr));
  CHECK(JaxProfile(JaxVersion{0, 9, 1}).has(JaxFeature::kShortPartitionSpecRepr));
  CHECK_FALSE(JaxProfile(JaxVersion{0, 5, 2}).has(JaxFeature::kMeshStrShowsAxisTypes));
  CHECK(JaxProfile(JaxVersion{0, 5, 3}).has(JaxFeature::kMeshStrShowsAxisTypes));
}

TEST_CASE("the table is ordered oldest first and names every feature once") {
  const auto& table = jax_feature_changes();
  CHECK(table.size() == static_cast<std::size_t>(JaxFeature::kCount));
  for (std::size_t i = 1; i < table.size(); ++i) CHECK(table[i - 1].introduced_in <= table[i].introduced_in);
}
