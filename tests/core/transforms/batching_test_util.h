// Test harness for vmap: runs a batched program and compares it with the unbatched program per batch element.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "exec/interpreter.h"
#include "trace/builder.h"
#include "transforms/batching.h"

namespace shardscope::batching_test {

using Program = std::function<std::vector<Atom>(JaxprBuilder&, const std::vector<Atom>&)>;

inline JaxprPtr trace(const Program& program, const std::vector<Aval>& avals) {
  JaxprBuilder builder;
  std::vector<Atom> args;
  for (const Aval& aval : avals) args.emplace_back(builder.arg(aval));
  return builder.build(program(builder, args));
}

inline std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

inline void store(Buffer& buffer, int64_t index, double value) {
  const auto i = static_cast<std::size_t>(index);
  switch (buffer.dtype()) {
    case DType::kFloat32: buffer.as_mutable<float>()[i] = static_cast<float>(value); break;
    case DType::kInt32: buffer.as_mutable<int32_t>()[i] = static_cast<int32_t>(value); break;
    case DType::kUInt32: buffer.as_mutable<uint32_t>()[i] = static_cast<uint32_t>(value); break;
    case DType::kBool: buffer.as_mutable<uint8_t>()[i] = value != 0 ? 1 : 0; break;
    default: FAIL("unsupported dtype in the vmap harness");
  }
}

// Element `index` of `axis`, copied element by element (independent of the engine's kernels).
inline BufferPtr take(const Buffer& source, int64_t axis, int64_t index) {
  Shape shape = source.shape();
  const auto a = static_cast<std::size_t>(axis);
  shape.erase(shape.begin() + axis);
  auto out = std::make_shared<Buffer>(source.dtype(), shape);
  const std::vector<int64_t> src_strides = strides_of(source.shape());
  const std::vector<int64_t> out_strides = strides_of(shape);
  for (int64_t flat = 0; flat < out->size(); ++flat) {
    int64_t src = index * src_strides[a];
    for (std::size_t d = 0, s = 0; d < shape.size(); ++d, ++s) {
      if (s == a) ++s;
      src += (flat / out_strides[d]) % shape[d] * src_strides[s];
    }
    store(*out, flat, source.element_as_double(src));
  }
  return out;
}

inline BufferPtr random_buffer(const Aval& aval, std::mt19937& rng) {
  auto buffer = std::make_shared<Buffer>(aval.dtype, aval.shape);
  std::uniform_real_distribution<double> real(0.1, 0.9);
  std::uniform_int_distribution<int> integer(0, 3);
  for (int64_t i = 0; i < buffer->size(); ++i) {
    store(*buffer, i,
          is_floating(aval.dtype)      ? real(rng)
          : aval.dtype == DType::kBool ? integer(rng) % 2
                                       : integer(rng));
  }
  return buffer;
}

inline void check_close(const Buffer& got, const Buffer& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got.element_as_double(i);
    const double w = want.element_as_double(i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (is_floating(got.dtype())) {
      CHECK(std::abs(g - w) <= 1e-5 * (1 + std::abs(w)));
    } else {
      CHECK(g == w);
    }
  }
}

// vmap(program, in_axes) on random data equals the program run per batch element and stacked on axis 0.
inline void check_vmap(const Program& program, const std::vector<Aval>& avals,
                       const std::vector<std::optional<int64_t>>& in_axes, int64_t size = 3) {
  const JaxprPtr jaxpr = trace(program, avals);
  std::vector<Aval> batched = avals;
  for (std::size_t i = 0; i < avals.size(); ++i) {
    if (!in_axes[i]) continue;
    const auto rank = static_cast<int64_t>(avals[i].rank()) + 1;
    const int64_t axis = *in_axes[i] < 0 ? *in_axes[i] + rank : *in_axes[i];
    batched[i].shape.insert(batched[i].shape.begin() + axis, size);
  }
  const JaxprPtr vmapped =
      vmap_jaxpr(*jaxpr, batched, in_axes, std::vector<std::optional<int64_t>>(jaxpr->outvars.size(), int64_t{0}));
  std::mt19937 rng(7);
  std::vector<BufferPtr> inputs;
  for (const Aval& aval : batched) inputs.push_back(random_buffer(aval, rng));
  const std::vector<BufferPtr> outputs = evaluate_jaxpr(*vmapped, inputs);
  REQUIRE(outputs.size() == jaxpr->outvars.size());
  for (int64_t b = 0; b < size; ++b) {
    std::vector<BufferPtr> element;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!in_axes[i]) {
        element.push_back(inputs[i]);
        continue;
      }
      const auto rank = static_cast<int64_t>(batched[i].rank());
      element.push_back(take(*inputs[i], *in_axes[i] < 0 ? *in_axes[i] + rank : *in_axes[i], b));
    }
    const std::vector<BufferPtr> expected = evaluate_jaxpr(*jaxpr, element);
    for (std::size_t k = 0; k < expected.size(); ++k) {
      CAPTURE(b);
      CAPTURE(k);
      check_close(*take(*outputs[k], 0, b), *expected[k]);
    }
  }
}

// The in_axes mixes every rule is checked under: all 0, all -1, and mapped (axis 1 where the rank allows)
// alternating with None both ways.
inline std::vector<std::vector<std::optional<int64_t>>> axis_mixes(const std::vector<Aval>& avals) {
  std::vector<std::vector<std::optional<int64_t>>> mixes;
  mixes.emplace_back(avals.size(), int64_t{0});
  mixes.emplace_back(avals.size(), int64_t{-1});
  std::vector<std::optional<int64_t>> odd;
  std::vector<std::optional<int64_t>> even;
  for (std::size_t i = 0; i < avals.size(); ++i) {
    const std::optional<int64_t> mapped = std::min<int64_t>(1, static_cast<int64_t>(avals[i].rank()));
    odd.push_back(i % 2 == 0 ? mapped : std::nullopt);
    even.push_back(i % 2 == 0 ? std::nullopt : mapped);
  }
  mixes.push_back(odd);
  if (avals.size() > 1) mixes.push_back(even);
  return mixes;
}

inline void check_all_mixes(const Program& program, const std::vector<Aval>& avals) {
  for (const auto& in_axes : axis_mixes(avals)) {
    CAPTURE(in_axes.size());
    check_vmap(program, avals, in_axes);
  }
}

}  // namespace shardscope::batching_test
