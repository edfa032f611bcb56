// The mesh context: one process-wide setting (jax.set_mesh) and per-thread scopes over it, like JAX's config.
#include "explicit/mesh_context.h"

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {

MeshContext& global_context() {
  static MeshContext context;
  return context;
}

// Scopes are per thread (JAX keeps them in thread-local config); nullopt means "the global setting".
thread_local std::optional<MeshContext> t_scoped;

MeshContext& writable_context() {
  if (!t_scoped) t_scoped = global_context();
  return *t_scoped;
}

int64_t abstract_size(const AbstractMesh& mesh) {
  int64_t size = 1;
  for (const int64_t s : mesh.axis_sizes) size *= s;
  return size;
}

}  // namespace

const MeshContext& mesh_context() { return t_scoped ? *t_scoped : global_context(); }

namespace {
thread_local int mesh_placed_traces = 0;
}  // namespace

bool tracing_mesh_placed_values() { return mesh_placed_traces > 0; }

MeshPlacedValuesScope::MeshPlacedValuesScope(bool placed) : placed_(placed) {
  if (placed_) ++mesh_placed_traces;
}

MeshPlacedValuesScope::~MeshPlacedValuesScope() {
  if (placed_) --mesh_placed_traces;
}

AbstractMesh get_abstract_mesh() { return mesh_context().abstract_mesh.value_or(AbstractMesh{}); }

std::optional<Mesh> get_concrete_mesh() { return mesh_context().concrete; }

void set_mesh(const std::optional<Mesh>& mesh, const JaxProfile& profile) {
  if (mesh &&
      std::find(mesh->axis_types().begin(), mesh->axis_types().end(), AxisType::kManual) != mesh->axis_types().end()) {
    throw value_error("mesh " + mesh->str(profile) +
                      " contains manual axes which is not allowed when using `jax.set_mesh`. Please use "
                      "`jax.shard_map` to enter into `Manual` mode instead.");
  }
  MeshContext context;
  context.concrete = mesh;
  if (mesh) context.abstract_mesh = AbstractMesh::from_mesh(*mesh);
  context.profile = profile;
  global_context() = context;
  if (t_scoped) t_scoped = context;
}

MeshScope::MeshScope(const Mesh& mesh, const JaxProfile& profile) : saved_(mesh_context()) {
  if (std::find(mesh.axis_types().begin(), mesh.axis_types().end(), AxisType::kManual) != mesh.axis_types().end()) {
    throw value_error("mesh " + mesh.str(profile) +
                      " contains manual axes which is not allowed when using `jax.set_mesh`. Please use "
                      "`jax.shard_map` to enter into `Manual` mode instead.");
  }
  MeshContext& context = writable_context();
  context.concrete = mesh;
  context.abstract_mesh = AbstractMesh::from_mesh(mesh);
  context.profile = profile;
}

MeshScope::~MeshScope() { t_scoped = saved_; }

namespace {
thread_local std::vector<MeshContext> t_resource_saved;
}  // namespace

void enter_resource_mesh(const Mesh& mesh) {
  t_resource_saved.push_back(mesh_context());
  writable_context().concrete = mesh;
}

void exit_resource_mesh() {
  if (t_resource_saved.empty()) throw value_error("exit_resource_mesh: no `with mesh:` is active");
  t_scoped = std::move(t_resource_saved.back());
  t_resource_saved.pop_back();
}

AbstractMeshScope::AbstractMeshScope(AbstractMesh mesh) : saved_(mesh_context()) {
  const std::optional<AbstractMesh>& previous = saved_.abstract_mesh;
  if (previous && !is_empty(*previous) && abstract_size(*previous) != abstract_size(mesh)) {
    throw value_error("use_abstract_mesh cannot change the size of the mesh. Got new mesh: " +
                      abstract_mesh_repr(mesh, saved_.profile) + " with size=" + std::to_string(abstract_size(mesh)) +
                      " and prev mesh: " + abstract_mesh_repr(*previous, saved_.profile) +
                      " with size=" + std::to_string(abstract_size(*previous)));
  }
  writable_context().abstract_mesh = std::move(mesh);
}

