// The sample table of the sharded conformance test: valid params and small inputs for every primitive.
#include "core/exec/conformance_programs.h"

#include <optional>

#include "ir/primitive.h"
#include "ops/convolution.h"
#include "ops/ops.h"
#include "ops/structural.h"
#include "ops/windowed.h"
#include "sharding/sharding.h"

namespace shardscope::conformance {
namespace {

Aval f32(Shape shape) { return Aval::of(std::move(shape), DType::kFloat32); }
Aval i32(Shape shape) { return Aval::of(std::move(shape), DType::kInt32); }
Aval u32(Shape shape) { return Aval::of(std::move(shape), DType::kUInt32); }
Aval boolean(Shape shape) { return Aval::of(std::move(shape), DType::kBool); }

SampleProgram single(const std::string& name, Params params) {
  return [name, params](JaxprBuilder& b, const std::vector<Atom>& args, const Mesh&) {
    return b.bind(name, args, params);
  };
}

// Params an elementwise primitive needs to bind at all.
Params elementwise_params(const std::string& name) {
  if (name == "integer_pow") return {{"y", int64_t{3}}};
  if (name == "convert_element_type") {
    return {{"new_dtype", DType::kInt32}, {"weak_type", false}, {"sharding", ParamValue::None{}}};
  }
  if (name == "round") return {{"rounding_method", int64_t{0}}};
  if (name == "random_wrap") return {{"impl", ParamValue::Verbatim{"fry"}}};
  return {};
}

// The first (arity, dtype) an elementwise primitive's shape rule accepts on `shape`.
std::optional<std::vector<Aval>> elementwise_signature(const Primitive& primitive, const Shape& shape) {
  for (const DType dtype : {DType::kFloat32, DType::kInt32, DType::kBool, DType::kUInt32}) {
    for (std::size_t arity = 1; arity <= 4; ++arity) {
      if (primitive.name == "select_n" && arity < 3) continue;  // a predicate alone is no select
      std::vector<Aval> avals(arity, Aval::of(shape, dtype));
      if (primitive.name == "select_n") avals[0] = boolean(shape);
      try {
        (void)primitive.abstract_eval(avals, elementwise_params(primitive.name));
        return avals;
      } catch (const std::exception&) {
      }
    }
  }
  return std::nullopt;
}

void add(std::vector<Sample>& samples, const std::string& primitive, const std::string& label, Family family,
         std::vector<Aval> inputs, SampleProgram program) {
  samples.push_back({primitive, primitive + " " + label, family, std::move(inputs), std::move(program)});
}

void elementwise_samples(std::vector<Sample>& out) {
  for (const Primitive* primitive : all_primitives()) {
    if (!primitive->elementwise) continue;
    // Keys end in a dim of 2 (their uint32 data); every other elementwise op runs on a plain (4, 8) array.
    const Shape shape = primitive->name.rfind("random_", 0) == 0 ? Shape{4, 2} : Shape{4, 8};
    std::optional<std::vector<Aval>> avals = elementwise_signature(*primitive, shape);
    if (!avals) continue;  // the completeness check reports it
    add(out, primitive->name, "rank 2", Family::kElementwise, *avals,
        single(primitive->name, elementwise_params(primitive->name)));
  }
  // Ranks 0, 1, 3, scalar operands, literals and size-1 dims that broadcast against larger ones.
  add(out, "add", "rank 0", Family::kElementwise, {f32({}), f32({})}, single("add", {}));
  add(out, "add", "rank 1", Family::kElementwise, {f32({8}), f32({8})}, single("add", {}));
  add(out, "mul", "rank 3", Family::kElementwise, {f32({2, 4, 8}), f32({2, 4, 8})}, single("mul", {}));
  add(out, "add", "scalar operand", Family::kElementwise, {f32({}), f32({4, 8})}, single("add", {}));
  add(out, "sub", "literal operand", Family::kElementwise, {f32({4, 8})},
      [](JaxprBuilder& b, const std::vector<Atom>& a, const Mesh&) {
        return std::vector<Atom>{b.bind1("sub", {a[0], scalar_literal(2.0, DType::kFloat32)})};
      });
  add(out, "add", "size-1 dims broadcast", Family::kElementwise, {f32({4, 1}), f32({1, 8})}, single("add", {}));
  add(out, "mul", "size-1 dim against full", Family::kElementwise, {f32({1, 8}), f32({4, 8})}, single("mul", {}));
  add(out, "max", "rank 3 size-1 dims", Family::kElementwise, {f32({2, 1, 8}), f32({2, 4, 1})}, single("max", {}));
  add(out, "select_n", "scalar predicate", Family::kElementwise, {boolean({}), f32({4, 8}), f32({4, 8})},
      single("select_n", {}));
  add(out, "clamp", "scalar bounds", Family::kElementwise, {f32({}), f32({4, 8}), f32({})}, single("clamp", {}));
  add(out, "convert_element_type", "int to float", Family::kElementwise, {i32({4, 8})},
      single("convert_element_type",
             {{"new_dtype", DType::kFloat32}, {"weak_type", false}, {"sharding", ParamValue::None{}}}));
}

Params no_sharding(Params params) {
  params.emplace_back("sharding", ParamValue::None{});
  return params;
}

void layout_samples(std::vector<Sample>& out) {
  const auto broadcast = [](Shape shape, std::vector<int64_t> dims) {
    return single("broadcast_in_dim", no_sharding({{"shape", ParamValue::int_tuple(shape)},
                                                   {"broadcast_dimensions", ParamValue::int_tuple(dims)}}));
  };
  add(out, "broadcast_in_dim", "row to matrix", Family::kLayout, {f32({8})}, broadcast({4, 8}, {1}));
  add(out, "broadcast_in_dim", "size-1 dim stretched", Family::kLayout, {f32({4, 1})}, broadcast({4, 8}, {0, 1}));
  add(out, "broadcast_in_dim", "scalar", Family::kLayout, {f32({})}, broadcast({4, 8}, {}));
  add(out, "broadcast_in_dim", "new middle dim", Family::kLayout, {i32({4, 8})}, broadcast({4, 2, 8}, {0, 2}));
  const auto reshape = [](Shape shape) {
    return single("reshape",
                  no_sharding({{"new_sizes", ParamValue::int_tuple(shape)}, {"dimensions", ParamValue::None{}}}));
  };
  add(out, "reshape", "merge", Family::kLayout, {f32({4, 8})}, reshape({32}));
  add(out, "reshape", "split", Family::kLayout, {f32({4, 8})}, reshape({2, 2, 8}));
  add(out, "reshape", "regroup", Family::kLayout, {f32({8, 4})}, reshape({4, 8}));
  add(out, "reshape", "merge leading", Family::kLayout, {i32({2, 4, 4})}, reshape({8, 4}));
  add(out, "reshape", "drop size-1", Family::kLayout, {f32({4, 1, 8})}, reshape({4, 8}));
  add(out, "transpose", "rank 2", Family::kLayout, {f32({4, 8})},
      single("transpose", {{"permutation", ParamValue::int_tuple({1, 0})}}));
  add(out, "transpose", "rank 3", Family::kLayout, {f32({2, 4, 8})},
      single("transpose", {{"permutation", ParamValue::int_tuple({2, 0, 1})}}));
  add(out, "squeeze", "middle", Family::kLayout, {f32({4, 1, 8})},
      single("squeeze", {{"dimensions", ParamValue::int_tuple({1})}}));
  add(out, "concatenate", "minor", Family::kLayout, {f32({4, 8}), f32({4, 8})},
      single("concatenate", {{"dimension", int64_t{1}}}));
  add(out, "concatenate", "major unequal", Family::kLayout, {f32({4, 8}), f32({8, 8})},
      single("concatenate", {{"dimension", int64_t{0}}}));
  add(out, "split", "even", Family::kLayout, {f32({4, 8})},
      single("split", {{"sizes", ParamValue::int_tuple({4, 4})}, {"axis", int64_t{1}}}));
  add(out, "split", "uneven", Family::kLayout, {f32({8, 4})},
      single("split", {{"sizes", ParamValue::int_tuple({2, 6})}, {"axis", int64_t{0}}}));
  // The stacked axis is never sharded: the new dim of stack's result, the taken-apart dim of unstack's operand.
  add(out, "stack", "new leading dim", Family::kLayout, {f32({4, 8}), f32({4, 8})}, single("stack", {{"axis", 0}}));
  add(out, "stack", "new middle dim", Family::kLayout, {i32({4, 8}), i32({4, 8}), i32({4, 8})},
      single("stack", {{"axis", 1}}));
  add(out, "unstack", "major", Family::kLayout, {f32({2, 4, 8})}, single("unstack", {{"axis", 0}}));
  add(out, "unstack", "minor", Family::kLayout, {f32({4, 8, 2})}, single("unstack", {{"axis", 2}}));
  const ParamValue interior = ParamValue::tuple({ParamValue::int_tuple({1, 2, 0}), ParamValue::int_tuple({0, 0, 1})});
  add(out, "pad", "interior", Family::kLayout, {f32({4, 8}), f32({})}, single("pad", {{"padding_config", interior}}));
  const ParamValue negative = ParamValue::tuple({ParamValue::int_tuple({-1, 1, 0}), ParamValue::int_tuple({0, 0, 0})});
  add(out, "pad", "negative low", Family::kLayout, {f32({4, 8}), f32({})},
      single("pad", {{"padding_config", negative}}));
  const ParamValue minor_only = ParamValue::tuple({ParamValue::int_tuple({0, 0, 0}), ParamValue::int_tuple({2, 2, 0})});
  add(out, "pad", "minor dim only", Family::kLayout, {i32({8, 4}), i32({})},
      single("pad", {{"padding_config", minor_only}}));
  add(out, "rev", "one dim", Family::kLayout, {f32({4, 8})},
      single("rev", {{"dimensions", ParamValue::int_tuple({0})}}));
  add(out, "rev", "two dims", Family::kLayout, {i32({4, 8})},
      single("rev", {{"dimensions", ParamValue::int_tuple({0, 1})}}));
  add(out, "slice", "window", Family::kLayout, {f32({8, 8})},
      single("slice", {{"start_indices", ParamValue::int_tuple({2, 0})},
                       {"limit_indices", ParamValue::int_tuple({6, 8})},
                       {"strides", ParamValue::None{}}}));
  add(out, "slice", "strided", Family::kLayout, {f32({8, 8})},
      single("slice", {{"start_indices", ParamValue::int_tuple({0, 0})},
                       {"limit_indices", ParamValue::int_tuple({8, 8})},
                       {"strides", ParamValue::int_tuple({2, 1})}}));
  add(out, "iota", "added to an input", Family::kLayout, {i32({4, 8})},
      [](JaxprBuilder& b, const std::vector<Atom>& a, const Mesh&) {
        const Atom iota = b.bind1(
            "iota", {},
            no_sharding(
                {{"dtype", DType::kInt32}, {"shape", ParamValue::int_tuple({4, 8})}, {"dimension", int64_t{1}}}));
        return std::vector<Atom>{b.bind1("add", {a[0], iota})};
      });
}

void indexing_samples(std::vector<Sample>& out) {
  add(out, "dynamic_slice", "block", Family::kIndexing, {f32({8, 8}), i32({}), i32({})},
      single("dynamic_slice", {{"slice_sizes", ParamValue::int_tuple({4, 4})}}));
  add(out, "dynamic_slice", "full minor dim", Family::kIndexing, {f32({8, 8}), i32({}), i32({})},
      single("dynamic_slice", {{"slice_sizes", ParamValue::int_tuple({2, 8})}}));
  add(out, "dynamic_update_slice", "block", Family::kIndexing, {f32({8, 8}), f32({4, 4}), i32({}), i32({})},
      single("dynamic_update_slice", {}));
  add(out, "dynamic_update_slice", "whole major dim", Family::kIndexing, {i32({8, 8}), i32({8, 4}), i32({}), i32({})},
      single("dynamic_update_slice", {}));
  const Params gather = {
      {"dimension_numbers", gather_dimension_numbers_param({{1}, {0}, {0}, {}, {}})},
      {"slice_sizes", ParamValue::int_tuple({1, 4})},
      {"indices_are_sorted", false},
      {"unique_indices", false},
      {"mode", gather_mode_param(GatherMode::kClip)},
      {"fill_value", ParamValue::None{}},
  };
  add(out, "gather", "rows", Family::kIndexing, {f32({8, 4}), i32({4, 1})}, single("gather", gather));
  const Params scatter = {
      {"dimension_numbers",
       ParamValue::tuple({ParamValue::int_tuple({1}), ParamValue::int_tuple({0}), ParamValue::int_tuple({0}),
                          ParamValue::int_tuple({}), ParamValue::int_tuple({})})},
      {"indices_are_sorted", false},
      {"unique_indices", false},
      {"mode", gather_mode_param(GatherMode::kClip)},
      {"update_jaxpr", ParamValue::None{}},
      {"update_consts", ParamValue::tuple({})},
  };
  add(out, "scatter-add", "rows", Family::kIndexing, {f32({8, 4}), i32({4, 1}), f32({4, 4})},
      single("scatter-add", scatter));
  // Unique rows for the overwriting scatter, so every layout agrees on which update lands last.
  Params unique = scatter;
  for (auto& [key, value] : unique) {
    if (key == "unique_indices") value = true;
  }
  add(out, "scatter", "unique rows", Family::kIndexing, {f32({8, 4}), i32({1, 1}), f32({1, 4})},
      single("scatter", unique));
  for (const char* name : {"scatter-sub", "scatter-mul", "scatter-min", "scatter-max"}) {
    add(out, name, "rows", Family::kIndexing, {f32({8, 4}), i32({4, 1}), f32({4, 4})}, single(name, scatter));
  }
  const auto sort = [](int64_t dimension, int64_t num_keys) {
    return Params{{"dimension", dimension}, {"is_stable", true}, {"num_keys", num_keys}};
  };
  add(out, "sort", "minor dim", Family::kIndexing, {f32({4, 8})}, single("sort", sort(1, 1)));
  add(out, "sort", "major dim with a value operand", Family::kIndexing, {f32({8, 4}), i32({8, 4})},
      single("sort", sort(0, 1)));
  add(out, "top_k", "minor dim", Family::kIndexing, {f32({4, 8})},
      single("top_k", {{"axis", int64_t{1}}, {"is_stable", true}, {"k", int64_t{3}}}));
  add(out, "stop_gradient", "rank 2", Family::kElementwise, {f32({4, 8})}, single("stop_gradient", {}));
}

void reduction_samples(std::vector<Sample>& out) {
  const auto axes = [](std::vector<int64_t> a) {
    return Params{{"axes", ParamValue::int_tuple(a)}, {"out_sharding", ParamValue::None{}}};
  };
  for (const char* name : {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min"}) {
    add(out, name, "minor", Family::kReduction, {f32({4, 8})}, single(name, axes({1})));
    add(out, name, "outer dims of rank 3", Family::kReduction, {f32({2, 4, 8})}, single(name, axes({0, 2})));
    add(out, name, "to scalar", Family::kReduction, {f32({4, 8})}, single(name, axes({0, 1})));
  }
  add(out, "reduce_sum", "integers", Family::kReduction, {i32({4, 8})}, single("reduce_sum", axes({0})));
  for (const char* name : {"reduce_and", "reduce_or", "reduce_xor"}) {
    add(out, name, "minor", Family::kReduction, {boolean({4, 8})},
        single(name, {{"axes", ParamValue::int_tuple({1})}}));
    add(out, name, "major", Family::kReduction, {boolean({4, 8})},
        single(name, {{"axes", ParamValue::int_tuple({0})}}));
  }
  for (const char* name : {"argmax", "argmin"}) {
    for (const int64_t axis : {0, 1}) {
      add(out, name, "axis " + std::to_string(axis), Family::kReduction, {f32({4, 8})},
          single(name, {{"axes", ParamValue::int_tuple({axis})}, {"index_dtype", DType::kInt32}}));
    }
  }
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin"}) {
    add(out, name, "minor", Family::kReduction, {f32({4, 8})},
        single(name, {{"axis", int64_t{1}}, {"reverse", false}}));
    add(out, name, "major reversed", Family::kReduction, {f32({4, 8})},
        single(name, {{"axis", int64_t{0}}, {"reverse", true}}));
  }
}

void contraction_samples(std::vector<Sample>& out) {
  const auto dot = [](std::vector<int64_t> lc, std::vector<int64_t> rc, std::vector<int64_t> lb,
                      std::vector<int64_t> rb) {
    return single("dot_general", {{"dimension_numbers", dot_dimension_numbers_param(lc, rc, lb, rb)},
                                  {"precision", ParamValue::None{}},
                                  {"preferred_element_type", ParamValue::None{}}});
  };
  add(out, "dot_general", "matmul", Family::kContraction, {f32({4, 8}), f32({8, 4})}, dot({1}, {0}, {}, {}));
  add(out, "dot_general", "batched", Family::kContraction, {f32({2, 4, 8}), f32({2, 8, 4})}, dot({2}, {1}, {0}, {0}));
  add(out, "dot_general", "inner product", Family::kContraction, {f32({8}), f32({8})}, dot({0}, {0}, {}, {}));
  add(out, "dot_general", "transposed operands", Family::kContraction, {f32({8, 4}), f32({2, 8})},
      dot({0}, {1}, {}, {}));
  add(out, "dot_general", "integers", Family::kContraction, {i32({4, 8}), i32({8, 4})}, dot({1}, {0}, {}, {}));
  const auto conv = [](std::vector<int64_t> strides, std::vector<std::pair<int64_t, int64_t>> padding,
                       std::vector<int64_t> rhs_dilation, ConvDims dims, int64_t feature_groups, int64_t batch_groups) {
    ConvParams params;
    params.window_strides = std::move(strides);
    params.padding = std::move(padding);
    params.lhs_dilation = {1, 1};
    params.rhs_dilation = std::move(rhs_dilation);
    params.dims = std::move(dims);
    params.feature_group_count = feature_groups;
    params.batch_group_count = batch_groups;
    return single("conv_general_dilated", conv_params_to_params(params));
  };
  const ConvDims nchw{{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}};
  add(out, "conv_general_dilated", "same padding", Family::kContraction, {f32({8, 4, 8, 8}), f32({8, 4, 3, 3})},
      conv({1, 1}, {{1, 1}, {1, 1}}, {1, 1}, nchw, 1, 1));
  add(out, "conv_general_dilated", "NHWC strided dilated", Family::kContraction, {f32({8, 8, 8, 4}), f32({3, 3, 4, 8})},
      conv({2, 1}, {{0, 1}, {2, 0}}, {1, 2}, {{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}}, 1, 1));
  add(out, "conv_general_dilated", "feature groups", Family::kContraction, {f32({8, 8, 8, 8}), f32({8, 4, 3, 3})},
      conv({1, 1}, {{1, 1}, {1, 1}}, {1, 1}, nchw, 2, 1));
  add(out, "conv_general_dilated", "batch groups", Family::kContraction, {f32({8, 4, 8, 8}), f32({8, 4, 3, 3})},
      conv({1, 1}, {{0, 0}, {0, 0}}, {1, 1}, nchw, 1, 2));
  const auto window = [](std::vector<int64_t> dims, std::vector<int64_t> strides,
                         std::vector<std::pair<int64_t, int64_t>> padding) {
    WindowParams params;
    params.window_dimensions = std::move(dims);
    params.window_strides = std::move(strides);
    params.padding = std::move(padding);
    params.base_dilation.assign(params.window_dimensions.size(), 1);
    params.window_dilation.assign(params.window_dimensions.size(), 1);
    return params;
  };
  const WindowParams pool = window({1, 2, 2, 1}, {1, 2, 2, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}});
  const WindowParams same = window({1, 3, 2, 1}, {1, 1, 2, 1}, {{0, 0}, {1, 1}, {0, 1}, {0, 0}});
  for (const char* name : {"reduce_window_sum", "reduce_window_max", "reduce_window_min"}) {
    add(out, name, "2x2 pool", Family::kContraction, {f32({8, 8, 8, 4})}, single(name, window_params_to_params(pool)));
    add(out, name, "padded strided window", Family::kContraction, {f32({8, 8, 8, 4})},
        single(name, window_params_to_params(same)));
  }
  Params gather = window_params_to_params(same);
  gather.insert(gather.begin(), {"select_prim", ParamValue("ge")});
  add(out, "select_and_gather_add", "max pool tangents", Family::kContraction, {f32({8, 8, 8, 4}), f32({8, 8, 8, 4})},
      single("select_and_gather_add", gather));
  std::vector<ParamValue> pads;
  for (const auto& [lo, hi] : same.padding) pads.push_back(ParamValue::int_tuple({lo, hi}));
  add(out, "select_and_scatter_add", "max pool cotangents", Family::kContraction,
      {f32({8, 8, 4, 4}), f32({8, 8, 8, 4})},
      single("select_and_scatter_add", {{"select_prim", ParamValue("le")},
                                        {"window_dimensions", ParamValue::int_tuple(same.window_dimensions)},
                                        {"window_strides", ParamValue::int_tuple(same.window_strides)},
                                        {"padding", ParamValue::tuple(pads)}}));
}

void program_samples(std::vector<Sample>& out) {
  JaxprBuilder inner;
  const Var x = inner.arg(f32({4, 8}));
  const Var y = inner.arg(f32({4, 8}));
  const JaxprPtr body = inner.build({inner.bind1("mul", {inner.bind1("sin", {x}), y}), y});
  add(out, "jit", "two outputs", Family::kProgram, {f32({4, 8}), f32({4, 8})},
      single("jit", {{"jaxpr", ParamValue::JaxprRef(body)}, {"name", "f"}}));
  add(out, "sharding_constraint", "unconstrained", Family::kProgram, {f32({4, 8})},
      single("sharding_constraint", {{"sharding", ParamValue::None{}}}));
  // A constraint naming the mesh's first axis on the major dim (8 divides by every mesh size used).
  add(out, "sharding_constraint", "first mesh axis", Family::kProgram, {f32({8, 4})},
      [](JaxprBuilder& b, const std::vector<Atom>& a, const Mesh& mesh) {
        static const JaxProfile profile;
        const NamedSharding sharding =
            make_named_sharding(mesh, PartitionSpec({SpecEntry::of_axes({mesh.axis_names().front()})}), profile);
        return b.bind("sharding_constraint", a, {{"sharding", sharding}});
      });
  // device_put inside a program: a layout constraint to its target sharding.
  add(out, "device_put", "first mesh axis", Family::kProgram, {f32({8, 4})},
      [](JaxprBuilder& b, const std::vector<Atom>& a, const Mesh& mesh) {
        static const JaxProfile profile;
        const NamedSharding sharding =
            make_named_sharding(mesh, PartitionSpec({SpecEntry::of_axes({mesh.axis_names().front()})}), profile);
        return b.bind("device_put", a,
                      {{"copy_semantics", ParamValue::tuple({ParamValue::Verbatim{"<CopySemantics.ALIAS: 1>"}})},
                       {"devices", ParamValue::tuple({sharding})},
                       {"srcs", ParamValue::tuple({ParamValue::None{}})}});
      });
  add(out, "pvary", "no axes", Family::kProgram, {f32({4, 8})},
      single("pvary", {{"axes", ParamValue::name_tuple({})}}));
  for (const char* cast : {"vary_unreduced_cast_p", "reduced_vary_cast_p"}) {
    add(out, cast, "no axes", Family::kProgram, {f32({4, 8})}, single(cast, {{"axes", ParamValue::name_tuple({})}}));
  }
  add(out, "reshard", "identity", Family::kProgram, {f32({4, 8})}, single("reshard", {}));
  add(out, "mesh_cast", "identity", Family::kProgram, {f32({4, 8})}, single("mesh_cast", {}));
}

void random_samples(std::vector<Sample>& out) {
  const Params impl = {{"impl", ParamValue::Verbatim{"fry"}}};
  add(out, "random_seed", "batch of seeds", Family::kRandom, {i32({4})}, single("random_seed", impl));
  for (const bool partitionable : {false, true}) {
    const std::string mode = partitionable ? "partitionable" : "original";
    add(out, "random_bits", mode, Family::kRandom, {u32({4, 2})},
        single("random_bits",
               {{"bit_width", int64_t{32}}, {"shape", ParamValue::int_tuple({8})}, {"partitionable", partitionable}}));
    add(out, "random_split", mode, Family::kRandom, {u32({4, 2})},
        single("random_split", {{"shape", ParamValue::int_tuple({2})}, {"partitionable", partitionable}}));
  }
  add(out, "random_fold_in", "batch", Family::kRandom, {u32({4, 2}), u32({4})}, single("random_fold_in", {}));
}

}  // namespace

