// Collectives over per-device buffers. Bytes follow the usual ring/pairwise cost model: a member of a
// group of n sends (n-1)/n of a full-size value for all-gather and reduce-scatter, twice that for
// all-reduce, (n-1)/n of its value for all-to-all, and its whole value for a permute edge.
#include "spmd/collectives.h"

#include <algorithm>
#include <map>

#include "base/dtype_dispatch.h"
#include "base/error.h"

namespace shardscope {
namespace {

std::vector<std::size_t> axis_positions(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<std::size_t> positions;
  for (const std::string& axis : axes) {
    const auto index = mesh.axis_index(axis);
    if (!index) {
      throw Error("NameError", "unbound axis name: " + axis);
    }
    positions.push_back(*index);
  }
  return positions;
}

std::vector<DimSlice> full_index(std::size_t rank) { return std::vector<DimSlice>(rank); }

// Block `block` of `count` equal blocks along `dimension`.
BufferPtr split_block(const Buffer& value, int64_t dimension, int64_t count, int64_t block) {
  const auto d = static_cast<std::size_t>(dimension);
  const int64_t size = value.shape()[d];
  if (size % count != 0) {
    throw value_error("Dimension " + std::to_string(dimension) + " of size " + std::to_string(size) +
                      " cannot be split into " + std::to_string(count) + " equal blocks");
  }
  std::vector<DimSlice> index = full_index(value.shape().size());
  index[d] = DimSlice{false, block * (size / count), (block + 1) * (size / count), block};
  return slice_block(value, index);
}

BufferPtr concatenate_blocks(const std::vector<BufferPtr>& blocks, int64_t dimension) {
  const auto d = static_cast<std::size_t>(dimension);
  Shape shape = blocks.front()->shape();
  const int64_t step = shape[d];
  shape[d] = step * static_cast<int64_t>(blocks.size());
  auto out = std::make_shared<Buffer>(blocks.front()->dtype(), shape);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    std::vector<DimSlice> index = full_index(shape.size());
    index[d] =
        DimSlice{false, static_cast<int64_t>(i) * step, static_cast<int64_t>(i + 1) * step, static_cast<int64_t>(i)};
    write_block(*out, index, *blocks[i]);
  }
  return out;
}

BufferPtr expand_leading(const BufferPtr& value, int64_t dimension) {
  Shape shape = value->shape();
  shape.insert(shape.begin() + dimension, 1);
  const auto bytes = value->bytes();
  return std::make_shared<Buffer>(value->dtype(), shape, std::vector<std::byte>(bytes.begin(), bytes.end()));
}

BufferPtr squeeze_at(const BufferPtr& value, int64_t dimension) {
  Shape shape = value->shape();
  shape.erase(shape.begin() + dimension);
  const auto bytes = value->bytes();
  return std::make_shared<Buffer>(value->dtype(), shape, std::vector<std::byte>(bytes.begin(), bytes.end()));
}

// Element-wise reduction of the group's buffers in member order (so float sums are reproducible).
BufferPtr reduce_buffers(const std::vector<BufferPtr>& members, ReduceOp op) {
  auto out = std::make_shared<Buffer>(members.front()->dtype(), members.front()->shape());
  visit_dtype(out->dtype(), [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    using Storage = typename DTypeTraits<D>::storage;
    using Compute = typename DTypeTraits<D>::compute;
    auto result = out->as_mutable<Storage>();
    for (std::size_t i = 0; i < result.size(); ++i) {
      Compute acc = load<D>(members[0]->as<Storage>()[i]);
      for (std::size_t m = 1; m < members.size(); ++m) {
        const Compute v = load<D>(members[m]->as<Storage>()[i]);
        if constexpr (std::is_same_v<Compute, bool>) {
          acc = op == ReduceOp::kMin ? (acc && v) : (acc || v);
        } else {
          switch (op) {
            case ReduceOp::kSum: acc = static_cast<Compute>(acc + v); break;
            case ReduceOp::kMax: acc = std::max(acc, v); break;
            case ReduceOp::kMin: acc = std::min(acc, v); break;
          }
        }
      }
      result[i] = store<D>(acc);
    }
  });
  return out;
}

void check_inputs(const Mesh& mesh, const DeviceBuffers& values) {
  if (static_cast<int64_t>(values.size()) != mesh.size()) {
    throw value_error("collective given " + std::to_string(values.size()) + " values for a mesh of " +
                      std::to_string(mesh.size()) + " devices");
  }
}

CollectiveRecord start_record(CollectiveKind kind, const Mesh& mesh, const std::vector<std::string>& axes,
                              const std::vector<std::vector<std::size_t>>& groups, const std::string& origin) {
  CollectiveRecord record;
  record.kind = kind;
  record.axes = axes;
  record.origin = origin;
  for (const auto& group : groups) {
    std::vector<int64_t> ids;
    for (const std::size_t member : group) ids.push_back(mesh.devices()[member].id);
    record.groups.push_back(ids);
  }
  for (const Device& d : mesh.devices()) record.device_ids.push_back(d.id);
  record.bytes_sent.assign(mesh.devices().size(), 0);
  record.bytes_received.assign(mesh.devices().size(), 0);
  return record;
}

int64_t bytes_of(const BufferPtr& b) { return static_cast<int64_t>(b->nbytes()); }

}  // namespace

