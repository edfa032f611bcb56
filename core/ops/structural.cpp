// Registration of the structural, reduction and contraction primitives, and the machinery they share.
#include <algorithm>
#include <cstring>
#include <limits>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/ops.h"
#include "ops/structural_internal.h"

namespace shardscope {

void register_structural_primitives() {
  structural::register_reshaping_primitives();
  structural::register_stacking_primitives();
  structural::register_slicing_primitives();
  structural::register_gather_primitive();
  structural::register_scatter_primitives();
  structural::register_sort_primitives();
  structural::register_reduction_primitives();
  structural::register_dot_general_primitive();
  structural::register_convolution_primitive();
  structural::register_windowed_primitives();
}

namespace structural {

int64_t int_param(const Params& params, const std::string& key) {
  const ParamValue& value = param(params, key);
  if (const auto* flag = value.get_if<bool>()) return *flag ? 1 : 0;
  return value.as_int(key);
}

std::vector<int64_t> ints_param(const Params& params, const std::string& key) {
  return param(params, key).as_ints(key);
}

std::optional<std::vector<int64_t>> optional_ints_param(const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr || value->is_none()) return std::nullopt;
  return value->as_ints(key);
}

bool bool_param(const Params& params, const std::string& key, bool fallback) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr) return fallback;
  if (const auto* flag = value->get_if<bool>()) return *flag;
  if (const auto* number = value->get_if<int64_t>()) return *number != 0;
  return fallback;
}

std::optional<DType> optional_dtype_param(const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr || value->is_none()) return std::nullopt;
  if (const auto* dtype = value->get_if<DType>()) return *dtype;
  if (const auto* text = value->get_if<std::string>()) {
    if (const auto parsed = parse_dtype(*text)) return parsed;
  }
  throw type_error(key + " must be a dtype");
}

DType dtype_param(const Params& params, const std::string& key) {
  if (const auto dtype = optional_dtype_param(params, key)) return *dtype;
  throw value_error("missing equation parameter '" + key + "'");
}

std::vector<std::vector<int64_t>> int_groups(const ParamValue& value, const std::string& what) {
  const auto* tuple = value.get_if<ParamValue::Tuple>();
  if (tuple == nullptr) throw type_error(what + " must be a tuple of tuples of ints");
  std::vector<std::vector<int64_t>> groups;
  for (const ParamValue& item : tuple->items) groups.push_back(item.as_ints(what));
  return groups;
}

std::string int_tuple(const std::vector<int64_t>& values) { return python_int_tuple(values); }

std::string shapes_text(std::span<const Aval> avals) {
  std::vector<std::string> parts;
  for (const Aval& aval : avals) parts.push_back(int_tuple(aval.shape));
  return join(parts, ", ");
}

std::string aval_str(const Aval& aval) { return (aval.weak_type ? "~" : "") + aval.str_short(false); }

Aval derived_aval(const Aval& like, Shape shape, DType dtype, bool weak_type) {
  Aval out = Aval::of(std::move(shape), dtype, weak_type);
  out.memory = like.memory;
  out.varying = like.varying;
  if (!like.dim_axes.empty()) out.dim_axes.assign(out.shape.size(), {});
  return out;
}

void map_dim_axes(Aval& out, const Aval& like, const std::vector<int64_t>& source_dims) {
  if (like.dim_axes.empty()) return;
  out.dim_axes.assign(source_dims.size(), {});
  for (std::size_t i = 0; i < source_dims.size(); ++i) {
    const int64_t source = source_dims[i];
    if (source >= 0 && static_cast<std::size_t>(source) < like.dim_axes.size()) {
      out.dim_axes[i] = like.dim_axes[static_cast<std::size_t>(source)];
    }
  }
}

void apply_sharding_param(Aval& out, const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  const auto* sharding = value != nullptr ? value->get_if<NamedSharding>() : nullptr;
  if (sharding == nullptr) return;
  out.dim_axes.assign(out.shape.size(), {});
  const auto& entries = sharding->spec.entries();
  for (std::size_t d = 0; d < entries.size() && d < out.dim_axes.size(); ++d) out.dim_axes[d] = entries[d].axes;
  out.unreduced = sharding->spec.unreduced();
}