AbstractMeshScope::~AbstractMeshScope() { t_scoped = saved_; }

bool same_abstract_mesh(const AbstractMesh& a, const AbstractMesh& b) {
  return a.axis_sizes == b.axis_sizes && a.axis_names == b.axis_names && a.axis_types == b.axis_types;
}

bool is_empty(const AbstractMesh& mesh) { return mesh.axis_names.empty(); }

bool has_axis_type(const AbstractMesh& mesh, AxisType type) {
  return std::find(mesh.axis_types.begin(), mesh.axis_types.end(), type) != mesh.axis_types.end();
}

std::optional<AxisType> axis_type_of(const AbstractMesh& mesh, const std::string& axis) {
  for (std::size_t i = 0; i < mesh.axis_names.size(); ++i) {
    if (mesh.axis_names[i] == axis) return mesh.axis_types[i];
  }
  return std::nullopt;
}

int64_t abstract_axis_size(const AbstractMesh& mesh, const std::string& axis) {
  for (std::size_t i = 0; i < mesh.axis_names.size(); ++i) {
    if (mesh.axis_names[i] == axis) return mesh.axis_sizes[i];
  }
  throw value_error("Resource axis: " + axis + " of the sharding is not found in mesh: " + python_tuple([&] {
                      std::vector<std::string> names;
                      for (const std::string& n : mesh.axis_names) names.push_back(python_string_repr(n));
                      return names;
                    }()) +
                    ".");
}

AbstractMesh with_axis_types(AbstractMesh mesh, const std::vector<std::string>& axes, AxisType type) {
  for (std::size_t i = 0; i < mesh.axis_names.size(); ++i) {
    if (std::find(axes.begin(), axes.end(), mesh.axis_names[i]) != axes.end()) mesh.axis_types[i] = type;
  }
  return mesh;
}

std::string abstract_mesh_repr(const AbstractMesh& mesh, const JaxProfile& profile) {
  if (profile.has(JaxFeature::kAbstractMeshReprDevice)) return mesh.repr();
  AbstractMesh bare = mesh;
  bare.device_kind.reset();
  bare.platform.reset();
  bare.num_cores.reset();
  return bare.repr();
}

namespace {

// Newest last; a handful at most in practice, so a linear scan is enough.
thread_local std::vector<Mesh> typed_meshes;

}  // namespace

void remember_typed_mesh(const Mesh& mesh) {
  const auto same = std::find(typed_meshes.begin(), typed_meshes.end(), mesh);
  if (same != typed_meshes.end()) typed_meshes.erase(same);
  typed_meshes.push_back(mesh);
  constexpr std::size_t kKept = 8;
  if (typed_meshes.size() > kKept) typed_meshes.erase(typed_meshes.begin());
}

std::optional<Mesh> typed_mesh_for(const std::vector<std::vector<std::string>>& dim_axes) {
  for (auto it = typed_meshes.rbegin(); it != typed_meshes.rend(); ++it) {
    const bool holds_all = std::all_of(dim_axes.begin(), dim_axes.end(), [&](const std::vector<std::string>& axes) {
      return std::all_of(axes.begin(), axes.end(),
                         [&](const std::string& axis) { return it->axis_index(axis).has_value(); });
    });
    if (holds_all) return *it;
  }
  return std::nullopt;
}

AbstractMesh type_abstract_mesh(const std::vector<std::vector<std::string>>& dim_axes) {
  AbstractMesh in_effect = get_abstract_mesh();
  const bool typed =
      std::any_of(dim_axes.begin(), dim_axes.end(), [](const std::vector<std::string>& axes) { return !axes.empty(); });
  if (!is_empty(in_effect) || !typed) return in_effect;
  const std::optional<Mesh> own = typed_mesh_for(dim_axes);
  return own ? AbstractMesh::from_mesh(*own) : in_effect;
}

}  // namespace shardscope
