// Element sources of slice-like ops and the neighbour sends they take when a permuted dim stays sharded (or, for a
// slice or pad whose result drops it, before the result is made whole), as XLA's windowed reshard sends them.
#include "exec/halo_exchange.h"

#include <algorithm>
#include <map>
#include <variant>

#include "ir/primitive.h"
#include "spmd/collectives.h"

namespace shardscope {
namespace {

std::vector<int64_t> ints(const Eqn& eqn, const std::string& key) { return param(eqn.params, key).as_ints(key); }

std::vector<ElementSource> slice_sources(const Eqn& eqn, std::size_t dim, int64_t out_size) {
  const int64_t start = ints(eqn, "start_indices").at(dim);
  int64_t stride = 1;
  if (const ParamValue* strides = find_param(eqn.params, "strides"); strides != nullptr && !strides->is_none()) {
    stride = strides->as_ints("strides").at(dim);
  }
  std::vector<ElementSource> sources;
  for (int64_t j = 0; j < out_size; ++j) sources.push_back({0, start + j * stride});
  return sources;
}

std::vector<ElementSource> pad_sources(const Eqn& eqn, std::size_t dim, int64_t in_size, int64_t out_size) {
  const std::vector<int64_t> low_high_interior =
      param(eqn.params, "padding_config").as_items("padding_config").at(dim).as_ints("padding_config");
  const int64_t low = low_high_interior.at(0);
  const int64_t step = low_high_interior.at(2) + 1;
  std::vector<ElementSource> sources(static_cast<std::size_t>(out_size));
  for (int64_t i = 0; i < in_size; ++i) {
    const int64_t j = low + i * step;  // negative low padding drops the leading elements
    if (j >= 0 && j < out_size) sources[static_cast<std::size_t>(j)] = {0, i};
  }
  return sources;
}

std::vector<ElementSource> concatenate_sources(const Eqn& eqn, std::size_t dim) {
  std::vector<ElementSource> sources;
  for (std::size_t k = 0; k < eqn.inputs.size(); ++k) {
    const int64_t size = atom_aval(eqn.inputs[k]).shape.at(dim);
    for (int64_t i = 0; i < size; ++i) sources.push_back({k, i});
  }
  return sources;
}

// Elements of one device's block of an operand, other dims as `layout` cuts them, times `skip` along `dim`.
int64_t block_bytes_per_index(const Aval& aval, const Layout& layout, std::size_t dim, const Mesh& mesh) {
  int64_t elements = 1;
  for (std::size_t d = 0; d < aval.rank(); ++d) {
    if (d == dim) continue;
    elements *= aval.shape[d] / (d < layout.size() ? mesh.axes_size(layout[d]) : 1);
  }
  return elements * static_cast<int64_t>(dtype_size(aval.dtype));
}

// An exchange of `kind` along `dim` over `axes` that moves nothing yet (per-device byte counts all zero).
HaloExchange no_exchange(CollectiveKind kind, std::size_t operand, std::size_t dim,
                         const std::vector<std::string>& axes, const Mesh& mesh) {
  return {kind,
          operand,
          dim,
          axes,
          std::vector<int64_t>(mesh.devices().size(), 0),
          std::vector<int64_t>(mesh.devices().size(), 0)};
}

// The window XLA's partitioner reads along one dim for a slice or an edge-only pad: one element every `stride`
// elements of the operand padded with `low` elements before it and `high` after (negative: elements dropped).
struct DimWindow {
  int64_t stride = 1;
  int64_t low = 0;
  int64_t high = 0;
};

// A slice's or an edge-only pad's window along `dim` of an operand `n` elements long there; nullopt for other
// ops and for interior padding (a dilated base, which the halo model here does not cover).
std::optional<DimWindow> dim_window(const Eqn& eqn, std::size_t dim, int64_t n) {
  const std::string& name = eqn.primitive->name;
  if (name == "slice") {
    int64_t stride = 1;
    if (const ParamValue* strides = find_param(eqn.params, "strides"); strides != nullptr && !strides->is_none()) {
      stride = strides->as_ints("strides").at(dim);
    }
    return DimWindow{stride, -ints(eqn, "start_indices").at(dim), ints(eqn, "limit_indices").at(dim) - n};
  }
  if (name == "pad") {
    const std::vector<int64_t> low_high_interior =
        param(eqn.params, "padding_config").as_items("padding_config").at(dim).as_ints("padding_config");
    if (low_high_interior.at(2) != 0) return std::nullopt;
    return DimWindow{1, low_high_interior.at(0), low_high_interior.at(1)};
  }
  return std::nullopt;
}

// The ceiling of a / b for b > 0, negative a included (halo widths can be negative).
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

// The largest f(i) for i in [from, to), to > from.
template <typename F>
int64_t max_over(const F& f, int64_t from, int64_t to) {
  int64_t largest = f(from);
  for (int64_t i = from + 1; i < to; ++i) largest = std::max(largest, f(i));
  return largest;
}

// One collective-permute of a windowed reshard: each (source, target) pair of positions along the sharded
// axes sends `elements` elements along the dim (every pair the same slice width, as one HLO instruction).
struct PermuteStep {
  int64_t elements = 0;
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

// The shards that take part in XLA's windowed reshard along one dim (ReshardAsWindowedInput) after it drops
// those holding nothing the windows read, and the halo widths of each as functions of its position i.
struct WindowedShards {
  int64_t count = 0;      // shards that take part
  int64_t size = 0;       // elements of each one's block they use (cut down when all useful data is in one)
  int64_t base = 0;       // the elements the halo functions see: count * size, or the whole operand
  int64_t left_pad = 0;   // padding in front of the base (negative: leading elements skipped)
  int64_t step = 0;       // shard i's first window reads element step * i of the padded base
  int64_t span = 0;       // and its windows cover `span` elements from there
  int64_t gap_from = -1;  // positions from here on stand for the shards `gap` further along (-1: no gap)
  int64_t gap = 0;
  // How far shard i's reads reach into the previous shards, and into the next ones (negative: short of them).
  [[nodiscard]] int64_t left(int64_t i) const { return size * i + left_pad - step * i; }
  [[nodiscard]] int64_t right(int64_t i) const { return step * i + span - size * (i + 1) - left_pad; }
  [[nodiscard]] int64_t position(int64_t i) const { return gap_from >= 0 && i >= gap_from ? i + gap : i; }
};

// XLA's ExchangeHalo: the left halo as one permute per block-width of its widest (from the shard one, two, ...
// back), then the right halo likewise, each cut to the range some shard reads (right and left bounds).
// nullopt when a halo reaches past the neighbours so far that XLA gathers the dim instead.
std::optional<std::vector<PermuteStep>> neighbour_permutes(const WindowedShards& w) {
  const int64_t s = w.size;
  const auto left = [&](int64_t i) { return w.left(i); };
  const auto right = [&](int64_t i) { return w.right(i); };
  const int64_t max_left = max_over(left, 1, w.count);
  const int64_t max_right = max_over(right, 0, w.count - 1);
  if (max_left + max_right + s >= s * w.count && (max_left > s || max_right > s)) return std::nullopt;
  const int64_t left_bound = -max_over(left, 0, w.count);
  const int64_t right_bound = s + max_over(right, 0, w.count);
  if (left_bound >= right_bound) return std::nullopt;
  std::vector<PermuteStep> steps;
  for (int64_t i = ceil_div(max_left, s) - 1; i >= 0 && (-i - 1) * s < right_bound; --i) {
    PermuteStep step{std::min(max_left - s * i, s) - std::max<int64_t>(-i * s - right_bound, 0), {}};
    for (int64_t t = i + 1; t < w.count; ++t) step.pairs.emplace_back(t - i - 1, t);
    steps.push_back(std::move(step));
  }
  const int64_t skipped = std::min(std::max<int64_t>(left_bound - s, 0), std::max<int64_t>(max_right, 0)) / s;
  for (int64_t i = skipped; i < ceil_div(max_right, s); ++i) {
    PermuteStep step{std::min(max_right - s * i, s) - std::max<int64_t>(left_bound - (i + 1) * s, 0), {}};
    for (int64_t t = i + 1; t < w.count; ++t) step.pairs.emplace_back(t, t - i - 1);
    steps.push_back(std::move(step));
  }
  return steps;
}

// XLA's ExchangeHaloCompact, for windows that lie far from the reader's own block: each shard's window is cut
// into pieces (from its own block, another shard's, or padding), and the pieces from other shards travel in
// permutes built greedily, each taking at most one piece per source and per target, a source's pieces in the
// order they land in their windows. A permute sends the slice of the source block covering all its pieces.
std::vector<PermuteStep> compact_permutes(const WindowedShards& w) {
  struct Piece {
    int64_t offset = 0;  // where it lands in its window
    int64_t start = 0;   // its range in the owner's block
    int64_t limit = 0;
    int64_t owner = -1;  // -1: padding
  };
  const int64_t s = w.size;
  const auto count = static_cast<std::size_t>(w.count);
  std::vector<std::vector<Piece>> pieces(count);
  for (int64_t i = 0; i < w.count; ++i) {
    const int64_t first = s * i - w.left(i);
    const int64_t last = s * (i + 1) + w.right(i);
    for (int64_t next = first; next < last;) {
      Piece piece{next - first, ((next % s) + s) % s, 0, -1};
      int64_t size = last - next;
      if (next < 0 || next >= w.base) {
        if (next < 0) size = std::min(size, -next);
      } else {
        size = std::min(s - piece.start, size);
        piece.owner = next / s;
      }
      piece.limit = piece.start + size;
      next += size;
      pieces[static_cast<std::size_t>(i)].push_back(piece);
    }
  }
  // The pieces taken a round at a time across the shards; padding longer than a block is split at block width
  // (unless every shard is at padding), which decides the order a source's pieces are met in.
  std::vector<std::vector<Piece>> rounds(count);
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> sends(count);  // per source: (target, piece)
  std::vector<std::size_t> next(count, 0);
  while (true) {
    bool empty = true;
    bool all_padding = true;
    for (std::size_t i = 0; i < count; ++i) {
      if (next[i] >= pieces[i].size()) continue;
      empty = false;
      if (pieces[i][next[i]].owner >= 0) all_padding = false;
    }
    if (empty) break;
    for (std::size_t i = 0; i < count; ++i) {
      if (next[i] >= pieces[i].size()) continue;
      Piece& piece = pieces[i][next[i]];
      rounds[i].push_back(piece);
      if (!all_padding && piece.owner < 0 && piece.limit > s) {
        rounds[i].back().limit = s;
        piece.start = 0;
        piece.limit -= s;
      } else {
        ++next[i];
      }
      if (piece.owner >= 0 && piece.owner != static_cast<int64_t>(i)) {
        sends[static_cast<std::size_t>(piece.owner)].emplace_back(i, rounds[i].size() - 1);
      }
    }
  }
  for (auto& list : sends) {
    std::stable_sort(list.begin(), list.end(), [&](const auto& a, const auto& b) {
      return rounds[a.first][a.second].offset < rounds[b.first][b.second].offset;
    });
  }
  std::vector<PermuteStep> steps;
  std::vector<std::size_t> taken(count, 0);
  while (true) {
    PermuteStep step;
    std::vector<bool> target_seen(count, false);
    int64_t lo = s;
    int64_t hi = 0;
    for (std::size_t source = 0; source < count; ++source) {
      if (taken[source] >= sends[source].size()) continue;
      const auto [target, index] = sends[source][taken[source]];
      const Piece& piece = rounds[target][index];
      // A target takes one piece per permute; a piece at one end of the block does not join a permute whose
      // range so far sits at the other end (that would send nearly the whole block).
      if (!step.pairs.empty() && (target_seen[target] || (lo > piece.limit && hi == s && piece.start == 0) ||
                                  (hi < piece.start && lo == 0 && piece.limit == s))) {
        continue;
      }
      target_seen[target] = true;
      step.pairs.emplace_back(static_cast<int64_t>(source), static_cast<int64_t>(target));
      lo = std::min(lo, piece.start);
      hi = std::max(hi, piece.limit);
      ++taken[source];
    }
    if (step.pairs.empty()) break;
    step.elements = hi - lo;
    steps.push_back(std::move(step));
  }
  return steps;
}

// The permutes XLA's windowed reshard sends along a dim of `n` elements cut into `parts` blocks, pairs given as
// positions along the axes; empty when every read is local or all useful data sits in one shard, nullopt when
// XLA gathers the dim whole instead.
std::optional<std::vector<PermuteStep>> windowed_permutes(int64_t n, int64_t parts, const DimWindow& window) {
  const int64_t full = n + window.low + window.high;
  if (full < 1) return std::nullopt;
  const int64_t windows = (full - 1) / window.stride + 1;
  const int64_t per_shard = ceil_div(windows, parts);
  WindowedShards w{parts, n / parts, n, window.low, window.stride * per_shard, window.stride * (per_shard - 1) + 1};
  // Fewer windows than shards: shards past the last useful element (padding or dropped elements only) take no
  // part, and when what is left is less than one block, only that part of each block does.
  if (windows < w.count) {
    const int64_t useful = ceil_div(n + window.high, w.size);
    if (useful < w.count) {
      w.count = std::max(useful, windows);
      if (w.count == 1) return std::vector<PermuteStep>{};
      w.base = w.size * w.count;
      if (!(w.base > n && window.high > 0) && window.high < 0 && full - window.low < w.size) {
        w.size = full - window.low;
        w.base = w.size * w.count;
      }
    }
  }
  if (w.size < 1) return std::nullopt;  // a pad that drops every element: no block reads anything of its own
  // Still fewer windows than shards, and the first useful element lies past shards that hold windows: the
  // shards between them take no part either; if all useful data is then in the last shard, only its tail does.
  if (windows < w.count) {
    const int64_t middle = -w.left_pad / w.size - windows;
    if (middle > 0) {
      if (w.count - middle <= 1) return std::nullopt;
      w.count -= middle;
      w.gap_from = windows;
      w.gap = middle;
      w.left_pad += middle * w.size;
      w.base = w.size * w.count;
      if (-w.left_pad > w.size * (w.count - 1)) {
        const int64_t skipped = -w.left_pad - w.size * (w.count - 1);
        w.size -= skipped;
        w.left_pad += skipped * w.count;
        if (full < w.size) {
          w.left_pad += (w.size - full) * (w.count - 1);
          w.size = full;
        }
        w.base = w.size * w.count;
      }
    }
  }
  // ExchangeHaloAndGetValidData: windows reaching more than twice their width away use the compact exchange
  // (or, when a window is half the dim or more, a gather); the rest exchange with neighbours.
  std::optional<std::vector<PermuteStep>> steps;
  const int64_t max_halo = std::max(max_over([&](int64_t i) { return w.left(i); }, 0, w.count),
                                    max_over([&](int64_t i) { return w.right(i); }, 0, w.count));
  if (max_halo > 2 * w.span) {
    if (w.span * 2 >= w.count * w.size) return std::nullopt;
    steps = compact_permutes(w);
  } else {
    steps = neighbour_permutes(w);
  }
  if (steps) {
    for (PermuteStep& step : *steps) {
      for (auto& [source, target] : step.pairs) {
        source = w.position(source);
        target = w.position(target);
      }
    }
  }
  return steps;
}

// What the windowed reshard of a slice or pad does along `dim`: nullopt when the op has no window there (or the
// dim is not cut evenly); otherwise the permutes, or `gathers` when XLA gathers the dim instead.
struct WindowedExchange {
  bool gathers = false;
  std::vector<HaloExchange> permutes;
};

std::optional<WindowedExchange> windowed_exchange(const Eqn& eqn, std::size_t operand, std::size_t dim,
                                                  const Layout& held, const Mesh& mesh) {
  const Aval& in = atom_aval(eqn.inputs.at(operand));
  const int64_t n = in.shape[dim];
  const int64_t parts = mesh.axes_size(held[dim]);
  if (operand != 0 || parts <= 1 || n % parts != 0) return std::nullopt;
  const auto window = dim_window(eqn, dim, n);
  if (!window) return std::nullopt;
  WindowedExchange result;
  if (n == 0 || eqn.outputs.at(0).aval.shape.at(dim) == 0) return result;  // nothing to read, or nothing read
  const auto steps = windowed_permutes(n, parts, *window);
  if (!steps) {
    result.gathers = true;
    return result;
  }
  const int64_t bytes_per_index = block_bytes_per_index(in, held, dim, mesh);
  const auto groups = axis_groups(mesh, held[dim]);
  for (const PermuteStep& step : *steps) {
    HaloExchange exchange = no_exchange(CollectiveKind::kCollectivePermute, operand, dim, held[dim], mesh);
    const int64_t bytes = step.elements * bytes_per_index;
    for (const auto& group : groups) {
      for (const auto& [source, target] : step.pairs) {
        exchange.bytes_sent[group[static_cast<std::size_t>(source)]] += bytes;
        exchange.bytes_received[group[static_cast<std::size_t>(target)]] += bytes;
      }
    }
    if (exchange.moves_data()) result.permutes.push_back(std::move(exchange));
  }
  return result;
}

// A pad or slice whose result drops the sharding of `dim`: XLA computes it with the operand's sharding (each
// block of the result ceil(size / parts) long, the last padded out) and then makes the dim whole
// (ReplicatePartial): a result of one element (which each block then holds whole) or of at most half as many
// elements as blocks is summed into place by one all-reduce of the whole result; a longer one is all-gathered.
HaloExchange result_made_whole(const Eqn& eqn, std::size_t dim, const Layout& held, const Layout& result,
                               const Mesh& mesh) {
  const Aval& out = eqn.outputs.at(0).aval;
  const int64_t parts = mesh.axes_size(held[dim]);
  const int64_t size = out.shape[dim];
  const int64_t out_block = (size + parts - 1) / parts;
  const int64_t bytes_per_index = block_bytes_per_index(out, result, dim, mesh);
  const bool summed = out_block == size || size <= parts / 2;
  HaloExchange whole =
      no_exchange(summed ? CollectiveKind::kAllReduce : CollectiveKind::kAllGather, 0, dim, held[dim], mesh);
  // The all-reduce's ring accounting (spmd/collectives' all_reduce); the gather sends each block to the others.
  const int64_t bytes =
      summed ? 2 * (parts - 1) * size * bytes_per_index / parts : (parts - 1) * out_block * bytes_per_index;
  std::fill(whole.bytes_sent.begin(), whole.bytes_sent.end(), bytes);
  std::fill(whole.bytes_received.begin(), whole.bytes_received.end(), bytes);
  return whole;
}

}  // namespace

std::optional<std::vector<ElementSource>> element_sources(const Eqn& eqn, std::size_t dim) {
  const std::string& name = eqn.primitive->name;
  const int64_t out_size = eqn.outputs.at(0).aval.shape.at(dim);
  const int64_t in_size = atom_aval(eqn.inputs.at(0)).shape.at(dim);
  if (name == "slice") return slice_sources(eqn, dim, out_size);
  if (name == "dynamic_slice" && eqn.inputs.size() > dim + 1) {
    // A start written into the program (a Python int) is known before the run: XLA partitions it as a slice.
    // dynamic_slice clamps the start so that the window fits the operand.
    const auto* start = std::get_if<Literal>(&eqn.inputs[dim + 1]);
    const auto* value = start == nullptr ? nullptr : std::get_if<int64_t>(&start->value);
    if (value == nullptr) return std::nullopt;
    const int64_t first = std::clamp<int64_t>(*value, 0, std::max<int64_t>(in_size - out_size, 0));
    std::vector<ElementSource> sources;
    for (int64_t j = 0; j < out_size; ++j) sources.push_back({0, first + j});
    return sources;
  }
  if (name == "pad") return pad_sources(eqn, dim, in_size, out_size);
  if (name == "rev") {
    const std::vector<int64_t> reversed = ints(eqn, "dimensions");
    const bool flipped = std::find(reversed.begin(), reversed.end(), static_cast<int64_t>(dim)) != reversed.end();
    std::vector<ElementSource> sources;
    for (int64_t j = 0; j < out_size; ++j) sources.push_back({0, flipped ? in_size - 1 - j : j});
    return sources;
  }
  if (name == "concatenate" && param(eqn.params, "dimension").as_int("dimension") == static_cast<int64_t>(dim)) {
    return concatenate_sources(eqn, dim);
  }
  return std::nullopt;
}

bool HaloExchange::moves_data() const {
  return std::any_of(bytes_sent.begin(), bytes_sent.end(), [](int64_t b) { return b > 0; });
}

std::vector<HaloExchange> halo_exchanges(const Eqn& eqn, std::size_t operand, const Layout& held,
                                         const Layout& required, const Layout& result, const Mesh& mesh) {
  std::vector<HaloExchange> exchanges;
  if (eqn.outputs.size() != 1 || held.size() != required.size() || held.size() != result.size()) return exchanges;
  const Aval& in = atom_aval(eqn.inputs.at(operand));
  const Aval& out = eqn.outputs[0].aval;
  if (in.rank() != out.rank()) return exchanges;
  for (std::size_t d = 0; d < held.size(); ++d) {
    if (held[d] == required[d]) continue;
    // Only a dim the kernel needs whole and whose sharding the result keeps is exchanged; any other move
    // (or an operand whose sharding on the dim differs from the result's) is a reshard.
    if (!required[d].empty() || held[d].empty()) return {};
    if (result[d] != held[d]) {
      // A pad's or slice's result that drops the dim's sharding: XLA keeps the operand's sharding through the
      // op (its windowed halos), then makes the result's blocks whole with one all-gather or all-reduce.
      if ((eqn.primitive->name != "pad" && eqn.primitive->name != "slice") || !result[d].empty()) return {};
      auto windowed = windowed_exchange(eqn, operand, d, held, mesh);
      if (!windowed || windowed->gathers) return {};
      for (HaloExchange& halo : windowed->permutes) exchanges.push_back(std::move(halo));
      exchanges.push_back(result_made_whole(eqn, d, held, result, mesh));
      continue;
    }
    if (auto windowed = windowed_exchange(eqn, operand, d, held, mesh)) {
      if (windowed->gathers) return {};
      std::vector<HaloExchange>& halos = windowed->permutes;
      // The operand keeps one entry per exchanged dim even when nothing moves (every read is local).
      if (halos.empty()) halos.push_back(no_exchange(CollectiveKind::kCollectivePermute, operand, d, held[d], mesh));
      for (HaloExchange& halo : halos) exchanges.push_back(std::move(halo));
      continue;
    }
    const auto sources = element_sources(eqn, d);
    // Ops that need the dim whole for their own sake (a cumulative sum, an update) gather it instead.
    if (!sources && eqn.primitive->name != "dynamic_slice") return {};
    const bool concatenate = eqn.primitive->name == "concatenate";
    // XLA's ExchangeHalo sends the left halo and the right halo as separate collective-permutes, one per
    // direction some device receives from; a reverse (one permute of whole blocks) and a concatenation's
    // all-to-all move everything in one collective.
    const bool per_direction = !concatenate && eqn.primitive->name != "rev";
    const HaloExchange empty = no_exchange(concatenate ? CollectiveKind::kAllToAll : CollectiveKind::kCollectivePermute,
                                           operand, d, held[d], mesh);
    HaloExchange from_left = empty;   // elements owned by a lower coordinate along the axes
    HaloExchange from_right = empty;  // elements owned by a higher one (or, without direction, all of them)
    const int64_t parts = mesh.axes_size(held[d]);
    const int64_t in_block = in.shape[d] / parts;
    const int64_t out_block = out.shape[d] / parts;
    const int64_t bytes_per_index = block_bytes_per_index(in, held, d, mesh);
    const std::vector<int64_t> coordinate = axis_indices(mesh, held[d]);
    for (const auto& group : axis_groups(mesh, held[d])) {
      for (const std::size_t member : group) {
        const int64_t c = coordinate[member];
        for (int64_t j = c * out_block; j < (c + 1) * out_block; ++j) {
          // A read not known before the run (dynamic_slice) may come from anywhere: count it as received.
          const ElementSource source = sources ? (*sources)[static_cast<std::size_t>(j)] : ElementSource{operand, -1};
          const bool unknown = !sources;
          if (!unknown && (source.operand != operand || source.index < 0)) continue;
          const int64_t owner = unknown ? (c + 1) % parts : source.index / in_block;
          if (owner == c) continue;
          HaloExchange& exchange = per_direction && owner < c ? from_left : from_right;
          exchange.bytes_received[member] += bytes_per_index;
          exchange.bytes_sent[group[static_cast<std::size_t>(owner)]] += bytes_per_index;
        }
      }
    }
    // The operand keeps one entry per exchanged dim even when nothing moves (every read is local).
    if (from_left.moves_data()) exchanges.push_back(std::move(from_left));
    if (from_right.moves_data() || exchanges.empty() || exchanges.back().dim != d)
      exchanges.push_back(std::move(from_right));
  }
  return exchanges;
}

std::vector<HaloExchange> rotation_exchanges(const Aval& operand, std::size_t dim, int64_t shift, const Layout& held,
                                             const Mesh& mesh) {
  if (dim >= held.size() || held[dim].empty()) return {};
  const int64_t n = operand.shape.at(dim);
  const int64_t parts = mesh.axes_size(held[dim]);
  if (n == 0 || n % parts != 0) return {};
  const int64_t block = n / parts;
  // One collective-permute per distance (in blocks, around the ring) that some device's elements travel.
  std::map<int64_t, HaloExchange> by_distance;
  const int64_t bytes_per_index = block_bytes_per_index(operand, held, dim, mesh);
  const std::vector<int64_t> coordinate = axis_indices(mesh, held[dim]);
  for (const auto& group : axis_groups(mesh, held[dim])) {
    for (const std::size_t member : group) {
      const int64_t c = coordinate[member];
      for (int64_t j = c * block; j < (c + 1) * block; ++j) {
        const int64_t owner = (((j - shift) % n + n) % n) / block;
        if (owner == c) continue;
        const int64_t distance = (c - owner + parts) % parts;
        auto found = by_distance.find(distance);
        if (found == by_distance.end()) {
          found =
              by_distance.emplace(distance, no_exchange(CollectiveKind::kCollectivePermute, 0, dim, held[dim], mesh))
                  .first;
        }
        HaloExchange& exchange = found->second;
        exchange.bytes_received[member] += bytes_per_index;
        exchange.bytes_sent[group[static_cast<std::size_t>(owner)]] += bytes_per_index;
      }
    }
  }
  std::vector<HaloExchange> exchanges;
  for (auto& [distance, exchange] : by_distance) exchanges.push_back(std::move(exchange));
  return exchanges;
}

CollectiveRecord halo_exchange_record(const HaloExchange& exchange, const Mesh& mesh, const std::string& origin) {
  CollectiveRecord record;
  record.kind = exchange.kind;
  record.axes = exchange.axes;
  record.origin = origin;
  for (const auto& group : axis_groups(mesh, exchange.axes)) {
    std::vector<int64_t> ids;
    for (const std::size_t member : group) ids.push_back(mesh.devices()[member].id);
    record.groups.push_back(std::move(ids));
  }
  for (const Device& device : mesh.devices()) record.device_ids.push_back(device.id);
  record.bytes_sent = exchange.bytes_sent;
  record.bytes_received = exchange.bytes_received;
  return record;
}

}  // namespace shardscope
