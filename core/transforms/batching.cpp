// The vmap driver: rule registry, equation-by-equation batching, in_axes/out_axes handling and JAX's errors.
#include "transforms/batching.h"

#include <map>
#include <mutex>
#include <numeric>

#include "base/error.h"
#include "ops/ops.h"
#include "transforms/control_flow_rules.h"
#include "transforms/conv_rules.h"
#include "transforms/window_rules.h"

namespace shardscope {
namespace {

std::map<std::string, BatchRule>& rule_table() {
  static std::map<std::string, BatchRule> table;
  return table;
}

std::string shape_text(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) text += shape.size() == 1 ? "," : ", ";
  }
  return text + ")";
}

// api._mapped_axis_size: one size for every mapped argument, or JAX's ValueError.
int64_t mapped_axis_size(const std::vector<Aval>& avals, const std::vector<std::optional<int64_t>>& in_axes) {
  std::vector<std::optional<int64_t>> sizes(avals.size());
  for (std::size_t i = 0; i < avals.size(); ++i) {
    if (!in_axes[i]) continue;
    const int64_t axis = *in_axes[i];
    const auto rank = static_cast<int64_t>(avals[i].rank());
    if (axis >= rank || axis < -rank) {
      const int64_t min_rank = axis >= 0 ? axis + 1 : -axis;
      throw value_error("vmap was requested to map its argument along axis " + std::to_string(axis) +
                        ", which implies that its rank should be at least " + std::to_string(min_rank) +
                        ", but is only " + std::to_string(rank) + " (its shape is " + shape_text(avals[i].shape) + ")");
    }
    sizes[i] = avals[i].shape[static_cast<std::size_t>(axis < 0 ? axis + rank : axis)];
  }
  // Distinct sizes by how many axes have them, most common first (ties: first seen), as Counter orders.
  std::vector<std::pair<int64_t, int64_t>> counts;
  for (const auto& size : sizes) {
    if (!size) continue;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == *size; });
    if (it == counts.end()) {
      counts.emplace_back(*size, 1);
    } else {
      ++it->second;
    }
  }
  if (counts.empty())
    throw value_error("vmap must have at least one non-None value in in_axes or axis_size must be specified");
  if (counts.size() == 1) return counts[0].first;
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  auto example = [&](int64_t size) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == size) {
        return "axis " + std::to_string(*in_axes[i]) + " of args[" + std::to_string(i) + "] of type " +
               avals[i].str_short(false);
      }
    }
    return std::string();
  };
  std::string message = "vmap got inconsistent sizes for array axes to be mapped:\n";
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const auto [size, count] = counts[k];
    if (count == 1) {
      message += "  * one axis had size " + std::to_string(size) + ": " + example(size) + ";\n";
    } else {
      message += std::string(k == 0 ? "  * most axes (" : "  * some axes (") + std::to_string(count) +
                 " of them) had size " + std::to_string(size) + ", e.g. " + example(size) + ";\n";
    }
  }
  throw value_error(message.substr(0, message.size() - 2));
}

bool names_axis(const Params& params, const std::string& name);

bool value_names_axis(const ParamValue& value, const std::string& name) {
  if (const auto* text = value.get_if<std::string>()) return *text == name;
  if (const auto* tuple = value.get_if<ParamValue::Tuple>()) {
    return std::any_of(tuple->items.begin(), tuple->items.end(),
                       [&](const ParamValue& item) { return value_names_axis(item, name); });
  }
  return false;
}

// Whether a collective's axes (or a nested jaxpr's) include the axis name.
bool names_axis(const Params& params, const std::string& name) {
  for (const auto& [key, value] : params) {
    if ((key == "axes" || key == "axis_name") && value_names_axis(value, name)) return true;
    if (const auto* jaxpr = value.get_if<ParamValue::JaxprRef>(); jaxpr != nullptr && *jaxpr) {
      for (const Eqn& eqn : (*jaxpr)->eqns) {
        if (names_axis(eqn.params, name)) return true;
      }
    }
  }
  return false;
}

}  // namespace

