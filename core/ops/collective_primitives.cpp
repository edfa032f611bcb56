// Collective primitives (psum, all_gather, ppermute, ...): shape rules, JAX's params, and cross-device kernels.
#include <algorithm>
#include <optional>

#include "base/error.h"
#include "ir/axis_env.h"
#include "ir/primitive.h"
#include "ops/ops.h"
#include "spmd/collectives.h"

namespace shardscope {
namespace {

std::vector<std::string> axis_names_param(const Params& params, const std::string& key) {
  const ParamValue& value = param(params, key);
  if (const auto* single = value.get_if<std::string>()) return {*single};
  std::vector<std::string> names;
  if (const auto* tuple = value.get_if<ParamValue::Tuple>()) {
    for (const ParamValue& item : tuple->items) names.push_back(item.as_string(key));
  }
  return names;
}

// The value stops varying over the reduced axes (vma).
Aval without_varying(Aval aval, const std::vector<std::string>& axes) {
  std::erase_if(aval.varying,
                [&](const std::string& a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); });
  return aval;
}

Primitive reduction_collective(const std::string& name, ReduceOp op, bool drops_varying) {
  Primitive p;
  p.name = name;
  p.multiple_results = true;
  p.abstract_eval = [drops_varying](std::span<const Aval> in, const Params& params) {
    const std::vector<std::string> axes = axis_names_param(params, "axes");
    std::vector<Aval> out;
    for (const Aval& aval : in) out.push_back(drops_varying ? without_varying(aval, axes) : aval);
    return out;
  };
  p.collective_impl = [name, op](const SpmdContext& context, std::span<const DeviceBuffers> inputs,
                                 std::span<const Aval>, const Params& params) {
    const std::vector<std::string> axes = axis_names_param(params, "axes");
    std::vector<DeviceBuffers> out;
    for (const DeviceBuffers& input : inputs)
      out.push_back(all_reduce(*context.mesh, axes, input, op, context.log, name));
    return out;
  };
  return p;
}

// all_gather (varying -> varying) and all_gather_invariant (varying -> invariant over the gathered axes):
// the same data movement, typed differently.
Primitive all_gather_primitive(const std::string& name, bool drops_varying) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [drops_varying](std::span<const Aval> in, const Params& params) {
    Aval out = in[0];
    const int64_t dimension = param(params, "all_gather_dimension").as_int("all_gather_dimension");
    const int64_t size = param(params, "axis_size").as_int("axis_size");
    if (param(params, "tiled").as_bool("tiled")) {
      out.shape[static_cast<std::size_t>(dimension)] *= size;
    } else {
      out.shape.insert(out.shape.begin() + dimension, size);
    }
    if (drops_varying) out = without_varying(out, axis_names_param(params, "axis_name"));
    return std::vector<Aval>{out};
  };
  p.collective_impl = [name](const SpmdContext& context, std::span<const DeviceBuffers> inputs, std::span<const Aval>,
                             const Params& params) {
    return std::vector<DeviceBuffers>{all_gather(*context.mesh, axis_names_param(params, "axis_name"), inputs[0],
                                                 param(params, "all_gather_dimension").as_int("all_gather_dimension"),
                                                 param(params, "tiled").as_bool("tiled"), context.log, name)};
  };
  return p;
}

Primitive reduce_scatter_primitive() {
  Primitive p;
  p.name = "reduce_scatter";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    Aval out = in[0];
    const auto dimension = static_cast<std::size_t>(param(params, "scatter_dimension").as_int("scatter_dimension"));
    const int64_t size = param(params, "axis_size").as_int("axis_size");
    if (dimension >= out.shape.size()) {
      throw value_error("reduce_scatter scatter_dimension " + std::to_string(dimension) + " is out of range for " +
                        std::to_string(out.shape.size()) + "-dimensional operand");
    }
    const int64_t input_size = out.shape[dimension];
    if (param(params, "tiled").as_bool("tiled")) {
      if (input_size % size != 0) {
        throw value_error("tiled reduce_scatter operand scatter dimension size " + std::to_string(input_size) +
                          " must be divisible by shard_count " + std::to_string(size));
      }
      out.shape[dimension] /= size;
    } else {
      if (input_size != size) {
        throw value_error("reduce_scatter operand scatter dimension size " + std::to_string(input_size) +
                          " must match shard count " + std::to_string(size));
      }
      out.shape.erase(out.shape.begin() + static_cast<std::ptrdiff_t>(dimension));
    }
    return std::vector<Aval>{out};
  };
  p.collective_impl = [](const SpmdContext& context, std::span<const DeviceBuffers> inputs, std::span<const Aval>,
                         const Params& params) {
    return std::vector<DeviceBuffers>{reduce_scatter(*context.mesh, axis_names_param(params, "axis_name"), inputs[0],
                                                     param(params, "scatter_dimension").as_int("scatter_dimension"),
                                                     param(params, "tiled").as_bool("tiled"), context.log,
                                                     "psum_scatter")};
  };
  return p;
}

// ppermute over several axes numbers devices in the order the names are written; JAX refuses an order
// other than the mesh's (its replica groups would not be sorted).
void check_mesh_order(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::optional<std::size_t> previous;
  for (const std::string& axis : axes) {
    const std::optional<std::size_t> position = mesh.axis_index(axis);
    if (!position || mesh.axis_sizes()[*position] == 1) continue;
    if (previous && *position < *previous) {
      throw runtime_error(
          "Make sure that the axis_name passed to jax.lax.ppermute is in the same order as the axis_names declared "
          "on the mesh. If you want to allow different order, you can disable the check via `with "
          "jax.raise_on_ppermute_sort_diff(False):` context manager.");
    }
    previous = position;
  }
}

