// XLA's scatter family (scatter, scatter-add, scatter-sub, scatter-mul, scatter-min, scatter-max): JAX's shape checks,
// the kernel that combines each update into its window, and the print rule (what `x.at[idx].set/add/...` lowers to).
#include <algorithm>
#include <set>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/structural.h"
#include "ops/structural_internal.h"

namespace shardscope {
namespace structural {
namespace {

enum class Combine { kSet, kAdd, kSub, kMul, kMin, kMax };

struct ScatterDims {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
};

ScatterDims scatter_dims(const Params& params) {
  const auto groups = int_groups(param(params, "dimension_numbers"), "dimension_numbers");
  if (groups.size() != 3 && groups.size() != 5)
    throw type_error("scatter dimension_numbers must hold 5 tuples of ints");
  ScatterDims dims{groups[0], groups[1], groups[2], {}, {}};
  if (groups.size() == 5) {
    dims.operand_batching_dims = groups[3];
    dims.scatter_indices_batching_dims = groups[4];
  }
  return dims;
}

bool contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// slicing._is_sorted, _no_duplicate_dims, _sorted_dims_in_range, _disjoint_dims with op_name "scatter".
void is_sorted(const std::vector<int64_t>& dims, const std::string& name) {
  for (std::size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] < dims[i - 1]) throw type_error(name + " in scatter op must be sorted; got " + int_tuple(dims));
  }
}

void no_duplicates(const std::vector<int64_t>& dims, const std::string& name) {
  if (std::set<int64_t>(dims.begin(), dims.end()).size() != dims.size()) {
    throw type_error(name + " in scatter op must not repeat; got: " + int_tuple(dims) + ".");
  }
}

void sorted_in_range(const std::vector<int64_t>& dims, std::size_t rank, const std::string& name) {
  if (dims.empty()) return;
  int64_t invalid = 0;
  if (dims.front() < 0) {
    invalid = dims.front();
  } else if (dims.back() >= static_cast<int64_t>(rank)) {
    invalid = dims.back();
  }
  if (invalid != 0) {
    throw type_error("Invalid " + name + " set in scatter op; valid range is [0, " + std::to_string(rank) +
                     "); got: " + std::to_string(invalid) + ".");
  }
}

void disjoint(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& name_a,
              const std::string& name_b) {
  for (const int64_t d : a) {
    if (contains(b, d)) {
      throw type_error(name_a + " and " + name_b + " in scatter op must be disjoint; got: " + int_tuple(a) + " and " +
                       int_tuple(b) + ".");
    }
  }
}

// slicing._scatter_dtype_rule and _scatter_shape_rule: the result has the operand's type.
Aval scatter_rule(const std::string& name, std::span<const Aval> avals, const Params& params) {
  check_arity(name, avals, 3);
  const Aval& operand = avals[0];
  const Aval& indices = avals[1];
  const Aval& updates = avals[2];
  if (!is_integral(indices.dtype)) throw value_error("indices must have an integer type");
  if (operand.dtype != updates.dtype) {
    throw type_error("scatter requires arguments to have the same dtypes, got " +
                     std::string(dtype_name(operand.dtype)) + ", " + std::string(dtype_name(updates.dtype)) + ".");
  }
  const ScatterDims dims = scatter_dims(params);
  if (indices.rank() == 0) {
    throw type_error(
        "Scatter index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is 0 and scatter index leaf "
        "dimension is -1.");
  }
  const std::size_t index_vector_dim = indices.rank() - 1;
  const std::size_t expected_rank = indices.rank() - 1 + dims.update_window_dims.size();
  if (updates.rank() != expected_rank) {
    throw type_error("Updates tensor must be of rank " + std::to_string(expected_rank) + "; got " +
                     std::to_string(updates.rank()) + ".");
  }
  is_sorted(dims.update_window_dims, "update_window_dims");
  no_duplicates(dims.update_window_dims, "update_window_dims");
  sorted_in_range(dims.update_window_dims, updates.rank(), "update_window_dims");
  is_sorted(dims.inserted_window_dims, "inserted_window_dims");
  no_duplicates(dims.inserted_window_dims, "inserted_window_dims");
  sorted_in_range(dims.inserted_window_dims, operand.rank(), "inserted_window_dims");
  is_sorted(dims.operand_batching_dims, "operand_batching_dims");
  no_duplicates(dims.operand_batching_dims, "operand_batching_dims");
  sorted_in_range(dims.operand_batching_dims, operand.rank(), "operand_batching_dims");
  disjoint(dims.inserted_window_dims, dims.operand_batching_dims, "inserted_window_dims", "operand_batching_dims");
  disjoint(dims.scatter_dims_to_operand_dims, dims.operand_batching_dims, "scatter_dims_to_operand_dims",
           "operand_batching_dims");
  if (dims.operand_batching_dims.size() != dims.scatter_indices_batching_dims.size()) {
    throw type_error(
        "Scatter op requires equal numbers of operand_batching_dims and scatter_indices_batching_dims, got " +
        int_tuple(dims.operand_batching_dims) + " and " + int_tuple(dims.scatter_indices_batching_dims) + ".");
  }
  const std::size_t window_size =
      dims.update_window_dims.size() + dims.inserted_window_dims.size() + dims.operand_batching_dims.size();
  if (operand.rank() != window_size) {
    throw type_error("Scatter op has window of size " + std::to_string(window_size) +
                     "; doesn't match operand of rank " + std::to_string(operand.rank()) + ".");
  }
  const auto index_depth = static_cast<int64_t>(dims.scatter_dims_to_operand_dims.size());
  if (index_depth != indices.shape[index_vector_dim]) {
    throw type_error("Scatter op has " + std::to_string(index_depth) +
                     " elements in scatter_dims_to_operand_dims and the bound of dimension index_vector_dim=" +
                     std::to_string(index_vector_dim) + " of indices is " +
                     std::to_string(indices.shape[index_vector_dim]) + ". These two numbers must be equal");
  }
  for (std::size_t i = 0; i < dims.scatter_dims_to_operand_dims.size(); ++i) {
    const int64_t dim = dims.scatter_dims_to_operand_dims[i];
    if (dim < 0 || dim >= static_cast<int64_t>(operand.rank())) {
      throw type_error("Invalid scatter_dims_to_operand_dims mapping; domain is [0, " + std::to_string(operand.rank()) +
                       "), got: " + std::to_string(i) + "->" + std::to_string(dim) + ".");
    }
  }
  no_duplicates(dims.scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims");
  std::vector<int64_t> max_update_slice_sizes;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (!contains(dims.inserted_window_dims, dim) && !contains(dims.operand_batching_dims, dim)) {
      max_update_slice_sizes.push_back(operand.shape[d]);
    }
  }
  for (std::size_t i = 0; i < dims.update_window_dims.size(); ++i) {
    const auto dim = static_cast<std::size_t>(dims.update_window_dims[i]);
    if (max_update_slice_sizes[i] < updates.shape[dim]) {
      throw type_error(
          "Bounds of the window dimensions of updates must not exceed the bounds of the corresponding dimensions of "
          "operand. For dimension " +
          std::to_string(dim) + ", updates bound is " + std::to_string(updates.shape[dim]) + ", operand bound is " +
          std::to_string(max_update_slice_sizes[i]) + ".");
    }
  }
  std::size_t scatter_dims_seen = 0;
  for (std::size_t d = 0; d < updates.rank(); ++d) {
    if (contains(dims.update_window_dims, static_cast<int64_t>(d))) continue;
    if (scatter_dims_seen == index_vector_dim) ++scatter_dims_seen;
    if (updates.shape[d] != indices.shape[scatter_dims_seen]) {
      throw type_error(
          "Bounds of the scatter dimensions of updates must be the same as the bounds of the corresponding dimensions "
          "of scatter indices. For scatter dimension " +
          std::to_string(d) + ", updates bound is " + std::to_string(updates.shape[d]) + ", indices bound is " +
          std::to_string(indices.shape[scatter_dims_seen]) + ".");
    }
    ++scatter_dims_seen;
  }
  Aval out = derived_aval(operand, operand.shape, operand.dtype, operand.weak_type);
  out.varying = union_varying(avals);
  return out;
}

template <DType D>
typename DTypeTraits<D>::storage combine(Combine how, typename DTypeTraits<D>::storage old,
                                         typename DTypeTraits<D>::storage update) {
  using Compute = typename DTypeTraits<D>::compute;
  const Compute a = load<D>(old);
  const Compute b = load<D>(update);
  switch (how) {
    case Combine::kSet: return update;
    case Combine::kAdd:
      if constexpr (std::is_same_v<Compute, bool>) {
        return store<D>(a || b);
      } else {
        return store<D>(static_cast<Compute>(a + b));
      }
    case Combine::kSub:
      if constexpr (std::is_same_v<Compute, bool>) {
        return store<D>(a != b);
      } else {
        return store<D>(static_cast<Compute>(a - b));
      }
    case Combine::kMul:
      if constexpr (std::is_same_v<Compute, bool>) {
        return store<D>(a && b);
      } else {
        return store<D>(static_cast<Compute>(a * b));
      }
    case Combine::kMin:
      // XLA's min propagates NaN.
      if constexpr (std::is_floating_point_v<Compute>) {
        if (a != a || b != b) return store<D>(a != a ? a : b);
      }
      return store<D>(b < a ? b : a);
    case Combine::kMax:
      if constexpr (std::is_floating_point_v<Compute>) {
        if (a != a || b != b) return store<D>(a != a ? a : b);
      }
      return store<D>(a < b ? b : a);
  }
  return update;
}

// Every update element lands at its window's start plus its offset in the window; windows starting out of
// bounds are clamped into the operand (CLIP) or dropped (FILL_OR_DROP, PROMISE_IN_BOUNDS). Updates apply in
// row-major order, so repeated indices of a plain scatter keep the last one.
template <DType D>
BufferPtr scatter_typed(const Buffer& operand, const Buffer& indices, const Buffer& updates, const ScatterDims& dims,
                        GatherMode mode, Combine how) {
  using Storage = typename DTypeTraits<D>::storage;
  auto out = new_buffer(D, operand.shape());
  std::copy(operand.bytes().begin(), operand.bytes().end(), out->mutable_bytes().begin());
  Storage* dst = out->as_mutable<Storage>().data();
  const Storage* src = updates.as<Storage>().data();
  const Shape& operand_shape = operand.shape();
  const Shape& update_shape = updates.shape();
  const std::vector<int64_t> operand_strides = row_major_strides(operand_shape);
  std::vector<std::size_t> window_operand_dims;
  for (std::size_t d = 0; d < operand_shape.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (!contains(dims.inserted_window_dims, dim) && !contains(dims.operand_batching_dims, dim)) {
      window_operand_dims.push_back(d);
    }
  }
  std::vector<std::size_t> scatter_update_dims;
  std::vector<std::size_t> window_update_dims;
  for (std::size_t d = 0; d < update_shape.size(); ++d) {
    (contains(dims.update_window_dims, static_cast<int64_t>(d)) ? window_update_dims : scatter_update_dims)
        .push_back(d);
  }
  Shape window_sizes(operand_shape.size(), 1);
  for (std::size_t i = 0; i < window_update_dims.size(); ++i) {
    window_sizes[window_operand_dims[i]] = update_shape[window_update_dims[i]];
  }
  const std::size_t depth = dims.scatter_dims_to_operand_dims.size();
  std::vector<int64_t> index(update_shape.size());
  std::vector<int64_t> start(operand_shape.size(), 0);
  for (int64_t u = 0; u < updates.size(); ++u) {
    int64_t rest = u;
    for (std::size_t d = update_shape.size(); d-- > 0;) {
      index[d] = rest % update_shape[d];
      rest /= update_shape[d];
    }
    int64_t scatter_flat = 0;
    for (const std::size_t d : scatter_update_dims) scatter_flat = scatter_flat * update_shape[d] + index[d];
    std::fill(start.begin(), start.end(), 0);
    bool in_bounds = true;
    for (std::size_t k = 0; k < depth; ++k) {
      const auto d = static_cast<std::size_t>(dims.scatter_dims_to_operand_dims[k]);
      const int64_t raw = scalar_index(indices, scatter_flat * static_cast<int64_t>(depth) + static_cast<int64_t>(k));
      const int64_t upper = operand_shape[d] - window_sizes[d];
      if (raw < 0 || raw > upper) in_bounds = false;
      start[d] = std::clamp<int64_t>(raw, 0, upper);
    }
    for (std::size_t i = 0; i < dims.operand_batching_dims.size(); ++i) {
      const auto d = static_cast<std::size_t>(dims.operand_batching_dims[i]);
      start[d] = index[scatter_update_dims[static_cast<std::size_t>(dims.scatter_indices_batching_dims[i])]];
    }
    if (!in_bounds && mode != GatherMode::kClip) continue;
    int64_t offset = 0;
    for (std::size_t d = 0; d < operand_shape.size(); ++d) offset += start[d] * operand_strides[d];
    for (std::size_t i = 0; i < window_update_dims.size(); ++i) {
      offset += index[window_update_dims[i]] * operand_strides[window_operand_dims[i]];
    }
    const auto at = static_cast<std::size_t>(offset);
    dst[at] = combine<D>(how, dst[at], src[static_cast<std::size_t>(u)]);
  }
  return out;
}

Kernel scatter_kernel(Combine how) {
  return [how](std::span<const BufferPtr> inputs, const Aval&, const Params& params) {
    const ScatterDims dims = scatter_dims(params);
    const ParamValue* mode_param = find_param(params, "mode");
    const GatherMode mode = mode_param != nullptr ? parse_gather_mode(*mode_param) : GatherMode::kFillOrDrop;
    if (mode == GatherMode::kOneHot) throw not_implemented_error("scatter mode GatherScatterMode.ONE_HOT");
    return visit_dtype(inputs[0]->dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType kDType = decltype(tag)::value;
      return scatter_typed<kDType>(*inputs[0], *inputs[1], *inputs[2], dims, mode, how);
    });
  };
}

