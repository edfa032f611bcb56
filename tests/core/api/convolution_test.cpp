// lax.conv_general_dilated against a direct loop over output positions, and its gradients against central
// differences on values from a 1/16 grid (exact in float32, so only the convolution's rounding remains).
#include "api/convolution.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "api/lax.h"
#include "api/numpy.h"
#include "api/transforms.h"
#include "ops/ops.h"

namespace shardscope::api {
namespace {

Value grid(Shape shape, int modulus, int offset) {
  ensure_core_primitives();
  std::vector<float> values;
  for (int64_t i = 0; i < product(shape); ++i) values.push_back(static_cast<float>((i * 5 + offset) % modulus) / 16.0f);
  return jnp::asarray(make_buffer(DType::kFloat32, std::move(shape), values));
}

std::vector<double> host(const Value& value) {
  const BufferPtr buffer = value.array().gather();
  std::vector<double> out;
  for (int64_t i = 0; i < buffer->size(); ++i) out.push_back(buffer->element_as_double(i));
  return out;
}

// NHWC input, HWIO kernel, explicit padding, strides and dilations: the textbook sum per output element.
std::vector<double> direct(const Value& x, const Value& w, std::array<int64_t, 2> stride,
                           std::array<std::pair<int64_t, int64_t>, 2> pad, std::array<int64_t, 2> rhs_dil,
                           Shape& out_shape) {
  const auto xs = host(x);
  const auto ws = host(w);
  const Shape& s = shape_of(x);
  const Shape& k = shape_of(w);
  const int64_t oh = (s[1] + pad[0].first + pad[0].second - ((k[0] - 1) * rhs_dil[0] + 1)) / stride[0] + 1;
  const int64_t ow = (s[2] + pad[1].first + pad[1].second - ((k[1] - 1) * rhs_dil[1] + 1)) / stride[1] + 1;
  out_shape = {s[0], oh, ow, k[3]};
  std::vector<double> out;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t o = 0; o < k[3]; ++o) {
          double acc = 0;
          for (int64_t a = 0; a < k[0]; ++a)
            for (int64_t b = 0; b < k[1]; ++b)
              for (int64_t c = 0; c < k[2]; ++c) {
                const int64_t r = i * stride[0] + a * rhs_dil[0] - pad[0].first;
                const int64_t q = j * stride[1] + b * rhs_dil[1] - pad[1].first;
                if (r < 0 || q < 0 || r >= s[1] || q >= s[2]) continue;
                acc += xs[static_cast<std::size_t>(((n * s[1] + r) * s[2] + q) * s[3] + c)] *
                       ws[static_cast<std::size_t>(((a * k[1] + b) * k[2] + c) * k[3] + o)];
              }
          out.push_back(acc);
        }
  return out;
}

const lax::ConvDimensionNumbers kNhwc =
    lax::conv_dimension_numbers(4, std::vector<std::string>{"NHWC", "HWIO", "NHWC"});

}  // namespace

