// Elementwise primitives with their own rules: convert_element_type, integer_pow, select_n, clamp and copy.
#include <cstring>

#include "base/half_float.h"
#include "base/python_format.h"
#include "ops/elementwise_common.h"

namespace shardscope::elementwise {
namespace {

// ---- convert_element_type ----

template <typename Float>
constexpr Float power_of_two(int exponent) {
  Float value = 1;
  for (int i = 0; i < exponent; ++i) value *= 2;
  return value;
}

// XLA converts floats to integers saturating: NaN is 0, out-of-range values clamp to the bounds.
template <typename To, typename From>
To saturating_cast(From x) {
  constexpr From kLimit = power_of_two<From>(std::numeric_limits<To>::digits);
  if (std::isnan(x)) return To{0};
  if (x >= kLimit) return std::numeric_limits<To>::max();
  if constexpr (std::is_signed_v<To>) {
    if (x < -kLimit) return std::numeric_limits<To>::min();
  } else {
    if (x <= From{-1}) return To{0};
  }
  return static_cast<To>(x);
}

template <DType In, DType Out>
Compute<Out> convert_value(Compute<In> x) {
  using From = Compute<In>;
  using To = Compute<Out>;
  if constexpr (Out == DType::kBool) {
    return x != From{};  // XLA's convert to pred is x != 0, so NaN is true
  } else if constexpr (std::is_floating_point_v<From> && !std::is_floating_point_v<To>) {
    return saturating_cast<To>(x);
  } else {
    return static_cast<To>(x);  // integers wrap modulo 2^bits
  }
}

template <DType Out>
uint16_t double_to_half(double value) {
  if constexpr (Out == DType::kBFloat16) {
    return double_to_bf16(value);
  } else {
    return double_to_f16(value);
  }
}

template <DType In, DType Out>
BufferPtr convert_typed(const Buffer& in) {
  constexpr bool kToHalf = Out == DType::kBFloat16 || Out == DType::kFloat16;
  if constexpr (kToHalf && (In == DType::kFloat64 || kIsInteger<In>)) {
    // Rounded once from double; going through float would round twice.
    auto out = new_buffer(Out, in.shape());
    const Storage<In>* src = in.as<Storage<In>>().data();
    uint16_t* dst = out->as_mutable<uint16_t>().data();
    for (int64_t i = 0; i < in.size(); ++i) dst[i] = double_to_half<Out>(static_cast<double>(src[i]));
    return out;
  } else {
    return map_unary<In, Out>(in, [](Compute<In> x) { return convert_value<In, Out>(x); });
  }
}

void register_convert_element_type() {
  Primitive p;
  p.name = "convert_element_type";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    check_arity("convert_element_type", in, 1);
    const DType dtype = dtype_param(param(params, "new_dtype"), "new_dtype");
    const ParamValue* weak = find_param(params, "weak_type");
    Aval out = in[0];
    out.dtype = dtype;
    out.weak_type = weak != nullptr && weak->as_bool("weak_type");
    return std::vector<Aval>{out};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    return std::vector<BufferPtr>{convert_buffer(in[0], dtype_param(param(params, "new_dtype"), "new_dtype"))};
  };
  p.printed_params = [](const Eqn& eqn, const JaxProfile& profile) {
    if (!profile.has(JaxFeature::kConvertElementTypePrintsDtype)) {
      // The output binder showed the dtype; weak_type printed only when true.
      Params shown;
      const ParamValue* weak = find_param(eqn.params, "weak_type");
      if (weak != nullptr && weak->as_bool("weak_type")) shown.emplace_back("weak_type", *weak);
      return shown;
    }
    const bool always_hide = profile.has(JaxFeature::kConvertElementTypeHidesSharding);
    return sorted_params_without(eqn, {"sharding"}, !always_hide);
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

// ---- integer_pow ----

// The multiplication chain JAX lowers integer_pow to (square-and-multiply, then 1/x for negative
// powers), so float results round as XLA's do.
template <typename T>
T multiply(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a * b;
  } else {
    return wrapping_mul(a, b);
  }
}

template <typename T>
T integer_power(T x, int64_t y) {
  if (y == 0) return T{1};
  const bool reciprocal = y < 0;
  uint64_t remaining = reciprocal ? static_cast<uint64_t>(-(y + 1)) + 1U : static_cast<uint64_t>(y);
  bool have_acc = false;
  T acc{};
  while (remaining > 0) {
    if ((remaining & 1U) != 0) {
      acc = have_acc ? multiply(acc, x) : x;
      have_acc = true;
    }
    remaining >>= 1U;
    if (remaining > 0) x = multiply(x, x);
  }
  if constexpr (std::is_floating_point_v<T>) {
    return reciprocal ? T{1} / acc : acc;
  } else {
    return acc;
  }
}

void register_integer_pow() {
  Primitive p;
  p.name = "integer_pow";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    check_arity("integer_pow", in, 1);
    check_unary_dtype("integer_pow", in[0], kNumTypes);
    const int64_t y = param(params, "y").as_int("y");
    if (y < 0 && is_integral(in[0].dtype)) {
      throw type_error("Integers cannot be raised to negative powers, got integer_pow(" +
                       std::string(in[0].weak_type ? "~" : "") + in[0].str_short(false) + ", " + std::to_string(y) +
                       ")");
    }
    return std::vector<Aval>{unary_result(in[0], in[0].dtype, in[0].weak_type)};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const int64_t y = param(params, "y").as_int("y");
    return std::vector<BufferPtr>{visit_dtype(in[0]->dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      if constexpr (class_accepts(kNumTypes, D)) {
        return map_unary<D, D>(*in[0], [y](Compute<D> x) { return integer_power(x, y); });
      } else {
        throw kernel_dtype_error("integer_pow", D);
      }
    })};
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

// ---- select_n ----

std::vector<Aval> select_n_abstract_eval(std::span<const Aval> in, const Params&) {
  if (in.empty()) throw type_error("select_n takes a predicate and cases, got no operands");
  const Aval& which = in[0];
  const std::span<const Aval> cases = in.subspan(1);
  if (cases.empty()) throw type_error("select must have at least one case");
  const bool same_shapes =
      std::all_of(cases.begin(), cases.end(), [&](const Aval& c) { return c.shape == cases[0].shape; });
  if (!same_shapes) {
    std::vector<std::string> shapes;
    for (const Aval& c : cases) shapes.push_back(python_int_tuple(c.shape));
    throw type_error("select cases must have the same shapes, got [" + join(shapes, ", ") + "].");
  }
  if (!which.shape.empty() && which.shape != cases[0].shape) {
    throw type_error("select `which` must be scalar or have the same shape as cases, got `which` shape " +
                     python_int_tuple(which.shape) + " but case shape " + python_int_tuple(cases[0].shape) + ".");
  }
  check_same_dtypes("select", cases);
  if (which.dtype != DType::kBool && !is_integral(which.dtype)) {
    throw type_error("select `which` must be boolean or integer type, got " + std::string(dtype_name(which.dtype)) +
                     ".");
  }
  if (which.dtype == DType::kBool && cases.size() > 2) {
    throw type_error("select with boolean `which` cannot have > 2 cases.");
  }
  return {nary_result(in, cases[0].shape, cases[0].dtype, all_weak(cases))};
}

// Out-of-range selectors pick the first or last case, as XLA's binary tree of compares does.
template <DType W>
std::size_t case_index(Storage<W> which, std::size_t case_count) {
  if constexpr (W == DType::kBool) {
    return which != 0 ? 1 : 0;
  } else {
    if constexpr (kIsSigned<W>) {
      if (which < 0) return 0;
    }
    const auto index = static_cast<uint64_t>(which);
    return index >= case_count ? case_count - 1 : static_cast<std::size_t>(index);
  }
}

BufferPtr select_n_kernel(std::span<const BufferPtr> in) {
  const Buffer& which = *in[0];
  const std::span<const BufferPtr> cases = in.subspan(1);
  const Shape& shape = cases[0]->shape();
  const int64_t n = cases[0]->size();
  if (which.size() != 1 && which.size() != n) throw value_error("select_n: local predicate and case shapes differ");
  const bool which_repeated = which.size() != n;
  return visit_dtype(cases[0]->dtype(), [&](auto case_tag) -> BufferPtr {
    constexpr DType D = decltype(case_tag)::value;
    std::vector<const Storage<D>*> sources;
    for (const BufferPtr& c : cases) {
      if (c->dtype() != D || c->size() != n) throw value_error("select_n: local cases differ in dtype or shape");
      sources.push_back(c->as<Storage<D>>().data());
    }
    auto out = new_buffer(D, shape);
    Storage<D>* dst = out->as_mutable<Storage<D>>().data();
    visit_dtype(which.dtype(), [&](auto which_tag) {
      constexpr DType W = decltype(which_tag)::value;
      if constexpr (W == DType::kBool || kIsInteger<W>) {
        const Storage<W>* selector = which.as<Storage<W>>().data();
        for (int64_t i = 0; i < n; ++i) {
          dst[i] = sources[case_index<W>(selector[which_repeated ? 0 : i], sources.size())][i];
        }
      } else {
        throw kernel_dtype_error("select_n", W);
      }
    });
    return out;
  });
}

void register_select_n() {
  Primitive p;
  p.name = "select_n";
  p.abstract_eval = select_n_abstract_eval;
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{select_n_kernel(in)};
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

// ---- clamp ----

void check_clamp_bound(const char* which, const Aval& bound, const Aval& operand) {
  if (bound.shape.empty() || bound.shape == operand.shape) return;
  throw type_error(std::string("clamp requires ") + which + ".shape == operand.shape or " + which +
                   ".shape == (), got " + which + ".shape=" + python_int_tuple(bound.shape) +
                   ", operand.shape=" + python_int_tuple(operand.shape) + ".");
}

void register_clamp() {
  Primitive p;
  p.name = "clamp";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    check_arity("clamp", in, 3);
    check_clamp_bound("min", in[0], in[1]);
    check_clamp_bound("max", in[2], in[1]);
    const TypeClasses accepted[] = {kAnyTypes, kAnyTypes, kAnyTypes};
    check_operand_dtypes("clamp", in, accepted);
    check_same_dtypes("clamp", in);
    return std::vector<Aval>{nary_result(in, in[1].shape, in[1].dtype, all_weak(in))};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    const Buffer& operand = *in[1];
    const int64_t n = operand.size();
    for (const BufferPtr& bound : {in[0], in[2]}) {
      if (bound->size() != 1 && bound->size() != n) throw value_error("clamp: local bound and operand shapes differ");
    }
    return std::vector<BufferPtr>{visit_dtype(operand.dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      const Storage<D>* lo = in[0]->as<Storage<D>>().data();
      const Storage<D>* x = operand.as<Storage<D>>().data();
      const Storage<D>* hi = in[2]->as<Storage<D>>().data();
      const int64_t lo_step = in[0]->size() == n ? 1 : 0;
      const int64_t hi_step = in[2]->size() == n ? 1 : 0;
      auto out = new_buffer(D, operand.shape());
      Storage<D>* dst = out->as_mutable<Storage<D>>().data();
      for (int64_t i = 0; i < n; ++i) {
        const Compute<D> low = load<D>(lo[i * lo_step]);
        const Compute<D> high = load<D>(hi[i * hi_step]);
        dst[i] = store<D>(xla_min(high, xla_max(low, load<D>(x[i]))));
      }
      return out;
    })};
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

void register_copy() {
  Primitive p;
  p.name = "copy";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    check_arity("copy", in, 1);
    return std::vector<Aval>{in[0]};
  };
  // Buffers are immutable once shared, so the copy may alias its operand.
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{in[0]};
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

}  // namespace

BufferPtr convert_buffer(const BufferPtr& buffer, DType dtype) {
  if (buffer->dtype() == dtype) return buffer;
  return visit_dtype(buffer->dtype(), [&](auto in_tag) -> BufferPtr {
    return visit_dtype(dtype, [&](auto out_tag) -> BufferPtr {
      return convert_typed<decltype(in_tag)::value, decltype(out_tag)::value>(*buffer);
    });
  });
}

void register_other_elementwise_primitives() {
  register_convert_element_type();
  register_integer_pow();
  register_select_n();
  register_clamp();
  register_copy();
}

}  // namespace shardscope::elementwise