// lax._reduction_jaxpr of the combiner on scalars of the operand's dtype: what update_jaxpr prints.
ParamValue update_jaxpr(const std::string& combiner, DType dtype) {
  const Primitive* primitive = find_primitive(combiner);
  if (primitive == nullptr) throw runtime_error("scatter combiner '" + combiner + "' is not registered");
  auto jaxpr = std::make_shared<Jaxpr>();
  const Var a = new_var(Aval::of({}, dtype));
  const Var b = new_var(Aval::of({}, dtype));
  const Var out = new_var(Aval::of({}, dtype));
  jaxpr->invars = {a, b};
  jaxpr->eqns.push_back(Eqn{primitive, {}, {Atom{a}, Atom{b}}, {out}, nullptr});
  jaxpr->outvars = {Atom{out}};
  return ParamValue::JaxprRef(std::move(jaxpr));
}

// ScatterDimensionNumbers and GatherScatterMode print as their Python reprs; the batching fields exist from
// 0.4.35 as gather's do. Plain scatter has no combiner (update_jaxpr=None); the others print theirs.
std::function<Params(const Eqn&, const JaxProfile&)> scatter_printer(std::string combiner) {
  return [combiner](const Eqn& eqn, const JaxProfile& profile) {
    Params printed = versioned_params(eqn, profile,
                                      {{"dimension_numbers"},
                                       {"indices_are_sorted", std::nullopt, false},
                                       {"mode", std::nullopt, gather_mode_param(GatherMode::kFillOrDrop)},
                                       {"unique_indices", std::nullopt, false},
                                       {"update_consts", std::nullopt, ParamValue::tuple({})},
                                       {"update_jaxpr"}});
    for (auto& [key, value] : printed) {
      if (key == "dimension_numbers" && value.get_if<ParamValue::Tuple>() != nullptr) {
        const auto groups = int_groups(value, "dimension_numbers");
        std::string text = "ScatterDimensionNumbers(update_window_dims=" + int_tuple(groups.at(0)) +
                           ", inserted_window_dims=" + int_tuple(groups.at(1)) +
                           ", scatter_dims_to_operand_dims=" + int_tuple(groups.at(2));
        if (profile.has(JaxFeature::kGatherBatchingDims)) {
          text +=
              ", operand_batching_dims=" + int_tuple(groups.size() == 5 ? groups[3] : std::vector<int64_t>{}) +
              ", scatter_indices_batching_dims=" + int_tuple(groups.size() == 5 ? groups[4] : std::vector<int64_t>{});
        }
        value = ParamValue::Verbatim{text + ")"};
      } else if (key == "mode" && !value.is_none()) {
        value = gather_mode_param(parse_gather_mode(value));
      } else if (key == "update_jaxpr" && !combiner.empty() && !eqn.inputs.empty()) {
        value = update_jaxpr(combiner, atom_aval(eqn.inputs[0]).dtype);
      }
    }
    return printed;
  };
}

// Reads the operand once, writes it, and reads the indices and updates; one combine per update element.

}  // namespace

void register_scatter_primitives() {
  const struct {
    const char* name;
    Combine how;
    const char* combiner;
  } family[] = {{"scatter", Combine::kSet, ""},        {"scatter-add", Combine::kAdd, "add"},
                {"scatter-sub", Combine::kSub, "sub"}, {"scatter-mul", Combine::kMul, "mul"},
                {"scatter-min", Combine::kMin, "min"}, {"scatter-max", Combine::kMax, "max"}};
  for (const auto& member : family) {
    const std::string name = member.name;
    register_single_result(
        name, [name](std::span<const Aval> avals, const Params& params) { return scatter_rule(name, avals, params); },
        scatter_kernel(member.how), scatter_printer(member.combiner));
  }
}

}  // namespace structural
}  // namespace shardscope
