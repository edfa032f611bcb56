// Threefry hash, keys, split, fold_in and random bits against JAX's published and recorded values.
#include "random/threefry.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace shardscope::random;

namespace {

constexpr ThreefryMode kPart = ThreefryMode::kPartitionable;
constexpr ThreefryMode kOrig = ThreefryMode::kOriginal;

RandomOptions with_mode(ThreefryMode mode) { return RandomOptions{mode, std::nullopt}; }

// Slices `full` (row-major, of `shape`) to `block`, for comparison with block generation.
template <class T>
std::vector<T> slice(const std::vector<T>& full, const std::vector<int64_t>& shape, const Block& block) {
  std::vector<T> out;
  const std::size_t rank = shape.size();
  if (rank == 0) return full;
  for (std::size_t d = 0; d < rank; ++d) {
    if (block.stop[d] <= block.start[d]) return out;
  }
  std::vector<int64_t> index = block.start;
  while (true) {
    int64_t flat = 0;
    for (std::size_t d = 0; d < rank; ++d) flat = flat * shape[d] + index[d];
    out.push_back(full[static_cast<std::size_t>(flat)]);
    std::size_t d = rank;
    while (d > 0) {
      --d;
      if (++index[d] < block.stop[d]) break;
      index[d] = block.start[d];
      if (d == 0) return out;
    }
  }
}

template <class UInt>
void check_blocks_equal_slices(ThreefryMode mode, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> rank_dist(0, 4);
  std::uniform_int_distribution<int64_t> dim_dist(0, 7);
  std::uniform_int_distribution<uint32_t> key_dist;
  for (int trial = 0; trial < 60; ++trial) {
    const Key k{key_dist(rng), key_dist(rng)};
    std::vector<int64_t> shape(static_cast<std::size_t>(rank_dist(rng)));
    for (int64_t& d : shape) d = dim_dist(rng) == 0 ? 0 : 1 + dim_dist(rng);
    const std::vector<UInt> full = random_bits<UInt>(k, shape, with_mode(mode));
    REQUIRE(full.size() == static_cast<std::size_t>(shape_size(shape)));
    for (int b = 0; b < 5; ++b) {
      Block block;
      for (const int64_t d : shape) {
        std::uniform_int_distribution<int64_t> pos(0, d);
        int64_t lo = pos(rng);
        int64_t hi = pos(rng);
        if (lo > hi) std::swap(lo, hi);
        block.start.push_back(lo);
        block.stop.push_back(hi);
      }
      const std::vector<UInt> part = random_bits<UInt>(k, shape, RandomOptions{mode, block});
      CHECK(part == slice(full, shape, block));
    }
  }
}

}  // namespace

TEST_CASE("threefry2x32 known-answer vectors (Random123, tests/random_test.py::testThreefry2x32)") {
  CHECK(threefry2x32(Key{0, 0}, 0, 0) == std::array<uint32_t, 2>{0x6B200159u, 0x99BA4EFEu});
  CHECK(threefry2x32(Key{0xFFFFFFFFu, 0xFFFFFFFFu}, 0xFFFFFFFFu, 0xFFFFFFFFu) ==
        std::array<uint32_t, 2>{0x1CB996FCu, 0xBB002BE7u});
  CHECK(threefry2x32(Key{0x13198A2Eu, 0x03707344u}, 0x243F6A88u, 0x85A308D3u) ==
        std::array<uint32_t, 2>{0xC4923A9Cu, 0x483DF7A0u});
  // The broadcast form of testThreefry2x32Large, at a smaller size.
  const std::vector<uint32_t> count = [] {
    std::vector<uint32_t> c(2000, 0x243F6A88u);
    std::fill(c.begin() + 1000, c.end(), 0x85A308D3u);
    return c;
  }();
  const std::vector<uint32_t> out = threefry_2x32_counts(Key{0x13198A2Eu, 0x03707344u}, count);
  CHECK(std::count(out.begin(), out.begin() + 1000, 0xC4923A9Cu) == 1000);
  CHECK(std::count(out.begin() + 1000, out.end(), 0x483DF7A0u) == 1000);
}

TEST_CASE("threefry_2x32 on counts pairs the two halves and drops the pad") {
  const Key k{7, 99};
  for (const std::size_t n : {0u, 1u, 2u, 5u, 8u}) {
    std::vector<uint32_t> count(n);
    for (std::size_t i = 0; i < n; ++i) count[i] = static_cast<uint32_t>(100 + i);
    const std::vector<uint32_t> out = threefry_2x32_counts(k, count);
    REQUIRE(out.size() == n);
    const std::size_t h = (n + 1) / 2;
    for (std::size_t i = 0; i < h; ++i) {
      const auto y = threefry2x32(k, count[i], i + h < n ? count[i + h] : 0u);
      CHECK(out[i] == y[0]);
      if (i + h < n) CHECK(out[i + h] == y[1]);
    }
  }
}