std::string permutation_repr(const std::vector<std::pair<int64_t, int64_t>>& permutation) {
  std::string text = "(";
  for (std::size_t i = 0; i < permutation.size(); ++i) {
    if (i > 0) text += ", ";
    text += "(" + std::to_string(permutation[i].first) + ", " + std::to_string(permutation[i].second) + ")";
  }
  return text + (permutation.size() == 1 ? ",)" : ")");
}

std::vector<std::pair<int64_t, int64_t>> normalized_permutation(
    const std::vector<std::pair<int64_t, int64_t>>& permutation, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<bool> seen_source(static_cast<std::size_t>(n), false);
  std::vector<bool> seen_destination(static_cast<std::size_t>(n), false);
  bool unique = true;
  for (const auto& [source, destination] : permutation) {
    if (source < -n || source >= n || destination < -n || destination >= n) {
      // An IndexError, as JAX's lookup of the missing device raises.
      throw Error("IndexError", "ppermute perm entry (" + std::to_string(source) + ", " + std::to_string(destination) +
                                    ") is out of range for an axis of size " + std::to_string(n));
    }
    // Like Python indexing, negative indices count from the end of the axis.
    const int64_t from = (source + n) % n;
    const int64_t to = (destination + n) % n;
    if (seen_source[static_cast<std::size_t>(from)] || seen_destination[static_cast<std::size_t>(to)]) unique = false;
    seen_source[static_cast<std::size_t>(from)] = true;
    seen_destination[static_cast<std::size_t>(to)] = true;
    pairs.emplace_back(from, to);
  }
  if (!unique) {
    throw value_error("ppermute sources and destinations must be unique, got " + permutation_repr(permutation) + ".");
  }
  return pairs;
}

std::vector<std::vector<std::size_t>> axis_groups(const Mesh& mesh, const std::vector<std::string>& axes) {
  const std::vector<std::size_t> positions = axis_positions(mesh, axes);
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, std::size_t>>> groups;
  for (std::size_t flat = 0; flat < mesh.devices().size(); ++flat) {
    std::vector<int64_t> position = mesh.position_of(flat);
    int64_t along = 0;
    for (const std::size_t p : positions) {
      along = along * mesh.axis_sizes()[p] + position[p];
      position[p] = -1;  // the group key ignores the collective's own axes
    }
    groups[position].emplace_back(along, flat);
  }
  std::vector<std::vector<std::size_t>> result;
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end());
    std::vector<std::size_t> flat_members;
    for (const auto& [along, flat] : members) flat_members.push_back(flat);
    result.push_back(flat_members);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<int64_t> axis_indices(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<int64_t> indices(mesh.devices().size(), 0);
  for (const auto& group : axis_groups(mesh, axes)) {
    for (std::size_t i = 0; i < group.size(); ++i) indices[group[i]] = static_cast<int64_t>(i);
  }
  return indices;
}

DeviceBuffers all_reduce(const Mesh& mesh, const std::vector<std::string>& axes, const DeviceBuffers& values,
                         ReduceOp op, CommLog* log, const std::string& origin) {
  check_inputs(mesh, values);
  const auto groups = axis_groups(mesh, axes);
  DeviceBuffers out(values.size());
  CollectiveRecord record = start_record(CollectiveKind::kAllReduce, mesh, axes, groups, origin);
  for (const auto& group : groups) {
    std::vector<BufferPtr> members;
    for (const std::size_t m : group) members.push_back(values[m]);
    const BufferPtr reduced = reduce_buffers(members, op);  // one shared result: replicas share buffers
    const auto n = static_cast<int64_t>(group.size());
    for (const std::size_t m : group) {
      out[m] = reduced;
      record.bytes_sent[m] = 2 * (n - 1) * bytes_of(values[m]) / n;
      record.bytes_received[m] = record.bytes_sent[m];
    }
  }
  if (log != nullptr) log->add(std::move(record));
  return out;
}

