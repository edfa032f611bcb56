// Program caches: structural identity of jaxprs, hits for the same program and key, misses otherwise.
#include "exec/program_cache.h"

#include <doctest/doctest.h>

#include "ops/ops.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

JaxprPtr add_one(DType dtype = DType::kFloat32) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, dtype));
  return b.build({b.bind1("add", {x, scalar_literal(1.0, dtype)})});
}

}  // namespace

TEST_CASE("same_program compares equations, variables and literals") {
  ensure_core_primitives();
  const JaxprPtr a = add_one();
  const Jaxpr copy = *a;
  CHECK(same_program(*a, copy));
  Jaxpr other_literal = *a;
  std::get<Literal>(other_literal.eqns[0].inputs[1]).value = 2.0;
  CHECK_FALSE(same_program(*a, other_literal));
  Jaxpr other_primitive = *a;
  other_primitive.eqns[0].primitive = find_primitive("sub");
  CHECK_FALSE(same_program(*a, other_primitive));
  // A second build of the same text has fresh variables: a different program for the caches.
  CHECK_FALSE(same_program(*a, *add_one()));
}

TEST_CASE("ProgramCache computes once per program and key, and notices a program changed in place") {
  ensure_core_primitives();
  ProgramCache<int, int> cache(2);
  int computed = 0;
  const auto compute = [&] { return ++computed; };
  Jaxpr program = *add_one();
  CHECK(*cache.get(program, 7, compute) == 1);
  CHECK(*cache.get(program, 7, compute) == 1);
  CHECK(*cache.get(program, 8, compute) == 2);
  // Same address, different content: recomputed.
  std::get<Literal>(program.eqns[0].inputs[1]).value = 5.0;
  CHECK(*cache.get(program, 7, compute) == 3);
  CHECK(cache.size() == 2);  // the capacity bounds it
  cache.clear();
  CHECK(cache.size() == 0);
}
