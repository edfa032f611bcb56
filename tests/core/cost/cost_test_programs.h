// Programs and arguments the cost, explain, compare and why tests share: x @ w as dot_general, a 2x4 mesh on a
// device preset, and sharded abstract arguments.
#pragma once

#include <string>
#include <vector>

#include "device/presets.h"
#include "exec/lowering.h"
#include "sharding/partition_spec.h"
#include "trace/builder.h"

namespace shardscope::cost_test {

inline const JaxProfile kProfile;

inline ParamValue int_list(std::vector<int64_t> values) {
  std::vector<ParamValue> items;
  for (const int64_t v : values) items.emplace_back(v);
  return ParamValue::list(std::move(items));
}

// dot_general's params contracting lhs dim 1 with rhs dim 0, no batch dims: x @ w.
inline Params matmul_params() {
  return {{"dimension_numbers", ParamValue::tuple({ParamValue::tuple({int_list({1}), int_list({0})}),
                                                   ParamValue::tuple({int_list({}), int_list({})})})},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", DType::kFloat32}};
}

inline JaxprPtr matmul_program(const Aval& x_aval, const Aval& w_aval) {
  JaxprBuilder b;
  const Var x = b.arg(x_aval);
  const Var w = b.arg(w_aval);
  const Atom y = b.bind1("dot_general", {x, w}, matmul_params());
  return b.build({y});
}

// A 2x4 mesh of Auto axes ('x', 'y') on a preset's first 8 devices.
inline Mesh mesh_2x4(const std::string& preset) {
  return make_mesh({2, 4}, {"x", "y"}, make_device_preset(preset).devices, kProfile,
                   std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
}

// An abstract float32 argument laid out by `spec` ("P('x', 'y')") on `mesh`.
inline ShapeDtypeStruct arg(Shape shape, const Mesh& mesh, const std::string& spec) {
  ShapeDtypeStruct out;
  out.shape = std::move(shape);
  out.dtype = DType::kFloat32;
  out.sharding = make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
  return out;
}

}  // namespace shardscope::cost_test