std::vector<std::string> union_varying(std::span<const Aval> avals) {
  std::vector<std::string> names;
  for (const Aval& aval : avals) {
    for (const std::string& name : aval.varying) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

Params versioned_params(const Eqn& eqn, const JaxProfile& profile, const std::vector<PrintedParam>& specs) {
  Params printed;
  for (const PrintedParam& spec : specs) {
    if (spec.since && !profile.has(*spec.since)) continue;
    const ParamValue* value = find_param(eqn.params, spec.key);
    printed.emplace_back(spec.key, value != nullptr ? *value : spec.fallback);
  }
  std::sort(printed.begin(), printed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return printed;
}

std::function<Params(const Eqn&, const JaxProfile&)> versioned_printer(std::vector<PrintedParam> specs) {
  return [specs = std::move(specs)](const Eqn& eqn, const JaxProfile& profile) {
    return versioned_params(eqn, profile, specs);
  };
}

std::vector<Aval> buffer_avals(std::span<const BufferPtr> inputs, std::span<const Aval> avals) {
  std::vector<Aval> out;
  out.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) throw value_error("missing input buffer");
    const bool weak = i < avals.size() && avals[i].weak_type;
    out.push_back(Aval::of(inputs[i]->shape(), inputs[i]->dtype(), weak));
  }
  return out;
}

void check_arity(const std::string& name, std::span<const Aval> avals, std::size_t expected) {
  if (avals.size() != expected) {
    throw type_error(name + " takes " + std::to_string(expected) + " operand(s), got " + std::to_string(avals.size()));
  }
}

void register_single_result(const std::string& name, const ShapeRule& rule, const Kernel& kernel,
                            std::function<Params(const Eqn&, const JaxProfile&)> printer) {
  Primitive primitive;
  primitive.name = name;
  primitive.abstract_eval = [rule](std::span<const Aval> avals, const Params& params) {
    return std::vector<Aval>{rule(avals, params)};
  };
  primitive.impl = [rule, kernel](std::span<const BufferPtr> inputs, std::span<const Aval> avals,
                                  const Params& params) {
    const std::vector<Aval> local = buffer_avals(inputs, avals);
    const Aval out = rule(local, params);
    return std::vector<BufferPtr>{kernel(inputs, out, params)};
  };
  primitive.printed_params = std::move(printer);
  register_primitive(std::move(primitive));
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

namespace {

struct CopyDim {
  int64_t size;
  int64_t dst_stride;
  int64_t src_stride;
};

// Advances an odometer over dims[0..count), moving both offsets; false once it wraps around.
bool advance(std::vector<int64_t>& counter, const std::vector<CopyDim>& dims, std::size_t count, int64_t& dst_offset,
             int64_t& src_offset) {
  for (std::size_t d = count; d-- > 0;) {
    dst_offset += dims[d].dst_stride;
    src_offset += dims[d].src_stride;
    if (++counter[d] < dims[d].size) return true;
    dst_offset -= dims[d].dst_stride * dims[d].size;
    src_offset -= dims[d].src_stride * dims[d].size;
    counter[d] = 0;
  }
  return false;
}

constexpr int64_t kTile = 32;

template <typename T>
void copy_elements(const std::vector<CopyDim>& dims, T* dst, const T* src) {
  if (dims.empty()) {
    *dst = *src;
    return;
  }
  const CopyDim inner = dims.back();
  // A transposing copy reads one dimension contiguously and writes another: tile both so that
  // neither side walks through memory a whole stride at a time.
  std::size_t read_dim = dims.size();
  if (inner.src_stride != 1 && dims.size() >= 2) {
    for (std::size_t d = 0; d + 1 < dims.size(); ++d) {
      if (dims[d].src_stride == 1 || dims[d].src_stride == -1) read_dim = d;
    }
  }
  if (read_dim < dims.size()) {
    std::vector<CopyDim> outer;
    for (std::size_t d = 0; d + 1 < dims.size(); ++d) {
      if (d != read_dim) outer.push_back(dims[d]);
    }
    const CopyDim across = dims[read_dim];
    std::vector<int64_t> counter(outer.size(), 0);
    int64_t dst_offset = 0;
    int64_t src_offset = 0;
    do {
      T* dst_plane = dst + dst_offset;
      const T* src_plane = src + src_offset;
      for (int64_t a0 = 0; a0 < across.size; a0 += kTile) {
        const int64_t a1 = std::min(across.size, a0 + kTile);
        for (int64_t i0 = 0; i0 < inner.size; i0 += kTile) {
          const int64_t i1 = std::min(inner.size, i0 + kTile);
          for (int64_t a = a0; a < a1; ++a) {
            for (int64_t i = i0; i < i1; ++i) {
              dst_plane[a * across.dst_stride + i * inner.dst_stride] =
                  src_plane[a * across.src_stride + i * inner.src_stride];
            }
          }
        }
      }
    } while (advance(counter, outer, outer.size(), dst_offset, src_offset));
    return;
  }
  std::vector<int64_t> counter(dims.size() - 1, 0);
  int64_t dst_offset = 0;
  int64_t src_offset = 0;
  do {
    T* row_dst = dst + dst_offset;
    const T* row_src = src + src_offset;
    if (inner.dst_stride == 1 && inner.src_stride == 1) {
      std::memcpy(row_dst, row_src, static_cast<std::size_t>(inner.size) * sizeof(T));
    } else if (inner.src_stride == 0) {
      const T value = *row_src;
      for (int64_t i = 0; i < inner.size; ++i) row_dst[i * inner.dst_stride] = value;
    } else {
      for (int64_t i = 0; i < inner.size; ++i) row_dst[i * inner.dst_stride] = row_src[i * inner.src_stride];
    }
  } while (advance(counter, dims, dims.size() - 1, dst_offset, src_offset));
}

}  // namespace

void strided_copy(std::size_t element_size, const Shape& shape, std::byte* dst, std::span<const int64_t> dst_strides,
                  const std::byte* src, std::span<const int64_t> src_strides) {
  std::vector<CopyDim> dims;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return;
    if (shape[d] == 1) continue;
    dims.push_back({shape[d], dst_strides[d], src_strides[d]});
  }
  // Merge neighbours that step through both buffers as one longer dimension.
  std::vector<CopyDim> merged;
  for (const CopyDim& dim : dims) {
    if (!merged.empty()) {
      CopyDim& last = merged.back();
      if (last.dst_stride == dim.dst_stride * dim.size && last.src_stride == dim.src_stride * dim.size) {
        last = {last.size * dim.size, dim.dst_stride, dim.src_stride};
        continue;
      }
    }
    merged.push_back(dim);
  }
  switch (element_size) {
    case 1: copy_elements(merged, reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src)); return;
    case 2: copy_elements(merged, reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src)); return;
    case 4: copy_elements(merged, reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src)); return;
    case 8: copy_elements(merged, reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src)); return;
    default: throw value_error("unsupported element size " + std::to_string(element_size));
  }
}

