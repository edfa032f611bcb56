// Threefry-2x32 and the two counter layouts JAX feeds it, generating any block of a global bit array.
#include "random/threefry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace shardscope::random {
namespace {

// Counters are hashed in chunks so the scratch buffers stay in cache whatever the block size.
constexpr std::size_t kChunk = 1024;
// The original layout hashes at most this many words per key before it moves to a split-off key.
constexpr uint64_t kMaxWordsPerKey = 0xFFFFFFFFu;

template <int R>
inline void mix(uint32_t& x0, uint32_t& x1) {
  x0 += x1;
  x1 = (x1 << R) | (x1 >> (32 - R));
  x1 ^= x0;
}

inline void rounds_a(uint32_t& x0, uint32_t& x1) {
  mix<13>(x0, x1);
  mix<15>(x0, x1);
  mix<26>(x0, x1);
  mix<6>(x0, x1);
}

inline void rounds_b(uint32_t& x0, uint32_t& x1) {
  mix<17>(x0, x1);
  mix<29>(x0, x1);
  mix<16>(x0, x1);
  mix<24>(x0, x1);
}

struct Schedule {
  uint32_t k0, k1, k2;
  explicit Schedule(const Key& key) : k0(key[0]), k1(key[1]), k2(key[0] ^ key[1] ^ 0x1BD11BDAu) {}
};

inline void hash_in_place(const Schedule& s, uint32_t& x0, uint32_t& x1) {
  x0 += s.k0;
  x1 += s.k1;
  rounds_a(x0, x1);
  x0 += s.k1;
  x1 += s.k2 + 1u;
  rounds_b(x0, x1);
  x0 += s.k2;
  x1 += s.k0 + 2u;
  rounds_a(x0, x1);
  x0 += s.k0;
  x1 += s.k1 + 3u;
  rounds_b(x0, x1);
  x0 += s.k1;
  x1 += s.k2 + 4u;
  rounds_a(x0, x1);
  x0 += s.k2;
  x1 += s.k0 + 5u;
}

void hash_arrays(const Schedule& s, uint32_t* x0, uint32_t* x1, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) hash_in_place(s, x0[i], x1[i]);
}

inline uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
inline uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }

template <class UInt>
constexpr int bit_width_of() {
  return static_cast<int>(sizeof(UInt) * 8);
}

// Partitionable layout: element i hashes (hi32(i), lo32(i)).
template <class UInt>
void fill_partitionable(const Schedule& s, uint64_t first, uint64_t count, UInt* out) {
  uint32_t x0[kChunk];
  uint32_t x1[kChunk];
  while (count > 0) {
    const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(count, kChunk));
    for (std::size_t i = 0; i < n; ++i) {
      x0[i] = hi32(first + i);
      x1[i] = lo32(first + i);
    }
    hash_arrays(s, x0, x1, n);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (sizeof(UInt) == 8) {
        out[i] = (static_cast<uint64_t>(x0[i]) << 32) | x1[i];
      } else {
        out[i] = static_cast<UInt>(x0[i] ^ x1[i]);
      }
    }
    out += n;
    first += n;
    count -= n;
  }
}

// Original layout: a stream of `total_words` 32-bit words. Words come in segments of at most
// kMaxWordsPerKey, each hashed with its own key; within a segment of length L with h = ceil(L/2),
// word j < h is the first output of pair j and word h + j the second output of pair j, where pair j
// hashes the counters (j, j + h), the second one being the zero pad when j + h == L.
class OriginalStream {
 public:
  OriginalStream(const Key& key, uint64_t total_words) : total_words_(total_words) {
    const uint64_t nblocks = total_words / kMaxWordsPerKey;
    if (nblocks == 0) {
      keys_.push_back(key);
    } else {
      keys_ = split(key, static_cast<int64_t>(nblocks + 1), ThreefryMode::kOriginal);
    }
  }

