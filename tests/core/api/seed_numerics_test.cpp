// Float32 values the seeds printed from XLA:CPU, recomputed through the engine's eager kernels.
#include <doctest/doctest.h>

#include <vector>

#include "api/numpy.h"
#include "api/session.h"

using namespace shardscope;
using namespace shardscope::api;

TEST_CASE("sin rounds as XLA:CPU does: seed 002's 2 * sin(x) + 1 over arange(32)") {
  std::vector<float> arange(32);
  for (std::size_t i = 0; i < arange.size(); ++i) arange[i] = static_cast<float>(i);
  const Value x = Value::concrete(Array::from_host(make_buffer(DType::kFloat32, {32}, arange),
                                                   make_single_device_sharding(default_device(), session().profile),
                                                   session().profile));
  const BufferPtr sines = jnp::sin(x).array().gather();
  // Seed 002, cell 9 (CPU): the entries where a few-ulp approximation of sin shows in the printed digits.
  const std::vector<std::pair<int, float>> printed = {{6, 0.44116902F},  {10, -0.08804226F}, {12, -0.07314587F},
                                                      {16, 0.42419338F}, {17, -0.92279494F}, {23, -0.69244087F}};
  for (const auto& [index, value] : printed) {
    CAPTURE(index);
    const float s = static_cast<float>(sines->element_as_double(index));
    CHECK(2.0F * s + 1.0F == value);
  }
}
