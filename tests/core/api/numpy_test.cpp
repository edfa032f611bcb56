// jnp/lax/nn over values: eager results against hand-computed numbers, traced programs against JAX's jaxpr text.
#include "api/numpy.h"

#include <doctest/doctest.h>

#include <cmath>

#include "api/nn.h"
#include "api/session.h"
#include "ir/jaxpr_printer.h"
#include "ops/ops.h"

namespace shardscope::api {
namespace {

Value f32(Shape shape, std::vector<float> values) {
  ensure_core_primitives();
  return jnp::asarray(make_buffer(DType::kFloat32, std::move(shape), values));
}

Value i32(Shape shape, std::vector<int32_t> values) {
  ensure_core_primitives();
  return jnp::asarray(make_buffer(DType::kInt32, std::move(shape), values));
}

std::vector<double> host(const Value& value) {
  const BufferPtr buffer = value.array().gather();
  std::vector<double> out;
  for (int64_t i = 0; i < buffer->size(); ++i) out.push_back(buffer->element_as_double(i));
  return out;
}

void check_close(const std::vector<double>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5));
}

std::string jaxpr_of(const std::vector<Aval>& avals, const std::function<std::vector<Value>(std::vector<Value>)>& f) {
  ensure_core_primitives();
  Trace trace("f");
  std::vector<Value> args;
  for (const Aval& aval : avals) args.push_back(trace.arg(aval));
  const Trace::Closed closed = trace.finish(f(args));
  return print_jaxpr(*closed.jaxpr, JaxProfile(JaxVersion{0, 11, 0}));
}

TEST_CASE("weak python scalars promote to the array dtype") {
  const Value x = f32({3}, {1, 2, 3});
  const Value y = jnp::add(x, py_int(2));
  CHECK(dtype_of(y) == DType::kFloat32);
  CHECK_FALSE(y.aval().weak_type);
  check_close(host(y), {3, 4, 5});
  const Value z = jnp::multiply(py_float(2.5), py_int(2));
  CHECK(z.aval().weak_type);
  CHECK(dtype_of(z) == DType::kFloat32);
  const Value i = jnp::true_divide(i32({2}, {1, 3}), py_int(2));
  CHECK(dtype_of(i) == DType::kFloat32);
  check_close(host(i), {0.5, 1.5});
}

TEST_CASE("rank promotion and broadcasting") {
  const Value x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Value b = f32({3}, {10, 20, 30});
  check_close(host(jnp::add(x, b)), {11, 22, 33, 14, 25, 36});
  const Value col = f32({2, 1}, {100, 200});
  check_close(host(jnp::subtract(x, col)), {-99, -98, -97, -196, -195, -194});
  CHECK_THROWS_WITH(jnp::add(f32({3}, {1, 2, 3}), f32({4}, {1, 2, 3, 4})),
                    "add got incompatible shapes for broadcasting: (3,), (4,).");
  CHECK_THROWS_WITH(jnp::broadcast_shapes({{3}, {4}}), "Incompatible shapes for broadcasting: shapes=[(3,), (4,)]");
}

TEST_CASE("integer floor division and remainder follow Python") {
  const Value a = i32({4}, {7, -7, 7, -7});
  const Value b = i32({4}, {2, 2, -2, -2});
  check_close(host(jnp::floor_divide(a, b)), {3, -4, -4, 3});
  check_close(host(jnp::remainder(a, b)), {1, 1, -1, -1});
  const Value fa = f32({2}, {7.5F, -7.5F});
  check_close(host(jnp::floor_divide(fa, py_int(2))), {3, -4});
  check_close(host(jnp::remainder(fa, py_int(2))), {1.5, 0.5});
}

TEST_CASE("power with integer and float exponents") {
  const Value x = f32({3}, {1, 2, 3});
  check_close(host(jnp::power(x, py_int(3))), {1, 8, 27});
  check_close(host(jnp::power(x, py_float(0.5))), {1, std::sqrt(2.0), std::sqrt(3.0)});
  check_close(host(jnp::power(i32({3}, {2, 3, 0}), i32({3}, {10, 3, 0}))), {1024, 27, 1});
}

