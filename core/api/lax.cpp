// jax.lax wrappers: the shortcuts JAX's lax functions take (no equation when nothing changes) and their params.
#include "api/lax.h"

#include <algorithm>
#include <numeric>

#include "api/session.h"
#include "api/typeof.h"
#include "base/error.h"
#include "base/python_format.h"
#include "explicit/mesh_context.h"
#include "explicit/rules_internal.h"
#include "ir/axis_env.h"
#include "trace/builder.h"
#include "trace/explicit_reshard.h"

namespace shardscope::api {
namespace {

double literal_value(const Literal& literal) {
  return std::visit([](auto v) { return static_cast<double>(v); }, literal.value);
}

bool is_iota(const std::vector<int64_t>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

ParamValue axes_param(const std::vector<std::string>& axes) { return ParamValue::name_tuple(axes); }

}  // namespace

Value py_int(int64_t value) {
  Literal literal;
  literal.value = value;
  literal.aval = Aval::of({}, default_int_dtype(session().enable_x64), true);
  return Value::scalar(std::move(literal));
}

Value py_float(double value) {
  return Value::scalar(scalar_literal(value, default_float_dtype(session().enable_x64), true));
}

Value py_bool(bool value) { return Value::scalar(scalar_literal(value ? 1.0 : 0.0, DType::kBool, false)); }

Value typed_scalar(double value, DType dtype, bool weak_type) {
  return Value::scalar(scalar_literal(value, canonicalize_dtype(dtype, session().enable_x64), weak_type));
}

int64_t canonicalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    throw Error("AxisError",
                "axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<Value> jitted(const std::string& name, const std::vector<Value>& inputs,
                          const std::function<std::vector<Value>(const std::vector<Value>&)>& body) {
  bool staged = current_trace() != nullptr;
  for (const Value& input : inputs) staged = staged || input.is_traced();
  if (!staged) return body(inputs);
  JaxprPtr program;
  std::vector<Value> captured;
  {
    Trace trace(name);
    std::vector<Value> args;
    for (const Value& input : inputs) args.push_back(trace.arg(input.aval()));
    Trace::Closed closed = trace.finish(body(args));
    program = consts_as_args(*closed.jaxpr);
    captured = std::move(closed.captured);
  }
  std::vector<Value> all = captured;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return api::bind("jit", all, {{"jaxpr", ParamValue::JaxprRef(program)}, {"name", name}});
}

namespace lax {

Value convert_element_type(const Value& x, DType dtype, bool weak_type) {
  dtype = canonicalize_dtype(dtype, session().enable_x64);
  if (dtype == DType::kBool) weak_type = false;
  if (x.is_scalar_literal()) {
    const auto& literal = std::get<Literal>(x.atom());
    if (literal.aval.dtype == dtype && literal.aval.weak_type == weak_type) return x;
    return Value::scalar(scalar_literal(literal_value(literal), dtype, weak_type));
  }
  if (x.aval().dtype == dtype && x.aval().weak_type == weak_type) return x;
  return bind1("convert_element_type", {x},
               {{"new_dtype", dtype}, {"sharding", ParamValue::None{}}, {"weak_type", weak_type}});
}

Value unary(const std::string& primitive, const Value& x) { return bind1(primitive, {x}); }

Value binary(const std::string& primitive, const Value& x, const Value& y) {
  // A weakly typed operand takes the other's dtype, as lax does for Python scalars.
  const Aval& a = x.aval();
  const Aval& b = y.aval();
  if (a.dtype != b.dtype && a.weak_type != b.weak_type) {
    if (a.weak_type) return bind1(primitive, {convert_element_type(x, b.dtype, true), y});
    return bind1(primitive, {x, convert_element_type(y, a.dtype, true)});
  }
  return bind1(primitive, {x, y});
}

Value add(const Value& x, const Value& y) { return binary("add", x, y); }
Value sub(const Value& x, const Value& y) { return binary("sub", x, y); }
Value mul(const Value& x, const Value& y) { return binary("mul", x, y); }
Value div(const Value& x, const Value& y) { return binary("div", x, y); }
Value rem(const Value& x, const Value& y) { return binary("rem", x, y); }
Value max(const Value& x, const Value& y) { return binary("max", x, y); }
Value min(const Value& x, const Value& y) { return binary("min", x, y); }
Value pow(const Value& x, const Value& y) { return bind1("pow", {x, y}); }
Value neg(const Value& x) { return unary("neg", x); }

Value integer_pow(const Value& x, int64_t y) { return bind1("integer_pow", {x}, {{"y", y}}); }

Value select_n(const Value& which, const std::vector<Value>& cases) {
  std::vector<Value> inputs{which};
  inputs.insert(inputs.end(), cases.begin(), cases.end());
  return bind1("select_n", inputs);
}

Value select(const Value& pred, const Value& on_true, const Value& on_false) {
  return select_n(pred, {on_false, on_true});
}

Value broadcast_in_dim(const Value& x, const Shape& shape, const std::vector<int64_t>& broadcast_dimensions) {
  if (x.aval().rank() == shape.size() && broadcast_dimensions.empty() && !x.is_scalar_literal()) return x;
  return bind1("broadcast_in_dim", {x},
               {{"broadcast_dimensions", ParamValue::int_tuple(broadcast_dimensions)},
                {"shape", ParamValue::int_tuple(shape)},
                {"sharding", ParamValue::None{}}});
}

Value broadcast(const Value& x, const Shape& leading_sizes) {
  if (leading_sizes.empty()) return x;
  Shape shape = leading_sizes;
  const Shape& operand = shape_of(x);
  shape.insert(shape.end(), operand.begin(), operand.end());
  std::vector<int64_t> dims(operand.size());
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(leading_sizes.size()));
  return broadcast_in_dim(x, shape, dims);
}

Value broadcast_to_rank(const Value& x, int64_t rank) {
  const int64_t ndim = ndim_of(x);
  if (ndim == rank) return x;
  return broadcast(x, Shape(static_cast<std::size_t>(rank - ndim), 1));
}

Value reshape(const Value& x, const Shape& new_sizes) {
  if (!shape_of(x).empty() && shape_of(x) == new_sizes && !x.is_scalar_literal()) return x;
  return bind1("reshape", {x},
               {{"dimensions", ParamValue::None{}},
                {"new_sizes", ParamValue::int_tuple(new_sizes)},
                {"sharding", ParamValue::None{}}});
}

Value transpose(const Value& x, const std::vector<int64_t>& permutation) {
  if (is_iota(permutation) && !x.is_scalar_literal()) return x;
  return bind1("transpose", {x}, {{"permutation", ParamValue::int_tuple(permutation)}});
}

Value squeeze(const Value& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty() && !x.is_scalar_literal()) return x;
  std::vector<int64_t> dims;
  for (const int64_t d : dimensions) dims.push_back(canonicalize_axis(d, ndim_of(x)));
  std::sort(dims.begin(), dims.end());
  return bind1("squeeze", {x}, {{"dimensions", ParamValue::int_tuple(dims)}});
}

Value expand_dims(const Value& x, const std::vector<int64_t>& dimensions) {
  if (dimensions.empty()) return x;
  const int64_t out_rank = ndim_of(x) + static_cast<int64_t>(dimensions.size());
  std::vector<int64_t> dims;
  for (const int64_t d : dimensions) dims.push_back(canonicalize_axis(d, out_rank));
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) throw value_error("repeated axis in expand_dims");
  Shape shape = shape_of(x);
  for (const int64_t d : dims) shape.insert(shape.begin() + d, 1);
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (!std::binary_search(dims.begin(), dims.end(), d)) kept.push_back(d);
  }
  return broadcast_in_dim(x, shape, kept);
}