bool needs_named_axis_or_nested_map(const std::string& primitive) {
  const Primitive* p = find_primitive(primitive);
  if (p != nullptr && p->collective_impl) return true;  // psum, all_gather, axis_index, ...: named axes only
  return primitive == "shard_map" || primitive == "xla_pmap";
}

std::vector<Sample> conformance_samples() {
  ensure_core_primitives();
  std::vector<Sample> samples;
  elementwise_samples(samples);
  layout_samples(samples);
  indexing_samples(samples);
  reduction_samples(samples);
  contraction_samples(samples);
  program_samples(samples);
  random_samples(samples);
  return samples;
}

JaxprPtr trace_sample(const Sample& sample, const Mesh& mesh) {
  JaxprBuilder builder;
  std::vector<Atom> args;
  for (const Aval& aval : sample.inputs) args.emplace_back(builder.arg(aval));
  return builder.build(sample.program(builder, args, mesh));
}

std::string misplaced_shard(const Array& array, const std::function<bool(const Buffer&, int64_t, int64_t)>& same) {
  const Shape& shape = array.shape();
  for (const Array::Shard& shard : array.shards()) {
    Shape block(shape.size());
    std::vector<int64_t> start(shape.size(), 0);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const DimSlice& s = shard.index.at(d);
      start[d] = s.full ? 0 : s.start;
      block[d] = s.full ? shape[d] : s.stop - s.start;
    }
    if (!shard.data || shard.data->shape() != block) {
      std::string text = "(";
      for (const int64_t d : block) text += std::to_string(d) + ",";
      return "shard on device " + std::to_string(shard.device.id) + " is not its block's shape " + text + ")";
    }
    for (int64_t local = 0; local < shard.data->size(); ++local) {
      int64_t rest = local;
      int64_t global = 0;
      int64_t stride = 1;
      for (std::size_t d = shape.size(); d-- > 0;) {
        global += (start[d] + rest % block[d]) * stride;
        rest /= block[d];
        stride *= shape[d];
      }
      if (!same(*shard.data, local, global)) {
        return "device " + std::to_string(shard.device.id) + " holds a wrong element at global " +
               std::to_string(global);
      }
    }
  }
  return {};
}

}  // namespace shardscope::conformance
