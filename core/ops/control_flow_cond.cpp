// cond (one nested program per branch), remat2 (jax.checkpoint's program) and name (checkpoint_name).
#include <algorithm>

#include "base/error.h"
#include "ir/primitive.h"
#include "ops/control_flow.h"

namespace shardscope {

void register_loop_primitives();
void add_per_device_control_flow(Primitive& primitive);  // control_flow_spmd.cpp

std::vector<JaxprPtr> cond_branches(const Params& params) {
  std::vector<JaxprPtr> out;
  for (const ParamValue& item : param(params, "branches").as_items("branches")) {
    const auto* ref = item.get_if<ParamValue::JaxprRef>();
    if (ref == nullptr || !*ref) throw type_error("cond branch without a program");
    out.push_back(*ref);
  }
  if (out.empty()) throw type_error("cond requires at least one branch function");
  return out;
}

Params cond_params(const std::vector<JaxprPtr>& branches) {
  std::vector<ParamValue> items;
  for (const JaxprPtr& branch : branches) items.emplace_back(branch);
  return {{"branches", ParamValue::tuple(std::move(items))}};
}

namespace {

Primitive cond_primitive() {
  Primitive p;
  p.name = "cond";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    const std::vector<JaxprPtr> branches = cond_branches(params);
    if (in.empty() || !in[0].shape.empty() || (in[0].dtype != DType::kInt32)) {
      throw type_error("cond index must be an int32 scalar, got " + (in.empty() ? "nothing" : in[0].str_short(true)));
    }
    for (const JaxprPtr& branch : branches) {
      if (branch->invars.size() + 1 != in.size()) throw type_error("cond branches take the cond's operands");
    }
    std::vector<Aval> out;
    for (const Atom& atom : branches[0]->outvars) out.push_back(atom_aval(atom));
    return out;
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const std::vector<JaxprPtr> branches = cond_branches(params);
    // Out-of-range indices are clamped, as XLA's conditional does.
    const int64_t index = std::clamp<int64_t>(scalar_int(in[0]), 0, static_cast<int64_t>(branches.size()) - 1);
    return run_nested(*branches[static_cast<std::size_t>(index)], std::vector<BufferPtr>(in.begin() + 1, in.end()));
  };
  return p;
}

Primitive remat_primitive() {
  Primitive p;
  p.name = "remat2";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    std::vector<Aval> out;
    for (const Atom& atom : nested_jaxpr(params, "jaxpr")->outvars) out.push_back(atom_aval(atom));
    return out;
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    return run_nested(*nested_jaxpr(params, "jaxpr"), std::vector<BufferPtr>(in.begin(), in.end()));
  };
  return p;
}

Primitive name_primitive() {
  Primitive p;
  p.name = "name";
  p.elementwise = true;
  p.abstract_eval = [](std::span<const Aval> in, const Params&) { return std::vector<Aval>{in[0]}; };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{in[0]};
  };
  return p;
}

}  // namespace

void register_control_flow_primitives() {
  register_loop_primitives();
  Primitive cond = cond_primitive();
  add_per_device_control_flow(cond);
  register_primitive(std::move(cond));
  Primitive remat = remat_primitive();
  add_per_device_control_flow(remat);
  register_primitive(std::move(remat));
  register_primitive(name_primitive());
}

}  // namespace shardscope
