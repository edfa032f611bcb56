// float32 sin and cos rounded once from double: against <cmath> in double, bit for bit on every build,
// independent of lane, tail and chunk position, with special values through the slow path.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/vector_math.h"

using namespace shardscope;
using vector_math::Function;

namespace {

// The reference: <cmath>'s double sin/cos (well under an ulp of double) rounded once to float.
float reference(Function function, float x) {
  const double wide = static_cast<double>(x);
  return static_cast<float>(function == Function::kSin ? std::sin(wide) : std::cos(wide));
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}

std::vector<float> random_inputs(double low, double high, std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> draw(low, high);
  std::vector<float> in(count);
  for (float& v : in) v = static_cast<float>(draw(rng));
  return in;
}

}  // namespace

TEST_CASE("rounded float32 sin and cos equal double-precision cmath rounded once") {
  for (const Function function : {Function::kSin, Function::kCos}) {
    for (const double bound : {1.0, 10.0, 1000.0, 9.0e4, 2.0e5}) {
      const std::vector<float> in = random_inputs(-bound, bound, 200003, 11);
      std::vector<float> out(in.size());
      std::vector<float> portable(in.size());
      vector_math::apply_rounded(function, in.data(), out.data(), static_cast<int64_t>(in.size()));
      vector_math::apply_rounded_portable(function, in.data(), portable.data(), static_cast<int64_t>(in.size()));
      int differ = 0;
      int far = 0;
      int builds_differ = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        const float expected = reference(function, in[i]);
        if (!same_bits(out[i], expected)) {
          ++differ;
          // Only a value within ~2^-50 of a rounding boundary may round the other way: one ulp at most.
          if (std::fabs(out[i] - expected) > std::fabs(expected) * 1.2e-7F) ++far;
        }
        if (!same_bits(out[i], portable[i])) ++builds_differ;
      }
      INFO("function ", static_cast<int>(function), " on +-", bound);
      CHECK(differ <= 1);
      CHECK(far == 0);
      CHECK(builds_differ == 0);
    }
  }
}

TEST_CASE("seed 002's 2*sin(x)+1 digits come out of the rounded sin") {
  // Seed 002 prints 2 * jnp.sin(x) + 1 for x = 0..31 as [[1. 2.682942 ... 0.44116902 ...] [... -0.08804226
  // -0.99998045 -0.07314587 1.840334 ...] [0.42419338 -0.92279494 ... -0.69244087]].
  std::vector<float> in(32);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  std::vector<float> out(in.size());
  vector_math::apply_rounded(Function::kSin, in.data(), out.data(), static_cast<int64_t>(in.size()));
  const auto affine = [&](std::size_t i) { return 2.0F * out[i] + 1.0F; };
  CHECK(affine(1) == 2.682942F);
  CHECK(affine(6) == 0.44116902F);
  CHECK(affine(10) == -0.08804226F);
  CHECK(affine(11) == -0.99998045F);
  CHECK(affine(12) == -0.07314587F);
  CHECK(affine(13) == 1.840334F);
  CHECK(affine(16) == 0.42419338F);
  CHECK(affine(17) == -0.92279494F);
  CHECK(affine(23) == -0.69244087F);
}

TEST_CASE("special values, huge arguments and signed zeros take cmath, lane by lane") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> specials = {0.0F, -0.0F,   inf,    -inf,  nan,    std::numeric_limits<float>::denorm_min(),
                                       1e5F, -1.0e5F, 1.5e5F, 1e30F, -3e38F, 1e-30F};
  for (const Function function : {Function::kSin, Function::kCos}) {
    for (const float special : specials) {
      for (std::size_t lane = 0; lane < 17; ++lane) {
        std::vector<float> in(17, 0.75F);
        in[lane] = special;
        std::vector<float> out(in.size());
        vector_math::apply_rounded(function, in.data(), out.data(), static_cast<int64_t>(in.size()));
        for (std::size_t i = 0; i < in.size(); ++i) {
          INFO("function ", static_cast<int>(function), " value ", static_cast<double>(in[i]), " lane ", lane);
          CHECK(same_bits(out[i], reference(function, in[i])));
        }
      }
    }
  }
  float zero = -0.0F;
  float result = 1.0F;
  vector_math::apply_rounded(Function::kSin, &zero, &result, 1);
  CHECK(std::signbit(result));
}

