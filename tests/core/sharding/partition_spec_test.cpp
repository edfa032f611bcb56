// PartitionSpec canonicalization, reprs per version and the text parser.
#include "sharding/partition_spec.h"

#include <doctest/doctest.h>

#include "base/error.h"

using namespace shardscope;

namespace {
std::string newest(const std::string& text) { return parse_partition_spec(text).repr(JaxProfile()); }
}  // namespace

TEST_CASE("reprs keep Python's tuple syntax") {
  CHECK(newest("P()") == "P()");
  CHECK(newest("P('x')") == "P('x',)");
  CHECK(newest("P('x', 'y')") == "P('x', 'y')");
  CHECK(newest("P(None)") == "P(None,)");
  CHECK(newest("P(('x', 'y'))") == "P(('x', 'y'),)");
  CHECK(newest("P(('x',))") == "P('x',)");
  CHECK(newest("P(())") == "P(None,)");
  CHECK(newest("P(P.UNCONSTRAINED, 'x')") == "P(UNCONSTRAINED, 'x')");
  CHECK(newest("PartitionSpec(['a', 'b'], None)") == "P(('a', 'b'), None)");
  CHECK(newest("'x', None") == "P('x', None)");
  CHECK(newest("jax.sharding.PartitionSpec(\"x\")") == "P('x',)");
}

TEST_CASE("unreduced and reduced sets print after the partitions") {
  CHECK(newest("P('a', 'b', None, unreduced={'c'}, reduced={'d'})") ==
        "P('a', 'b', None, unreduced={'c'}, reduced={'d'}, unreduced_kind=sum)");
  CHECK(newest("P('x', unreduced={'y'})") == "P('x', unreduced={'y'}, unreduced_kind=sum)");
  CHECK(newest("P(unreduced={'x'}, unreduced_kind=max)") == "P(unreduced={'x'}, unreduced_kind=max)");
  CHECK(newest("P('x', reduced={'y'})") == "P('x', reduced={'y'})");
}

TEST_CASE("older profiles print the long name") {
  const JaxProfile old(JaxVersion{0, 6, 0});
  CHECK(parse_partition_spec("P('x', 'y')").repr(old) == "PartitionSpec('x', 'y')");
  CHECK(parse_partition_spec("P('a')").repr(old) == "PartitionSpec('a',)");
  CHECK(parse_partition_spec("P()").repr(old) == "PartitionSpec()");
}

TEST_CASE("nested tuples raise JAX's message") {
  CHECK_THROWS_WITH_AS((void)parse_partition_spec("P(('x', ('y', 'z')))"),
                       "A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: ('x', ('y', 'z')) "
                       "and the nested tuple: ('y', 'z')",
                       Error);
}

TEST_CASE("malformed text names the spec and the column") {
  CHECK_THROWS_WITH_AS((void)parse_partition_spec("P('x'"), doctest::Contains("Malformed PartitionSpec \"P('x'\""),
                       Error);
  CHECK_THROWS_WITH_AS((void)parse_partition_spec("P(x)"), doctest::Contains("must be quoted"), Error);
  CHECK_THROWS_WITH_AS((void)parse_partition_spec("P('x' 'y')"), doctest::Contains("expected ','"), Error);
  CHECK_THROWS_WITH_AS((void)parse_partition_spec("P('x') extra"), doctest::Contains("column"), Error);
  CHECK_THROWS_WITH_AS((void)parse_partition_spec("P(1)"), doctest::Contains("unexpected character '1'"), Error);
  CHECK_THROWS_AS((void)parse_partition_spec("P('x', colour='red')"), Error);
}

TEST_CASE("the tuple form used by some error messages") {
  CHECK(parse_partition_spec("P('x')").tuple_repr() == "('x',)");
  CHECK(parse_partition_spec("P(('x', 'y'), None)").tuple_repr() == "(('x', 'y'), None)");
}
