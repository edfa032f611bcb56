// Resharding: choose the collective from the source and target layouts, then move the data.
#include "spmd/reshard.h"

#include <algorithm>
#include <map>
#include <optional>

#include "base/error.h"
#include "spmd/collectives.h"

namespace shardscope {
namespace {

bool same_devices(const Sharding& a, const Sharding& b) {
  const auto* na = std::get_if<NamedSharding>(&a);
  const auto* nb = std::get_if<NamedSharding>(&b);
  if (na == nullptr || nb == nullptr) return false;
  return na->mesh.devices() == nb->mesh.devices() && na->mesh.axis_sizes() == nb->mesh.axis_sizes() &&
         na->mesh.axis_names() == nb->mesh.axis_names();
}

bool is_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

DeviceBuffers local_buffers(const Array& array) {
  DeviceBuffers buffers;
  for (const Array::Shard& shard : array.shards()) buffers.push_back(shard.data);
  return buffers;
}

// Each device cuts its target block out of the (larger) block it holds.
DeviceBuffers slice_to_target(const DeviceBuffers& held, const std::vector<DeviceIndex>& held_index,
                              const std::vector<DeviceIndex>& target_index) {
  DeviceBuffers out(held.size());
  for (std::size_t d = 0; d < held.size(); ++d) {
    std::vector<DimSlice> relative(target_index[d].index.size());
    bool whole = true;
    for (std::size_t dim = 0; dim < relative.size(); ++dim) {
      const DimSlice& want = target_index[d].index[dim];
      const DimSlice& have = held_index[d].index[dim];
      if (want.full || (!have.full && want.start == have.start && want.stop == have.stop)) continue;
      const int64_t origin = have.full ? 0 : have.start;
      relative[dim] = DimSlice{false, want.start - origin, want.stop - origin, want.block};
      whole = false;
    }
    out[d] = whole ? held[d] : slice_block(*held[d], relative);
  }
  return out;
}

Array assemble(const Array& source, const Sharding& target, const DeviceBuffers& buffers, const JaxProfile& profile) {
  std::vector<Array::Shard> shards;
  const std::vector<DeviceIndex> index = devices_indices_map(target, source.shape(), profile);
  for (std::size_t d = 0; d < index.size(); ++d) {
    shards.push_back({index[d].device, index[d].index, index[d].replica_id, buffers[d]});
  }
  return Array::from_shards(source.aval(), target, std::move(shards));
}

// The axes of the dims that change, in mesh order, when `from` and `to` use the same axes and tile every dim into
// as many blocks: only which device holds which block differs, so each device sends its block once.
std::optional<std::vector<std::string>> permuted_axes(const Layout& from, const Layout& to, const Mesh& mesh) {
  if (from.size() != to.size()) return std::nullopt;
  std::vector<std::string> used_from;
  std::vector<std::string> used_to;
  std::vector<std::string> changed;
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (mesh.axes_size(from[d]) != mesh.axes_size(to[d])) return std::nullopt;
    used_from.insert(used_from.end(), from[d].begin(), from[d].end());
    used_to.insert(used_to.end(), to[d].begin(), to[d].end());
    if (from[d] != to[d]) changed.insert(changed.end(), from[d].begin(), from[d].end());
  }
  std::sort(used_from.begin(), used_from.end());
  std::sort(used_to.begin(), used_to.end());
  if (used_from != used_to || changed.empty()) return std::nullopt;
  std::vector<std::string> ordered;
  for (const std::string& axis : mesh.axis_names()) {
    if (std::find(changed.begin(), changed.end(), axis) != changed.end()) ordered.push_back(axis);
  }
  return ordered;
}

// Each device receives the block it holds under the target layout from the device that holds that block now; the
// pairs are the same in every group of devices that differ only along `axes`.
DeviceBuffers permute_blocks(const Mesh& mesh, const Shape& shape, const ReshardStep& step, const DeviceBuffers& held,
                             const JaxProfile& profile, CommLog* log, const std::string& origin) {
  const std::vector<DeviceIndex> before =
      devices_indices_map(sharding_of_layout(mesh, step.before, std::nullopt), shape, profile);
  const std::vector<DeviceIndex> after =
      devices_indices_map(sharding_of_layout(mesh, step.after, std::nullopt), shape, profile);
  const std::vector<std::vector<std::size_t>> groups = axis_groups(mesh, step.axes);
  const std::vector<std::size_t>& group = groups.front();
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (std::size_t destination = 0; destination < group.size(); ++destination) {
    const DeviceIndex& wanted = after[group[destination]];
    if (before[group[destination]].index == wanted.index) continue;
    for (std::size_t source = 0; source < group.size(); ++source) {
      if (before[group[source]].index == wanted.index) {
        pairs.emplace_back(static_cast<int64_t>(source), static_cast<int64_t>(destination));
        break;
      }
    }
  }
  DeviceBuffers moved = collective_permute(mesh, step.axes, held, pairs, log, origin);
  // Devices that already hold their target block keep it (they are no destination of the permute).
  for (const auto& members : groups) {
    for (std::size_t m = 0; m < members.size(); ++m) {
      const bool receives = std::any_of(pairs.begin(), pairs.end(),
                                        [&](const auto& pair) { return pair.second == static_cast<int64_t>(m); });
      if (!receives) moved[members[m]] = held[members[m]];
    }
  }
  return moved;
}

}  // namespace