TEST_CASE("a rounded result depends on its argument only: any offset, tail length or in place") {
  const std::vector<float> in = random_inputs(-50.0, 50.0, 101, 3);
  std::vector<float> whole(in.size());
  vector_math::apply_rounded(Function::kSin, in.data(), whole.data(), static_cast<int64_t>(in.size()));
  for (std::size_t start = 0; start < 9; ++start) {
    for (std::size_t length = 0; start + length <= in.size() && length < 23; ++length) {
      std::vector<float> part(length + 1, -7.0F);
      vector_math::apply_rounded(Function::kSin, in.data() + start, part.data(), static_cast<int64_t>(length));
      for (std::size_t i = 0; i < length; ++i) CHECK(same_bits(part[i], whole[start + i]));
      CHECK(part[length] == -7.0F);  // nothing written past n
    }
  }
  std::vector<float> in_place = in;
  vector_math::apply_rounded(Function::kSin, in_place.data(), in_place.data(), static_cast<int64_t>(in.size()));
  for (std::size_t i = 0; i < in.size(); ++i) CHECK(same_bits(in_place[i], whole[i]));
}

TEST_CASE("smooth inputs, whose vectors lie in one quadrant, give the same bits as mixed ones") {
  // A fine ramp over several periods: most vectors are all even or all odd quadrants (one polynomial), the
  // ones across a quadrant edge mix both; every value must match the reference and the portable build.
  std::vector<float> ramp(100000);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i) * 2.5e-4F - 12.5F;
  for (const Function function : {Function::kSin, Function::kCos}) {
    std::vector<float> out(ramp.size());
    std::vector<float> portable(ramp.size());
    vector_math::apply_rounded(function, ramp.data(), out.data(), static_cast<int64_t>(ramp.size()));
    vector_math::apply_rounded_portable(function, ramp.data(), portable.data(), static_cast<int64_t>(ramp.size()));
    int differ = 0;
    int builds_differ = 0;
    for (std::size_t i = 0; i < ramp.size(); ++i) {
      if (!same_bits(out[i], reference(function, ramp[i]))) ++differ;
      if (!same_bits(out[i], portable[i])) ++builds_differ;
    }
    INFO("function ", static_cast<int>(function));
    CHECK(differ == 0);
    CHECK(builds_differ == 0);
    // Each element alone (a vector of one lane plus padding) equals its value inside the smooth vector.
    for (std::size_t i = 0; i < ramp.size(); i += 997) {
      float single = 0.0F;
      vector_math::apply_rounded(function, ramp.data() + i, &single, 1);
      CHECK(same_bits(single, out[i]));
    }
  }
}

