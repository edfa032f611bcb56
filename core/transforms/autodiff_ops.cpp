// The lax-style op builders AD rules emit, with the params JAX's own wrappers give each equation.
#include <algorithm>

#include "base/error.h"
#include "explicit/mesh_context.h"
#include "transforms/autodiff_internal.h"

namespace shardscope::ad {

bool has_tangent_space(DType dtype) { return is_floating(dtype); }

Literal const_like(const Aval& like, double value) { return scalar_literal(value, like.dtype, false); }

ParamValue typed_sharding_param(const Aval& aval, const std::vector<int64_t>& order, bool as_cotangent) {
  const bool typed =
      std::any_of(aval.dim_axes.begin(), aval.dim_axes.end(), [](const auto& axes) { return !axes.empty(); });
  const AbstractMesh mesh = get_abstract_mesh();
  if (aval.dim_axes.size() != aval.rank()) return ParamValue::None{};
  if (is_empty(mesh)) {
    // Outside any mesh context an Explicit array's type names its own mesh: give the value that mesh's sharding.
    if (!typed) return ParamValue::None{};
    const std::optional<Mesh> own = typed_mesh_for(aval.dim_axes);
    if (!own) return ParamValue::None{};
    PartitionSpec spec = as_cotangent ? cotangent_spec(aval, order) : PartitionSpec{};
    if (!as_cotangent) {
      std::vector<SpecEntry> entries;
      for (const int64_t d : order)
        entries.push_back(SpecEntry::of_axes(aval.dim_axes.at(static_cast<std::size_t>(d))));
      spec = PartitionSpec(std::move(entries));
    }
    return NamedSharding{*own, spec, std::nullopt};
  }
  // A replicated type is spelled out only where some axis is Explicit: there `None` would let the sharding rule
  // derive (or refuse) the type, while Auto axes leave the layout to propagation either way.
  const bool explicit_mesh =
      std::any_of(mesh.axis_types.begin(), mesh.axis_types.end(), [](AxisType t) { return t == AxisType::kExplicit; });
  const bool ur = !aval.unreduced.empty() || !aval.reduced.empty();
  if (!typed && !ur && !(as_cotangent && explicit_mesh)) return ParamValue::None{};
  if (as_cotangent) return cotangent_spec(aval, order);
  std::vector<SpecEntry> entries;
  for (const int64_t d : order) entries.push_back(SpecEntry::of_axes(aval.dim_axes.at(static_cast<std::size_t>(d))));
  return PartitionSpec(std::move(entries));
}

PartitionSpec cotangent_spec(const PartitionSpec& spec) {
  PartitionSpec swapped(spec.entries());
  if (!spec.reduced().empty()) swapped.set_unreduced(spec.reduced());
  if (!spec.unreduced().empty()) swapped.set_reduced(spec.unreduced());
  return swapped;
}

PartitionSpec cotangent_spec(const Aval& aval, const std::vector<int64_t>& order) {
  std::vector<SpecEntry> entries;
  for (std::size_t i = 0; i < aval.rank(); ++i) {
    const std::size_t d = order.empty() ? i : static_cast<std::size_t>(order.at(i));
    entries.push_back(d < aval.dim_axes.size() ? SpecEntry::of_axes(aval.dim_axes[d]) : SpecEntry::none());
  }
  PartitionSpec spec(std::move(entries));
  if (!aval.unreduced.empty()) spec.set_unreduced(aval.unreduced);
  if (!aval.reduced.empty()) spec.set_reduced(aval.reduced);
  return cotangent_spec(spec);
}

Atom full_like(JaxprBuilder& b, const Aval& like, double value) {
  const Literal scalar = scalar_literal(value, like.dtype, like.weak_type);
  if (like.shape.empty()) return scalar;
  // Under an Explicit mesh the filled value is typed like the value it stands beside (JAX's full_like keeps the
  // sharding), so selects and adds with it type-check.
  std::vector<int64_t> dims(like.rank());
  for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
  return broadcast_in_dim(b, scalar, like.shape, {}, typed_sharding_param(like, dims));
}

Atom zeros_like(JaxprBuilder& b, const Aval& like) { return full_like(b, like, 0.0); }

Atom instantiate(JaxprBuilder& b, const std::optional<Atom>& tangent, const Aval& aval) {
  return tangent ? *tangent : zeros_like(b, aval);
}

std::optional<Atom> add_tangents(JaxprBuilder& b, const std::optional<Atom>& x, const std::optional<Atom>& y) {
  if (!x) return y;
  if (!y) return x;
  return b.bind1("add_any", {*x, *y});
}

Atom unbroadcast(JaxprBuilder& b, const Aval& aval, const Atom& x) {
  const Shape& x_shape = atom_aval(x).shape;
  if (x_shape == aval.shape) return x;
  if (aval.shape.empty()) return reduce_sum(b, x, iota_vector(x_shape.size()));
  std::vector<int64_t> dims;
  for (std::size_t i = 0; i < x_shape.size(); ++i) {
    if (x_shape[i] != aval.shape[i]) dims.push_back(static_cast<int64_t>(i));
  }
  return reshape(b, reduce_sum(b, x, dims), aval.shape);
}

Atom mul(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.bind1("mul", {x, y}); }
Atom div(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.bind1("div", {x, y}); }
Atom add(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.bind1("add", {x, y}); }
Atom sub(JaxprBuilder& b, const Atom& x, const Atom& y) { return b.bind1("sub", {x, y}); }
Atom neg(JaxprBuilder& b, const Atom& x) { return b.bind1("neg", {x}); }

Atom unary(JaxprBuilder& b, const std::string& name, const Atom& x, const Params& params) {
  return b.bind1(name, {x}, params);
}

Atom unary_accurate(JaxprBuilder& b, const std::string& name, const Atom& x) {
  return b.bind1(name, {x}, {{"accuracy", ParamValue::None{}}});
}

Atom integer_pow(JaxprBuilder& b, const Atom& x, int64_t y) { return b.bind1("integer_pow", {x}, {{"y", y}}); }

Atom select_n(JaxprBuilder& b, const Atom& which, const std::vector<Atom>& cases) {
  std::vector<Atom> inputs{which};
  inputs.insert(inputs.end(), cases.begin(), cases.end());
  return b.bind1("select_n", std::move(inputs));
}

Atom compare(JaxprBuilder& b, const std::string& name, const Atom& x, const Atom& y) { return b.bind1(name, {x, y}); }

Atom convert(JaxprBuilder& b, const Atom& x, DType dtype, bool weak_type) {
  return b.bind1("convert_element_type", {x},
                 {{"new_dtype", dtype}, {"sharding", ParamValue::None{}}, {"weak_type", weak_type}});
}

Atom reduce_sum(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes) {
  return b.bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}});
}