Value concatenate(const std::vector<Value>& operands, int64_t dimension) {
  if (operands.empty()) throw value_error("concatenate requires a non-empty sequences of arrays");
  if (operands.size() == 1 && !operands[0].is_scalar_literal()) return operands[0];
  return bind1("concatenate", operands, {{"dimension", dimension}});
}

Value stack(const std::vector<Value>& operands, int64_t axis) {
  // lax.stack reads operands[0] (for the axis) before the primitive checks the list.
  if (operands.empty()) throw Error("IndexError", "list index out of range");
  return bind1("stack", operands, {{"axis", canonicalize_axis(axis, ndim_of(operands[0]) + 1)}});
}

std::vector<Value> unstack(const Value& x, int64_t axis) {
  return bind("unstack", {x}, {{"axis", canonicalize_axis(axis, ndim_of(x))}});
}

Value slice(const Value& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::optional<std::vector<int64_t>>& strides) {
  const bool whole = std::all_of(start.begin(), start.end(), [](int64_t s) { return s == 0; }) &&
                     Shape(limit.begin(), limit.end()) == shape_of(x);
  if (whole && !strides && !x.is_scalar_literal()) return x;
  return bind1("slice", {x},
               {{"limit_indices", ParamValue::int_tuple(limit)},
                {"start_indices", ParamValue::int_tuple(start)},
                {"strides", strides ? ParamValue::int_tuple(*strides) : ParamValue(ParamValue::None{})}});
}

