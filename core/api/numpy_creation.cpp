// jnp array creation: host data, zeros/ones/full (+ _like), arange, eye and linspace.
#include <algorithm>
#include <cmath>

#include "api/explicit_axes.h"
#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"
#include "explicit/mesh_context.h"

namespace shardscope::api::jnp {
namespace {

DType default_float() { return default_float_dtype(session().enable_x64); }

// Host values from doubles (how numpy builds arange/linspace constants), without running any operation.
BufferPtr host_buffer(const std::vector<double>& values, DType dtype) {
  const Shape shape{static_cast<int64_t>(values.size())};
  const DType canonical = canonicalize_dtype(dtype, session().enable_x64);
  const auto typed = [&](auto zero) {
    std::vector<decltype(zero)> converted;
    for (const double v : values) converted.push_back(static_cast<decltype(zero)>(v));
    return make_buffer(canonical, shape, converted);
  };
  switch (canonical) {
    case DType::kFloat32: return typed(0.0F);
    case DType::kFloat64: return typed(0.0);
    case DType::kInt32: return typed(int32_t{0});
    case DType::kInt64: return typed(int64_t{0});
    default: throw not_implemented_error("jax.numpy constants of dtype " + std::string(dtype_name(dtype)));
  }
}

}  // namespace

Value asarray(const BufferPtr& host) {
  const JaxProfile& profile = session().profile;
  const DType dtype = canonicalize_dtype(host->dtype(), session().enable_x64);
  Array array = Array::from_host(host, make_single_device_sharding(default_device(), profile), profile);
  Value value = Value::concrete(std::move(array));
  return dtype == host->dtype() ? value : astype(value, dtype);
}

Value asarray(const Value& x, std::optional<DType> dtype) {
  if (!dtype) return x;
  return lax::convert_element_type(x, *dtype, false);
}

Value full(const Shape& shape, const Value& fill_value, std::optional<DType> dtype) {
  if (ndim_of(fill_value) == 0) return lax::full(shape, fill_value, dtype);
  return broadcast_to(asarray(fill_value, dtype), shape);
}

Value zeros(const Shape& shape, std::optional<DType> dtype) {
  return lax::full(shape, py_int(0), dtype.value_or(default_float()));
}

Value ones(const Shape& shape, std::optional<DType> dtype) {
  return lax::full(shape, py_int(1), dtype.value_or(default_float()));
}

Value full_like(const Value& x, const Value& fill_value, std::optional<DType> dtype) {
  if (ndim_of(fill_value) != 0) return broadcast_to(asarray(fill_value, dtype.value_or(dtype_of(x))), shape_of(x));
  const bool weak = !dtype && x.aval().weak_type;
  const Value fill = lax::convert_element_type(fill_value, dtype.value_or(dtype_of(x)), weak);
  // lax.full_like gives a traced value's copy the sharding in its type, so the copy can stand beside it. Outside
  // any mesh context that sharding names the mesh the value's type carries, so the copy is broadcast onto it.
  const auto& typed = x.aval().dim_axes;
  const bool sharded_type = std::any_of(typed.begin(), typed.end(), [](const auto& axes) { return !axes.empty(); });
  if (!x.is_concrete() && sharded_type && ndim_of(x) > 0 && is_empty(get_abstract_mesh())) {
    if (const std::optional<Mesh> own = typed_mesh_for(typed)) {
      std::vector<SpecEntry> entries;
      for (const auto& axes : typed) entries.push_back(axes.empty() ? SpecEntry::none() : SpecEntry::of_axes(axes));
      return bind1("broadcast_in_dim", {fill},
                   {{"broadcast_dimensions", ParamValue::int_tuple({})},
                    {"shape", ParamValue::int_tuple(shape_of(x))},
                    {"sharding", NamedSharding{*own, PartitionSpec(std::move(entries)), std::nullopt}}});
    }
  }
  return with_typed_sharding_of(lax::broadcast(fill, shape_of(x)), x);
}

Value with_typed_sharding_of(const Value& value, const Value& like) {
  const auto& typed = like.aval().dim_axes;
  const bool sharded_type = std::any_of(typed.begin(), typed.end(), [](const auto& axes) { return !axes.empty(); });
  if (like.is_concrete() || !sharded_type || value.aval().dim_axes == typed) return value;
  std::vector<SpecEntry> entries;
  for (const auto& axes : typed) entries.push_back(axes.empty() ? SpecEntry::none() : SpecEntry::of_axes(axes));
  return reshard(value, PartitionSpec(std::move(entries)));
}

Value zeros_like(const Value& x, std::optional<DType> dtype) { return full_like(x, py_int(0), dtype); }
Value ones_like(const Value& x, std::optional<DType> dtype) { return full_like(x, py_int(1), dtype); }

Value arange(double start, std::optional<double> stop, std::optional<double> step, std::optional<DType> dtype,
             bool integer_args) {
  const DType result = dtype.value_or(integer_args ? default_int_dtype(session().enable_x64) : default_float());
  if (!stop && !step) {
    // A single bound: iota, as JAX emits it.
    const auto size = static_cast<int64_t>(std::max(0.0, std::ceil(start)));
    return lax::iota(result, size);
  }
  const double first = stop ? start : 0.0;
  const double last = stop.value_or(start);
  const double delta = step.value_or(1.0);
  if (delta == 0) throw Error("ZeroDivisionError", "division by zero");
  const auto count = static_cast<int64_t>(std::max(0.0, std::ceil((last - first) / delta)));
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(first + static_cast<double>(i) * delta);
  // numpy computes the values on the host; JAX embeds them as a constant.
  return asarray(host_buffer(values, result));
}

Value eye(int64_t n, std::optional<int64_t> m, int64_t k, std::optional<DType> dtype) {
  const Shape shape{n, m.value_or(n)};
  const Value rows = lax::broadcasted_iota(DType::kInt32, shape, 0);
  const Value cols = lax::broadcasted_iota(DType::kInt32, shape, 1);
  const Value diagonal = lax::binary("eq", lax::add(rows, typed_scalar(static_cast<double>(k), DType::kInt32)), cols);
  return bind1("convert_element_type", {diagonal},
               {{"new_dtype", canonicalize_dtype(dtype.value_or(default_float()), session().enable_x64)},
                {"sharding", ParamValue::None{}},
                {"weak_type", false}});
}

Value linspace(double start, double stop, int64_t num, bool endpoint, std::optional<DType> dtype) {
  if (num < 0) throw value_error("Number of samples, " + std::to_string(num) + ", must be non-negative.");
  std::vector<double> values;
  const double divisor = static_cast<double>(endpoint ? num - 1 : num);
  const double step = divisor > 0 ? (stop - start) / divisor : 0.0;
  for (int64_t i = 0; i < num; ++i) values.push_back(start + static_cast<double>(i) * step);
  if (endpoint && num > 1) values.back() = stop;
  return asarray(host_buffer(values, dtype.value_or(default_float())));
}

}  // namespace shardscope::api::jnp

namespace shardscope::api::jnp {

Value array_from_elements(const std::vector<Value>& elements, DType dtype) {
  if (elements.empty()) throw value_error("jnp.array of an empty sequence holds no traced values to stack");
  std::vector<Value> rows;
  for (const Value& element : elements) rows.push_back(lax::expand_dims(asarray(element, dtype), {0}));
  // Concatenated in groups of 16, as JAX does for long lists.
  constexpr std::size_t kGroup = 16;
  while (rows.size() > kGroup) {
    std::vector<Value> grouped;
    for (std::size_t i = 0; i < rows.size(); i += kGroup) {
      const auto end = std::min(rows.size(), i + kGroup);
      grouped.push_back(lax::concatenate(
          {rows.begin() + static_cast<std::ptrdiff_t>(i), rows.begin() + static_cast<std::ptrdiff_t>(end)}, 0));
    }
    rows = std::move(grouped);
  }
  const Value out = rows.size() == 1 ? rows[0] : lax::concatenate(rows, 0);
  return lax::convert_element_type(out, dtype, false);
}

}  // namespace shardscope::api::jnp