TEST_CASE("math, comparisons, where and clip") {
  const Value x = f32({4}, {-2, -0.5F, 0.5F, 2});
  check_close(host(jnp::exp(x)), {std::exp(-2.0), std::exp(-0.5), std::exp(0.5), std::exp(2.0)});
  check_close(host(jnp::abs(x)), {2, 0.5, 0.5, 2});
  check_close(host(jnp::where(jnp::greater(x, py_int(0)), x, py_int(0))), {0, 0, 0.5, 2});
  check_close(host(jnp::clip(x, py_int(-1), py_int(1))), {-1, -0.5, 0.5, 1});
  check_close(host(jnp::logical_and(jnp::less(x, py_int(1)), jnp::greater(x, py_int(-1)))), {0, 1, 1, 0});
  check_close(host(jnp::isfinite(jnp::true_divide(x, f32({4}, {0, 1, 1, 1})))), {0, 1, 1, 1});
}

TEST_CASE("reductions with axis keepdims and dtype") {
  const Value x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  check_close(host(jnp::sum(x)), {21});
  const Value s0 = jnp::sum(x, std::vector<int64_t>{0});
  CHECK(shape_of(s0) == Shape{3});
  check_close(host(s0), {5, 7, 9});
  const Value k = jnp::sum(x, std::vector<int64_t>{1}, std::nullopt, true);
  CHECK(shape_of(k) == Shape{2, 1});
  check_close(host(k), {6, 15});
  check_close(host(jnp::mean(x, std::vector<int64_t>{1})), {2, 5});
  check_close(host(jnp::max(x, std::vector<int64_t>{0})), {4, 5, 6});
  check_close(host(jnp::min(x)), {1});
  check_close(host(jnp::prod(x, std::vector<int64_t>{1})), {6, 120});
  check_close(host(jnp::var(x, std::vector<int64_t>{1})), {2.0 / 3.0, 2.0 / 3.0});
  check_close(host(jnp::stddev(x)), {std::sqrt(35.0 / 12.0)});
  const Value bools = jnp::sum(jnp::greater(x, py_int(2)));
  CHECK(dtype_of(bools) == DType::kInt32);
  check_close(host(bools), {4});
  check_close(host(jnp::any(jnp::greater(x, py_int(5)), std::vector<int64_t>{1})), {0, 1});
  check_close(host(jnp::all(jnp::greater(x, py_int(0)))), {1});
  check_close(host(jnp::argmax(f32({2, 3}, {1, 9, 3, 7, 5, 6}), 1)), {1, 0});
  check_close(host(jnp::argmin(f32({2, 3}, {1, 9, 3, 7, 0, 6}))), {4});
  check_close(host(jnp::cumsum(x, 1)), {1, 3, 6, 4, 9, 15});
  check_close(host(jnp::cumprod(x)), {1, 2, 6, 24, 120, 720});
  CHECK_THROWS_WITH(jnp::max(f32({0}, {})), "zero-size array to reduction operation max which has no identity");
}

