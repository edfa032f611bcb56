// One sharding in the notations people meet it in: the scaling book's A[I_X, J_Y], Shardy's #sdy.sharding, and
// XLA's HloSharding text in its iota or explicit device-list form. (JAX's own spec and typeof print elsewhere.)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "mesh/mesh.h"
#include "sharding/partition_spec.h"
#include "sharding/sharding.h"

namespace shardscope {

// Mesh axes per array dim (empty: unsharded), padded to `rank`; an unconstrained entry counts as unsharded.
[[nodiscard]] std::vector<std::vector<std::string>> spec_dim_axes(const PartitionSpec& spec, std::size_t rank);

// The scaling book's notation: dims named I, J, K, ... subscripted by the mesh axes sharding them, and {U_X} for
// unreduced axes: "A[I_X, J]", "A[I_{XY}, J]" (one-letter axes run together), "A[I_{data,model}, J]".
[[nodiscard]] std::string book_notation(const std::vector<std::vector<std::string>>& dim_axes,
                                        const std::vector<std::string>& unreduced = {},
                                        const std::string& array_name = "A");

// Shardy's attribute as JAX's lowering prints it: #sdy.sharding<@mesh, [{"x"}, {}]>, with unreduced={"y"} when
// some axes are unreduced.
[[nodiscard]] std::string shardy_notation(const std::vector<std::vector<std::string>>& dim_axes,
                                          const std::vector<std::string>& unreduced = {},
                                          const std::string& mesh_name = "mesh");
// The mesh definition beside it: sdy.mesh @mesh = <["x"=2, "y"=4]>.
[[nodiscard]] std::string shardy_mesh_notation(const Mesh& mesh, const std::string& mesh_name = "mesh");

// XLA's HloSharding text. Device numbers are positions in the mesh's device list (the executable's device
// assignment). `iota`: the compact form XLA prints since 2023, "{devices=[4,2]<=[8]}" or
// "{devices=[2,4]<=[4,2]T(1,0)}"; otherwise the explicit list "{devices=[4,2]0,1,2,3,4,5,6,7}". A layout that
// leaves axes unused replicates over them: "{devices=[4,1,2]<=[8] last_tile_dim_replicate}".
[[nodiscard]] std::string hlo_sharding_notation(const Mesh& mesh, const std::vector<std::vector<std::string>>& dim_axes,
                                                bool iota);

// All of them for one NamedSharding of an array of `rank` dims, as the profile's JAX and XLA print them.
struct ShardingNotations {
  std::string spec;         // JAX: P('x', 'y')
  std::string book;         // A[I_X, J_Y]
  std::string shardy;       // #sdy.sharding<@mesh, [{"x"}, {"y"}]>
  std::string shardy_mesh;  // sdy.mesh @mesh = <["x"=2, "y"=4]>
  std::string hlo;          // {devices=[2,4]<=[8]} (explicit device list before JAX 0.4.16's XLA)
};
[[nodiscard]] ShardingNotations sharding_notations(const NamedSharding& sharding, std::size_t rank,
                                                   const JaxProfile& profile);
// A block headed "# shardscope notations (beyond JAX)", one notation per line.
[[nodiscard]] std::string notations_text(const ShardingNotations& notations);

}  // namespace shardscope