Value pad(const Value& x, const Value& padding_value, const std::vector<std::array<int64_t, 3>>& config) {
  std::vector<ParamValue> dims;
  dims.reserve(config.size());
  for (const auto& [low, high, interior] : config) dims.push_back(ParamValue::int_tuple({low, high, interior}));
  return bind1("pad", {x, padding_value}, {{"padding_config", ParamValue::tuple(std::move(dims))}});
}

Value dynamic_slice(const Value& x, const std::vector<Value>& start_indices, const std::vector<int64_t>& sizes) {
  std::vector<Value> inputs{x};
  inputs.insert(inputs.end(), start_indices.begin(), start_indices.end());
  return bind1("dynamic_slice", inputs, {{"slice_sizes", ParamValue::int_tuple(sizes)}});
}

Value dynamic_update_slice(const Value& x, const Value& update, const std::vector<Value>& start_indices) {
  std::vector<Value> inputs{x, update};
  inputs.insert(inputs.end(), start_indices.begin(), start_indices.end());
  return bind1("dynamic_update_slice", inputs, {});
}

Value rev(const Value& x, const std::vector<int64_t>& dimensions) {
  return bind1("rev", {x}, {{"dimensions", ParamValue::int_tuple(dimensions)}});
}

Value broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension) {
  return bind1("iota", {},
               {{"dimension", dimension},
                {"dtype", canonicalize_dtype(dtype, session().enable_x64)},
                {"shape", ParamValue::int_tuple(shape)},
                {"sharding", ParamValue::None{}}});
}

Value iota(DType dtype, int64_t size) { return broadcasted_iota(dtype, {size}, 0); }

Value full(const Shape& shape, const Value& fill_value, std::optional<DType> dtype) {
  const bool weak = !dtype && fill_value.aval().weak_type;
  const Value fill = convert_element_type(fill_value, dtype.value_or(dtype_of(fill_value)), weak);
  if (!shape_of(fill).empty()) throw type_error("full must be called with scalar fill_value");
  return broadcast(fill, shape);
}

Value reduce(const std::string& primitive, const Value& x, const std::vector<int64_t>& axes) {
  Params params{{"axes", ParamValue::int_tuple(axes)}};
  if (primitive == "reduce_sum" || primitive == "reduce_max" || primitive == "reduce_min") {
    params.emplace_back("out_sharding", ParamValue::None{});
  }
  return bind1(primitive, {x}, std::move(params));
}

Value argminmax(const std::string& primitive, const Value& x, int64_t axis, DType index_dtype) {
  return bind1(primitive, {x},
               {{"axes", ParamValue::int_tuple({axis})},
                {"index_dtype", canonicalize_dtype(index_dtype, session().enable_x64)}});
}

Value cumulative(const std::string& primitive, const Value& x, int64_t axis, bool reverse) {
  return bind1(primitive, {x}, {{"axis", axis}, {"reverse", reverse}});
}

Value dot_general(const Value& lhs, const Value& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type, const ParamValue& out_sharding) {
  const ParamValue numbers = ParamValue::tuple(
      {ParamValue::tuple({ParamValue::int_tuple(dims.lhs_contract), ParamValue::int_tuple(dims.rhs_contract)}),
       ParamValue::tuple({ParamValue::int_tuple(dims.lhs_batch), ParamValue::int_tuple(dims.rhs_batch)})});
  ParamValue preferred = ParamValue::None{};
  if (preferred_element_type) preferred = canonicalize_dtype(*preferred_element_type, session().enable_x64);
  return bind1("dot_general", {lhs, rhs},
               {{"dimension_numbers", numbers},
                {"out_sharding", out_sharding},
                {"precision", ParamValue::None{}},
                {"preferred_element_type", preferred}});
}

