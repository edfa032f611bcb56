// The mesh context of explicit sharding: jax.set_mesh / use_mesh (concrete and abstract) and use_abstract_mesh.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "mesh/mesh.h"

namespace shardscope {

// The meshes in effect. Types name axes of `abstract_mesh`; device_put with a bare P uses `concrete`.
struct MeshContext {
  std::optional<Mesh> concrete;
  std::optional<AbstractMesh> abstract_mesh;
  JaxProfile profile;  // which JAX's messages and reprs the explicit-mode rules produce
};

[[nodiscard]] const MeshContext& mesh_context();
// jax.sharding.get_abstract_mesh(): the empty AbstractMesh when no mesh is set.
[[nodiscard]] AbstractMesh get_abstract_mesh();
// jax.get_mesh(): the concrete mesh in effect, nullopt when none.
[[nodiscard]] std::optional<Mesh> get_concrete_mesh();

// Whether the values being traced were placed on a mesh (a NamedSharding argument of an enclosing trace): JAX's
// avals then carry that mesh, which staging compares with the mesh in effect (grad's cotangent seed is a reshard
// exactly when they differ).
[[nodiscard]] bool tracing_mesh_placed_values();
// Marks the traces begun while it lives as tracing mesh-placed values when `placed` is true.
class MeshPlacedValuesScope {
 public:
  explicit MeshPlacedValuesScope(bool placed);
  ~MeshPlacedValuesScope();
  MeshPlacedValuesScope(const MeshPlacedValuesScope&) = delete;
  MeshPlacedValuesScope& operator=(const MeshPlacedValuesScope&) = delete;

 private:
  bool placed_;
};

// jax.set_mesh(mesh) as a global setter (None clears it). Rejects meshes with Manual axes with JAX's ValueError.
void set_mesh(const std::optional<Mesh>& mesh, const JaxProfile& profile = {});

// `with jax.set_mesh(mesh):` / `with jax.sharding.use_mesh(mesh):` — restores the previous context on exit.
class MeshScope {
 public:
  explicit MeshScope(const Mesh& mesh, const JaxProfile& profile = {});
  ~MeshScope();
  MeshScope(const MeshScope&) = delete;
  MeshScope& operator=(const MeshScope&) = delete;

 private:
  MeshContext saved_;
};

// `with mesh:` (JAX's resource environment, which pjit and bare PartitionSpecs read): the concrete mesh changes but
// the abstract mesh does not, as in JAX, where only jax.set_mesh / use_mesh / use_abstract_mesh set it. Scopes nest
// per thread; exit restores the context entry saved.
void enter_resource_mesh(const Mesh& mesh);
void exit_resource_mesh();

// `with jax.sharding.use_abstract_mesh(am):` — changes only the abstract mesh (auto_axes, explicit_axes use it).
// ValueError when a mesh is already set and the new one has a different number of devices.
class AbstractMeshScope {
 public:
  explicit AbstractMeshScope(AbstractMesh mesh);
  ~AbstractMeshScope();
  AbstractMeshScope(const AbstractMeshScope&) = delete;
  AbstractMeshScope& operator=(const AbstractMeshScope&) = delete;

 private:
  MeshContext saved_;
};

[[nodiscard]] bool same_abstract_mesh(const AbstractMesh& a, const AbstractMesh& b);
[[nodiscard]] bool is_empty(const AbstractMesh& mesh);
[[nodiscard]] bool has_axis_type(const AbstractMesh& mesh, AxisType type);
[[nodiscard]] std::optional<AxisType> axis_type_of(const AbstractMesh& mesh, const std::string& axis);
[[nodiscard]] int64_t abstract_axis_size(const AbstractMesh& mesh, const std::string& axis);
// `mesh` with the named axes switched to `type` (AbstractMesh.update_axis_types).
[[nodiscard]] AbstractMesh with_axis_types(AbstractMesh mesh, const std::vector<std::string>& axes, AxisType type);
// repr(AbstractMesh) as the profile's JAX prints it (the device description appeared in 0.7.2).
[[nodiscard]] std::string abstract_mesh_repr(const AbstractMesh& mesh, const JaxProfile& profile);

// Arrays placed on an Explicit mesh carry that mesh in their type even outside any mesh context (JAX's
// aval.sharding.mesh). Traces remember the meshes of their typed arguments so that values autodiff makes beside
// them (zeros, ones, cotangents) can be typed the same way; typed_mesh_for finds the latest remembered mesh
// holding all the given axes.
void remember_typed_mesh(const Mesh& mesh);
[[nodiscard]] std::optional<Mesh> typed_mesh_for(const std::vector<std::vector<std::string>>& dim_axes);
// The abstract mesh a traced value's type names (its aval.sharding.mesh): the mesh in effect, or outside any mesh
// context the remembered mesh holding the axes its dimensions are sharded over.
[[nodiscard]] AbstractMesh type_abstract_mesh(const std::vector<std::vector<std::string>>& dim_axes);

}  // namespace shardscope