  // Words [begin, end) of the stream into out[0, end - begin).
  void words(uint64_t begin, uint64_t end, uint32_t* out) const {
    while (begin < end) {
      const uint64_t segment = begin / kMaxWordsPerKey;
      const uint64_t seg_start = segment * kMaxWordsPerKey;
      const uint64_t seg_len = std::min(kMaxWordsPerKey, total_words_ - seg_start);
      const uint64_t a = begin - seg_start;
      const uint64_t b = std::min(end, seg_start + seg_len) - seg_start;
      segment_words(Schedule(keys_[segment]), seg_len, a, b, out);
      out += b - a;
      begin = seg_start + b;
    }
  }

 private:
  // Local words [a, b) of one segment. Both halves of the range may need the same pairs, so
  // overlapping pair ranges are hashed once.
  static void segment_words(const Schedule& s, uint64_t len, uint64_t a, uint64_t b, uint32_t* out) {
    const uint64_t h = (len + 1) / 2;
    const uint64_t first_lo = a;
    const uint64_t first_hi = std::min(b, h);
    const uint64_t second_lo = std::max(a, h) - h;
    const uint64_t second_hi = b > h ? b - h : 0;
    const bool has_first = first_lo < first_hi;
    const bool has_second = second_lo < second_hi;
    if (has_first && has_second && second_lo <= first_hi && first_lo <= second_hi) {
      hash_pairs(s, len, h, a, b, std::min(first_lo, second_lo), std::max(first_hi, second_hi), out);
      return;
    }
    if (has_first) hash_pairs(s, len, h, a, b, first_lo, first_hi, out);
    if (has_second) hash_pairs(s, len, h, a, b, second_lo, second_hi, out);
  }

  // Hashes pairs [p_lo, p_hi) and stores the outputs that fall in local words [a, b).
  static void hash_pairs(const Schedule& s, uint64_t len, uint64_t h, uint64_t a, uint64_t b, uint64_t p_lo,
                         uint64_t p_hi, uint32_t* out) {
    uint32_t x0[kChunk];
    uint32_t x1[kChunk];
    for (uint64_t p0 = p_lo; p0 < p_hi; p0 += kChunk) {
      const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(p_hi - p0, kChunk));
      for (std::size_t i = 0; i < n; ++i) {
        const uint64_t p = p0 + i;
        x0[i] = lo32(p);
        x1[i] = p + h == len ? 0u : lo32(p + h);
      }
      hash_arrays(s, x0, x1, n);
      for (std::size_t i = 0; i < n; ++i) {
        const uint64_t p = p0 + i;
        if (p >= a && p < b && p < h) out[p - a] = x0[i];
        if (p + h >= a && p + h < b) out[p + h - a] = x1[i];
      }
    }
  }

  uint64_t total_words_;
  std::vector<Key> keys_;
};

template <class UInt>
class OriginalBits {
 public:
  OriginalBits(const Key& key, uint64_t size)
      : size_(size), stream_(key, (static_cast<uint64_t>(bit_width_of<UInt>()) * size + 31) / 32) {}

  void fill(uint64_t first, uint64_t count, UInt* out) {
    if constexpr (sizeof(UInt) == 4) {
      stream_.words(first, first + count, out);
    } else if constexpr (sizeof(UInt) == 8) {
      // The word stream is cut in two halves: element i = (first half[i] << 32) | second half[i].
      hi_.resize(count);
      lo_.resize(count);
      stream_.words(first, first + count, hi_.data());
      stream_.words(size_ + first, size_ + first + count, lo_.data());
      for (uint64_t i = 0; i < count; ++i) out[i] = (static_cast<uint64_t>(hi_[i]) << 32) | lo_[i];
    } else {
      // Each word is cut little-endian into 32 / width elements.
      constexpr uint64_t per_word = 4 / sizeof(UInt);
      const uint64_t w_begin = first / per_word;
      const uint64_t w_end = (first + count + per_word - 1) / per_word;
      hi_.resize(w_end - w_begin);
      stream_.words(w_begin, w_end, hi_.data());
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t e = first + i;
        const uint32_t word = hi_[e / per_word - w_begin];
        out[i] = static_cast<UInt>(word >> (bit_width_of<UInt>() * static_cast<int>(e % per_word)));
      }
    }
  }

 private:
  uint64_t size_;
  OriginalStream stream_;
  std::vector<uint32_t> hi_;
  std::vector<uint32_t> lo_;
};

