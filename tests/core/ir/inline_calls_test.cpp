// The partitioning rewrite: calls inlined and dead code dropped, as XLA removes it before it partitions.
#include "ir/inline_calls.h"

#include <doctest/doctest.h>

#include <map>

#include "ir/param.h"
#include "ir/primitive.h"

using namespace shardscope;

namespace {

// Equations are built by hand here (the ir layer sits below ops), so only a primitive's name matters.
const Primitive* named(const std::string& name) {
  static std::map<std::string, Primitive> made;
  Primitive& primitive = made[name];
  primitive.name = name;
  return &primitive;
}

Var var(int64_t id) { return Var{id, Aval::of({4}, DType::kFloat32)}; }

Eqn eqn(const std::string& name, std::vector<Atom> inputs, std::vector<Var> outputs, Params params = {}) {
  Eqn e;
  e.primitive = named(name);
  e.inputs = std::move(inputs);
  e.outputs = std::move(outputs);
  e.params = std::move(params);
  return e;
}

}  // namespace

TEST_CASE("equations nothing reads are dropped, what feeds a result stays") {
  Jaxpr program;
  program.invars = {var(1)};
  program.eqns.push_back(eqn("sin", {var(1)}, {var(2)}));
  program.eqns.push_back(eqn("cos", {var(1)}, {var(3)}));  // dead
  program.eqns.push_back(eqn("neg", {var(2)}, {var(4)}));
  program.outvars = {var(4)};
  REQUIRE(rewritten_for_partitioning(program));
  const InlinedProgram out = inline_calls(program);
  REQUIRE(out.jaxpr.eqns.size() == 2);
  CHECK(out.jaxpr.eqns[0].primitive->name == "sin");
  CHECK(out.jaxpr.eqns[1].primitive->name == "neg");
}

TEST_CASE("a program without dead code or calls is left as it is") {
  Jaxpr program;
  program.invars = {var(1)};
  program.eqns.push_back(eqn("sin", {var(1)}, {var(2)}));
  program.outvars = {var(2)};
  CHECK_FALSE(rewritten_for_partitioning(program));
}

TEST_CASE("a shard_map keeps only the results something reads, and its body loses what fed the others") {
  auto body = std::make_shared<Jaxpr>();
  body->invars = {var(10)};
  body->eqns.push_back(eqn("sin", {var(10)}, {var(11)}));
  body->eqns.push_back(eqn("cos", {var(10)}, {var(12)}));
  body->outvars = {var(11), var(12)};
  Jaxpr program;
  program.invars = {var(1)};
  program.eqns.push_back(
      eqn("shard_map", {var(1)}, {var(2), var(3)},
          {{"jaxpr", ParamValue(ParamValue::JaxprRef(body))},
           {"out_specs", ParamValue::tuple({ParamValue(PartitionSpec{}), ParamValue(PartitionSpec{})})}}));
  program.outvars = {var(3)};
  REQUIRE(rewritten_for_partitioning(program));
  const InlinedProgram out = inline_calls(program);
  REQUIRE(out.jaxpr.eqns.size() == 1);
  const Eqn& call = out.jaxpr.eqns[0];
  REQUIRE(call.outputs.size() == 1);
  CHECK(call.outputs[0].id == 3);
  const auto& pruned = *param(call.params, "jaxpr").get_if<ParamValue::JaxprRef>();
  REQUIRE(pruned->eqns.size() == 1);
  CHECK(pruned->eqns[0].primitive->name == "cos");
  CHECK(param(call.params, "out_specs").get_if<ParamValue::Tuple>()->items.size() == 1);
}

TEST_CASE("an argument is read when an equation or an output uses it") {
  Jaxpr program;
  program.invars = {var(1), var(2), var(3)};
  program.eqns.push_back(eqn("sin", {var(1)}, {var(4)}));
  program.outvars = {var(4), var(3)};
  CHECK(arguments_read(program) == std::vector<bool>{true, false, true});  // jit prunes the second
}