Layout dim_axes_of(const NamedSharding& sharding, std::size_t rank) {
  Layout axes(rank);
  for (std::size_t d = 0; d < rank && d < sharding.spec.size(); ++d) {
    for (const std::string& axis : sharding.spec.entries()[d].axes) {
      if (sharding.mesh.axis_size(axis) > 1) axes[d].push_back(axis);
    }
  }
  return axes;
}

Layout dim_axes_on(const NamedSharding& sharding, const Mesh& mesh, std::size_t rank) {
  // A sharding on the empty mesh (grad's seed outside any mesh) places nothing: the value stays unsharded.
  if (sharding.mesh.axis_names().empty()) return Layout(rank);
  if (sharding.mesh.axis_names() == mesh.axis_names() && sharding.mesh.axis_sizes() == mesh.axis_sizes()) {
    return dim_axes_of(sharding, rank);
  }
  if (sharding.mesh.devices() != mesh.devices()) {
    throw value_error("Received incompatible devices for jitted computation: a sharding on " +
                      sharding.mesh.str(JaxProfile{}) + " does not use the device order of " + mesh.str(JaxProfile{}));
  }
  // Walk both meshes' axes in row-major order: each axis of the sharding's mesh must be a product of
  // consecutive axes of `mesh`.
  std::map<std::string, std::vector<std::string>> covering;
  std::size_t next = 0;
  for (std::size_t a = 0; a < sharding.mesh.axis_names().size(); ++a) {
    const int64_t wanted = sharding.mesh.axis_sizes()[a];
    int64_t covered = 1;
    std::vector<std::string>& axes = covering[sharding.mesh.axis_names()[a]];
    while (covered < wanted && next < mesh.axis_names().size()) {
      covered *= mesh.axis_sizes()[next];
      if (mesh.axis_sizes()[next] > 1) axes.push_back(mesh.axis_names()[next]);
      ++next;
    }
    if (covered != wanted) {
      throw value_error("shardscope: axis '" + sharding.mesh.axis_names()[a] + "' of " +
                        sharding.mesh.str(JaxProfile{}) + " does not line up with whole axes of " +
                        mesh.str(JaxProfile{}) + "; such a constraint is not simulated");
    }
  }
  Layout axes(rank);
  for (std::size_t d = 0; d < rank && d < sharding.spec.size(); ++d) {
    for (const std::string& axis : sharding.spec.entries()[d].axes) {
      for (const std::string& target : covering[axis]) axes[d].push_back(target);
    }
  }
  return axes;
}

NamedSharding sharding_of_layout(const Mesh& mesh, const Layout& layout, std::optional<std::string> memory_kind) {
  std::vector<SpecEntry> entries;
  for (const auto& axes : layout) entries.push_back(SpecEntry::of_axes(axes));
  return NamedSharding{mesh, PartitionSpec(std::move(entries)), std::move(memory_kind)};
}