Primitive ppermute_primitive() {
  Primitive p;
  p.name = "ppermute";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) { return std::vector<Aval>{in[0]}; };
  p.collective_impl = [](const SpmdContext& context, std::span<const DeviceBuffers> inputs, std::span<const Aval>,
                         const Params& params) {
    std::vector<std::pair<int64_t, int64_t>> permutation;
    const auto* pairs = param(params, "perm").get_if<ParamValue::Tuple>();
    if (pairs == nullptr) throw type_error("ppermute perm must be a tuple of (source, destination) pairs");
    for (const ParamValue& pair : pairs->items) {
      const std::vector<int64_t> ends = pair.as_ints("perm");
      permutation.emplace_back(ends.at(0), ends.at(1));
    }
    const std::vector<std::string> axes = axis_names_param(params, "axis_name");
    check_mesh_order(*context.mesh, axes);
    return std::vector<DeviceBuffers>{
        collective_permute(*context.mesh, axes, inputs[0], permutation, context.log, "ppermute")};
  };
  return p;
}

Primitive all_to_all_primitive() {
  Primitive p;
  p.name = "all_to_all";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    Aval out = in[0];
    const int64_t size = axes_size(axis_names_param(params, "axis_name"));
    const auto split = static_cast<std::size_t>(param(params, "split_axis").as_int("split_axis"));
    const auto concat = static_cast<std::size_t>(param(params, "concat_axis").as_int("concat_axis"));
    out.shape[split] /= size;
    out.shape[concat] *= size;
    return std::vector<Aval>{out};
  };
  p.collective_impl = [](const SpmdContext& context, std::span<const DeviceBuffers> inputs, std::span<const Aval>,
                         const Params& params) {
    return std::vector<DeviceBuffers>{all_to_all(*context.mesh, axis_names_param(params, "axis_name"), inputs[0],
                                                 param(params, "split_axis").as_int("split_axis"),
                                                 param(params, "concat_axis").as_int("concat_axis"), context.log,
                                                 "all_to_all")};
  };
  return p;
}

Primitive axis_index_primitive() {
  Primitive p;
  p.name = "axis_index";
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    Aval out = Aval::of({}, DType::kInt32);
    // Only a check_vma shard_map types the index as varying over its axis (pmap, vmap: no varying types).
    if (vma_checking()) out.varying = axis_names_param(params, "axis_name");
    return std::vector<Aval>{out};
  };
  p.collective_impl = [](const SpmdContext& context, std::span<const DeviceBuffers>, std::span<const Aval>,
                         const Params& params) {
    DeviceBuffers out;
    for (const int64_t index : axis_indices(*context.mesh, axis_names_param(params, "axis_name"))) {
      out.push_back(make_buffer<int32_t>(DType::kInt32, {}, {static_cast<int32_t>(index)}));
    }
    return std::vector<DeviceBuffers>{out};
  };
  return p;
}

// pvary only changes the type (the value now varies over the axes); no data moves.
Primitive pvary_primitive() {
  Primitive p;
  p.name = "pvary";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    std::vector<Aval> out(in.begin(), in.end());
    for (Aval& aval : out) {
      for (const std::string& axis : axis_names_param(params, "axes")) {
        if (std::find(aval.varying.begin(), aval.varying.end(), axis) == aval.varying.end())
          aval.varying.push_back(axis);
      }
      aval.varying = in_binding_order(aval.varying);  // a type's varying axes are a set, kept in mesh order
    }
    return out;
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>(in.begin(), in.end());
  };
  return p;
}

// A cast between manual types that moves the named axes from one of an aval's axis sets to another; only the type
// changes, no data moves.
using AxisSet = std::vector<std::string> Aval::*;
Primitive manual_type_cast(const std::string& name, AxisSet from, AxisSet to) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [from, to](std::span<const Aval> in, const Params& params) {
    Aval out = in[0];
    for (const std::string& axis : axis_names_param(params, "axes")) {
      std::vector<std::string>& source = out.*from;
      std::vector<std::string>& target = out.*to;
      source.erase(std::remove(source.begin(), source.end(), axis), source.end());
      if (std::find(target.begin(), target.end(), axis) == target.end()) target.push_back(axis);
    }
    out.*to = in_binding_order(out.*to);
    return std::vector<Aval>{out};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>(in.begin(), in.end());
  };
  return p;
}

}  // namespace

void register_collective_primitives() {
  // pcast(x, axes, to='unreduced'): a varying value becomes the partial value of an unreduced sum (JAX's
  // vary_unreduced_cast_p, printed with its _p); its transpose takes a reduced value as varying.
  register_primitive(manual_type_cast("vary_unreduced_cast_p", &Aval::varying, &Aval::unreduced));
  register_primitive(manual_type_cast("reduced_vary_cast_p", &Aval::reduced, &Aval::varying));
  register_primitive(reduction_collective("psum", ReduceOp::kSum, true));
  register_primitive(reduction_collective("psum_invariant", ReduceOp::kSum, true));
  register_primitive(reduction_collective("psum2", ReduceOp::kSum, true));
  register_primitive(reduction_collective("pmax", ReduceOp::kMax, true));
  register_primitive(reduction_collective("pmin", ReduceOp::kMin, true));
  register_primitive(all_gather_primitive("all_gather", false));
  register_primitive(all_gather_primitive("all_gather_invariant", true));
  register_primitive(reduce_scatter_primitive());
  register_primitive(ppermute_primitive());
  register_primitive(all_to_all_primitive());
  register_primitive(axis_index_primitive());
  register_primitive(pvary_primitive());
}

}  // namespace shardscope
