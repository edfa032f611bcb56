// Sharded jax.random: recorded JAX values through the per-device path on meshes of 1 to 8 devices.
#include "random/sharded_random.h"

#include <doctest/doctest.h>

#include <array>
#include <charconv>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "device/presets.h"

using namespace shardscope;
using random::GenerationConfig;
using random::ThreefryMode;

namespace {

const JaxProfile kProfile;
const GenerationConfig kPartitionable{ThreefryMode::kPartitionable, random::FloatContraction::kFused};
const GenerationConfig kLegacy{ThreefryMode::kOriginal, random::FloatContraction::kFused};
const random::RandomOptions kLegacyHost{ThreefryMode::kOriginal, std::nullopt};

Mesh mesh_of(const std::vector<int64_t>& shape, const std::vector<std::string>& names) {
  return make_mesh(shape, names, make_device_preset("tpu-v3-8").devices, kProfile,
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

Sharding named(const Mesh& mesh, const std::string& spec) {
  return make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
}

struct MeshCase {
  std::vector<int64_t> mesh_shape;
  std::vector<std::string> names;
  std::string spec;  // for the arrays' leading dims
};

// Meshes of 1, 2, 2x2, 2x4 and 8 devices, each with specs sharding one or two dims or replicating.
std::vector<MeshCase> layouts() {
  return {
      {{1}, {"x"}, "P('x')"},
      {{2}, {"x"}, "P('x')"},
      {{2}, {"x"}, "P()"},
      {{2, 2}, {"x", "y"}, "P('x', 'y')"},
      {{2, 2}, {"x", "y"}, "P('y')"},
      {{2, 2}, {"x", "y"}, "P(None, ('x', 'y'))"},
      {{2, 4}, {"x", "y"}, "P('y', 'x')"},
      {{2, 4}, {"x", "y"}, "P(('x', 'y'))"},
      {{2, 4}, {"x", "y"}, "P(None, 'y')"},
      {{8}, {"x"}, "P('x')"},
      {{8}, {"x"}, "P(None, 'x')"},
  };
}

// Whether the spec fits an array of this shape (rank and divisibility); device_put would raise otherwise.
bool fits(const Sharding& sharding, const Shape& shape) {
  try {
    (void)shard_shape(sharding, shape, kProfile);
    check_rank_compatible(sharding, shape.size(), kProfile);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The gathered value equals `host` byte for byte, each device holds exactly its block, and replicas share
// one buffer.
void check_placed(const Array& array, const BufferPtr& host) {
  REQUIRE_FALSE(array.is_abstract());
  const BufferPtr gathered = array.gather();
  REQUIRE(gathered->nbytes() == host->nbytes());
  CHECK(std::memcmp(gathered->bytes().data(), host->bytes().data(), host->nbytes()) == 0);
  const Shape local = shard_shape(array.sharding(), array.shape(), kProfile);
  const auto expected_bytes = static_cast<int64_t>(product(local)) * static_cast<int64_t>(dtype_size(array.dtype()));
  std::set<std::vector<DimSlice>> blocks;
  for (const Array::Shard& shard : array.shards()) {
    CHECK(static_cast<int64_t>(shard.data->nbytes()) == expected_bytes);
    CHECK(shard.data->shape() == local);
    blocks.insert(shard.index);
  }
  for (const int64_t bytes : array.bytes_per_device()) CHECK(bytes == expected_bytes);
  CHECK(array.distinct_buffer_count() == blocks.size());
}

template <class T>
BufferPtr host(DType dtype, const Shape& shape, const std::vector<T>& values) {
  return make_buffer(dtype, shape, values);
}

Array key_on(const random::Key& k, const Mesh& mesh) { return random::key_array(k, named(mesh, "P()"), kProfile); }

// numpy's float32 element text (floatmode='maxprec', precision 8).
std::string numpy_str(float v) {
  std::array<char, 64> buf{};
  char* end = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed).ptr;
  std::string s(buf.data(), end);
  const std::size_t dot = s.find('.');
  if (dot != std::string::npos && s.size() - dot - 1 > 8) {
    end = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, 8).ptr;
    s.assign(buf.data(), end);
    while (s.back() == '0') s.pop_back();
  }
  if (s.find('.') == std::string::npos) s += '.';
  return s;
}

std::vector<std::string> tokens(std::string_view printed) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : printed) {
    if (c == '[' || c == ']' || c == ' ' || c == '\n') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

void check_printed(const Array& array, std::string_view printed, float offset_step = 0.0F) {
  const BufferPtr value = array.gather();
  const std::vector<std::string> expected = tokens(printed);
  REQUIRE(static_cast<std::size_t>(value->size()) == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(numpy_str(value->as<float>()[i] + offset_step * static_cast<float>(i)) == expected[i]);
  }
}

}  // namespace

TEST_CASE("A1: uniform(key(42), (24,)) in both modes, sharded on every mesh") {
  const char* legacy =
      "[ 0.72503686  1.8532515   2.983416    3.083253    4.0332246   5.4782867\n  6.1720605   7.6900277   8.602836    "
      "9.810046   10.861367   11.907651\n 12.330483   13.456195   14.808557   15.960099   16.067581   17.739723\n "
      "18.335474   19.46401    20.390276   21.116539   22.858128   23.223194  ]";
  const char* partitionable =
      "[ 0.48870957  1.6797972   2.6162715   3.561016    4.4506445   5.585866\n  6.0748096   7.775133    8.698959    "
      "9.818634   10.350306   11.87282\n 12.925881   13.86013    14.477554   15.818481   16.711355   17.586697\n "
      "18.073738   19.777622   20.404566   21.119123   22.026257   23.63918   ]";
  const Shape shape{24};
  for (const MeshCase& layout : layouts()) {
    const Mesh mesh = mesh_of(layout.mesh_shape, layout.names);
    const Sharding sharding = named(mesh, layout.spec);
    if (!fits(sharding, shape)) continue;
    CAPTURE(layout.spec);
    CAPTURE(mesh.size());
    const Array k = random::prng_key(42, named(mesh, "P()"), kProfile);
    for (const GenerationConfig& config : {kLegacy, kPartitionable}) {
      const Array u = random::uniform(k, shape, DType::kFloat32, 0.0, 1.0, sharding, kProfile, config);
      check_printed(u, config.mode == ThreefryMode::kOriginal ? legacy : partitionable, 1.0F);
      const random::RandomOptions options{config.mode, std::nullopt};
      check_placed(u,
                   host(DType::kFloat32, shape, random::uniform<float>(random::key(42), shape, 0.0F, 1.0F, options)));
    }
  }
}

TEST_CASE("A2-A4: legacy uniform(key(0)) arrays sharded over 2-D meshes") {
  struct Case {
    Shape shape;
    std::vector<std::size_t> picks;
    const char* printed;
  };
  std::vector<std::size_t> column;
  for (std::size_t r = 0; r < 64; r += 4) column.push_back(r * 512);
  const std::vector<Case> cases = {
      {{8, 512}, {0, 128, 256, 384}, "[0.9858954  0.11763906 0.9955574  0.775211  ]"},
      {{32, 128}, {0, 1024, 2048, 3072}, "[0.9858954  0.54248166 0.9547038  0.954962  ]"},
      {{64, 512},
       column,
       "[0.78051674 0.3524047  0.59993696 0.9714314  0.24692321 0.01347649\n 0.01857424 0.24841607 0.86097646 "
       "0.8261659  0.9753758  0.6902338\n 0.4431417  0.963323   0.3158517  0.535548  ]"},
  };
  for (const Case& c : cases) {
    const std::vector<float> whole = random::uniform<float>(random::key(0), c.shape, 0.0F, 1.0F, kLegacyHost);
    for (const MeshCase& layout : layouts()) {
      const Mesh mesh = mesh_of(layout.mesh_shape, layout.names);
      const Sharding sharding = named(mesh, layout.spec);
      if (!fits(sharding, c.shape)) continue;
      CAPTURE(layout.spec);
      const Array u = random::uniform(key_on(random::key(0), mesh), c.shape, DType::kFloat32, 0.0, 1.0, sharding,
                                      kProfile, kLegacy);
      check_placed(u, host(DType::kFloat32, c.shape, whole));
      const BufferPtr value = u.gather();
      const std::vector<std::string> expected = tokens(c.printed);
      for (std::size_t i = 0; i < c.picks.size(); ++i) CHECK(numpy_str(value->as<float>()[c.picks[i]]) == expected[i]);
    }
  }
}

TEST_CASE("A7: Flax rng guide normals (partitionable) sharded over meshes of 1, 2 and 2x2 devices") {
  // fold_in data are the sha1-derived hashes the guide's make_rng uses (see threefry_test.cpp).
  const Mesh one = mesh_of({1}, {"x"});
  const Mesh two = mesh_of({2}, {"x"});
  const Mesh four = mesh_of({2, 2}, {"x", "y"});
  for (const Sharding& sharding : {named(one, "P('x')"), named(two, "P('x')"), named(two, "P(None, 'x')"),
                                   named(four, "P('x', 'y')"), named(four, "P('y')")}) {
    const Mesh& mesh = std::get<NamedSharding>(sharding).mesh;
    const Array base = random::prng_key(0, named(mesh, "P()"), kProfile);
    const Array k = random::fold_in(base, 2998342421u, named(mesh, "P()"), kProfile);
    const Array n = random::normal(k, Shape{2, 2}, DType::kFloat32, sharding, kProfile, kPartitionable);
    check_printed(n, "[[-1.6185919   0.700908  ]\n [-1.3146383  -0.79342234]]");
    const Array k2 =
        random::fold_in(random::prng_key(1, named(mesh, "P()"), kProfile), 3213575472u, named(mesh, "P()"), kProfile);
    check_printed(random::normal(k2, Shape{2, 2}, DType::kFloat32, sharding, kProfile, kPartitionable),
                  "[[1.6249592  0.30813068]\n [1.6613585  1.0404155 ]]");
    check_placed(n, host(DType::kFloat32, {2, 2}, random::normal<float>(random::key_value(k, "normal"), Shape{2, 2})));
  }
}

TEST_CASE("A6: fold_in keys of the Flax rng guide, with the key's two words sharded") {
  const Mesh mesh = mesh_of({2}, {"x"});
  const std::array<uint32_t, 3> hashes = {3213575472u, 3303678395u, 2554499690u};
  const std::array<std::array<uint32_t, 2>, 3> expected = {
      {{1428664606u, 3351135085u}, {3456700291u, 3873160899u}, {2411773124u, 4124888837u}}};
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    const Array k =
        random::fold_in(random::prng_key(0, named(mesh, "P()"), kProfile), hashes[i], named(mesh, "P('x')"), kProfile);
    check_placed(k, host(DType::kUInt32, {2}, std::vector<uint32_t>{expected[i][0], expected[i][1]}));
  }
}

TEST_CASE("legacy split and bits of tests/random_test.py through the sharded path") {
  for (const MeshCase& layout : layouts()) {
    const Mesh mesh = mesh_of(layout.mesh_shape, layout.names);
    CAPTURE(layout.spec);
    // testPRNGValues: split(PRNGKey(0), 4), legacy.
    const Sharding keys_sharding = named(mesh, layout.spec);
    if (fits(keys_sharding, {4, 2})) {
      const Array keys =
          random::split(random::prng_key(0, named(mesh, "P()"), kProfile), Shape{4}, keys_sharding, kProfile, kLegacy);
      check_placed(keys, host(DType::kUInt32, {4, 2},
                              std::vector<uint32_t>{2285895361u, 1501764800u, 1518642379u, 4090693311u, 433833334u,
                                                    4221794875u, 839183663u, 3740430601u}));
    }
    // testRngRandomBits: bits(PRNGKey(1701), (3,)) is too short to shard; replicated over the mesh.
    const Array k1701 = random::prng_key(1701, named(mesh, "P()"), kProfile);
    const Array b32 = random::bits(k1701, Shape{3}, DType::kUInt32, named(mesh, "P()"), kProfile, kLegacy);
    check_placed(b32, host(DType::kUInt32, {3}, std::vector<uint32_t>{56197195u, 4200222568u, 961309823u}));
    const Array b8 = random::bits(k1701, Shape{3}, DType::kUInt8, named(mesh, "P()"), kProfile, kLegacy);
    check_placed(b8, host(DType::kUInt8, {3}, std::vector<uint8_t>{216, 115, 43}));
    // Legacy randint(PRNGKey(0), (3, 3), 0, 8).
    const Array r = random::randint(random::prng_key(0, named(mesh, "P()"), kProfile), Shape{3, 3}, 0, 8, DType::kInt32,
                                    named(mesh, "P()"), kProfile, kLegacy);
    check_placed(r, host(DType::kInt32, {3, 3}, std::vector<int32_t>{2, 1, 3, 6, 1, 5, 6, 3, 4}));
  }
}

TEST_CASE("B1 and B2: split chains feeding scalar and vector normals") {
  const Mesh mesh = mesh_of({2, 4}, {"x", "y"});
  const Sharding replicated = named(mesh, "P()");
  // Partitionable: new_key, subkey = split(key); normal(subkey).
  Array k = random::prng_key(43, replicated, kProfile);
  for (const double expected : {-1.9133632183074951, -1.4749839305877686, -0.36703771352767944}) {
    const Array pair = random::split(k, Shape{2}, named(mesh, "P('x')"), kProfile, kPartitionable);
    const BufferPtr words = pair.gather();
    const random::Key subkey{words->as<uint32_t>()[2], words->as<uint32_t>()[3]};
    const Array draw = random::normal(random::key_array(subkey, replicated, kProfile), Shape{}, DType::kFloat32,
                                      replicated, kProfile, kPartitionable);
    CHECK(static_cast<double>(draw.gather()->as<float>()[0]) == expected);
    k = random::key_array({words->as<uint32_t>()[0], words->as<uint32_t>()[1]}, replicated, kProfile);
  }
  // Legacy normal(PRNGKey(0), (1,)) = [-0.20584226].
  const Array n = random::normal(random::prng_key(0, replicated, kProfile), Shape{1}, DType::kFloat32, replicated,
                                 kProfile, kLegacy);
  check_printed(n, "[-0.20584226]");
}

TEST_CASE("every sampler dtype and ranks 0 to 4 match the host samplers bit for bit") {
  const Mesh mesh = mesh_of({2, 4}, {"x", "y"});
  const random::Key k = random::key(7);
  const Array key = key_on(k, mesh);
  const std::vector<std::pair<Shape, std::string>> shapes = {{{}, "P()"},
                                                             {{16}, "P(('x', 'y'))"},
                                                             {{4, 6}, "P('x')"},
                                                             {{2, 4, 3}, "P('x', 'y')"},
                                                             {{4, 2, 3, 2}, "P('y', 'x')"}};
  for (const auto& [shape, spec] : shapes) {
    CAPTURE(spec);
    const Sharding sharding = named(mesh, spec);
    for (const GenerationConfig& config : {kLegacy, kPartitionable}) {
      const random::RandomOptions o{config.mode, std::nullopt};
      check_placed(random::bits(key, shape, DType::kUInt8, sharding, kProfile, config),
                   host(DType::kUInt8, shape, random::random_bits<uint8_t>(k, shape, o)));
      check_placed(random::bits(key, shape, DType::kUInt16, sharding, kProfile, config),
                   host(DType::kUInt16, shape, random::random_bits<uint16_t>(k, shape, o)));
      check_placed(random::bits(key, shape, DType::kUInt64, sharding, kProfile, config),
                   host(DType::kUInt64, shape, random::random_bits<uint64_t>(k, shape, o)));
      check_placed(random::uniform(key, shape, DType::kFloat64, -2.0, 3.0, sharding, kProfile, config),
                   host(DType::kFloat64, shape, random::uniform<double>(k, shape, -2.0, 3.0, o)));
      check_placed(random::uniform(key, shape, DType::kBFloat16, 0.0, 1.0, sharding, kProfile, config),
                   host(DType::kBFloat16, shape, random::uniform_bf16(k, shape, 0.0, 1.0, o)));
      check_placed(random::normal(key, shape, DType::kFloat16, sharding, kProfile, config),
                   host(DType::kFloat16, shape, random::normal_f16(k, shape, o)));
      check_placed(random::normal(key, shape, DType::kBFloat16, sharding, kProfile, config),
                   host(DType::kBFloat16, shape, random::normal_bf16(k, shape, o)));
      check_placed(random::normal(key, shape, DType::kFloat64, sharding, kProfile, config),
                   host(DType::kFloat64, shape, random::normal<double>(k, shape, o)));
      check_placed(random::randint(key, shape, -5, 100, DType::kInt8, sharding, kProfile, config),
                   host(DType::kInt8, shape, random::randint<int8_t>(k, shape, -5, 100, o)));
      check_placed(random::randint(key, shape, 0, 70000, DType::kUInt16, sharding, kProfile, config),
                   host(DType::kUInt16, shape, random::randint<uint16_t>(k, shape, 0, 70000, o)));
      check_placed(random::randint(key, shape, -1000000, 1LL << 40, DType::kInt64, sharding, kProfile, config),
                   host(DType::kInt64, shape, random::randint<int64_t>(k, shape, -1000000, 1LL << 40, o)));
      check_placed(random::randint(key, shape, 3, 9, DType::kUInt32, sharding, kProfile, config),
                   host(DType::kUInt32, shape, random::randint<uint32_t>(k, shape, 3, 9, o)));
      for (const auto mode : {random::BernoulliMode::kLow, random::BernoulliMode::kHigh}) {
        check_placed(random::bernoulli(key, 0.3, shape, sharding, kProfile, config, mode),
                     host(DType::kBool, shape, random::bernoulli<float>(k, 0.3F, shape, mode, o)));
        check_placed(random::bernoulli(key, 0.3, shape, sharding, kProfile, config, mode, DType::kFloat64),
                     host(DType::kBool, shape, random::bernoulli<double>(k, 0.3, shape, mode, o)));
      }
      std::vector<uint32_t> words;
      for (const random::Key& s : random::split(k, shape, config.mode)) words.insert(words.end(), s.begin(), s.end());
      Shape key_shape = shape;
      key_shape.push_back(2);
      check_placed(random::split(key, shape, sharding, kProfile, config), host(DType::kUInt32, key_shape, words));
    }
  }
}

TEST_CASE("split keys can be sharded on their word dimension too") {
  const Mesh mesh = mesh_of({2, 4}, {"x", "y"});
  const random::Key k = random::key(3);
  for (const GenerationConfig& config : {kLegacy, kPartitionable}) {
    std::vector<uint32_t> words;
    for (const random::Key& s : random::split(k, Shape{4, 3}, config.mode))
      words.insert(words.end(), s.begin(), s.end());
    check_placed(random::split(key_on(k, mesh), Shape{4, 3}, named(mesh, "P('y', None, 'x')"), kProfile, config),
                 host(DType::kUInt32, {4, 3, 2}, words));
  }
}

TEST_CASE("single-device shardings and replicated arrays share one buffer") {
  const Mesh mesh = mesh_of({2, 4}, {"x", "y"});
  const Sharding single = make_single_device_sharding(mesh.devices()[3], kProfile);
  const Array k = random::prng_key(5, single, kProfile);
  const Array u = random::uniform(k, Shape{8, 8}, DType::kFloat32, 0.0, 1.0, single, kProfile);
  REQUIRE(u.shards().size() == 1);
  CHECK(u.shards()[0].device == mesh.devices()[3]);
  check_placed(u, host(DType::kFloat32, {8, 8}, random::uniform<float>(random::key(5), Shape{8, 8})));
  const Array replicated = random::normal(k, Shape{8, 8}, DType::kFloat32, named(mesh, "P('x')"), kProfile);
  CHECK(replicated.shards().size() == 8);
  CHECK(replicated.distinct_buffer_count() == 2);
}

TEST_CASE("abstract keys give abstract results with the requested sharding") {
  const Mesh mesh = mesh_of({2, 4}, {"x", "y"});
  const Array key = Array::abstract({{2}, DType::kUInt32, false}, named(mesh, "P()"), kProfile);
  const Sharding sharding = named(mesh, "P('x', 'y')");
  const Array u = random::uniform(key, Shape{8, 16}, DType::kBFloat16, 0.0, 1.0, sharding, kProfile);
  CHECK(u.is_abstract());
  CHECK(u.shape() == Shape{8, 16});
  CHECK(u.dtype() == DType::kBFloat16);
  CHECK(u.sharding() == sharding);
  CHECK(u.bytes_per_device() == std::vector<int64_t>(8, 4 * 4 * 2));
  CHECK(random::split(key, Shape{8}, named(mesh, "P('y')"), kProfile).shape() == Shape{8, 2});
  CHECK(random::fold_in(key, 3, named(mesh, "P()"), kProfile).is_abstract());
  CHECK(random::bernoulli(key, 0.5, Shape{4}, named(mesh, "P('x')"), kProfile).dtype() == DType::kBool);
  const Array batch = Array::abstract({{3, 2}, DType::kUInt32, false}, named(mesh, "P()"), kProfile);
  CHECK_THROWS_WITH(random::normal(batch, Shape{2}, DType::kFloat32, named(mesh, "P()"), kProfile),
                    "normal accepts a single key, but was given a key array of shape (3, 2) != (). Use jax.vmap for "
                    "batching.");
}

TEST_CASE("indivisible shapes raise device_put's error") {
  const Mesh mesh = mesh_of({2, 4}, {"x", "y"});
  const Sharding sharding = named(mesh, "P('y')");
  const Shape shape{6, 4};
  std::string device_put_message;
  try {
    (void)Array::from_host(std::make_shared<const Buffer>(DType::kFloat32, shape), sharding, kProfile);
  } catch (const Error& e) {
    device_put_message = e.what();
  }
  REQUIRE_FALSE(device_put_message.empty());
  CHECK_THROWS_WITH(random::normal(key_on(random::key(0), mesh), shape, DType::kFloat32, sharding, kProfile),
                    device_put_message.c_str());
  CHECK_THROWS_WITH(random::bits(key_on(random::key(0), mesh), shape, DType::kUInt32, sharding, kProfile),
                    device_put_message.c_str());
}

TEST_CASE("bad dtypes and keys raise JAX's errors") {
  const Mesh mesh = mesh_of({2}, {"x"});
  const Sharding rep = named(mesh, "P()");
  const Array key = key_on(random::key(0), mesh);
  CHECK_THROWS_WITH(random::bits(key, Shape{2}, DType::kInt32, rep, kProfile),
                    "dtype argument to `bits` must be an unsigned int dtype, got int32");
  CHECK_THROWS_WITH(random::uniform(key, Shape{2}, DType::kInt8, 0, 1, rep, kProfile),
                    "dtype argument to `uniform` must be a float dtype, got int8");
  CHECK_THROWS_WITH(random::normal(key, Shape{2}, DType::kUInt32, rep, kProfile),
                    "dtype argument to `normal` must be a float or complex dtype, got uint32");
  CHECK_THROWS_WITH(random::randint(key, Shape{2}, 0, 3, DType::kFloat32, rep, kProfile),
                    "randint only accepts integer dtypes, got float32");
  const Array not_a_key =
      Array::from_host(make_buffer(DType::kUInt32, {3}, std::vector<uint32_t>{1, 2, 3}), rep, kProfile);
  CHECK_THROWS_WITH(
      random::normal(not_a_key, Shape{2}, DType::kFloat32, rep, kProfile),
      doctest::Contains("JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); "
                        "got shape=(3,)"));
  const Array int_key = Array::from_host(make_buffer(DType::kInt32, {2}, std::vector<int32_t>{1, 2}), rep, kProfile);
  CHECK_THROWS_WITH(random::split(int_key, Shape{2}, rep, kProfile),
                    "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype=int32");
}

TEST_CASE("the threefry mode defaults to the profile's release") {
  CHECK(random::default_generation_config(JaxProfile(JaxVersion{0, 4, 35})).mode == ThreefryMode::kOriginal);
  CHECK(random::default_generation_config(JaxProfile(JaxVersion{0, 5, 0})).mode == ThreefryMode::kPartitionable);
  CHECK(random::default_generation_config(kProfile).mode == ThreefryMode::kPartitionable);
}
