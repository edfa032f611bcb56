// Completeness: every registered primitive carries the rules the engine needs to trace and run it.
#include <doctest/doctest.h>

#include "ir/primitive.h"
#include "ops/ops.h"
#include "propagation/factor_rule.h"

using namespace shardscope;

TEST_CASE("every primitive has a shape rule and a kernel or a cross-device implementation") {
  ensure_core_primitives();
  const std::vector<const Primitive*> primitives = all_primitives();
  CHECK(primitives.size() > 100);
  for (const Primitive* primitive : primitives) {
    CAPTURE(primitive->name);
    CHECK(static_cast<bool>(primitive->abstract_eval));
    CHECK((static_cast<bool>(primitive->impl) || static_cast<bool>(primitive->collective_impl)));
  }
}

TEST_CASE("the families the engine relies on are registered") {
  ensure_core_primitives();
  for (const char* name : {"sin", "add", "mul", "reduce_sum", "dot_general", "broadcast_in_dim", "reshape", "transpose",
                           "psum", "psum_invariant", "all_gather", "reduce_scatter", "ppermute", "all_to_all",
                           "axis_index", "sharding_constraint", "jit", "iota", "gather"}) {
    CAPTURE(name);
    CHECK(find_primitive(name) != nullptr);
  }
}

TEST_CASE("elementwise primitives say so, so sharding propagation maps their dims one to one") {
  ensure_core_primitives();
  for (const char* name : {"sin", "add", "mul", "select_n", "convert_element_type", "clamp", "integer_pow"}) {
    CAPTURE(name);
    CHECK(find_primitive(name)->elementwise);
  }
  for (const char* name : {"dot_general", "reduce_sum", "broadcast_in_dim", "psum", "jit"}) {
    CAPTURE(name);
    CHECK_FALSE(find_primitive(name)->elementwise);
  }
}

TEST_CASE("every primitive has a sharding rule: nothing falls back to replicated unnoticed") {
  ensure_core_primitives();
  for (const Primitive* primitive : all_primitives()) {
    CAPTURE(primitive->name);
    CHECK(has_factor_rule(*primitive));
  }
}