TEST_CASE("shape manipulation") {
  const Value x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(shape_of(jnp::reshape(x, {3, -1})) == Shape{3, 2});
  check_close(host(jnp::transpose(x)), {1, 4, 2, 5, 3, 6});
  check_close(host(jnp::swapaxes(x, 0, 1)), {1, 4, 2, 5, 3, 6});
  CHECK(shape_of(jnp::moveaxis(f32({2, 3, 4}, std::vector<float>(24, 1)), {0}, {2})) == Shape{3, 4, 2});
  CHECK(shape_of(jnp::expand_dims(x, {0, 3})) == Shape{1, 2, 3, 1});
  CHECK(shape_of(jnp::squeeze(f32({1, 3, 1}, {1, 2, 3}))) == Shape{3});
  const Value c = jnp::concatenate({x, x}, 1);
  CHECK(shape_of(c) == Shape{2, 6});
  check_close(host(c), {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  const Value s = jnp::stack({f32({2}, {1, 2}), f32({2}, {3, 4})}, 1);
  check_close(host(s), {1, 3, 2, 4});
  const auto parts = jnp::split(f32({4}, {1, 2, 3, 4}), 2);
  REQUIRE(parts.size() == 2);
  check_close(host(parts[1]), {3, 4});
  check_close(host(jnp::tile(f32({2}, {1, 2}), {2})), {1, 2, 1, 2});
  check_close(host(jnp::repeat(f32({2}, {1, 2}), 2)), {1, 1, 2, 2});
  check_close(host(jnp::broadcast_to(f32({2}, {1, 2}), {2, 2})), {1, 2, 1, 2});
}

TEST_CASE("static indexing") {
  const Value x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  check_close(host(jnp::getitem(x, {jnp::IndexItem::at(1)})), {4, 5, 6, 7});
  check_close(host(jnp::getitem(x, {jnp::IndexItem::at(-1), jnp::IndexItem::at(2)})), {10});
  check_close(
      host(jnp::getitem(x, {jnp::IndexItem::range(1, 3), jnp::IndexItem::range(std::nullopt, std::nullopt, 2)})),
      {4, 6, 8, 10});
  check_close(host(jnp::getitem(x, {jnp::IndexItem::at(0), jnp::IndexItem::range(std::nullopt, std::nullopt, -1)})),
              {3, 2, 1, 0});
  CHECK(shape_of(jnp::getitem(x, {jnp::IndexItem::all(), jnp::IndexItem::newaxis()})) == Shape{3, 1, 4});
  CHECK(shape_of(jnp::getitem(x, {jnp::IndexItem::ellipsis(), jnp::IndexItem::newaxis()})) == Shape{3, 4, 1});
}

TEST_CASE("creation functions") {
  check_close(host(jnp::zeros({2})), {0, 0});
  CHECK(dtype_of(jnp::ones({2}, DType::kInt32)) == DType::kInt32);
  check_close(host(jnp::full({3}, py_float(1.5))), {1.5, 1.5, 1.5});
  check_close(host(jnp::arange(4)), {0, 1, 2, 3});
  CHECK(dtype_of(jnp::arange(4)) == DType::kInt32);
  check_close(host(jnp::arange(1, 7, 2)), {1, 3, 5});
  check_close(host(jnp::eye(2, 3, 1)), {0, 1, 0, 0, 0, 1});
  check_close(host(jnp::linspace(0, 1, 5)), {0, 0.25, 0.5, 0.75, 1});
  check_close(host(jnp::zeros_like(i32({2}, {5, 6}))), {0, 0});
}

TEST_CASE("products") {
  const Value a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Value b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  check_close(host(jnp::matmul(a, b)), {4, 5, 10, 11});
  check_close(host(jnp::dot(a, f32({3}, {1, 1, 1}))), {6, 15});
  check_close(host(jnp::vdot(a, a)), {91});
  check_close(host(jnp::outer(f32({2}, {1, 2}), f32({2}, {3, 4}))), {3, 4, 6, 8});
  check_close(host(jnp::inner(f32({2}, {1, 2}), f32({2}, {3, 4}))), {11});
  check_close(host(jnp::tensordot(a, b, 1)), {4, 5, 10, 11});
  check_close(host(jnp::einsum("ij,jk->ki", a, b)), {4, 10, 5, 11});
  const Value batched = jnp::matmul(f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 1}, {1, 1}));
  CHECK(shape_of(batched) == Shape{2, 1, 1});
  check_close(host(batched), {3, 7});
}

TEST_CASE("jax.nn functions") {
  const Value x = f32({3}, {-1, 0, 2});
  check_close(host(nn::relu(x)), {0, 0, 2});
  check_close(host(nn::relu6(f32({2}, {-1, 7}))), {0, 6});
  const auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  check_close(host(nn::sigmoid(x)), {sig(-1), sig(0), sig(2)});
  check_close(host(nn::silu(x)), {-sig(-1), 0, 2 * sig(2)});
  check_close(host(nn::softplus(x)), {std::log1p(std::exp(-1.0)), std::log(2.0), std::log1p(std::exp(2.0))});
  const double e = std::exp(-1.0) + 1 + std::exp(2.0);
  check_close(host(nn::softmax(x)), {std::exp(-1.0) / e, 1 / e, std::exp(2.0) / e});
  check_close(host(nn::log_softmax(x)), {-1 - std::log(e), -std::log(e), 2 - std::log(e)});
  check_close(host(nn::logsumexp(x)), {std::log(e)});
  const auto exact = [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); };
  check_close(host(nn::gelu(x, false)), {exact(-1), 0, exact(2)});
  const auto tanh_gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.141592653589793) * (v + 0.044715 * v * v * v)));
  };
  check_close(host(nn::gelu(x, true)), {tanh_gelu(-1), 0, tanh_gelu(2)});
  check_close(host(nn::one_hot(i32({2}, {2, 0}), 3)), {0, 0, 1, 1, 0, 0});
}