// Calls run(first, count, out_offset) for each maximal contiguous run of the block in the
// row-major flattening of `shape`, in the block's own row-major order.
template <class Run>
void for_each_run(std::span<const int64_t> shape, const Block& block, Run&& run) {
  const std::size_t rank = shape.size();
  if (rank == 0) {
    run(uint64_t{0}, uint64_t{1}, uint64_t{0});
    return;
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (block.stop[d] <= block.start[d]) return;
  }
  std::vector<uint64_t> strides(rank, 1);
  for (std::size_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * static_cast<uint64_t>(shape[d]);
  // Dimensions after `inner` are covered in full, so a run spans them and the extent of `inner`.
  std::size_t inner = rank - 1;
  while (inner > 0 && block.start[inner] == 0 && block.stop[inner] == shape[inner]) --inner;
  const uint64_t run_len = static_cast<uint64_t>(block.stop[inner] - block.start[inner]) * strides[inner];
  std::vector<int64_t> index(block.start.begin(), block.start.begin() + static_cast<std::ptrdiff_t>(inner));
  uint64_t out_offset = 0;
  while (true) {
    uint64_t first = static_cast<uint64_t>(block.start[inner]) * strides[inner];
    for (std::size_t d = 0; d < inner; ++d) first += static_cast<uint64_t>(index[d]) * strides[d];
    run(first, run_len, out_offset);
    out_offset += run_len;
    std::size_t d = inner;
    while (d > 0) {
      --d;
      if (++index[d] < block.stop[d]) break;
      index[d] = block.start[d];
      if (d == 0) return;
    }
    if (inner == 0) return;
  }
}

void check_block(std::span<const int64_t> shape, const Block& block) {
  if (block.start.size() != shape.size() || block.stop.size() != shape.size()) {
    throw std::invalid_argument("random block rank " + std::to_string(block.start.size()) + "/" +
                                std::to_string(block.stop.size()) + " does not match shape rank " +
                                std::to_string(shape.size()));
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (block.start[d] < 0 || block.start[d] > block.stop[d] || block.stop[d] > shape[d]) {
      throw std::invalid_argument("random block [" + std::to_string(block.start[d]) + ", " +
                                  std::to_string(block.stop[d]) + ") out of range for dimension " + std::to_string(d) +
                                  " of size " + std::to_string(shape[d]));
    }
  }
}

uint64_t block_size(const Block& block) {
  uint64_t n = 1;
  for (std::size_t d = 0; d < block.start.size(); ++d) n *= static_cast<uint64_t>(block.stop[d] - block.start[d]);
  return n;
}

}  // namespace

ThreefryMode default_threefry_mode(int major, int minor, int patch) {
  (void)patch;
  const bool partitionable = major > 0 || minor >= 5;
  return partitionable ? ThreefryMode::kPartitionable : ThreefryMode::kOriginal;
}

Block full_block(std::span<const int64_t> shape) {
  return Block{std::vector<int64_t>(shape.size(), 0), std::vector<int64_t>(shape.begin(), shape.end())};
}

int64_t shape_size(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (const int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("negative dimension " + std::to_string(d) + " in a random shape");
    n *= d;
  }
  return n;
}

std::array<uint32_t, 2> threefry2x32(const Key& key, uint32_t x0, uint32_t x1) {
  hash_in_place(Schedule(key), x0, x1);
  return {x0, x1};
}

void threefry2x32(const Key& key, std::span<uint32_t> x0, std::span<uint32_t> x1) {
  if (x0.size() != x1.size()) throw std::invalid_argument("threefry2x32 needs counter arrays of equal length");
  hash_arrays(Schedule(key), x0.data(), x1.data(), x0.size());
}

