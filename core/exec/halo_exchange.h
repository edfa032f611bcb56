// Halo exchanges: how the partitioner moves elements for a slice, pad, reverse or concatenation along a dim
// that stays sharded, with point-to-point sends (collective-permute) instead of gathering the dim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "mesh/mesh.h"
#include "sharding/sharding.h"
#include "spmd/comm_log.h"
#include "spmd/reshard.h"

namespace shardscope {

// Where result element `j` along one dim comes from: operand `operand`'s element `index` along the same dim,
// or nothing (index -1: padding, or another operand's element).
struct ElementSource {
  std::size_t operand = 0;
  int64_t index = -1;
};

// The sources of every result element along `dim` of a slice-like equation (slice, pad, rev, concatenate);
// nullopt when they are not known before the run (dynamic_slice's start) or the op is not slice-like.
[[nodiscard]] std::optional<std::vector<ElementSource>> element_sources(const Eqn& eqn, std::size_t dim);

// One operand dim whose sharding the result keeps: each device receives from its neighbours along `axes` the
// elements its result block reads but its operand block lacks (nothing when every read is local).
struct HaloExchange {
  // collective-permute; a concatenation's blocks are regrouped with an all-to-all, as XLA partitions it; a pad's or
  // slice's result that drops the dim's sharding is then made whole by an all-gather or an all-reduce.
  CollectiveKind kind = CollectiveKind::kCollectivePermute;
  std::size_t operand = 0;
  std::size_t dim = 0;
  std::vector<std::string> axes;
  std::vector<int64_t> bytes_sent;      // per device, mesh order
  std::vector<int64_t> bytes_received;  // per device, mesh order
  [[nodiscard]] bool moves_data() const;
};

// The halo exchange of operand `operand` from layout `held` when the kernel needs `required` and the result
// comes out as `result`: present when the two layouts differ only on dims the op permutes and the result keeps
// those dims sharded as the operand holds them, or (a slice or pad) drops their sharding. A slice's or an edge
// pad's permutes follow XLA's windowed reshard (ReshardAsWindowedInput): shards holding nothing the windows
// read are left out, and windows far from their own block use the compact exchange. Without one the operand
// is gathered (reshard_steps).
[[nodiscard]] std::vector<HaloExchange> halo_exchanges(const Eqn& eqn, std::size_t operand, const Layout& held,
                                                       const Layout& required, const Layout& result, const Mesh& mesh);

// A rotation by `shift` along `dim` (result element j is operand element (j - shift) mod n) of an operand held
// as `held`, whose result keeps that layout: XLA partitions concat(slice, slice) of one value this way, with one
// collective-permute per distance (in blocks) that elements travel: one when the shift is whole blocks or less
// than one, two when a device's block comes from two others. Empty when nothing moves or `held` does not cut
// `dim` evenly.
[[nodiscard]] std::vector<HaloExchange> rotation_exchanges(const Aval& operand, std::size_t dim, int64_t shift,
                                                           const Layout& held, const Mesh& mesh);

// The communication log's record of an exchange.
[[nodiscard]] CollectiveRecord halo_exchange_record(const HaloExchange& exchange, const Mesh& mesh,
                                                    const std::string& origin);

}  // namespace shardscope