void register_batch_rule(const std::string& primitive, BatchRule rule) { rule_table()[primitive] = std::move(rule); }

const BatchRule* find_batch_rule(const std::string& primitive) {
  const auto& table = rule_table();
  const auto it = table.find(primitive);
  return it == table.end() ? nullptr : &it->second;
}

void ensure_batch_rules() {
  static std::once_flag once;
  std::call_once(once, [] {
    ensure_core_primitives();
    batching::register_elementwise_batch_rules();
    batching::register_structural_batch_rules();
    batching::register_reduction_batch_rules();
    batching::register_program_batch_rules();
    batching::register_control_flow_batch_rules();
    register_conv_batch_rule();
    register_window_batch_rules();
  });
}

std::vector<BatchedValue> batch_jaxpr_into(JaxprBuilder& builder, const Jaxpr& jaxpr,
                                           std::span<const BatchedValue> args, const BatchAxis& axis) {
  ensure_batch_rules();
  if (args.size() != jaxpr.invars.size()) {
    throw type_error("vmap: the jaxpr takes " + std::to_string(jaxpr.invars.size()) + " arguments, got " +
                     std::to_string(args.size()));
  }
  std::map<int64_t, BatchedValue> env;
  for (const Var& constvar : jaxpr.constvars) env[constvar.id] = {builder.constant(constvar.aval), std::nullopt};
  for (std::size_t i = 0; i < args.size(); ++i) env[jaxpr.invars[i].id] = args[i];
  auto read = [&](const Atom& atom) -> BatchedValue {
    if (const auto* var = std::get_if<Var>(&atom)) return env.at(var->id);
    return {atom, std::nullopt};
  };
  for (const Eqn& eqn : jaxpr.eqns) {
    const SourceScope source(source_or_current(eqn.source));
    std::vector<BatchedValue> inputs;
    for (const Atom& atom : eqn.inputs) inputs.push_back(read(atom));
    std::vector<BatchedValue> outputs;
    const bool any_mapped = std::any_of(inputs.begin(), inputs.end(), [](const auto& v) { return v.batch_dim; });
    const BatchRule* rule = find_batch_rule(eqn.primitive->name);
    // Equations without mapped inputs are rebound unchanged, except those naming the vmapped axis
    // (axis_index, psum of a constant, a jit around them): their value depends on the batch position.
    if (!any_mapped && !(axis.name && names_axis(eqn.params, *axis.name))) {
      outputs = batching::all_at(builder.bind(eqn.primitive->name, batching::values(inputs), eqn.params), std::nullopt);
    } else {
      if (rule == nullptr) {
        throw not_implemented_error("Batching rule for '" + eqn.primitive->name + "' not implemented");
      }
      outputs = (*rule)(builder, inputs, eqn.params, axis);
    }
    if (outputs.size() != eqn.outputs.size()) {
      throw runtime_error("batching rule for " + eqn.primitive->name + " returned " + std::to_string(outputs.size()) +
                          " results, expected " + std::to_string(eqn.outputs.size()));
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) env[eqn.outputs[i].id] = outputs[i];
  }
  std::vector<BatchedValue> results;
  for (const Atom& atom : jaxpr.outvars) results.push_back(read(atom));
  return results;
}