TEST_CASE("jaxpr of 2 sin x plus 1") {
  const std::string text = jaxpr_of({Aval::of({3}, DType::kFloat32)}, [](std::vector<Value> a) -> std::vector<Value> {
    return {jnp::add(jnp::multiply(py_int(2), jnp::sin(a[0])), py_int(1))};
  });
  CHECK(text ==
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sin a\n"
        "    c:f32[3] = mul 2.0:f32[] b\n"
        "    d:f32[3] = add c 1.0:f32[]\n"
        "  in (d,) }");
}

TEST_CASE("jaxpr of x.sum axis 0") {
  const std::string text =
      jaxpr_of({Aval::of({3, 4}, DType::kFloat32)},
               [](std::vector<Value> a) -> std::vector<Value> { return {jnp::sum(a[0], std::vector<int64_t>{0})}; });
  CHECK(text ==
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[4] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "  in (b,) }");
}

TEST_CASE("jaxpr of sigmoid of x at w plus b") {
  const std::string text =
      jaxpr_of({Aval::of({2, 3}, DType::kFloat32), Aval::of({3, 4}, DType::kFloat32), Aval::of({4}, DType::kFloat32)},
               [](std::vector<Value> a) -> std::vector<Value> {
                 return {nn::sigmoid(jnp::add(jnp::matmul(a[0], a[1]), a[2]))};
               });
  CHECK(text ==
        "{ lambda ; a:f32[2,3] b:f32[3,4] c:f32[4]. let\n"
        "    d:f32[2,4] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] a b\n"
        "    e:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n"
        "    f:f32[2,4] = add d e\n"
        "    g:f32[2,4] = logistic f\n"
        "  in (g,) }");
}

TEST_CASE("jaxpr of vdot ravels matrices") {
  const std::string text = jaxpr_of({Aval::of({8, 3}, DType::kFloat32), Aval::of({8, 3}, DType::kFloat32)},
                                    [](std::vector<Value> a) -> std::vector<Value> { return {jnp::vdot(a[0], a[1])}; });
  CHECK(text ==
        "{ lambda ; a:f32[8,3] b:f32[8,3]. let\n"
        "    c:f32[24] = reshape[dimensions=None new_sizes=(24,) sharding=None] a\n"
        "    d:f32[24] = reshape[dimensions=None new_sizes=(24,) sharding=None] b\n"
        "    e:f32[] = dot_general[\n"
        "      dimension_numbers=(([0], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] c d\n"
        "  in (e,) }");
}

TEST_CASE("jaxpr of mean divides by a typed count") {
  const std::string text =
      jaxpr_of({Aval::of({2, 4}, DType::kFloat32)},
               [](std::vector<Value> a) -> std::vector<Value> { return {jnp::mean(a[0], std::vector<int64_t>{1})}; });
  CHECK(text ==
        "{ lambda ; a:f32[2,4]. let\n"
        "    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a\n"
        "    c:f32[2] = div b 4.0:f32[]\n"
        "  in (c,) }");
}

TEST_CASE("jaxpr of x colon None indexing is a broadcast") {
  const std::string text = jaxpr_of({Aval::of({3}, DType::kFloat32)}, [](std::vector<Value> a) -> std::vector<Value> {
    return {jnp::getitem(a[0], {jnp::IndexItem::range(1, std::nullopt), jnp::IndexItem::newaxis()})};
  });
  CHECK(text ==
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=None] a\n"
        "    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n"
        "  in (c,) }");
}

}  // namespace
}  // namespace shardscope::api
