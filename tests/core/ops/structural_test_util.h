// Helpers shared by the structural, reduction and dot_general primitive tests.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "array/buffer.h"
#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ir/jaxpr_printer.h"
#include "ir/primitive.h"
#include "ops/ops.h"

namespace structural_test {

using namespace shardscope;

inline const Primitive& prim(const std::string& name) {
  ensure_core_primitives();
  const Primitive* primitive = find_primitive(name);
  REQUIRE_MESSAGE(primitive != nullptr, name);
  return *primitive;
}

inline Aval eval(const std::string& name, const std::vector<Aval>& avals, const Params& params) {
  const std::vector<Aval> out = prim(name).abstract_eval(avals, params);
  REQUIRE(out.size() == 1);
  return out[0];
}

inline std::vector<BufferPtr> run_all(const std::string& name, const std::vector<BufferPtr>& inputs,
                                      const Params& params) {
  std::vector<Aval> avals;
  avals.reserve(inputs.size());
  for (const BufferPtr& input : inputs) avals.push_back(Aval::of(input->shape(), input->dtype()));
  return prim(name).impl(inputs, avals, params);
}

inline BufferPtr run(const std::string& name, const std::vector<BufferPtr>& inputs, const Params& params) {
  const std::vector<BufferPtr> out = run_all(name, inputs, params);
  REQUIRE(out.size() == 1);
  return out[0];
}

// Any dtype from doubles (rounded as a store of the dtype's compute type).
inline BufferPtr buffer(DType dtype, const Shape& shape, const std::vector<double>& values) {
  auto out = std::make_shared<Buffer>(dtype, shape);
  REQUIRE(static_cast<int64_t>(values.size()) == out->size());
  visit_dtype(dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using Compute = typename DTypeTraits<kDType>::compute;
    auto data = out->as_mutable<Storage>();
    for (std::size_t i = 0; i < values.size(); ++i) data[i] = store<kDType>(static_cast<Compute>(values[i]));
  });
  return out;
}

inline BufferPtr f32(const Shape& shape, const std::vector<double>& values) {
  return buffer(DType::kFloat32, shape, values);
}
inline BufferPtr i32(const Shape& shape, const std::vector<double>& values) {
  return buffer(DType::kInt32, shape, values);
}
inline BufferPtr scalar(DType dtype, double value) { return buffer(dtype, {}, {value}); }

inline std::vector<double> values(const BufferPtr& b) {
  std::vector<double> out;
  for (int64_t i = 0; i < b->size(); ++i) out.push_back(b->element_as_double(i));
  return out;
}

// 0, 1, 2, ... as doubles.
inline std::vector<double> counting(int64_t count, double start = 0) {
  std::vector<double> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(start + static_cast<double>(i));
  return out;
}

// The Python exception type and message a call raises ("" when it does not raise).
inline std::pair<std::string, std::string> error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return {e.python_type(), e.what()};
  }
  return {"", ""};
}

inline std::pair<std::string, std::string> eval_error(const std::string& name, const std::vector<Aval>& avals,
                                                      const Params& params) {
  return error_of([&] { (void)prim(name).abstract_eval(avals, params); });
}

inline Aval f32_aval(Shape shape, bool weak = false) { return Aval::of(std::move(shape), DType::kFloat32, weak); }

// The one-equation jaxpr text as make_jaxpr prints it under `profile`.
inline std::string print_eqn(const std::string& name, const std::vector<Aval>& in, const Aval& out,
                             const Params& params, const JaxProfile& profile) {
  Jaxpr jaxpr;
  std::vector<Atom> atoms;
  for (const Aval& aval : in) {
    jaxpr.invars.push_back(new_var(aval));
    atoms.emplace_back(jaxpr.invars.back());
  }
  const Var result = new_var(out);
  jaxpr.eqns.push_back(Eqn{&prim(name), params, atoms, {result}, nullptr});
  jaxpr.outvars = {result};
  return print_jaxpr(jaxpr, profile);
}

// The params as the printer lays them out flat: "k1=v1 k2=v2" (no brackets).
inline std::string params_text(const std::string& name, const Params& params, const JaxProfile& profile,
                               const std::vector<Aval>& in = {}, const Aval& out = Aval::of({}, DType::kFloat32)) {
  Eqn eqn{&prim(name), params, {}, {new_var(out)}, nullptr};
  for (const Aval& aval : in) eqn.inputs.emplace_back(new_var(aval));
  const Params printed = prim(name).printed_params ? prim(name).printed_params(eqn, profile) : params;
  std::vector<std::string> parts;
  for (const auto& [key, value] : printed) parts.push_back(key + "=" + value.str(profile));
  return join(parts, " ");
}

inline ParamValue ints(const std::vector<int64_t>& values) { return ParamValue::int_tuple(values); }

}  // namespace structural_test