std::vector<uint32_t> threefry_2x32_counts(const Key& key, std::span<const uint32_t> count) {
  const std::size_t n = count.size();
  const std::size_t h = (n + 1) / 2;
  std::vector<uint32_t> x0(count.begin(), count.begin() + static_cast<std::ptrdiff_t>(h));
  std::vector<uint32_t> x1(h, 0u);
  std::copy(count.begin() + static_cast<std::ptrdiff_t>(h), count.end(), x1.begin());
  threefry2x32(key, x0, x1);
  std::vector<uint32_t> out(n);
  std::copy(x0.begin(), x0.end(), out.begin());
  std::copy(x1.begin(), x1.begin() + static_cast<std::ptrdiff_t>(n - h), out.begin() + static_cast<std::ptrdiff_t>(h));
  return out;
}

Key PRNGKey(int64_t seed, bool enable_x64) {
  const uint64_t bits = static_cast<uint64_t>(seed);
  return Key{enable_x64 ? hi32(bits) : 0u, lo32(bits)};
}

Key key(int64_t seed, bool enable_x64) { return PRNGKey(seed, enable_x64); }

std::vector<Key> split(const Key& key, std::span<const int64_t> shape, ThreefryMode mode) {
  const uint64_t n = static_cast<uint64_t>(shape_size(shape));
  std::vector<Key> keys(n);
  if (mode == ThreefryMode::kPartitionable) {
    const Schedule s(key);
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t x0 = hi32(i);
      uint32_t x1 = lo32(i);
      hash_in_place(s, x0, x1);
      keys[i] = Key{x0, x1};
    }
    return keys;
  }
  // Original: key j is words (2j, 2j + 1) of threefry_2x32(key, iota(2n)).
  std::vector<uint32_t> iota(2 * n);
  for (uint64_t i = 0; i < 2 * n; ++i) iota[i] = lo32(i);
  const std::vector<uint32_t> words = threefry_2x32_counts(key, iota);
  for (uint64_t j = 0; j < n; ++j) keys[j] = Key{words[2 * j], words[2 * j + 1]};
  return keys;
}

std::vector<Key> split(const Key& key, int64_t num, ThreefryMode mode) {
  const int64_t shape[1] = {num};
  return split(key, std::span<const int64_t>(shape), mode);
}

Key fold_in(const Key& key, uint32_t data) { return threefry2x32(key, 0u, data); }

template <class UInt>
std::vector<UInt> random_bits(const Key& key, std::span<const int64_t> shape, const RandomOptions& options) {
  const uint64_t size = static_cast<uint64_t>(shape_size(shape));
  const Block block = options.block ? *options.block : full_block(shape);
  check_block(shape, block);
  std::vector<UInt> out(block_size(block));
  if (out.empty()) return out;
  if (options.mode == ThreefryMode::kPartitionable) {
    const Schedule s(key);
    for_each_run(shape, block, [&](uint64_t first, uint64_t count, uint64_t offset) {
      fill_partitionable<UInt>(s, first, count, out.data() + offset);
    });
  } else {
    OriginalBits<UInt> bits(key, size);
    for_each_run(shape, block, [&](uint64_t first, uint64_t count, uint64_t offset) {
      bits.fill(first, count, out.data() + offset);
    });
  }
  return out;
}

template std::vector<uint8_t> random_bits<uint8_t>(const Key&, std::span<const int64_t>, const RandomOptions&);
template std::vector<uint16_t> random_bits<uint16_t>(const Key&, std::span<const int64_t>, const RandomOptions&);
template std::vector<uint32_t> random_bits<uint32_t>(const Key&, std::span<const int64_t>, const RandomOptions&);
template std::vector<uint64_t> random_bits<uint64_t>(const Key&, std::span<const int64_t>, const RandomOptions&);

std::vector<uint64_t> random_bits(const Key& key, int bit_width, std::span<const int64_t> shape,
                                  const RandomOptions& options) {
  const auto widen = [](const auto& bits) { return std::vector<uint64_t>(bits.begin(), bits.end()); };
  switch (bit_width) {
    case 8: return widen(random_bits<uint8_t>(key, shape, options));
    case 16: return widen(random_bits<uint16_t>(key, shape, options));
    case 32: return widen(random_bits<uint32_t>(key, shape, options));
    case 64: return random_bits<uint64_t>(key, shape, options);
    default: throw std::invalid_argument("random_bits width must be 8, 16, 32 or 64, got " + std::to_string(bit_width));
  }
}

}  // namespace shardscope::random
