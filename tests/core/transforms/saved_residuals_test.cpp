// saved_residuals and checkpoint policies: which forward values a gradient keeps, their sources, and that every
// policy still gives the exact gradient.
#include "transforms/saved_residuals.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "core/transforms/autodiff_test_util.h"
#include "ir/remat_policy.h"
#include "ir/source_info.h"
#include "ops/structural.h"

using namespace shardscope;
using namespace shardscope::testing;

namespace {

const Params kAccuracy{{"accuracy", ParamValue::None{}}};

SourceInfo at(int line, int column, const std::string& function) {
  return std::make_shared<const SourceLocation>(SourceLocation{"model.py", line, column, function});
}

Params matvec() {
  return {{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", DType::kFloat64}};
}

// layer(w, h) = cos(w @ h), traced as if from model.py line 3 ("    return jnp.cos(w @ h)").
Atom layer(JaxprBuilder& b, const Atom& w, const Atom& h) {
  Atom z;
  {
    const SourceScope scope(at(3, 19, "layer"));
    z = b.bind1("dot_general", {w, h}, matvec());
  }
  const SourceScope scope(at(3, 11, "layer"));
  return b.bind1("cos", {z}, kAccuracy);
}

// net(w1, w2, h) = layer(w2, layer(w1, h)), with w1: [3, 4], w2: [2, 3], h: [4].
JaxprPtr plain_net() {
  JaxprBuilder b;
  const Var w1 = b.arg(f64_aval({3, 4}));
  const Var w2 = b.arg(f64_aval({2, 3}));
  const Var h = b.arg(f64_aval({4}));
  return b.build({layer(b, w2, layer(b, w1, h))});
}

ParamValue policy_param(RematPolicy::Kind kind, std::vector<std::string> names = {}) {
  auto policy = std::make_shared<RematPolicy>();
  policy->kind = kind;
  policy->names = std::move(names);
  return ParamValue::PolicyRef{"<policy>", policy};
}

// The whole net under jax.checkpoint with `policy`; `name_hidden` names layer 1's output 'hidden'.
JaxprPtr checkpointed_net(const ParamValue& policy, bool name_hidden = false) {
  JaxprBuilder body;
  const Var w1 = body.arg(f64_aval({3, 4}));
  const Var w2 = body.arg(f64_aval({2, 3}));
  const Var h = body.arg(f64_aval({4}));
  Atom hidden = layer(body, w1, h);
  if (name_hidden) {
    const SourceScope scope(at(7, 8, "net"));
    hidden = body.bind1("name", {hidden}, {{"name", "hidden"}});
  }
  const JaxprPtr program = body.build({layer(body, w2, hidden)});
  JaxprBuilder b;
  const Var a = b.arg(f64_aval({3, 4}));
  const Var c = b.arg(f64_aval({2, 3}));
  const Var x = b.arg(f64_aval({4}));
  const Params params{
      {"differentiated", false}, {"jaxpr", ParamValue(program)}, {"policy", policy}, {"prevent_cse", true}};
  return b.build(b.bind("remat2", {a, c, x}, params));
}

RematPolicy make_policy(RematPolicy::Kind kind, std::vector<std::string> names = {},
                        std::vector<std::string> offloaded = {}) {
  RematPolicy policy;
  policy.kind = kind;
  policy.names = std::move(names);
  policy.offloaded_names = std::move(offloaded);
  return policy;
}

RematPolicy either_of(const RematPolicy& first, const RematPolicy& second) {
  RematPolicy policy;
  policy.kind = RematPolicy::Kind::kEither;
  policy.first = std::make_shared<RematPolicy>(first);
  policy.second = std::make_shared<RematPolicy>(second);
  return policy;
}

std::vector<std::string> lines(const std::vector<SavedResidual>& residuals) {
  std::vector<std::string> out;
  for (const SavedResidual& residual : residuals) out.push_back(residual.aval.str_short(true) + " " + residual.source);
  return out;
}

const std::vector<std::string> kArgNames{"w1", "w2", "h"};
const std::vector<std::string> kArgLines{"f64[3,4] from the argument w1", "f64[2,3] from the argument w2",
                                         "f64[4] from the argument h"};

std::vector<std::string> with_args(std::vector<std::string> rest) {
  std::vector<std::string> out = kArgLines;
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::vector<BufferPtr> net_args() {
  return {f64({3, 4}, ramp(12, -0.5, 0.125)), f64({2, 3}, ramp(6, 0.25, -0.125)), f64({4}, ramp(4, 1.0, -0.5))};
}

// d/dw1 of sum(net(...)) through grad_jaxpr, as a flat list.
std::vector<double> gradient(const Jaxpr& net) {
  JaxprBuilder b;
  const Var w1 = b.arg(f64_aval({3, 4}));
  const Var w2 = b.arg(f64_aval({2, 3}));
  const Var h = b.arg(f64_aval({4}));
  const std::vector<Atom> out = inline_jaxpr(b, net, std::vector<Atom>{w1, w2, h});
  const Atom total =
      b.bind1("reduce_sum", {out[0]}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}});
  const JaxprPtr loss = b.build({total});
  return run(*grad_jaxpr(*loss, {0, 1, 2}, false), net_args(), 0);
}

}  // namespace

TEST_CASE("without checkpoint the gradient keeps the layer outputs and the sines of cos's derivative") {
  CHECK(lines(saved_residuals(*plain_net(), kArgNames)) ==
        with_args({"f64[3] output of cos from model.py:3:11 (layer)", "f64[3] output of sin from model.py:3:11 (layer)",
                   "f64[2] output of sin from model.py:3:11 (layer)"}));
  CHECK(summarize(nullptr) == "unknown");
}

TEST_CASE("a checkpoint keeps what its policy saves and recomputes the rest") {
  using Kind = RematPolicy::Kind;
  // nothing_saveable (and no policy at all): only the checkpoint's inputs.
  CHECK(lines(saved_residuals(*checkpointed_net(ParamValue::None{}), kArgNames)) == kArgLines);
  CHECK(lines(saved_residuals(*checkpointed_net(policy_param(Kind::kNothingSaveable)), kArgNames)) == kArgLines);
  CHECK(lines(saved_residuals(*checkpointed_net(policy_param(Kind::kDotsSaveable)), kArgNames)) ==
        with_args({"f64[3] output of dot_general from model.py:3:19 (layer)",
                   "f64[2] output of dot_general from model.py:3:19 (layer)"}));
  CHECK(lines(saved_residuals(*checkpointed_net(policy_param(Kind::kEverythingSaveable)), kArgNames)) ==
        lines(saved_residuals(*plain_net(), kArgNames)));
  CHECK(lines(saved_residuals(*checkpointed_net(policy_param(Kind::kSaveOnlyTheseNames, {"hidden"}), true),
                              kArgNames)) == with_args({"f64[3] named 'hidden' from model.py:7:8 (net)"}));
  CHECK(lines(saved_residuals(*checkpointed_net(policy_param(Kind::kSaveAnyNamesButThese, {"hidden"}), true),
                              kArgNames)) == kArgLines);
  // An unnamed argument keeps JAX's text, braces and all.
  CHECK(saved_residuals(*plain_net(), {"", "w2", "h"})[0].source == "from the argument at flattened index {i}");
}

TEST_CASE("every policy gives the gradient of the program without checkpoint, exactly") {
  using Kind = RematPolicy::Kind;
  const std::vector<double> expected = gradient(*plain_net());
  for (const Kind kind :
       {Kind::kNothingSaveable, Kind::kEverythingSaveable, Kind::kDotsSaveable, Kind::kDotsWithNoBatchDimsSaveable}) {
    CAPTURE(static_cast<int>(kind));
    CHECK(gradient(*checkpointed_net(policy_param(kind))) == expected);
  }
  CHECK(gradient(*checkpointed_net(policy_param(Kind::kSaveOnlyTheseNames, {"hidden"}), true)) == expected);
}

TEST_CASE("policies decide as jax.checkpoint_policies do") {
  using Kind = RematPolicy::Kind;
  const std::vector<Aval> operands{f64_aval({2, 3}), f64_aval({3})};
  const Params batched{{"dimension_numbers", dot_dimension_numbers_param({2}, {1}, {0}, {0})}};
  const RematPolicy dots = make_policy(Kind::kDotsWithNoBatchDimsSaveable);
  CHECK(remat_decision(dots, "dot_general", operands, matvec()) == RematDecision::kSave);
  CHECK(remat_decision(dots, "dot_general", operands, batched) == RematDecision::kRecompute);
  CHECK(remat_decision(dots, "sin", operands, kAccuracy) == RematDecision::kRecompute);
  const RematPolicy offload = make_policy(Kind::kSaveAndOffloadOnlyTheseNames, {"y"}, {"z"});
  CHECK(remat_decision(offload, "name", operands, {{"name", "y"}}) == RematDecision::kSave);
  CHECK(remat_decision(offload, "name", operands, {{"name", "z"}}) == RematDecision::kOffload);
  CHECK(remat_decision(offload, "name", operands, {{"name", "w"}}) == RematDecision::kRecompute);
  const RematPolicy either = either_of(dots, make_policy(Kind::kSaveOnlyTheseNames, {"y"}));
  CHECK(remat_decision(either, "name", operands, {{"name", "y"}}) == RematDecision::kSave);
  CHECK(remat_decision(either, "dot_general", operands, matvec()) == RematDecision::kSave);
  CHECK(remat_decision(either, "cos", operands, kAccuracy) == RematDecision::kRecompute);
  // save_from_both_policies insists on booleans.
  const RematPolicy with_offload = either_of(offload, dots);
  try {
    (void)remat_decision(with_offload, "name", operands, {{"name", "z"}});
    FAIL("save_from_both_policies took an offload");
  } catch (const Error& error) {
    CHECK(error.python_type() == "ValueError");
  }
}