namespace {

std::string python_str_tuple(const std::vector<std::string>& names) {
  std::string text = "(";
  for (std::size_t i = 0; i < names.size(); ++i) text += (i > 0 ? ", '" : "'") + names[i] + "'";
  return text + (names.size() == 1 ? ",)" : ")");
}

// NameError for an axis no enclosing shard_map, pmap or vmap binds, in the words the profile's JAX uses
// when a traced collective named `api` checks its axes.
void check_axes_bound(const std::vector<std::string>& axes, const std::string& api) {
  const std::optional<std::string> missing = first_unbound_axis(axes);
  if (!missing) return;
  const JaxProfile& profile = session().profile;
  if (profile.has(JaxFeature::kUnboundAxisFoundMessage)) {
    throw Error("NameError", "Found an unbound axis name: " + *missing + ". To fix this, please call " + api +
                                 " under `jax.shard_map`.");
  }
  if (profile.has(JaxFeature::kUnboundAxisShortMessage)) throw Error("NameError", "unbound axis name: " + *missing);
  throw Error("NameError", "unbound axis name: " + *missing +
                               ". The following axis names (e.g. defined by pmap) are available to collective "
                               "operations: [" +
                               join(bound_axis_names(), ", ") + "]");
}

// The group size JAX computes as psum(1, axes) before binding (all_gather, psum_scatter, all_to_all,
// pmean, axis_size): an unbound name fails there, with the axis environment's shorter message.
int64_t constant_axes_size(const std::vector<std::string>& axes) {
  if (first_unbound_axis(axes) && !session().profile.has(JaxFeature::kUnboundAxisShortMessage)) {
    check_axes_bound(axes, "psum");
  }
  return axes_size(axes);
}

Value bind_pvary(const Value& x, const std::vector<std::string>& axes) {
  // pvary orders its axes by the mesh; a name the mesh lacks fails JAX's (message-less) assertion there.
  if (first_unbound_axis(axes)) throw Error("AssertionError", "");
  return bind("pvary", {x}, {{"axes", axes_param(in_binding_order(axes))}}).at(0);
}

// JAX's insert_collective_pvary: under a check_vma shard_map a collective first casts its operand to vary
// over the collective's axes, so invariant operands (constants, psum results) are accepted.
Value with_collective_pvary(const Value& x, const std::vector<std::string>& axes) {
  if (!vma_checking()) return x;
  std::vector<std::string> missing;
  for (const std::string& axis : axes) {
    const auto& varying = x.aval().varying;
    if (std::find(varying.begin(), varying.end(), axis) == varying.end()) missing.push_back(axis);
  }
  if (missing.empty()) return x;
  return bind_pvary(x, missing);
}

bool eager_outside_maps(const Value& x) { return !x.is_traced() && current_trace() == nullptr; }

// psum/pmax/pmin: constants (values outside any trace) reduce without communicating.
Value reduction_collective(const std::string& primitive, const Value& x, const std::vector<std::string>& axes) {
  if (axes.empty()) return x;
  Value operand = x;
  if (primitive == "psum" && dtype_of(operand) == DType::kBool) operand = convert_element_type(operand, DType::kInt32);
  if (eager_outside_maps(operand)) {
    if (primitive != "psum") {
      check_axes_bound(axes, "psum");
      return operand;
    }
    return mul(typed_scalar(static_cast<double>(constant_axes_size(axes)), dtype_of(operand), operand.aval().weak_type),
               operand);
  }
  const Params params{{"axes", axes_param(axes)}, {"axis_index_groups", ParamValue::None{}}};
  if (vma_checking()) {
    if (!session().profile.has(JaxFeature::kAvalVaryingManualAxes)) {
      // The check_rep era: shard_map bodies rewrote psum to psum2 (pmax and pmin kept their names).
      check_axes_bound(axes, "psum");
      return bind1(primitive == "psum" ? "psum2" : primitive, {operand}, params);
    }
    operand = with_collective_pvary(operand, axes);
    check_axes_bound(axes, "psum");
    if (primitive == "psum") return bind1("psum_invariant", {operand}, {{"axes", axes_param(axes)}});
    return bind1(primitive, {operand}, params);
  }
  check_axes_bound(axes, "psum");
  return bind1(primitive, {operand}, params);
}

}  // namespace

Value psum(const Value& x, const std::vector<std::string>& axes) { return reduction_collective("psum", x, axes); }
Value pmax(const Value& x, const std::vector<std::string>& axes) { return reduction_collective("pmax", x, axes); }
Value pmin(const Value& x, const std::vector<std::string>& axes) { return reduction_collective("pmin", x, axes); }