TEST_CASE("seeds become keys as in tests/random_test.py::test_prng_seeds_and_keys") {
  // x32 (default): only the low 32 bits of the seed survive.
  CHECK(PRNGKey(0) == Key{0, 0});
  CHECK(key(1) == Key{0, 1});
  CHECK(key(42) == Key{0, 42});
  CHECK(PRNGKey(-1) == Key{0, 4294967295u});
  CHECK(PRNGKey(-2) == Key{0, 4294967294u});
  CHECK(PRNGKey(int64_t{2147483647} + 100) == Key{0, 2147483747u});
  CHECK(PRNGKey(int64_t{-2147483648} - 100) == Key{0, 2147483548u});
  // x64: the int64's two's complement words.
  CHECK(PRNGKey(-1, true) == Key{4294967295u, 4294967295u});
  CHECK(PRNGKey(-3, true) == Key{4294967295u, 4294967293u});
  CHECK(key(int64_t{-2147483648} - 100, true) == Key{4294967295u, 2147483548u});
  CHECK(key(int64_t{-2147483648} - 101, true) == Key{4294967295u, 2147483547u});
  CHECK(key(3, true) == Key{0, 3});
  CHECK(key(int64_t{1} << 40, true) == Key{256, 0});
}

TEST_CASE("the partitionable default starts with jax 0.5.0") {
  CHECK(default_threefry_mode(0, 4, 38) == kOrig);
  CHECK(default_threefry_mode(0, 5, 0) == kPart);
  CHECK(default_threefry_mode(0, 7, 1) == kPart);
  CHECK(default_threefry_mode(1, 0, 0) == kPart);
}

TEST_CASE("legacy split and fold_in (tests/random_test.py::testPRNGValues)") {
  const std::vector<Key> keys = split(PRNGKey(0), 4, kOrig);
  const std::vector<Key> expected = {
      {2285895361u, 1501764800u}, {1518642379u, 4090693311u}, {433833334u, 4221794875u}, {839183663u, 3740430601u}};
  CHECK(keys == expected);
  CHECK(fold_in(PRNGKey(0), 4) == Key{2285895361u, 433833334u});
}

TEST_CASE("split with a shape flattens row-major") {
  const std::vector<int64_t> shape{2, 3};
  for (const ThreefryMode mode : {kPart, kOrig}) {
    CHECK(split(key(5), shape, mode) == split(key(5), 6, mode));
  }
  CHECK(split(key(5), std::vector<int64_t>{}, kPart) == std::vector<Key>{threefry2x32(key(5), 0, 0)});
  CHECK(split(key(5), 0, kPart).empty());
}

TEST_CASE("partitionable split agrees with fold_in (test_threefry_split_fold_in_symmetry)") {
  const Key k = key(72);
  const std::vector<Key> keys = split(k, 3, kPart);
  for (uint32_t i = 0; i < 3; ++i) CHECK(keys[i] == fold_in(k, i));
  // Value from the reference's scratch implementation; the docs' uniform(split(key(0))[1]) test
  // in distributions_test.cpp pins it to real JAX.
  CHECK(split(key(0), 2, kPart)[1] == Key{928981903u, 3453687069u});
}

TEST_CASE("legacy split chains from the JAX docs (Common Gotchas, jax-101 random numbers)") {
  const std::vector<Key> first = split(PRNGKey(0), 2, kOrig);
  CHECK(first[0] == Key{4146024105u, 967050713u});
  CHECK(first[1] == Key{2718843009u, 1272950319u});
  const std::vector<Key> second = split(first[0], 2, kOrig);
  CHECK(second[0] == Key{2384771982u, 3928867769u});
  CHECK(second[1] == Key{1278412471u, 2182328957u});
  const std::vector<Key> b3 = split(PRNGKey(42), 2, kOrig);
  CHECK(b3[0] == Key{2465931498u, 3679230171u});
  CHECK(b3[1] == Key{255383827u, 267815257u});
}