Atom broadcast_in_dim(JaxprBuilder& b, const Atom& x, const Shape& shape, const std::vector<int64_t>& dims,
                      ParamValue sharding) {
  return b.bind1("broadcast_in_dim", {x},
                 {{"broadcast_dimensions", ParamValue::int_tuple(dims)},
                  {"shape", ParamValue::int_tuple(shape)},
                  {"sharding", std::move(sharding)}});
}

Atom reshape(JaxprBuilder& b, const Atom& x, const Shape& shape) {
  return b.bind1("reshape", {x},
                 {{"dimensions", ParamValue::None{}},
                  {"new_sizes", ParamValue::int_tuple(shape)},
                  {"sharding", ParamValue::None{}}});
}

Atom transpose(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& permutation) {
  // lax.transpose returns an identity permutation's operand as it is (tracers are jax.Arrays too).
  if (permutation == iota_vector(permutation.size())) return x;
  return b.bind1("transpose", {x}, {{"permutation", ParamValue::int_tuple(permutation)}});
}

Atom maybe_broadcast(JaxprBuilder& b, const Atom& x, const Shape& shape) {
  const Shape& x_shape = atom_aval(x).shape;
  if (x_shape == shape) return x;
  if (x_shape.empty()) return broadcast_in_dim(b, x, shape, {});
  // Equal rank with size-1 dims: squeeze them away, then broadcast the rest in place.
  std::vector<int64_t> kept_dims;
  Shape kept_shape;
  for (std::size_t i = 0; i < x_shape.size(); ++i) {
    if (x_shape[i] == shape[i]) {
      kept_dims.push_back(static_cast<int64_t>(i));
      kept_shape.push_back(x_shape[i]);
    }
  }
  const Atom squeezed = kept_shape.size() == x_shape.size() ? x : reshape(b, x, kept_shape);
  return broadcast_in_dim(b, squeezed, shape, kept_dims);
}

std::vector<int64_t> iota_vector(std::size_t n) {
  std::vector<int64_t> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<int64_t>(i);
  return values;
}

std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& permutation) {
  std::vector<int64_t> inverse(permutation.size());
  for (std::size_t i = 0; i < permutation.size(); ++i) {
    inverse[static_cast<std::size_t>(permutation[i])] = static_cast<int64_t>(i);
  }
  return inverse;
}

bool all_zero(std::span<const std::optional<Atom>> tangents) {
  return std::none_of(tangents.begin(), tangents.end(), [](const auto& t) { return t.has_value(); });
}

JvpRule zero_jvp(const std::string& primitive) {
  return [primitive](JaxprBuilder& b, std::span<const Atom> primals, std::span<const std::optional<Atom>>,
                     const Params& params) {
    std::vector<Atom> outs = b.bind(primitive, {primals.begin(), primals.end()}, params);
    return std::pair{outs, std::vector<std::optional<Atom>>(outs.size())};
  };
}

JvpRule linear_jvp(const std::string& primitive) {
  return [primitive](JaxprBuilder& b, std::span<const Atom> primals, std::span<const std::optional<Atom>> tangents,
                     const Params& params) {
    std::vector<Atom> outs = b.bind(primitive, {primals.begin(), primals.end()}, params);
    std::vector<Atom> tangent_ins;
    for (std::size_t i = 0; i < primals.size(); ++i) {
      tangent_ins.push_back(instantiate(b, tangents[i], atom_aval(primals[i])));
    }
    std::vector<Atom> tangent_outs = b.bind(primitive, std::move(tangent_ins), params);
    return std::pair{outs, std::vector<std::optional<Atom>>(tangent_outs.begin(), tangent_outs.end())};
  };
}

JvpRule single_output_jvp(const std::string& primitive, SimpleJvp tangent_rule) {
  return [primitive, tangent_rule](JaxprBuilder& b, std::span<const Atom> primals,
                                   std::span<const std::optional<Atom>> tangents, const Params& params) {
    const Atom out = b.bind1(primitive, {primals.begin(), primals.end()}, params);
    std::optional<Atom> tangent;
    if (has_tangent_space(atom_aval(out).dtype)) tangent = tangent_rule(b, primals, tangents, out, params);
    return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
  };
}

TransposeRule single_output_transpose(SimpleTranspose rule) {
  return [rule](JaxprBuilder& b, std::span<const std::optional<Atom>> cotangents,
                std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params) {
    if (!cotangents[0]) return std::vector<std::optional<Atom>>(primals.size());
    return rule(b, *cotangents[0], primals, avals, params);
  };
}

}  // namespace shardscope::ad
