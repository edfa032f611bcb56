// The spec editor's logic: a draft spec for an array, its validation, and the Python line that applies it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "mesh/mesh.h"
#include "sharding/sharding.h"
#include "ui/session.h"

namespace shardscope::ui {

// Mesh axes per array dimension (empty: None; several: a tuple, major first) and an optional memory kind.
struct SpecDraft {
  std::vector<std::vector<std::string>> dims;
  std::optional<std::string> memory_kind;  // nullopt: the platform's default

  [[nodiscard]] PartitionSpec spec() const;
  // The draft an array's current sharding gives (a rank-long spec; P() for single-device shardings); the
  // memory kind only when it is not the platform's default.
  static SpecDraft from_sharding(const Sharding& sharding, std::size_t rank, const JaxProfile& profile);
  static SpecDraft from_spec(const PartitionSpec& spec, std::size_t rank);
};

struct SpecCheck {
  std::optional<NamedSharding> sharding;  // set when the spec is valid for the array
  std::string error_type;                 // Python exception class, e.g. "DuplicateSpecError"
  std::string error;                      // JAX's message
  int error_dim = -1;                     // the dimension the error is about; -1 for the whole spec
  [[nodiscard]] bool ok() const { return sharding.has_value(); }
};

// Checks what jax.device_put(x, NamedSharding(mesh, spec, memory_kind=...)) checks, in JAX's order:
// the NamedSharding constructor (unknown or repeated axes, memory kind), the rank, divisibility.
[[nodiscard]] SpecCheck check_spec(const Shape& shape, const Mesh& mesh, const SpecDraft& draft,
                                   const JaxProfile& profile);

// The spec as Python: P('y', None) with `p_name` for the class.
[[nodiscard]] std::string spec_call_text(const PartitionSpec& spec, const std::string& p_name);

// x = jax.device_put(x, NamedSharding(mesh, P('y', None))), using the names the namespace binds. For a `boxed`
// parameter named `tree[...].value`, the box is rebound: `tree[...] = tree[...].replace_boxed(jax.device_put(...))`.
[[nodiscard]] std::string device_put_line(const std::string& array_name, const std::string& mesh_expression,
                                          const SpecDraft& draft, const NamespaceNames& names, bool boxed = false);

// The Python expression for an array's mesh: a name bound to an equal mesh, else `x.sharding.mesh`.
[[nodiscard]] std::string mesh_expression(const std::string& array_name, const Mesh& mesh,
                                          const std::vector<MeshInfo>& meshes);

}  // namespace shardscope::ui