TEST_CASE("arguments near zero, whose vectors skip the quadrant reduction, keep their bits") {
  // A fine ramp over [-1.2, 1.2]: vectors wholly inside [-0.78, 0.78] skip the reduction, the ones around
  // +-0.78 and pi/4 mix both kinds of lanes; every start offset moves where the vectors split.
  std::vector<float> ramp(60001);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i) * 4.0e-5F - 1.2F;
  for (const Function function : {Function::kSin, Function::kCos}) {
    std::vector<float> out(ramp.size());
    std::vector<float> portable(ramp.size());
    vector_math::apply_rounded(function, ramp.data(), out.data(), static_cast<int64_t>(ramp.size()));
    vector_math::apply_rounded_portable(function, ramp.data(), portable.data(), static_cast<int64_t>(ramp.size()));
    int differ = 0;
    int builds_differ = 0;
    for (std::size_t i = 0; i < ramp.size(); ++i) {
      if (!same_bits(out[i], reference(function, ramp[i]))) ++differ;
      if (!same_bits(out[i], portable[i])) ++builds_differ;
    }
    INFO("function ", static_cast<int>(function));
    CHECK(differ == 0);
    CHECK(builds_differ == 0);
    for (std::size_t start = 1; start < 8; ++start) {
      std::vector<float> shifted(ramp.size() - start);
      vector_math::apply_rounded(function, ramp.data() + start, shifted.data(), static_cast<int64_t>(shifted.size()));
      int moved = 0;
      for (std::size_t i = 0; i < shifted.size(); ++i) moved += same_bits(shifted[i], out[start + i]) ? 0 : 1;
      CHECK(moved == 0);
    }
  }
  // The largest float below pi/4 and its neighbours on both sides of the skip bound, each alone and in a
  // vector of inside lanes.
  const float quarter = std::nextafter(static_cast<float>(M_PI / 4), 0.0F);
  for (const float x : {0.78F, std::nextafter(0.78F, 1.0F), quarter, -quarter, std::nextafter(quarter, 1.0F), -0.0F}) {
    for (const Function function : {Function::kSin, Function::kCos}) {
      std::vector<float> in(16, 0.5F);
      in[5] = x;
      std::vector<float> out(in.size());
      vector_math::apply_rounded(function, in.data(), out.data(), static_cast<int64_t>(in.size()));
      INFO("x ", static_cast<double>(x), " function ", static_cast<int>(function));
      CHECK(same_bits(out[5], reference(function, x)));
      CHECK(same_bits(out[0], reference(function, 0.5F)));
    }
  }
}

TEST_CASE("the AVX2 build gives the bits of the portable one where the CPU has it") {
  const std::vector<float> mixed = random_inputs(-3000.0, 3000.0, 50021, 5);
  std::vector<float> small = random_inputs(-0.7, 0.7, 50021, 6);  // vectors that skip the reduction
  for (std::size_t i = 0; i < small.size(); i += 101) small[i] = (i % 2 == 0) ? 3.0e6F : -0.0F;
  for (const std::vector<float>* in : std::vector<const std::vector<float>*>{&mixed, &small}) {
    for (const Function function : {Function::kSin, Function::kCos}) {
      std::vector<float> avx2(in->size());
      std::vector<float> portable(in->size());
      if (!vector_math::apply_rounded_avx2(function, in->data(), avx2.data(), static_cast<int64_t>(in->size()))) {
        MESSAGE("no AVX2+FMA on this CPU");
        return;
      }
      vector_math::apply_rounded_portable(function, in->data(), portable.data(), static_cast<int64_t>(in->size()));
      int differ = 0;
      int from_reference = 0;
      for (std::size_t i = 0; i < in->size(); ++i) {
        differ += same_bits(avx2[i], portable[i]) ? 0 : 1;
        from_reference += same_bits(avx2[i], reference(function, (*in)[i])) ? 0 : 1;
      }
      CHECK(differ == 0);
      CHECK(from_reference <= 1);
    }
  }
}

TEST_CASE("in place, lanes that take cmath still read their own argument") {
  std::vector<float> in = random_inputs(-0.7, 0.7, 67, 8);
  in[3] = 1.0e30F;
  in[17] = std::numeric_limits<float>::infinity();
  in[40] = 2.5e5F;
  in[66] = -7.0e6F;
  for (const Function function : {Function::kSin, Function::kCos}) {
    std::vector<float> data = in;
    vector_math::apply_rounded(function, data.data(), data.data(), static_cast<int64_t>(data.size()));
    for (std::size_t i = 0; i < in.size(); ++i) {
      INFO("i ", i, " function ", static_cast<int>(function));
      CHECK(same_bits(data[i], reference(function, in[i])));
    }
  }
}
