// Reading a sharding back from any notation sharding/notation.h prints (and JAX's spec and typeof forms) to the
// PartitionSpec over a given mesh that it describes, so every notation can be edited.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/python_format.h"
#include "mesh/mesh.h"
#include "sharding/partition_spec.h"

namespace shardscope {

enum class NotationKind { kSpec, kTypeof, kBook, kShardy, kHlo };
inline constexpr NotationKind kNotationKinds[] = {NotationKind::kSpec, NotationKind::kTypeof, NotationKind::kBook,
                                                  NotationKind::kShardy, NotationKind::kHlo};

// "spec", "typeof", "book", "shardy", "hlo": the names command lines use.
[[nodiscard]] std::string_view notation_kind_name(NotationKind kind);
// "JAX spec", "jax.typeof", "scaling book", "Shardy", "HloSharding": the names people read.
[[nodiscard]] std::string_view notation_kind_title(NotationKind kind);
[[nodiscard]] std::optional<NotationKind> parse_notation_kind(std::string_view name);

// The spec `text` describes for an array of `shape` over `mesh`, one entry per dim (a rank-long spec) except for
// kSpec, which is read as typed and left to NamedSharding's own checks (JAX's messages). Throws ValueError naming
// the notation, the text and what was wrong: syntax, an unknown or repeated axis, a rank or shape that is not the
// array's, a device assignment over another number of devices or that no spec over the mesh's axes gives.
[[nodiscard]] PartitionSpec parse_notation(NotationKind kind, std::string_view text, const Mesh& mesh,
                                           const Shape& shape);

// float32[8@x,4], f32[8@x,4@(y,z)]{U:w}, ShapedArray(float32[8@x,4]), ~float32[8]: the dims must be `shape`.
[[nodiscard]] PartitionSpec parse_typeof_notation(std::string_view text, const Mesh& mesh, const Shape& shape);
// A[I_X, J_{YZ}]{U_W}: a one-letter subscript names an axis; braces hold one axis name, one-letter axes run
// together, or names separated by commas. Letters match axes case-insensitively when no axis has that exact name.
[[nodiscard]] PartitionSpec parse_book_notation(std::string_view text, const Mesh& mesh, std::size_t rank);
// #sdy.sharding<@mesh, [{"x"}, {"y", "z"}, {}, {?}], replicated={"w"}, unreduced={"v"}>; an open dim with no
// axes is P.UNCONSTRAINED.
[[nodiscard]] PartitionSpec parse_shardy_notation(std::string_view text, const Mesh& mesh, std::size_t rank);
// {devices=[2,4]<=[8]}, {devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}, {devices=[2,4]0,1,2,...},
// {replicated}: device numbers are positions in the mesh's device list; the spec whose tiling puts the same
// devices on every tile (a replicated group in any order) is found by search over the mesh's axes.
[[nodiscard]] PartitionSpec parse_hlo_sharding(std::string_view text, const Mesh& mesh, std::size_t rank);

}  // namespace shardscope