TEST_CASE("conv_general_dilated equals the direct sum for strides, padding and kernel dilation") {
  const Value x = grid({2, 6, 5, 3}, 13, 1);
  const Value w = grid({3, 2, 3, 4}, 7, 2);
  const std::array<std::array<int64_t, 2>, 3> strides{{{1, 1}, {2, 1}, {1, 2}}};
  const std::array<std::array<std::pair<int64_t, int64_t>, 2>, 3> pads{
      {{{{1, 1}, {0, 1}}}, {{{0, 0}, {0, 0}}}, {{{2, 0}, {1, 1}}}}};
  const std::array<std::array<int64_t, 2>, 3> dilations{{{1, 1}, {1, 2}, {2, 1}}};
  for (std::size_t t = 0; t < 3; ++t) {
    CAPTURE(t);
    lax::ConvPadding padding;
    padding.pairs = {pads[t][0], pads[t][1]};
    const Value y = lax::conv_general_dilated(x, w, {strides[t][0], strides[t][1]}, padding, {},
                                              {dilations[t][0], dilations[t][1]}, kNhwc);
    Shape expected_shape;
    const auto expected = direct(x, w, strides[t], pads[t], dilations[t], expected_shape);
    REQUIRE(shape_of(y) == expected_shape);
    const auto got = host(y);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
  // 'SAME' keeps the spatial size at stride 1.
  lax::ConvPadding same;
  same.name = "SAME";
  CHECK(shape_of(lax::conv_general_dilated(x, w, {1, 1}, same, {}, {}, kNhwc)) == Shape{2, 6, 5, 4});
}

namespace {

// Both gradients of sum(conv(x, w)^2) against central differences: the loss is quadratic in each input, so the
// central difference is exact up to float rounding.
void check_gradients(const Value& x, const Value& w, const std::function<Value(const Value&, const Value&)>& conv) {
  const Function loss = [&conv](const std::vector<Value>& in) {
    const Value y = conv(in[0], in[1]);
    return std::vector<Value>{jnp::sum(jnp::multiply(y, y))};
  };
  const auto grads = call_grad(loss, {x, w}, {0, 1}, false, false, "loss");
  REQUIRE(grads.size() == 2);
  const double h = 1.0 / 16.0;
  for (std::size_t which = 0; which < 2; ++which) {
    const Value& base = which == 0 ? x : w;
    CHECK(shape_of(grads[which]) == shape_of(base));
    const auto g = host(grads[which]);
    const auto values = host(base);
    for (std::size_t i = 0; i < values.size(); i += 3) {
      const auto shifted = [&](double delta) {
        std::vector<float> moved(values.begin(), values.end());
        moved[i] += static_cast<float>(delta);
        const Value v = jnp::asarray(make_buffer(DType::kFloat32, shape_of(base), moved));
        return host(loss(which == 0 ? std::vector<Value>{v, w} : std::vector<Value>{x, v})[0])[0];
      };
      CAPTURE(which);
      CAPTURE(i);
      CHECK(g[i] == doctest::Approx((shifted(h) - shifted(-h)) / (2 * h)).epsilon(1e-3));
    }
  }
}

lax::ConvPadding explicit_padding(std::vector<std::pair<int64_t, int64_t>> pairs) {
  lax::ConvPadding padding;
  padding.pairs = std::move(pairs);
  return padding;
}

}  // namespace

TEST_CASE("conv_general_dilated's gradients match central differences on a 1/16 grid") {
  lax::ConvPadding same;
  same.name = "SAME";
  check_gradients(grid({1, 5, 4, 2}, 9, 0), grid({3, 3, 2, 2}, 5, 3), [&same](const Value& x, const Value& w) {
    return lax::conv_general_dilated(x, w, {2, 1}, same, {}, {1, 2}, kNhwc);
  });
}

TEST_CASE("grouped and transposed convolutions have gradients that match central differences") {
  // Feature groups with lhs dilation (a transposed convolution): the lhs cotangent is a grouped convolution of
  // the reversed kernel, the rhs cotangent a batch-grouped one.
  check_gradients(grid({2, 4, 3, 4}, 7, 1), grid({2, 3, 2, 4}, 5, 2), [](const Value& x, const Value& w) {
    return lax::conv_general_dilated(x, w, {1, 2}, explicit_padding({{1, 0}, {2, 1}}), {2, 1}, {1, 1}, kNhwc, 2);
  });
  // Batch groups (what a grouped convolution's kernel gradient is): its transposes swap the group kinds back.
  check_gradients(grid({4, 4, 3, 2}, 7, 1), grid({2, 2, 2, 4}, 5, 2), [](const Value& x, const Value& w) {
    return lax::conv_general_dilated(x, w, {1, 1}, explicit_padding({{0, 1}, {1, 0}}), {}, {}, kNhwc, 1, 2);
  });
}

TEST_CASE("batch groups pair each slice of the batch with a slice of the output features") {
  const Value x = grid({4, 5, 4, 3}, 11, 2);
  const Value w = grid({2, 2, 3, 6}, 7, 1);
  const lax::ConvPadding pads = explicit_padding({{1, 0}, {0, 1}});
  const Value grouped = lax::conv_general_dilated(x, w, {1, 1}, pads, {}, {}, kNhwc, 1, 2);
  REQUIRE(shape_of(grouped) == Shape{2, 5, 4, 6});
  const auto all = host(grouped);
  for (int64_t g = 0; g < 2; ++g) {
    const Value part =
        lax::conv_general_dilated(lax::slice(x, {2 * g, 0, 0, 0}, {2 * g + 2, 5, 4, 3}),
                                  lax::slice(w, {0, 0, 0, 3 * g}, {2, 2, 3, 3 * g + 3}), {1, 1}, pads, {}, {}, kNhwc);
    const auto expected = host(part);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const std::size_t position = i / 3;
      CHECK(all[position * 6 + static_cast<std::size_t>(3 * g) + i % 3] == expected[i]);
    }
  }
}

TEST_CASE("vmap of conv_general_dilated equals the convolution of each slice, over lhs, rhs or both") {
  lax::ConvPadding same;
  same.name = "SAME";
  const Value xs = grid({3, 2, 4, 4, 4}, 9, 0);
  for (const int64_t groups : {1, 2}) {
    const Value ws = grid({3, 3, 3, 4 / groups, 4}, 5, 3);
    const Function conv = [&same, groups](const std::vector<Value>& in) {
      return std::vector<Value>{lax::conv_general_dilated(in[0], in[1], {1, 2}, same, {}, {}, kNhwc, groups)};
    };
    for (const auto& axes :
         std::vector<std::vector<std::optional<int64_t>>>{{0, std::nullopt}, {std::nullopt, 0}, {0, 0}}) {
      const Value x0 = lax::slice(xs, {0, 0, 0, 0, 0}, {1, 2, 4, 4, 4});
      const Value w0 = lax::slice(ws, {0, 0, 0, 0, 0}, {1, 3, 3, 4 / groups, 4});
      const Value x = axes[0] ? xs : lax::squeeze(x0, {0});
      const Value w = axes[1] ? ws : lax::squeeze(w0, {0});
      const Value mapped = call_vmap(conv, {x, w}, axes, {0}, std::nullopt, "conv")[0];
      const auto got = host(mapped);
      const std::size_t per = got.size() / 3;
      for (int64_t b = 0; b < 3; ++b) {
        const auto pick = [b](const Value& stacked) {
          Shape start(shape_of(stacked).size(), 0);
          Shape limit = shape_of(stacked);
          start[0] = b;
          limit[0] = b + 1;
          return lax::squeeze(lax::slice(stacked, start, limit), {0});
        };
        const auto expected = host(conv({axes[0] ? pick(xs) : x, axes[1] ? pick(ws) : w})[0]);
        CAPTURE(groups);
        CAPTURE(b);
        REQUIRE(expected.size() == per);
        for (std::size_t i = 0; i < per; ++i) CHECK(got[static_cast<std::size_t>(b) * per + i] == expected[i]);
      }
    }
  }
}

}  // namespace shardscope::api
