// Spec editor logic: validation through core's constructors, so errors are JAX's, and the replayable line.
#include "ui/model/spec_edit.h"

#include <algorithm>
#include <set>

#include "base/error.h"
#include "base/python_format.h"
#include "explicit/sharding_rules.h"
#include "sharding/notation.h"

namespace shardscope::ui {
namespace {

// Which dimension a failed check is about, found the way a person would read the spec.
int dimension_at_fault(const std::string& error_type, const Shape& shape, const Mesh& mesh, const SpecDraft& draft) {
  std::set<std::string> seen;
  for (std::size_t d = 0; d < draft.dims.size(); ++d) {
    for (const std::string& axis : draft.dims[d]) {
      if (!mesh.axis_index(axis)) return static_cast<int>(d);
      if (!seen.insert(axis).second && error_type != "IndivisibleError") return static_cast<int>(d);
    }
  }
  if (error_type == "IndivisibleError" || error_type == "ValueError") {
    for (std::size_t d = 0; d < draft.dims.size() && d < shape.size(); ++d) {
      if (shape[d] % mesh.axes_size(draft.dims[d]) != 0) return static_cast<int>(d);
    }
  }
  return -1;
}

}  // namespace

PartitionSpec SpecDraft::spec() const {
  std::vector<SpecEntry> entries;
  entries.reserve(dims.size());
  for (const auto& axes : dims) entries.push_back(SpecEntry::of_axes(axes));
  return PartitionSpec(std::move(entries));
}

SpecDraft SpecDraft::from_spec(const PartitionSpec& spec, std::size_t rank) {
  SpecDraft draft;
  draft.dims.resize(std::max(rank, spec.size()));
  for (std::size_t d = 0; d < spec.size(); ++d) {
    if (spec.entries()[d].kind == SpecEntry::Kind::kAxes) draft.dims[d] = spec.entries()[d].axes;
  }
  return draft;
}

SpecDraft SpecDraft::from_sharding(const Sharding& sharding, std::size_t rank, const JaxProfile& profile) {
  SpecDraft draft;
  std::optional<std::string> kind;
  if (const auto* named = std::get_if<NamedSharding>(&sharding)) {
    draft = from_spec(named->spec, rank);
    kind = named->memory_kind;
  } else {
    draft.dims.resize(rank);
    kind = std::get<SingleDeviceSharding>(sharding).memory_kind;
  }
  if (kind != default_memory_kind(sharding_platform(sharding), profile)) draft.memory_kind = kind;
  return draft;
}

SpecCheck check_spec(const Shape& shape, const Mesh& mesh, const SpecDraft& draft, const JaxProfile& profile) {
  SpecCheck check;
  try {
    NamedSharding sharding = make_named_sharding(mesh, draft.spec(), profile, draft.memory_kind);
    check_rank_compatible(sharding, shape.size(), profile);
    (void)shard_shape(sharding, shape, profile);
    check.sharding = std::move(sharding);
  } catch (const Error& error) {
    check.error_type = error.python_type();
    check.error = error.what();
    check.error_dim = dimension_at_fault(check.error_type, shape, mesh, draft);
  }
  return check;
}

std::string spec_call_text(const PartitionSpec& spec, const std::string& p_name) {
  std::string text = p_name + "(";
  for (std::size_t i = 0; i < spec.entries().size(); ++i) {
    if (i > 0) text += ", ";
    text += spec.entries()[i].repr();
  }
  return text + ")";
}

std::string device_put_line(const std::string& array_name, const std::string& mesh_expression, const SpecDraft& draft,
                            const NamespaceNames& names, bool boxed) {
  std::string sharding =
      names.named_sharding + "(" + mesh_expression + ", " + spec_call_text(draft.spec(), names.partition_spec);
  if (draft.memory_kind) sharding += ", memory_kind=" + python_string_repr(*draft.memory_kind);
  sharding += ")";
  const std::string moved = names.device_put + "(" + array_name + ", " + sharding + ")";
  // A Flax box (`params[...]['kernel'].value`) is immutable: the line rebinds the box with the moved value.
  const std::string suffix = ".value";
  if (boxed && array_name.ends_with(suffix)) {
    const std::string box = array_name.substr(0, array_name.size() - suffix.size());
    return box + " = " + box + ".replace_boxed(" + moved + ")";
  }
  return array_name + " = " + moved;
}

std::string mesh_expression(const std::string& array_name, const Mesh& mesh, const std::vector<MeshInfo>& meshes) {
  for (const MeshInfo& info : meshes) {
    if (!info.name.empty() && info.mesh == mesh) return info.name;
  }
  return array_name + ".sharding.mesh";
}

void NotationBar::sync(const std::string& array, const std::vector<std::string>& texts) {
  bool same = array == array_name && rows.size() == texts.size();
  for (std::size_t i = 0; same && i < rows.size(); ++i) same = rows[i].shown == texts[i];
  if (same) return;
  array_name = array;
  rows.clear();
  for (std::size_t i = 0; i < texts.size() && i < std::size(kNotationKinds); ++i) {
    rows.push_back({kNotationKinds[i], texts[i], texts[i], ""});
  }
}

NotationRow* NotationBar::row(NotationKind kind) {
  for (NotationRow& r : rows) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

std::vector<std::string> notation_texts(const ShapedArray& aval, const Mesh& mesh, const SpecDraft& draft,
                                        const JaxProfile& profile) {
  const std::size_t rank = aval.shape.size();
  const NamedSharding sharding{mesh, draft.spec(), std::nullopt};
  const ShardingNotations notations = sharding_notations(sharding, rank, profile);
  Aval typed = Aval::of(aval.shape, aval.dtype, aval.weak_type);
  typed.dim_axes = spec_dim_axes(sharding.spec, rank);
  return {spec_call_text(draft.spec(), "P"), typeof_str(typed, profile), notations.book, notations.shardy,
          notations.hlo};
}

SpecDraft draft_from_notation(NotationKind kind, const std::string& text, const Mesh& mesh, const Shape& shape) {
  const PartitionSpec spec = parse_notation(kind, text, mesh, shape);
  if (!spec.unreduced().empty()) {
    std::vector<std::string> axes;
    for (const std::string& axis : spec.unreduced()) axes.push_back(python_string_repr(axis));
    throw value_error(std::string(notation_kind_title(kind)) + " " + python_string_repr(text) +
                      ": device_put cannot place an array unreduced over " + join(axes, ", "));
  }
  return SpecDraft::from_spec(spec, shape.size());
}

}  // namespace shardscope::ui
