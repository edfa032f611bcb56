// Placeholder replaced by the structural primitive tests.
#include <doctest/doctest.h>

#include "ir/primitive.h"
#include "ops/ops.h"

TEST_CASE("structural primitives register") {
  shardscope::ensure_core_primitives();
  CHECK(!shardscope::all_primitives().empty());
}