DeviceBuffers all_gather(const Mesh& mesh, const std::vector<std::string>& axes, const DeviceBuffers& values,
                         int64_t dimension, bool tiled, CommLog* log, const std::string& origin) {
  check_inputs(mesh, values);
  const auto groups = axis_groups(mesh, axes);
  DeviceBuffers out(values.size());
  CollectiveRecord record = start_record(CollectiveKind::kAllGather, mesh, axes, groups, origin);
  for (const auto& group : groups) {
    std::vector<BufferPtr> members;
    for (const std::size_t m : group) members.push_back(tiled ? values[m] : expand_leading(values[m], dimension));
    const BufferPtr gathered = concatenate_blocks(members, dimension);
    const auto n = static_cast<int64_t>(group.size());
    for (const std::size_t m : group) {
      out[m] = gathered;
      record.bytes_sent[m] = (n - 1) * bytes_of(values[m]);
      record.bytes_received[m] = (n - 1) * bytes_of(values[m]);
    }
  }
  if (log != nullptr) log->add(std::move(record));
  return out;
}

DeviceBuffers reduce_scatter(const Mesh& mesh, const std::vector<std::string>& axes, const DeviceBuffers& values,
                             int64_t dimension, bool tiled, CommLog* log, const std::string& origin) {
  check_inputs(mesh, values);
  const auto groups = axis_groups(mesh, axes);
  DeviceBuffers out(values.size());
  CollectiveRecord record = start_record(CollectiveKind::kReduceScatter, mesh, axes, groups, origin);
  for (const auto& group : groups) {
    std::vector<BufferPtr> members;
    for (const std::size_t m : group) members.push_back(values[m]);
    const BufferPtr reduced = reduce_buffers(members, ReduceOp::kSum);
    const auto n = static_cast<int64_t>(group.size());
    if (!tiled && reduced->shape()[static_cast<std::size_t>(dimension)] != n) {
      throw value_error("psum_scatter with tiled=False needs the scatter dimension to equal the axis size " +
                        std::to_string(n) + ", got " + python_int_tuple(reduced->shape()));
    }
    for (std::size_t i = 0; i < group.size(); ++i) {
      const BufferPtr block = split_block(*reduced, dimension, n, static_cast<int64_t>(i));
      out[group[i]] = tiled ? block : squeeze_at(block, dimension);
      record.bytes_sent[group[i]] = (n - 1) * bytes_of(values[group[i]]) / n;
      record.bytes_received[group[i]] = record.bytes_sent[group[i]];
    }
  }
  if (log != nullptr) log->add(std::move(record));
  return out;
}

DeviceBuffers all_to_all(const Mesh& mesh, const std::vector<std::string>& axes, const DeviceBuffers& values,
                         int64_t split_dimension, int64_t concat_dimension, CommLog* log, const std::string& origin) {
  check_inputs(mesh, values);
  const auto groups = axis_groups(mesh, axes);
  DeviceBuffers out(values.size());
  CollectiveRecord record = start_record(CollectiveKind::kAllToAll, mesh, axes, groups, origin);
  for (const auto& group : groups) {
    const auto n = static_cast<int64_t>(group.size());
    for (std::size_t receiver = 0; receiver < group.size(); ++receiver) {
      std::vector<BufferPtr> received;
      for (const std::size_t sender : group) {
        received.push_back(split_block(*values[sender], split_dimension, n, static_cast<int64_t>(receiver)));
      }
      out[group[receiver]] = concatenate_blocks(received, concat_dimension);
      record.bytes_sent[group[receiver]] = (n - 1) * bytes_of(values[group[receiver]]) / n;
      record.bytes_received[group[receiver]] = record.bytes_sent[group[receiver]];
    }
  }
  if (log != nullptr) log->add(std::move(record));
  return out;
}

DeviceBuffers collective_permute(const Mesh& mesh, const std::vector<std::string>& axes, const DeviceBuffers& values,
                                 const std::vector<std::pair<int64_t, int64_t>>& permutation, CommLog* log,
                                 const std::string& origin) {
  check_inputs(mesh, values);
  const auto groups = axis_groups(mesh, axes);
  const auto n = static_cast<int64_t>(groups.front().size());
  const std::vector<std::pair<int64_t, int64_t>> pairs = normalized_permutation(permutation, n);
  DeviceBuffers out(values.size());
  CollectiveRecord record = start_record(CollectiveKind::kCollectivePermute, mesh, axes, groups, origin);
  for (const auto& group : groups) {
    for (const std::size_t m : group) out[m] = std::make_shared<const Buffer>(values[m]->dtype(), values[m]->shape());
    for (const auto& [source, destination] : pairs) {
      const std::size_t from = group[static_cast<std::size_t>(source)];
      const std::size_t to = group[static_cast<std::size_t>(destination)];
      out[to] = values[from];
      record.bytes_sent[from] += bytes_of(values[from]);
      record.bytes_received[to] += bytes_of(values[from]);
    }
  }
  if (log != nullptr) log->add(std::move(record));
  return out;
}

}  // namespace shardscope
