// PmapSharding's layout and text (jax/_src/sharding_impls.py and jaxlib's ShardingSpec reprs).
#include "sharding/pmap_sharding.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"

namespace shardscope {

std::optional<PmapShardingLayout> pmap_sharding_layout(const Sharding& stacked, std::size_t rank,
                                                       const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kPmapArrayOutputs) || profile.has(JaxFeature::kPmapIsJitOfShardMap)) {
    return std::nullopt;
  }
  const auto* named = std::get_if<NamedSharding>(&stacked);
  if (named == nullptr || named->mesh.axis_names().size() != 1) return std::nullopt;
  const std::string& axis = named->mesh.axis_names().front();
  const std::vector<SpecEntry>& entries = named->spec.entries();
  PmapShardingLayout layout;
  layout.devices = named->mesh.devices();
  layout.rank = rank;
  layout.chunked = profile.has(JaxFeature::kPmapNoRankReduction);
  bool found = false;
  for (std::size_t d = 0; d < entries.size(); ++d) {
    if (entries[d].axes == std::vector<std::string>{axis}) {
      layout.mapped_dim = d;
      found = true;
    }
  }
  if (!found || layout.mapped_dim >= rank) return std::nullopt;
  return layout;
}

std::string sharding_spec_repr(const PmapShardingLayout& layout) {
  const std::string count = std::to_string(layout.devices.size());
  std::string dims;
  for (std::size_t d = 0; d < layout.rank; ++d) {
    if (d > 0) dims += ", ";
    if (d != layout.mapped_dim) {
      dims += "NoSharding()";
    } else {
      dims += layout.chunked ? "Chunked(" + count + ")" : "Unstacked(" + count + ")";
    }
  }
  if (layout.rank == 1) dims += ",";
  return "ShardingSpec((" + dims + "), (ShardedAxis(axis=0),))";
}

std::string pmap_sharding_str(const PmapShardingLayout& layout) {
  std::string ids;
  for (const Device& device : layout.devices) ids += (ids.empty() ? "" : ", ") + std::to_string(device.id);
  std::string platform = layout.devices.empty() ? "" : platform_name(layout.devices.front().platform);
  std::transform(platform.begin(), platform.end(), platform.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return "PmapSharding(sharding_spec=" + sharding_spec_repr(layout) + ", device_ids=[" + ids +
         "], device_platform=" + platform + ", device_shape=(" + std::to_string(layout.devices.size()) + ",))";
}

Shape pmap_shard_shape(const PmapShardingLayout& layout, const Shape& global_shape) {
  if (layout.mapped_dim >= global_shape.size()) {
    throw value_error("pmap sharding maps dimension " + std::to_string(layout.mapped_dim) + " of a rank-" +
                      std::to_string(global_shape.size()) + " shape");
  }
  Shape shape = global_shape;
  if (layout.chunked) {
    shape[layout.mapped_dim] = 1;
  } else {
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(layout.mapped_dim));
  }
  return shape;
}

}  // namespace shardscope
