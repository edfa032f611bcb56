// Element sources of slice-like ops and the neighbour sends they take when a permuted dim stays sharded.
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

// The operand position result element `j` reads along `dim` as index arithmetic (padding and out-of-range
// positions included), for the ops XLA partitions with its halo functions: a slice, an edge-only pad, a
// dynamic_slice whose start is written in the program.
std::optional<int64_t> raw_source(const Eqn& eqn, std::size_t dim, int64_t j) {
  const std::string& name = eqn.primitive->name;
  if (name == "slice") {
    int64_t stride = 1;
    if (const ParamValue* strides = find_param(eqn.params, "strides"); strides != nullptr && !strides->is_none()) {
      stride = strides->as_ints("strides").at(dim);
    }
    return ints(eqn, "start_indices").at(dim) + j * stride;
  }
  if (name == "pad") {
    const std::vector<int64_t> low_high_interior =
        param(eqn.params, "padding_config").as_items("padding_config").at(dim).as_ints("padding_config");
    if (low_high_interior.at(2) != 0) return std::nullopt;
    return j - low_high_interior.at(0);
  }
  return std::nullopt;
}

// XLA's ExchangeHalo: each shard's result block (ceil(n / shards) elements, the last one padded) reads the
// operand range its halo functions give; the left halo is as wide as the widest over the shards that have a
// left neighbour, sent as one collective-permute per shard-width of it (from the neighbour one, two, ...
// shards back), and the right halo likewise. The permutes send those widths whether or not the elements are
// padding. nullopt when the op has no halo functions here.
std::optional<std::vector<HaloExchange>> xla_halos(const Eqn& eqn, std::size_t operand, std::size_t dim,
                                                   const Layout& held, const Mesh& mesh) {
  const Aval& in = atom_aval(eqn.inputs.at(operand));
  const int64_t out_size = eqn.outputs.at(0).aval.shape.at(dim);
  const int64_t parts = mesh.axes_size(held[dim]);
  if (operand != 0 || parts <= 1 || in.shape[dim] % parts != 0 || !raw_source(eqn, dim, 0)) return std::nullopt;
  const int64_t in_block = in.shape[dim] / parts;
  const int64_t out_block = (out_size + parts - 1) / parts;
  if (out_block == 0) return std::vector<HaloExchange>{};  // an empty result reads nothing
  int64_t left = 0;
  int64_t right = 0;
  for (int64_t i = 0; i < parts; ++i) {
    // Slice strides are positive and a pad only shifts: the read position grows with j, so the block's first
    // and last elements bound what it reads.
    const int64_t lo = *raw_source(eqn, dim, i * out_block);
    const int64_t hi = *raw_source(eqn, dim, (i + 1) * out_block - 1) + 1;
    if (i > 0) left = std::max(left, i * in_block - lo);
    if (i + 1 < parts) right = std::max(right, hi - (i + 1) * in_block);
  }
  std::vector<HaloExchange> exchanges;
  const int64_t bytes_per_index = block_bytes_per_index(in, held, dim, mesh);
  const std::vector<int64_t> coordinate = axis_indices(mesh, held[dim]);
  for (const int64_t direction : {1, -1}) {  // +1: the left halo travels up the shards; -1: the right one down
    const int64_t width = direction > 0 ? left : right;
    for (int64_t k = 1; (k - 1) * in_block < width; ++k) {
      HaloExchange exchange = no_exchange(CollectiveKind::kCollectivePermute, operand, dim, held[dim], mesh);
      const int64_t bytes = std::min(in_block, width - (k - 1) * in_block) * bytes_per_index;
      for (const auto& group : axis_groups(mesh, held[dim])) {
        for (const std::size_t member : group) {
          const int64_t target = coordinate[member] + direction * k;
          if (target < 0 || target >= parts) continue;
          exchange.bytes_sent[member] += bytes;
          exchange.bytes_received[group[static_cast<std::size_t>(target)]] += bytes;
        }
      }
      if (exchange.moves_data()) exchanges.push_back(std::move(exchange));
    }
  }
  return exchanges;
}

// A pad or slice whose result drops the sharding of `dim`: XLA computes it with the operand's sharding (halos
// as above, the last block padded out) and then gathers the result's blocks along the axes once.
HaloExchange gather_of_padded(const Eqn& eqn, std::size_t dim, const Layout& held, const Layout& result,
                              const Mesh& mesh) {
  const Aval& out = eqn.outputs.at(0).aval;
  const int64_t parts = mesh.axes_size(held[dim]);
  const int64_t out_block = (out.shape[dim] + parts - 1) / parts;
  HaloExchange gather = no_exchange(CollectiveKind::kAllGather, 0, dim, held[dim], mesh);
  const int64_t bytes = (parts - 1) * out_block * block_bytes_per_index(out, result, dim, mesh);
  std::fill(gather.bytes_sent.begin(), gather.bytes_sent.end(), bytes);
  std::fill(gather.bytes_received.begin(), gather.bytes_received.end(), bytes);
  return gather;
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
      // A pad's or slice's result that drops the dim's sharding: halos with the operand's sharding, then one
      // gather of the result's blocks (XLA keeps the operand's sharding through the op, then reshards).
      if ((eqn.primitive->name != "pad" && eqn.primitive->name != "slice") || !result[d].empty()) return {};
      auto halos = xla_halos(eqn, operand, d, held, mesh);
      if (!halos) return {};
      for (HaloExchange& halo : *halos) exchanges.push_back(std::move(halo));
      exchanges.push_back(gather_of_padded(eqn, d, held, result, mesh));
      continue;
    }
    if (auto halos = xla_halos(eqn, operand, d, held, mesh)) {
      // The operand keeps one entry per exchanged dim even when nothing moves (every read is local).
      if (halos->empty()) halos->push_back(no_exchange(CollectiveKind::kCollectivePermute, operand, d, held[d], mesh));
      for (HaloExchange& halo : *halos) exchanges.push_back(std::move(halo));
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