std::shared_ptr<Buffer> new_buffer(DType dtype, const Shape& shape) { return std::make_shared<Buffer>(dtype, shape); }

std::shared_ptr<Buffer> transposed(const Buffer& operand, const std::vector<int64_t>& permutation) {
  const std::vector<int64_t> operand_strides = row_major_strides(operand.shape());
  Shape shape(permutation.size());
  std::vector<int64_t> src_strides(permutation.size());
  for (std::size_t i = 0; i < permutation.size(); ++i) {
    const auto source = static_cast<std::size_t>(permutation[i]);
    shape[i] = operand.shape()[source];
    src_strides[i] = operand_strides[source];
  }
  auto out = new_buffer(operand.dtype(), shape);
  strided_copy(dtype_size(operand.dtype()), shape, out->mutable_bytes().data(), row_major_strides(shape),
               operand.bytes().data(), src_strides);
  return out;
}

int64_t scalar_index(const Buffer& buffer, int64_t flat_index) {
  return visit_dtype(buffer.dtype(), [&](auto tag) -> int64_t {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const auto value = load<kDType>(buffer.as<Storage>()[static_cast<std::size_t>(flat_index)]);
    using Compute = decltype(value);
    // uint64 indices past int64's range saturate; they clamp to the last valid start anyway.
    if constexpr (std::is_same_v<Compute, uint64_t>) {
      return value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                                : static_cast<int64_t>(value);
    } else {
      return static_cast<int64_t>(value);
    }
  });
}

}  // namespace structural
}  // namespace shardscope