std::vector<ReshardStep> reshard_steps(const Layout& from, const Layout& to, const Mesh& mesh) {
  std::vector<ReshardStep> steps;
  if (from == to) return steps;
  const std::size_t rank = from.size();
  if (const std::optional<std::vector<std::string>> permuted = permuted_axes(from, to, mesh)) {
    steps.push_back({CollectiveKind::kCollectivePermute, *permuted, -1, -1, from, to});
    return steps;
  }
  // One group of axes leaving the end of dimension i for the end of dimension j: a single all-to-all.
  for (std::size_t i = 0; i < rank; ++i) {
    for (std::size_t j = 0; j < rank; ++j) {
      if (i == j || !is_prefix(to[i], from[i]) || !is_prefix(from[j], to[j])) continue;
      const std::vector<std::string> leaving(from[i].begin() + static_cast<std::ptrdiff_t>(to[i].size()),
                                             from[i].end());
      const std::vector<std::string> arriving(to[j].begin() + static_cast<std::ptrdiff_t>(from[j].size()), to[j].end());
      if (leaving.empty() || leaving != arriving) continue;
      Layout moved = from;
      moved[i] = to[i];
      moved[j] = to[j];
      if (moved != to) continue;
      steps.push_back({CollectiveKind::kAllToAll, leaving, static_cast<int64_t>(j), static_cast<int64_t>(i), from, to});
      return steps;
    }
  }
  // Otherwise gather away every axis that is not a kept prefix of its dimension (the slice to `to` is local).
  Layout held = from;
  for (std::size_t d = 0; d < rank; ++d) {
    std::size_t common = 0;
    while (common < from[d].size() && common < to[d].size() && from[d][common] == to[d][common]) ++common;
    if (common == from[d].size()) continue;
    // XLA tiles a dimension once however many mesh axes shard it, so the axes leaving one dimension go in one
    // all-gather over their combined groups (major axis first, which keeps the concatenation in block order).
    Layout after = held;
    after[d].resize(common);
    steps.push_back({CollectiveKind::kAllGather,
                     std::vector<std::string>(from[d].begin() + static_cast<std::ptrdiff_t>(common), from[d].end()),
                     static_cast<int64_t>(d), -1, held, after});
    held = std::move(after);
  }
  return steps;
}

DeviceBuffers reshard_buffers(const Mesh& mesh, const Shape& shape, const Layout& from, const Layout& to,
                              const DeviceBuffers& held, const JaxProfile& profile, CommLog* log,
                              const std::string& origin) {
  if (from == to) return held;
  DeviceBuffers buffers = held;
  Layout kept = from;
  for (const ReshardStep& step : reshard_steps(from, to, mesh)) {
    if (step.kind == CollectiveKind::kAllToAll) {
      return all_to_all(mesh, step.axes, buffers, step.dimension, step.concat_dimension, log, origin);
    }
    if (step.kind == CollectiveKind::kCollectivePermute) {
      return permute_blocks(mesh, shape, step, buffers, profile, log, origin);
    }
    buffers = all_gather(mesh, step.axes, buffers, step.dimension, true, log, origin);
    kept = step.after;
  }
  const std::vector<DeviceIndex> held_index =
      devices_indices_map(sharding_of_layout(mesh, kept, std::nullopt), shape, profile);
  const std::vector<DeviceIndex> target_index =
      devices_indices_map(sharding_of_layout(mesh, to, std::nullopt), shape, profile);
  return slice_to_target(buffers, held_index, target_index);
}

BufferPtr whole_buffer(const Mesh& mesh, DType dtype, const Shape& shape, const Layout& layout,
                       const DeviceBuffers& buffers, const JaxProfile& profile) {
  const bool replicated = std::all_of(layout.begin(), layout.end(), [](const auto& axes) { return axes.empty(); });
  if (replicated) return buffers.front();
  auto whole = std::make_shared<Buffer>(dtype, shape, Buffer::Uninitialized{});
  const std::vector<DeviceIndex> indices =
      devices_indices_map(sharding_of_layout(mesh, layout, std::nullopt), shape, profile);
  // Every element belongs to some block, so writing each replica-0 block fills the whole buffer.
  for (std::size_t d = 0; d < indices.size(); ++d) {
    if (indices[d].replica_id == 0) write_block(*whole, indices[d].index, *buffers[d]);
  }
  return whole;
}

Array reshard(const Array& array, const Sharding& target, const JaxProfile& profile, CommLog* log,
              const std::string& origin) {
  if (array.is_abstract()) return Array::abstract(array.aval(), target, profile);
  if (!same_devices(array.sharding(), target)) {
    // Different devices (e.g. a committed single-device array): a host round trip, as device_put does.
    (void)devices_indices_map(target, array.shape(), profile);
    return Array::from_host(array.gather(), target, profile, array.aval().weak_type);
  }
  const auto& source_named = std::get<NamedSharding>(array.sharding());
  const auto& target_named = std::get<NamedSharding>(target);
  if (source_named.spec.unreduced() != target_named.spec.unreduced()) {
    // Into or out of an unreduced sharding: the partial values are summed (gather) and the value placed anew,
    // split into the target's partial values where it is unreduced.
    return Array::from_host(array.gather(), target, profile, array.aval().weak_type);
  }
  const std::size_t rank = array.shape().size();
  const Layout from = dim_axes_of(source_named, rank);
  const Layout to = dim_axes_of(target_named, rank);
  if (from == to) return array.with_sharding(target);
  const DeviceBuffers moved =
      reshard_buffers(source_named.mesh, array.shape(), from, to, local_buffers(array), profile, log, origin);
  return assemble(array, target, moved, profile);
}

}  // namespace shardscope