Value pmean(const Value& x, const std::vector<std::string>& axes) {
  const Value total = psum(x, axes);
  // x / n with n a Python int: jnp.true_divide's promotion (int operands become float).
  const DType dtype = is_floating(dtype_of(total)) ? dtype_of(total) : default_float_dtype(session().enable_x64);
  const bool weak = total.aval().weak_type;
  return div(convert_element_type(total, dtype, weak),
             typed_scalar(static_cast<double>(constant_axes_size(axes)), dtype, weak));
}

int64_t axis_size(const std::vector<std::string>& axes) { return constant_axes_size(axes); }

Value all_gather(const Value& x, const std::vector<std::string>& axes, int64_t axis, bool tiled) {
  if (axes.empty()) return x;
  const int64_t size = constant_axes_size(axes);
  const Value operand = with_collective_pvary(x, axes);
  check_axes_bound(axes, "all_gather");
  const int64_t rank = ndim_of(operand);
  return bind1("all_gather", {operand},
               {{"all_gather_dimension", canonicalize_axis(axis, tiled ? rank : rank + 1)},
                {"axis_index_groups", ParamValue::None{}},
                {"axis_name", axes_param(axes)},
                {"axis_size", size},
                {"tiled", tiled}});
}

Value all_gather_invariant(const Value& x, const std::vector<std::string>& axes, int64_t axis, bool tiled) {
  if (axes.empty()) return x;
  const int64_t size = constant_axes_size(axes);
  const Value operand = with_collective_pvary(x, axes);
  check_axes_bound(axes, "all_gather_invariant");
  const int64_t rank = ndim_of(operand);
  return bind1("all_gather_invariant", {operand},
               {{"all_gather_dimension", canonicalize_axis(axis, tiled ? rank : rank + 1)},
                {"axis_name", axes_param(axes)},
                {"axis_size", size},
                {"tiled", tiled}});
}

Value psum_scatter(const Value& x, const std::vector<std::string>& axes, int64_t scatter_dimension, bool tiled) {
  if (axes.empty()) return x;
  const int64_t size = constant_axes_size(axes);
  const Value operand = with_collective_pvary(x, axes);
  check_axes_bound(axes, "reduce_scatter");
  return bind1("reduce_scatter", {operand},
               {{"axis_index_groups", ParamValue::None{}},
                {"axis_name", axes_param(axes)},
                {"axis_size", size},
                {"scatter_dimension", canonicalize_axis(scatter_dimension, ndim_of(operand))},
                {"tiled", tiled}});
}

Value ppermute(const Value& x, const std::vector<std::string>& axes,
               const std::vector<std::pair<int64_t, int64_t>>& perm) {
  const Value operand = with_collective_pvary(x, axes);
  check_axes_bound(axes, "ppermute");
  std::vector<ParamValue> pairs;
  for (const auto& [source, target] : perm) pairs.push_back(ParamValue::int_tuple({source, target}));
  return bind1("ppermute", {operand}, {{"axis_name", axes_param(axes)}, {"perm", ParamValue::tuple(pairs)}});
}

Value all_to_all(const Value& x, const std::vector<std::string>& axes, int64_t split_axis, int64_t concat_axis,
                 bool tiled, bool axis_name_is_tuple) {
  int64_t split = canonicalize_axis(split_axis, ndim_of(x));
  int64_t concat = canonicalize_axis(concat_axis, ndim_of(x));
  const int64_t group = constant_axes_size(axes);
  const int64_t split_size = shape_of(x)[static_cast<std::size_t>(split)];
  // The param (and the error text) keep the axis name as the caller wrote it: a bare name or a tuple.
  const std::string axis_name_text = axis_name_is_tuple ? python_str_tuple(axes) : axes.front();
  Value operand = x;
  if (tiled) {
    if (split_size % group != 0) {
      throw value_error("The size of all_to_all split_axis (" + std::to_string(split_size) +
                        ") has to be divisible by the size of the named axis " + axis_name_text + " (" +
                        std::to_string(group) + ")");
    }
  } else {
    if (group != split_size) {
      throw value_error(
          "all_to_all requires the size of the mapped axis axis_name to equal x.shape[split_axis], but they are " +
          std::to_string(group) + " and " + std::to_string(split_size) + " respectively.");
    }
    if (split < concat) {
      ++concat;
      operand = expand_dims(operand, {concat});
    } else if (concat < split) {
      operand = expand_dims(operand, {concat});
      ++split;
    }
  }
  operand = with_collective_pvary(operand, axes);
  check_axes_bound(axes, "all_to_all");
  const ParamValue axis_name = axis_name_is_tuple || axes.size() != 1 ? axes_param(axes) : ParamValue(axes.front());
  Value result = bind1("all_to_all", {operand},
                       {{"axis_index_groups", ParamValue::None{}},
                        {"axis_name", axis_name},
                        {"concat_axis", concat},
                        {"split_axis", split},
                        {"tiled", tiled}});
  if (!tiled && split != concat) result = squeeze(result, {split});
  return result;
}

