// Placeholder replaced by the elementwise primitive tests.
#include <doctest/doctest.h>

#include "ir/primitive.h"
#include "ops/ops.h"

TEST_CASE("elementwise primitives register") {
  shardscope::ensure_core_primitives();
  CHECK(!shardscope::all_primitives().empty());
}
