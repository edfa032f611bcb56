// Partial values of unreduced shardings: placing a replicated value as partial sums, and adding them back up.
#include "array/unreduced.h"

#include <algorithm>

#include "base/dtype_dispatch.h"

namespace shardscope {

std::optional<UnreducedPlace> unreduced_place(const Sharding& sharding, const Device& device) {
  const auto* named = std::get_if<NamedSharding>(&sharding);
  if (named == nullptr || named->spec.unreduced().empty()) return std::nullopt;
  const Mesh& mesh = named->mesh;
  const auto found = std::find(mesh.devices().begin(), mesh.devices().end(), device);
  if (found == mesh.devices().end()) return std::nullopt;
  auto flat = static_cast<int64_t>(found - mesh.devices().begin());
  const std::vector<int64_t>& sizes = mesh.axis_sizes();
  std::vector<int64_t> coords(sizes.size());
  for (std::size_t a = sizes.size(); a-- > 0;) {
    coords[a] = flat % sizes[a];
    flat /= sizes[a];
  }
  const std::vector<std::string> sharded = named->spec.mentioned_axes();
  const std::vector<std::string>& unreduced = named->spec.unreduced();
  UnreducedPlace place;
  for (std::size_t a = 0; a < sizes.size(); ++a) {
    const std::string& name = mesh.axis_names()[a];
    if (std::find(unreduced.begin(), unreduced.end(), name) != unreduced.end()) {
      place.position = place.position * sizes[a] + coords[a];
      place.group_size *= sizes[a];
    } else if (std::find(sharded.begin(), sharded.end(), name) == sharded.end() && coords[a] != 0) {
      place.first_replica = false;
    }
  }
  return place;
}

BufferPtr replicated_to_unreduced(const BufferPtr& block, const PartitionSpec& spec, const UnreducedPlace& place) {
  if (place.group_size == 1) return block;
  const Shape& shape = block->shape();
  std::optional<std::size_t> split;
  for (std::size_t d = 0; d < shape.size() && !split; ++d) {
    const bool unsharded = d >= spec.size() || spec.entries()[d].is_none();
    if (unsharded && shape[d] % place.group_size == 0) split = d;
  }
  auto partial = std::make_shared<Buffer>(block->dtype(), shape);  // zero-filled
  if (!split) {
    if (place.position == 0) return block;
    return partial;
  }
  std::vector<DimSlice> index;
  for (std::size_t d = 0; d < shape.size(); ++d) index.push_back(DimSlice{true, 0, shape[d], 0});
  const int64_t chunk = shape[*split] / place.group_size;
  index[*split] = DimSlice{false, place.position * chunk, (place.position + 1) * chunk, place.position};
  write_block(*partial, index, *slice_block(*block, index));
  return partial;
}

void add_block(Buffer& target, const std::vector<DimSlice>& index, const Buffer& block) {
  const BufferPtr current = slice_block(target, index);
  Buffer sum(block.dtype(), block.shape());
  visit_dtype(block.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const auto a = current->template as<Storage>();
    const auto b = block.template as<Storage>();
    auto out = sum.template as_mutable<Storage>();
    for (std::size_t i = 0; i < out.size(); ++i) {
      if constexpr (kDType == DType::kBool) {
        out[i] = store<kDType>(load<kDType>(a[i]) || load<kDType>(b[i]));
      } else {
        out[i] =
            store<kDType>(static_cast<typename DTypeTraits<kDType>::compute>(load<kDType>(a[i]) + load<kDType>(b[i])));
      }
    }
  });
  write_block(target, index, sum);
}

}  // namespace shardscope
