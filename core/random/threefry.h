// JAX's default PRNG (threefry2x32): the hash, raw keys, split, fold_in and random bits, with block generation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace shardscope::random {

// Raw key data, as jax.random.key_data(key) / jax.random.PRNGKey(seed) hold it: uint32[2].
using Key = std::array<uint32_t, 2>;

// jax_threefry_partitionable: True is the default from jax 0.5.0 (2025-01-17) on, False before.
enum class ThreefryMode : uint8_t {
  kPartitionable,  // each element hashes its own 64-bit global index
  kOriginal,       // the pre-0.5 stream: one iota of counters split into halves
};

// The flag's default in a given JAX release.
[[nodiscard]] ThreefryMode default_threefry_mode(int major, int minor, int patch);

// A hyper-rectangle of a global array: dimension d covers [start[d], stop[d]).
struct Block {
  std::vector<int64_t> start;
  std::vector<int64_t> stop;
};

// The whole array as a block.
[[nodiscard]] Block full_block(std::span<const int64_t> shape);

// Whether XLA turned a multiply feeding an add into one fused multiply-add (one rounding instead of
// two). Recorded XLA:CPU output of jax ~0.7 needs kFused in erf_inv's polynomial (2 of 16 normals
// differ by 1-2 ulp otherwise); older recorded outputs match either way.
enum class FloatContraction : uint8_t { kFused, kUnfused };

// How a sampler runs: which counter layout, optionally only one block of the global result
// (row-major within the block; equal to slicing the full result), and the float contraction that
// float32/float64 samplers assume.
struct RandomOptions {
  ThreefryMode mode = ThreefryMode::kPartitionable;
  std::optional<Block> block;
  FloatContraction contraction = FloatContraction::kFused;
};

// Threefry-2x32 with 20 rounds on one counter pair.
[[nodiscard]] std::array<uint32_t, 2> threefry2x32(const Key& key, uint32_t x0, uint32_t x1);
// The same hash applied elementwise, in place: (x0[i], x1[i]) becomes the hashed pair.
void threefry2x32(const Key& key, std::span<uint32_t> x0, std::span<uint32_t> x1);
// JAX's threefry_2x32(key, count): hashes the first half of `count` against the second half
// (zero-padded to even length) and returns [all first outputs, all second outputs] minus the pad.
[[nodiscard]] std::vector<uint32_t> threefry_2x32_counts(const Key& key, std::span<const uint32_t> count);

// jax.random.PRNGKey(seed) and key_data(jax.random.key(seed)). With x64 off, JAX keeps only the low
// 32 bits of the seed, so the high key word is 0; with x64 on it is the high word of the int64.
[[nodiscard]] Key PRNGKey(int64_t seed, bool enable_x64 = false);
[[nodiscard]] Key key(int64_t seed, bool enable_x64 = false);

// jax.random.split(key, shape): prod(shape) keys, row-major.
[[nodiscard]] std::vector<Key> split(const Key& key, std::span<const int64_t> shape,
                                     ThreefryMode mode = ThreefryMode::kPartitionable);
[[nodiscard]] std::vector<Key> split(const Key& key, int64_t num = 2, ThreefryMode mode = ThreefryMode::kPartitionable);

// jax.random.fold_in(key, data); the same in both modes.
[[nodiscard]] Key fold_in(const Key& key, uint32_t data);

// jax.random.bits(key, shape, uintN): UInt is uint8_t, uint16_t, uint32_t or uint64_t.
template <class UInt>
[[nodiscard]] std::vector<UInt> random_bits(const Key& key, std::span<const int64_t> shape,
                                            const RandomOptions& options = {});
// The same with the width chosen at run time (8, 16, 32 or 64); values are zero-extended.
[[nodiscard]] std::vector<uint64_t> random_bits(const Key& key, int bit_width, std::span<const int64_t> shape,
                                                const RandomOptions& options = {});

// Number of elements in a shape (1 for a scalar); throws std::invalid_argument on a negative dimension.
[[nodiscard]] int64_t shape_size(std::span<const int64_t> shape);

extern template std::vector<uint8_t> random_bits<uint8_t>(const Key&, std::span<const int64_t>, const RandomOptions&);
extern template std::vector<uint16_t> random_bits<uint16_t>(const Key&, std::span<const int64_t>, const RandomOptions&);
extern template std::vector<uint32_t> random_bits<uint32_t>(const Key&, std::span<const int64_t>, const RandomOptions&);
extern template std::vector<uint64_t> random_bits<uint64_t>(const Key&, std::span<const int64_t>, const RandomOptions&);

}  // namespace shardscope::random
