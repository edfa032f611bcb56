// The spec editor's logic: a draft spec for an array, its validation, and the Python line that applies it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "ir/aval.h"
#include "mesh/mesh.h"
#include "sharding/notation_parse.h"
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

// One row of the notation bar: the selected array's sharding in one notation, as shown and as being edited.
struct NotationRow {
  NotationKind kind = NotationKind::kSpec;
  std::string shown;  // the sharding's text now
  std::string text;   // the field: the shown text until typed over
  std::string error;  // why the last Enter changed nothing
};

// The selected array's sharding in every notation, each row editable.
struct NotationBar {
  std::string array_name;
  std::vector<NotationRow> rows;  // in kNotationKinds order
  std::string shardy_mesh;        // sdy.mesh @mesh = <[...]>: what the Shardy row's @mesh names

  // Shows `texts` (kNotationKinds order) for `array`. While the array and its texts stay the same, each row keeps
  // what was typed into it and its error; otherwise every row shows the new text.
  void sync(const std::string& array, const std::vector<std::string>& texts);
  [[nodiscard]] NotationRow* row(NotationKind kind);
};

// The sharding of an array of type `aval` laid out as `draft` on `mesh` in each notation (kNotationKinds order):
// P(...) as the Spec editor writes it, jax.typeof with the layout's axes on its dims, the scaling book, Shardy,
// and HloSharding as the profile's XLA prints it.
[[nodiscard]] std::vector<std::string> notation_texts(const ShapedArray& aval, const Mesh& mesh, const SpecDraft& draft,
                                                      const JaxProfile& profile);

// The draft a notation row's text describes (default memory kind). Throws ValueError when the text does not parse
// or names unreduced axes, which device_put cannot place; open Shardy dims place as None.
[[nodiscard]] SpecDraft draft_from_notation(NotationKind kind, const std::string& text, const Mesh& mesh,
                                            const Shape& shape);

}  // namespace shardscope::ui