TEST_CASE("fold_in with Flax's make_rng hashes (rng guide, recorded outputs A6a-A6c)") {
  // Data words are the first 4 bytes of sha1 over Flax's path/count encoding, computed offline.
  const Key k0 = key(0);
  const Key k1 = key(1);
  CHECK(fold_in(k0, 3213575472u) == Key{1428664606u, 3351135085u});  // (1,)
  CHECK(fold_in(k0, 3303678395u) == Key{3456700291u, 3873160899u});  // (2,)
  CHECK(fold_in(k0, 2554499690u) == Key{2411773124u, 4124888837u});  // (3,)
  CHECK(fold_in(k1, 3213575472u) == Key{3077990774u, 2166202870u});
  CHECK(fold_in(k1, 3303678395u) == Key{3825832496u, 2886313970u});
  CHECK(fold_in(k1, 2554499690u) == Key{791337683u, 1373966058u});
  CHECK(fold_in(k0, 3780147575u) == Key{3858825717u, 2323087578u});  // ('RNGSubModule_0', 1)
  CHECK(fold_in(k0, 2777431570u) == Key{601859108u, 3782857444u});   // ('RNGSubModule_0', 2)
  CHECK(fold_in(k0, 1407989119u) == Key{234240654u, 1028548813u});   // (.., 'RNGSubSubModule_0', 1)
  CHECK(fold_in(k0, 2128475742u) == Key{3650462303u, 2124609379u});  // (.., 'RNGSubSubModule_0', 2)
  CHECK(fold_in(k0, 1670030853u) == Key{426957352u, 2006350344u});   // ('RNGSubModule_1', 1)
  CHECK(fold_in(k0, 1065838126u) == Key{4006253729u, 4205356731u});  // ('RNGSubModule_1', 2)
}

TEST_CASE("legacy random bits (tests/random_test.py::testRngRandomBits)") {
  const std::vector<int64_t> shape{3};
  const RandomOptions legacy = with_mode(kOrig);
  CHECK(random_bits<uint8_t>(PRNGKey(1701), shape, legacy) == std::vector<uint8_t>{216, 115, 43});
  CHECK(random_bits<uint16_t>(PRNGKey(1701), shape, legacy) == std::vector<uint16_t>{41682, 1300, 55017});
  CHECK(random_bits<uint32_t>(PRNGKey(1701), shape, legacy) == std::vector<uint32_t>{56197195, 4200222568, 961309823});
  CHECK(random_bits<uint64_t>(PRNGKey(1701), shape, legacy) ==
        std::vector<uint64_t>{3982329540505020460u, 16822122385914693683u, 7882654074788531506u});
  CHECK(random_bits(PRNGKey(1701), 16, shape, legacy) == std::vector<uint64_t>{41682, 1300, 55017});
}

TEST_CASE("legacy random bits of _RANDOM_VALUES_CASES (seed adler32('bitsthreefry2x32'))") {
  const Key k = PRNGKey(942802475);
  const std::vector<int64_t> shape{5};
  const RandomOptions legacy = with_mode(kOrig);
  CHECK(random_bits<uint8_t>(k, shape, legacy) == std::vector<uint8_t>{10, 158, 82, 54, 158});
  CHECK(random_bits<uint16_t>(k, shape, legacy) == std::vector<uint16_t>{6738, 38161, 50695, 57337, 61600});
  CHECK(random_bits<uint32_t>(k, shape, legacy) ==
        std::vector<uint32_t>{1978747883, 4134381225, 3628107870, 689687174, 2788938207});
  CHECK(random_bits<uint64_t>(k, shape, legacy) == std::vector<uint64_t>{17649965731882839947u, 1415307058040849897u,
                                                                         8282622628079774249u, 14024425113645909402u,
                                                                         2012979996110532418u});
}

TEST_CASE("legacy 8/16/32-bit streams are views of one another (testRngRandomBitsViewProperty)") {
  const RandomOptions legacy = with_mode(kOrig);
  const std::vector<uint8_t> b8 = random_bits<uint8_t>(PRNGKey(1701), std::vector<int64_t>{80}, legacy);
  const std::vector<uint16_t> b16 = random_bits<uint16_t>(PRNGKey(1701), std::vector<int64_t>{40}, legacy);
  const std::vector<uint32_t> b32 = random_bits<uint32_t>(PRNGKey(1701), std::vector<int64_t>{20}, legacy);
  for (std::size_t i = 0; i < 20; ++i) {
    const uint32_t from8 =
        b8[4 * i] | (uint32_t{b8[4 * i + 1]} << 8) | (uint32_t{b8[4 * i + 2]} << 16) | (uint32_t{b8[4 * i + 3]} << 24);
    const uint32_t from16 = b16[2 * i] | (uint32_t{b16[2 * i + 1]} << 16);
    CHECK(from8 == b32[i]);
    CHECK(from16 == b32[i]);
  }
  // And 32-bit legacy bits are threefry_2x32 over iota.
  for (const uint32_t n : {1u, 6u, 7u}) {
    std::vector<uint32_t> iota(n);
    for (uint32_t i = 0; i < n; ++i) iota[i] = i;
    CHECK(random_bits<uint32_t>(key(3), std::vector<int64_t>{n}, legacy) == threefry_2x32_counts(key(3), iota));
  }
}