JaxprPtr vmap_jaxpr(const Jaxpr& jaxpr, const std::vector<Aval>& batched_arg_avals,
                    const std::vector<std::optional<int64_t>>& in_axes,
                    const std::vector<std::optional<int64_t>>& out_axes, std::optional<std::string> axis_name) {
  if (in_axes.size() != batched_arg_avals.size()) {
    throw value_error(
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
        "arguments passed to the function, but got len(in_axes)=" +
        std::to_string(in_axes.size()) + ", len(args)=" + std::to_string(batched_arg_avals.size()));
  }
  if (out_axes.size() != jaxpr.outvars.size()) {
    throw value_error("vmap out_axes specification must be a tree prefix of the corresponding value, got " +
                      std::to_string(out_axes.size()) + " out_axes for " + std::to_string(jaxpr.outvars.size()) +
                      " outputs");
  }
  const int64_t size = mapped_axis_size(batched_arg_avals, in_axes);
  const BatchAxis axis{size, std::move(axis_name)};
  JaxprBuilder builder;
  std::vector<BatchedValue> args;
  for (std::size_t i = 0; i < batched_arg_avals.size(); ++i) {
    const Var v = builder.arg(batched_arg_avals[i]);
    std::optional<int64_t> dim;
    if (in_axes[i]) dim = batching::canonicalize_axis(*in_axes[i], static_cast<int64_t>(batched_arg_avals[i].rank()));
    args.push_back({v, dim});
  }
  const std::vector<BatchedValue> results = batch_jaxpr_into(builder, jaxpr, args, axis);
  std::vector<Atom> outputs;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BatchedValue& result = results[i];
    if (!out_axes[i]) {
      if (result.batch_dim) {
        if (axis.name) {
          throw value_error("vmap has mapped output (axis_name=" + *axis.name + ") but out_axes is None");
        }
        const std::string path = results.size() > 1 ? "[" + std::to_string(i) + "]" : "";
        throw value_error("at vmap out_axes" + path + ", got axis spec None but output was batched on axis " +
                          std::to_string(*result.batch_dim));
      }
      outputs.push_back(result.value);
      continue;
    }
    const int64_t out_rank = batching::rank_of(result.value) + (result.batch_dim ? 0 : 1);
    const int64_t dst = batching::canonicalize_axis(*out_axes[i], out_rank);
    outputs.push_back(batching::match_axis(builder, result, size, dst));
  }
  return builder.build(std::move(outputs));
}

namespace batching {

const Shape& shape_of(const Atom& atom) { return atom_aval(atom).shape; }
int64_t rank_of(const Atom& atom) { return static_cast<int64_t>(atom_aval(atom).rank()); }

int64_t canonicalize_axis(int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) {
    throw value_error("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                      std::to_string(ndim));
  }
  return axis < 0 ? axis + ndim : axis;
}

Atom move_axis(JaxprBuilder& builder, const Atom& x, int64_t src, int64_t dst) {
  if (src == dst) return x;
  const int64_t rank = rank_of(x);
  std::vector<int64_t> permutation;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != src) permutation.push_back(i);
  }
  permutation.insert(permutation.begin() + dst, src);
  return builder.bind1("transpose", {x}, {{"permutation", ParamValue::int_tuple(permutation)}});
}

Atom broadcast_in_dim(JaxprBuilder& builder, const Atom& x, const Shape& shape, const std::vector<int64_t>& dims) {
  return builder.bind1("broadcast_in_dim", {x},
                       {{"shape", ParamValue::int_tuple(shape)},
                        {"broadcast_dimensions", ParamValue::int_tuple(dims)},
                        {"sharding", ParamValue::None{}}});
}

Atom broadcast_axis(JaxprBuilder& builder, const Atom& x, int64_t size, int64_t axis) {
  Shape shape = shape_of(x);
  shape.insert(shape.begin() + axis, size);
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i != axis) dims.push_back(i);
  }
  return broadcast_in_dim(builder, x, shape, dims);
}

Atom broadcast_leading(JaxprBuilder& builder, const Atom& x, const Shape& sizes) {
  Shape shape = sizes;
  const Shape& old_shape = shape_of(x);
  shape.insert(shape.end(), old_shape.begin(), old_shape.end());
  std::vector<int64_t> dims(old_shape.size());
  std::iota(dims.begin(), dims.end(), static_cast<int64_t>(sizes.size()));
  return broadcast_in_dim(builder, x, shape, dims);
}

