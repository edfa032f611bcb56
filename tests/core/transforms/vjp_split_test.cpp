// vjp_split: the forward program returns the outputs and the residuals, arguments kept as arguments, and the
// backward program over those residuals gives exactly the gradient grad_jaxpr gives.
#include "transforms/vjp_split.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "core/transforms/autodiff_test_util.h"

using namespace shardscope;
using namespace shardscope::testing;

namespace {

const Params kAccuracy{{"accuracy", ParamValue::None{}}};

// f(x, y, k) = (sin(x) * y, k + 1): k is an integer pass-through.
JaxprPtr program() {
  JaxprBuilder b;
  const Var x = b.arg(f64_aval({3}));
  const Var y = b.arg(f64_aval({3}));
  const Var k = b.arg(Aval::of({}, DType::kInt32));
  const Atom product = b.bind1("mul", {b.bind1("sin", {x}, kAccuracy), y});
  return b.build({product, b.bind1("add", {k, scalar_literal(1.0, DType::kInt32, false)})});
}

std::vector<BufferPtr> args() {
  return {f64({3}, {0.5, -1.0, 2.0}), f64({3}, {1.5, 0.25, -2.0}), make_buffer<int32_t>(DType::kInt32, {}, {7})};
}

}  // namespace

TEST_CASE("the forward program keeps y as an argument and sin x, cos x as computed residuals") {
  const VjpSplit split = vjp_split(*program(), {true, true, true}, {true, true, true}, 1);
  const std::vector<BufferPtr> forward = evaluate_jaxpr(*split.forward, args());
  REQUIRE(forward.size() == 2 + split.residual_invar.size());
  CHECK(values_of(forward[0]) == std::vector<double>{std::sin(0.5) * 1.5, std::sin(-1.0) * 0.25, std::sin(2.0) * -2.0});
  // x is read only through sin and cos, so it is not kept; y is.
  std::vector<std::size_t> kept;
  std::size_t computed = 0;
  for (const auto& invar : split.residual_invar) {
    if (invar)
      kept.push_back(*invar);
    else
      ++computed;
  }
  CHECK(kept == std::vector<std::size_t>{1});
  CHECK(computed == 2);
  CHECK(split.output_zeros == std::vector<bool>{false});

  // backward(residuals..., cotangent) equals grad of <f(x, y), ct>, bit for bit.
  std::vector<BufferPtr> backward_args(forward.begin() + 2, forward.end());
  const std::vector<double> ct{1.0, -0.5, 0.25};
  backward_args.push_back(f64({3}, ct));
  const std::vector<BufferPtr> cts = evaluate_jaxpr(*split.backward, backward_args);
  REQUIRE(cts.size() == 3);
  CHECK(values_of(cts[0]) ==
        std::vector<double>{ct[0] * 1.5 * std::cos(0.5), ct[1] * 0.25 * std::cos(-1.0), ct[2] * -2.0 * std::cos(2.0)});
  CHECK(values_of(cts[1]) == std::vector<double>{ct[0] * std::sin(0.5), ct[1] * std::sin(-1.0), ct[2] * std::sin(2.0)});
  CHECK(cts[2]->dtype() == DType::kInt32);  // no tangent space: a zero of the argument's type
}

TEST_CASE("an input without a tangent gets a zero cotangent, and an output that ignores the inputs is a zero") {
  // in_nzs: x is a constant, so only y's cotangent is nonzero and x's is instantiated as zeros.
  const VjpSplit split = vjp_split(*program(), {false, true, false}, {true, true, false}, 2);
  CHECK(split.output_zeros == std::vector<bool>{false, true});
  const std::vector<BufferPtr> forward = evaluate_jaxpr(*split.forward, args());
  std::vector<BufferPtr> backward_args(forward.begin() + 2, forward.end());
  backward_args.push_back(f64({3}, {1.0, 1.0, 1.0}));
  backward_args.push_back(make_buffer<int32_t>(DType::kInt32, {}, {0}));
  const std::vector<BufferPtr> cts = evaluate_jaxpr(*split.backward, backward_args);
  REQUIRE(cts.size() == 2);
  CHECK(values_of(cts[0]) == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(values_of(cts[1]) == std::vector<double>{std::sin(0.5), std::sin(-1.0), std::sin(2.0)});
  CHECK_THROWS_AS((void)vjp_split(*program(), {true}, {true}, 1), Error);
}