TEST_CASE("partitionable bits hash each element's 64-bit index") {
  const Key k = key(11);
  const std::vector<int64_t> shape{2, 3};
  const std::vector<uint64_t> b64 = random_bits<uint64_t>(k, shape);
  const std::vector<uint32_t> b32 = random_bits<uint32_t>(k, shape);
  const std::vector<uint16_t> b16 = random_bits<uint16_t>(k, shape);
  const std::vector<uint8_t> b8 = random_bits<uint8_t>(k, shape);
  for (uint32_t i = 0; i < 6; ++i) {
    const auto y = threefry2x32(k, 0, i);
    CHECK(b64[i] == ((uint64_t{y[0]} << 32) | y[1]));
    CHECK(b32[i] == (y[0] ^ y[1]));
    CHECK(b16[i] == static_cast<uint16_t>(y[0] ^ y[1]));
    CHECK(b8[i] == static_cast<uint8_t>(y[0] ^ y[1]));
  }
  CHECK(random_bits<uint32_t>(k, std::vector<int64_t>{}) == std::vector<uint32_t>{b32[0]});
  // An element far out in a huge array: its counter's high word is used.
  const std::vector<int64_t> huge{int64_t{1} << 20, int64_t{1} << 20};
  const Block last{{(int64_t{1} << 20) - 1, (int64_t{1} << 20) - 1}, {int64_t{1} << 20, int64_t{1} << 20}};
  const auto y = threefry2x32(k, 0xFF, 0xFFFFFFFFu);
  CHECK(random_bits<uint32_t>(k, huge, RandomOptions{kPart, last}) == std::vector<uint32_t>{y[0] ^ y[1]});
}

TEST_CASE("legacy streams over 2^32-1 words move to split-off keys") {
  // uint32[2^32] needs 2^32 words: one full segment of 2^32-1 words under subkey 0 and one word under
  // subkey 1, each segment laid out as threefry_2x32 over its own iota.
  const Key k = key(9);
  const std::vector<Key> sub = split(k, 2, kOrig);
  const int64_t n = int64_t{1} << 32;
  const std::vector<int64_t> shape{n};
  const uint32_t h = 1u << 31;  // ceil((2^32 - 1) / 2)
  const auto element = [&](int64_t i) {
    return random_bits<uint32_t>(k, shape, RandomOptions{kOrig, Block{{i}, {i + 1}}})[0];
  };
  CHECK(element(0) == threefry2x32(sub[0], 0, h)[0]);
  CHECK(element(5) == threefry2x32(sub[0], 5, h + 5)[0]);
  CHECK(element(h - 1) == threefry2x32(sub[0], h - 1, 0)[0]);  // the pad pair
  CHECK(element(int64_t{h} + 5) == threefry2x32(sub[0], 5, h + 5)[1]);
  CHECK(element(n - 2) == threefry2x32(sub[0], h - 2, 0xFFFFFFFEu)[1]);
  CHECK(element(n - 1) == threefry2x32(sub[1], 0, 0)[0]);
  // A block crossing the segment boundary matches the elementwise results.
  const std::vector<uint32_t> tail = random_bits<uint32_t>(k, shape, RandomOptions{kOrig, Block{{n - 3}, {n}}});
  CHECK(tail == std::vector<uint32_t>{element(n - 3), element(n - 2), element(n - 1)});
}

TEST_CASE("every block equals the slice of the full array, in both modes and all widths") {
  std::mt19937_64 rng(20240117);
  for (const ThreefryMode mode : {kPart, kOrig}) {
    check_blocks_equal_slices<uint8_t>(mode, rng);
    check_blocks_equal_slices<uint16_t>(mode, rng);
    check_blocks_equal_slices<uint32_t>(mode, rng);
    check_blocks_equal_slices<uint64_t>(mode, rng);
  }
}

TEST_CASE("bad blocks and widths are rejected") {
  const std::vector<int64_t> shape{4, 4};
  CHECK_THROWS_AS((void)random_bits<uint32_t>(key(0), shape, RandomOptions{kPart, Block{{0}, {1}}}),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)random_bits<uint32_t>(key(0), shape, RandomOptions{kPart, Block{{0, 2}, {5, 3}}}),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)random_bits<uint32_t>(key(0), shape, RandomOptions{kPart, Block{{3, 0}, {2, 1}}}),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)random_bits(key(0), 24, shape), std::invalid_argument);
  CHECK_THROWS_AS((void)random_bits<uint32_t>(key(0), std::vector<int64_t>{-1}), std::invalid_argument);
}