Atom expand_dims(JaxprBuilder& builder, const Atom& x, const std::vector<int64_t>& dims) {
  Shape shape = shape_of(x);
  const auto out_rank = static_cast<int64_t>(shape.size() + dims.size());
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (const int64_t d : sorted) shape.insert(shape.begin() + d, 1);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (!std::binary_search(sorted.begin(), sorted.end(), i)) kept.push_back(i);
  }
  return broadcast_in_dim(builder, x, shape, kept);
}

Atom bdim_at_front(JaxprBuilder& builder, const BatchedValue& x, int64_t size) {
  if (!x.batch_dim) return broadcast_axis(builder, x.value, size, 0);
  return move_axis(builder, x.value, *x.batch_dim, 0);
}

Atom match_axis(JaxprBuilder& builder, const BatchedValue& x, int64_t size, int64_t dst) {
  if (!x.batch_dim) return broadcast_axis(builder, x.value, size, dst);
  return move_axis(builder, x.value, *x.batch_dim, dst);
}

int64_t mapped_size(std::span<const BatchedValue> args) {
  for (const BatchedValue& arg : args) {
    if (arg.batch_dim) return shape_of(arg.value)[static_cast<std::size_t>(*arg.batch_dim)];
  }
  throw runtime_error("batching rule called without a mapped argument");
}

std::vector<Atom> values(std::span<const BatchedValue> args) {
  std::vector<Atom> out;
  out.reserve(args.size());
  for (const BatchedValue& arg : args) out.push_back(arg.value);
  return out;
}

Params with_param(Params params, const std::string& key, ParamValue value) {
  for (auto& [name, existing] : params) {
    if (name == key) {
      existing = std::move(value);
      return params;
    }
  }
  params.emplace_back(key, std::move(value));
  return params;
}

std::vector<BatchedValue> all_at(std::vector<Atom> outputs, std::optional<int64_t> dim) {
  std::vector<BatchedValue> out;
  out.reserve(outputs.size());
  for (Atom& atom : outputs) out.push_back({std::move(atom), dim});
  return out;
}

std::vector<BatchedValue> batch_by_unrolling(JaxprBuilder& builder, const std::string& primitive,
                                             std::span<const BatchedValue> args, const Params& params,
                                             const BatchAxis& axis) {
  std::vector<std::vector<Atom>> per_output;
  for (int64_t i = 0; i < axis.size; ++i) {
    std::vector<Atom> element_args;
    for (const BatchedValue& arg : args) {
      if (!arg.batch_dim) {
        element_args.push_back(arg.value);
        continue;
      }
      const Shape& shape = shape_of(arg.value);
      const auto dim = static_cast<std::size_t>(*arg.batch_dim);
      std::vector<int64_t> start(shape.size(), 0);
      Shape limit = shape;
      start[dim] = i;
      limit[dim] = i + 1;
      const Atom piece = builder.bind1("slice", {arg.value},
                                       {{"start_indices", ParamValue::int_tuple(start)},
                                        {"limit_indices", ParamValue::int_tuple(limit)},
                                        {"strides", ParamValue::None{}}});
      element_args.push_back(
          builder.bind1("squeeze", {piece}, {{"dimensions", ParamValue::int_tuple({*arg.batch_dim})}}));
    }
    const std::vector<Atom> outs = builder.bind(primitive, element_args, params);
    per_output.resize(outs.size());
    for (std::size_t k = 0; k < outs.size(); ++k) per_output[k].push_back(expand_dims(builder, outs[k], {0}));
  }
  std::vector<BatchedValue> results;
  for (const std::vector<Atom>& pieces : per_output) {
    results.push_back({builder.bind1("concatenate", pieces, {{"dimension", int64_t{0}}}), 0});
  }
  return results;
}

}  // namespace batching
}  // namespace shardscope