Value axis_index(const std::vector<std::string>& axes, bool axis_name_is_tuple) {
  if (axes.size() == 1 && !axis_name_is_tuple) {
    check_axes_bound(axes, "axis_index");
    return bind1("axis_index", {}, {{"axis_name", axes.front()}});
  }
  // Several axes: a row-major combination of the per-axis indices, built as JAX's Python loop builds it.
  Value index = typed_scalar(0, DType::kInt32, true);
  int64_t inner = 1;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    check_axes_bound({*it}, "axis_index");
    const Value part = bind1("axis_index", {}, {{"axis_name", *it}});
    index = add(index, mul(part, typed_scalar(static_cast<double>(inner), DType::kInt32, true)));
    inner *= shardscope::axis_size(*it);
  }
  return index;
}

Value pvary(const Value& x, const std::vector<std::string>& axes) {
  if (axes.empty()) return x;
  if (eager_outside_maps(x)) throw value_error("pvary should be called under jax.shard_map.");
  if (!vma_checking()) {
    // Without varying types there is nothing to cast; names no map binds still fail.
    check_axes_bound(axes, "pvary");
    return x;
  }
  for (const std::string& axis : axes) {
    const auto& varying = x.aval().varying;
    if (std::find(varying.begin(), varying.end(), axis) != varying.end()) {
      throw value_error(
          "pvary is a invariant->variant collective. This means that the axis names mentioned in `axes` passed to "
          "`pvary` must not be present in `jax.typeof(inp).mat.varying`. Got axes=" +
          python_str_tuple(axes) + " and jax.typeof(inp)=" + typeof_text(x, session().profile));
    }
  }
  return bind_pvary(x, axes);
}

Value pcast(const Value& x, const std::vector<std::string>& axes, const std::string& to) {
  if (axes.empty()) return x;
  // Each named axis is varying or invarying for this value (unreduced and reduced states are not modelled).
  bool any_varying = false;
  bool any_invarying = false;
  for (const std::string& axis : axes) {
    const auto& varying = x.aval().varying;
    (std::find(varying.begin(), varying.end(), axis) != varying.end() ? any_varying : any_invarying) = true;
  }
  if (any_varying && any_invarying) {
    throw value_error(
        "jax.lax.pcast can only accept axis_name which corresponds to one of varying, unreduced, reduced or "
        "invarying state of the input. Got input type: " +
        typeof_text(x, session().profile) + ", axes: " + python_str_tuple(axes) +
        " and input state: {'varying', 'invarying'}");
  }
  const std::string from = any_varying ? "varying" : "invarying";
  if (from == "invarying" && to == "varying") return pvary(x, axes);
  if (from == "varying" && to == "unreduced") {
    return bind("vary_unreduced_cast_p", {x}, {{"axes", axes_param(in_binding_order(axes))}}).at(0);
  }
  if (from == "invarying" && to == "reduced") {
    throw not_implemented_error("jax.lax.pcast(..., to='" + to +
                                "') is not supported by shardscope (reduced and unreduced manual types)");
  }
  throw value_error("Unsupported pcast from=" + from + ", to='" + to + "'");
}

Value with_sharding_constraint(const Value& x, const NamedSharding& sharding) {
  if (explicit_rules::constraint_is_type_assertion(get_abstract_mesh(), x.aval(), sharding, session().profile)) {
    return x;
  }
  return bind1(
      "sharding_constraint", {x},
      {{"sharding", sharding}, {"layout", ParamValue::None{}}, {"unconstrained_dims", ParamValue::FrozenSet{}}});
}

Value device_put(const Value& x, const NamedSharding& sharding) {
  return bind1("device_put", {x},
               {{"copy_semantics", ParamValue::tuple({ParamValue::Verbatim{"<CopySemantics.ALIAS: 1>"}})},
                {"devices", ParamValue::tuple({sharding})},
                {"srcs", ParamValue::tuple({ParamValue::None{}})}});
}

}  // namespace lax
}  // namespace shardscope::api
