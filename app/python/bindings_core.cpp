// The `_shardscope` module: devices, meshes, specs, shardings and arrays as Python types over core.
#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "api/debug_nans.h"
#include "api/numpy.h"
#include "api/session.h"
#include "api/transforms.h"
#include "api/typeof.h"
#include "base/error.h"
#include "device/presets.h"
#include "explicit/mesh_context.h"
#include "explicit/sharding_rules.h"
#include "python/bindings.h"
#include "python/convert.h"
#include "sharding/sharding.h"
#include "spmd/reshard.h"
#include "viz/ansi_html.h"
#include "viz/colors.h"
#include "viz/layout.h"
#include "viz/svg_renderer.h"
#include "viz/text_renderer.h"

namespace shardscope::python {
namespace {

const JaxProfile& profile() { return api::session().profile; }

py::tuple int_tuple(const std::vector<int64_t>& values) {
  py::tuple out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return out;
}

py::object sharding_object(const Sharding& sharding) {
  return std::visit([](const auto& s) { return py::cast(s); }, sharding);
}

Sharding sharding_from_python(const py::handle& object) {
  if (py::isinstance<NamedSharding>(object)) return object.cast<NamedSharding>();
  if (py::isinstance<SingleDeviceSharding>(object)) return object.cast<SingleDeviceSharding>();
  if (py::isinstance<Device>(object)) return make_single_device_sharding(object.cast<Device>(), profile());
  throw type_error("expected a Sharding or a Device, got " + py::repr(object).cast<std::string>());
}

// JAX's checks of a sharding annotation against a value (api._check_sharding, pjit's output check): errors name
// what is annotated ("device_put args", "pjit outputs") and its key path; uneven shards quote the user's source
// line, which 0.11 also prints.
void check_annotation_divisible(const std::string& what, const std::string& keypath, const Sharding& sharding,
                                const Shape& shape) {
  std::string source;
  const auto* named = std::get_if<NamedSharding>(&sharding);
  const bool rank_fits = named == nullptr || named->spec.size() <= shape.size();
  if (rank_fits && !divides_evenly(sharding, shape)) {
    source = py::module_::import("jax._src.source_info").attr("summarize_current")().cast<std::string>();
    if (profile().has(JaxFeature::kIndivisibleErrorPrintsSource)) py::print(source);
  }
  check_argument_divisible(what, keypath, sharding, shape, profile(), source);
}

void check_device_put_sharding(const Sharding& sharding, const Shape& shape) {
  check_annotation_divisible("device_put args", "", sharding, shape);
}

SpecEntry spec_entry(const py::handle& entry) {
  if (entry.is_none()) return SpecEntry::none();
  if (py::isinstance<py::str>(entry)) return SpecEntry::of_axes({entry.cast<std::string>()});
  if (py::isinstance<py::tuple>(entry) || py::isinstance<py::list>(entry)) {
    std::vector<std::string> names;
    for (const py::handle name : entry) names.push_back(py::str(name).cast<std::string>());
    return SpecEntry::of_axes(names);
  }
  if (py::hasattr(entry, "_shardscope_unconstrained")) return SpecEntry::unconstrained();
  throw type_error("PartitionSpec entries must be None, a mesh axis name or a tuple of them, got " +
                   py::repr(entry).cast<std::string>());
}

// JAX's _canonicalize_ur: unreduced/reduced are sets (or frozensets) of mesh axis names.
std::vector<std::string> axis_set(const char* name, const py::handle& value) {
  if (!py::isinstance<py::set>(value) && !py::isinstance<py::frozenset>(value)) {
    throw type_error(std::string(name) + " argument of PartitionSpec should of type `frozenset` or `set`. Got type " +
                     py::str(py::type::of(value)).cast<std::string>());
  }
  std::vector<std::string> axes;
  for (const py::handle axis : value) {
    if (axis.is_none()) {
      throw value_error(std::string(name) + " cannot contain None. All elements in " + name +
                        " should refer to the mesh axes.");
    }
    axes.push_back(py::str(axis).cast<std::string>());
  }
  // A Python set has no order of its own; sorting keeps repr and equality independent of insertion order.
  std::sort(axes.begin(), axes.end());
  return axes;
}

const char* unreduced_kind_python_name(UnreducedKind kind) {
  switch (kind) {
    case UnreducedKind::kSum: return "sum";
    case UnreducedKind::kMax: return "max";
    case UnreducedKind::kMin: return "min";
  }
  return "sum";
}

// P(..., unreduced=..., reduced=..., unreduced_kind=...) with partition_spec._check's errors.
void apply_unreduced_keywords(PartitionSpec& spec, const py::kwargs& keywords) {
  std::vector<std::string> unreduced;
  std::vector<std::string> reduced;
  py::object kind = py::none();
  for (const auto& [key, value] : keywords) {
    const std::string name = py::str(key);
    if (name == "unreduced") {
      unreduced = axis_set("unreduced", value);
    } else if (name == "reduced") {
      reduced = axis_set("reduced", value);
    } else if (name == "unreduced_kind") {
      kind = py::reinterpret_borrow<py::object>(value);
    } else {
      throw type_error("PartitionSpec.__new__() got an unexpected keyword argument '" + name + "'");
    }
  }
  const auto as_set = [](const std::vector<std::string>& axes) {
    return py::repr(py::frozenset(py::cast(axes))).cast<std::string>();
  };
  for (const std::string& axis : unreduced) {
    if (std::find(reduced.begin(), reduced.end(), axis) != reduced.end()) {
      throw value_error("`unreduced` and `reduced` argument to PartitionSpec cannot overlap. Got unreduced: " +
                        as_set(unreduced) + " and reduced: " + as_set(reduced));
    }
  }
  UnreducedKind parsed_kind = UnreducedKind::kSum;
  if (!kind.is_none()) {
    const py::object enum_type = py::module_::import("jax.sharding").attr("UnreducedKind");
    if (!py::isinstance(kind, enum_type)) {
      throw type_error("Expected unreduced_kind to be of type `jax.sharding.UnreducedKind` but got " +
                       py::str(py::type::of(kind)).cast<std::string>());
    }
    if (unreduced.empty()) {
      throw value_error("`unreduced_kind` should be `None` when `unreduced` is an empty set. Got unreduced_kind=" +
                        py::repr(kind).cast<std::string>() + " and unreduced=" + as_set(unreduced));
    }
    const std::string kind_name = kind.attr("name").cast<std::string>();
    parsed_kind = kind_name == "max"   ? UnreducedKind::kMax
                  : kind_name == "min" ? UnreducedKind::kMin
                                       : UnreducedKind::kSum;
  }
  for (const std::string& axis : spec.mentioned_axes()) {
    const bool in_unreduced = std::find(unreduced.begin(), unreduced.end(), axis) != unreduced.end();
    if (in_unreduced || std::find(reduced.begin(), reduced.end(), axis) != reduced.end()) {
      const char* which = in_unreduced ? "unreduced" : "reduced";
      throw value_error(std::string("partitions cannot overlap with ") + which +
                        " axes passed to PartitionSpec. Got partitions: " + spec.tuple_repr() + " and " + which +
                        " axes: " + as_set(in_unreduced ? unreduced : reduced));
    }
  }
  if (!unreduced.empty()) spec.set_unreduced(std::move(unreduced), parsed_kind);
  if (!reduced.empty()) spec.set_reduced(std::move(reduced));
}

// pspec[...] and *pspec read positions only, which would drop the unreduced/reduced sets.
void refuse_positional_use(const PartitionSpec& spec, const char* form, const char* instead) {
  if (spec.unreduced().empty() && spec.reduced().empty()) return;
  throw value_error(std::string("Using ") + form +
                    " is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use " + instead);
}

py::tuple spec_entries(const PartitionSpec& spec) {
  py::tuple out(spec.size());
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const SpecEntry& entry = spec.entries()[i];
    if (entry.is_none()) {
      out[i] = py::none();
    } else if (entry.kind == SpecEntry::Kind::kUnconstrained) {
      out[i] = py::module_::import("jax.sharding").attr("PartitionSpec").attr("UNCONSTRAINED");
    } else if (entry.axes.size() == 1) {
      out[i] = entry.axes[0];
    } else {
      out[i] = py::cast(entry.axes).cast<py::tuple>();
    }
  }
  return out;
}

std::vector<Device> devices_from_python(const py::handle& devices, std::vector<int64_t>* shape) {
  py::object array = py::module_::import("numpy").attr("asarray")(devices, "object");
  if (shape != nullptr) *shape = array.attr("shape").cast<std::vector<int64_t>>();
  std::vector<Device> flat;
  for (const py::handle item : array.attr("flat")) flat.push_back(item.cast<Device>());
  return flat;
}

py::object device_array(const std::vector<Device>& devices, const std::vector<int64_t>& shape) {
  py::list items;
  for (const Device& device : devices) items.append(py::cast(device));
  py::object numpy = py::module_::import("numpy");
  py::object array = numpy.attr("empty")(devices.size(), "object");
  for (std::size_t i = 0; i < devices.size(); ++i) array[py::int_(i)] = items[i];
  return array.attr("reshape")(int_tuple(shape));
}

py::object index_tuple(const std::vector<DimSlice>& index) {
  py::object slice = py::module_::import("builtins").attr("slice");
  py::tuple out(index.size());
  for (std::size_t d = 0; d < index.size(); ++d) {
    out[d] =
        index[d].full ? slice(py::none(), py::none(), py::none()) : slice(index[d].start, index[d].stop, py::none());
  }
  return out;
}

// visualize_sharding's color_map: a colormap name, a list of '#rrggbb' colours, or a callable taking a
// float in [0, 1] and returning (r, g, b[, a]) floats, as a matplotlib colormap does.
std::optional<ColorMap> color_map_from_python(const py::object& color_map) {
  if (color_map.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(color_map)) return named_color_map(color_map.cast<std::string>());
  if (py::isinstance<py::list>(color_map) || py::isinstance<py::tuple>(color_map)) {
    return listed_color_map(color_map.cast<std::vector<std::string>>());
  }
  if (!PyCallable_Check(color_map.ptr())) {
    throw py::type_error("color_map must be a colormap name, a list of colours or a callable, got " +
                         py::repr(color_map).cast<std::string>());
  }
  return ColorMap([color_map](double position) {
    const py::gil_scoped_acquire gil;
    const py::sequence rgba = color_map(position);
    return RgbFloat{rgba[0].cast<double>(), rgba[1].cast<double>(), rgba[2].cast<double>()};
  });
}

std::optional<Sharding> engine_sharding(const py::handle& object) {
  if (py::isinstance<NamedSharding>(object)) return Sharding(object.cast<NamedSharding>());
  if (py::isinstance<SingleDeviceSharding>(object)) return Sharding(object.cast<SingleDeviceSharding>());
  return std::nullopt;
}

py::dict indices_dict(const std::vector<DeviceIndex>& entries) {
  py::dict out;
  for (const DeviceIndex& entry : entries) out[py::cast(entry.device)] = index_tuple(entry.index);
  return out;
}

py::set device_py_set(const std::vector<Device>& devices) {
  py::set set;
  for (const Device& d : devices) set.add(py::cast(d));
  return set;
}

// The Sharding API both concrete sharding classes share; each method converts and asks core.
template <typename Concrete>
void add_sharding_queries(py::class_<Concrete>& cls) {
  cls.def_property_readonly("num_devices", [](const Concrete& s) { return num_devices(s); })
      .def_property_readonly("device_set", [](const Concrete& s) { return device_py_set(sharding_devices(s)); })
      .def_property_readonly("addressable_devices",
                             [](const Concrete& s) { return device_py_set(addressable_devices(s)); })
      .def_property_readonly("is_fully_addressable", [](const Concrete& s) { return is_fully_addressable(s); })
      .def_property_readonly("is_fully_replicated", [](const Concrete& s) { return is_fully_replicated(s); })
      .def_property_readonly("_device_assignment",
                             [](const Concrete& s) { return py::tuple(py::cast(sharding_devices(s))); })
      .def_property_readonly("_addressable_device_assignment",
                             [](const Concrete& s) { return py::tuple(py::cast(addressable_devices(s))); })
      .def(
          "shard_shape",
          [](const Concrete& s, const Shape& shape) { return int_tuple(shard_shape(s, shape, profile())); },
          py::arg("global_shape"))
      .def(
          "devices_indices_map",
          [](const Concrete& s, const Shape& shape) { return indices_dict(devices_indices_map(s, shape, profile())); },
          py::arg("global_shape"))
      .def(
          "addressable_devices_indices_map",
          [](const Concrete& s, const Shape& shape) {
            return indices_dict(addressable_devices_indices_map(s, shape, profile()));
          },
          py::arg("global_shape"))
      .def(
          "is_equivalent_to",
          [](const Concrete& s, const py::object& other, std::size_t ndim) {
            std::optional<Sharding> theirs = engine_sharding(other);
            if (!theirs && py::hasattr(other, "_to_named")) theirs = engine_sharding(other.attr("_to_named")(ndim));
            if (!theirs) return false;
            return is_equivalent_to(s, *theirs, ndim, profile());
          },
          py::arg("other"), py::arg("ndim"));
}

void bind_devices(py::module_& m) {
  py::class_<Device>(m, "Device")
      .def_property_readonly("id", [](const Device& d) { return d.id; })
      .def_property_readonly("platform", [](const Device& d) { return platform_name(d.platform); })
      .def_property_readonly("device_kind", [](const Device& d) { return d.device_kind; })
      .def_property_readonly("process_index", [](const Device& d) { return d.process_index; })
      // jaxlib gives coords as a list, and a GPU has no core_on_chip (None), as real JAX 0.11.2 printed; a CPU
      // device has no coords at all (an AttributeError with no message).
      .def_property_readonly("coords",
                             [](const Device& d) {
                               if (d.platform == Platform::kCpu) throw py::attribute_error("");
                               py::list coords;
                               for (const auto c : d.coords) coords.append(c);
                               return coords;
                             })
      .def_property_readonly("core_on_chip",
                             [](const Device& d) -> py::object {
                               if (d.platform == Platform::kGpu) return py::none();
                               return py::int_(d.core_on_chip);
                             })
      .def("addressable_memories", [](const Device& d) { return addressable_memory_kinds(d); })
      .def("__repr__", [](const Device& d) { return device_repr(d, profile()); })
      .def("__str__", [](const Device& d) { return device_str(d, profile()); })
      .def("__eq__",
           [](const Device& a, const py::object& b) { return py::isinstance<Device>(b) && a == b.cast<Device>(); })
      .def("__hash__", [](const Device& d) { return py::hash(py::make_tuple(d.id, static_cast<int>(d.platform))); });
  m.def("devices", [] { return api::session().devices; });
  m.def("device_preset", [] { return api::session().device_preset; });
  m.def("set_device_preset", [](const std::string& preset) { api::set_device_preset(preset); });
  m.def("jax_version", [] { return profile().version().to_string(); });
  // The profile's version as a tuple, for the Python modules' feature checks (one parse, here).
  m.def("jax_version_info", [] {
    const JaxVersion version = profile().version();
    return py::make_tuple(version.major, version.minor, version.patch);
  });
  m.def("set_jax_version",
        [](const std::string& version) { api::session().profile = JaxProfile(JaxVersion::parse(version)); });
  m.def("set_enable_x64", [](bool on) { api::session().enable_x64 = on; });
  m.def("set_debug_nans", [](bool on) { api::set_debug_nans(on); });
  m.def("set_debug_infs", [](bool on) { api::set_debug_infs(on); });
  m.def("set_threefry_partitionable", [](bool on) { api::session().threefry_partitionable = on; });
  m.def("enable_x64", [] { return api::session().enable_x64; });
}

void bind_meshes(py::module_& m) {
  py::enum_<AxisType> axis_type(m, "AxisType");
  axis_type.value("Auto", AxisType::kAuto).value("Explicit", AxisType::kExplicit).value("Manual", AxisType::kManual);
  // JAX's AxisType.__repr__ is the bare name, so `mesh.axis_types` prints `(Auto, Auto)`. Assigned, not
  // def'd: pybind11 would chain a def'd __repr__ behind the enum's own, which always matches first.
  axis_type.attr("__repr__") = py::cpp_function([](const py::object& self) { return py::str(self.attr("name")); },
                                                py::name("__repr__"), py::is_method(axis_type));
  py::class_<Mesh>(m, "Mesh")
      .def(py::init(
               [](const py::object& devices, const py::object& axis_names, std::optional<std::vector<AxisType>> types) {
                 // JAX takes a lone axis name as a string for a one-dimensional mesh.
                 const std::vector<std::string> names = py::isinstance<py::str>(axis_names)
                                                            ? std::vector<std::string>{axis_names.cast<std::string>()}
                                                            : axis_names.cast<std::vector<std::string>>();
                 std::vector<int64_t> shape;
                 std::vector<Device> flat = devices_from_python(devices, &shape);
                 return Mesh(std::move(flat), shape, names,
                             types.value_or(std::vector<AxisType>(names.size(), AxisType::kAuto)));
               }),
           py::arg("devices"), py::arg("axis_names"), py::arg("axis_types") = py::none())
      .def_property_readonly("axis_names",
                             [](const Mesh& mesh) { return py::cast(mesh.axis_names()).cast<py::tuple>(); })
      .def_property_readonly("axis_sizes", [](const Mesh& mesh) { return int_tuple(mesh.axis_sizes()); })
      .def_property_readonly("axis_types",
                             [](const Mesh& mesh) { return py::cast(mesh.axis_types()).cast<py::tuple>(); })
      .def_property_readonly("size", &Mesh::size)
      // mesh.abstract_mesh: names, sizes, types and the device description, without the devices.
      .def_property_readonly("abstract_mesh", [](const Mesh& mesh) { return AbstractMesh::from_mesh(mesh); })
      .def_property_readonly("devices",
                             [](const Mesh& mesh) { return device_array(mesh.devices(), mesh.axis_sizes()); })
      .def_property_readonly("shape",
                             [](const Mesh& mesh) {
                               py::object ordered = py::module_::import("collections").attr("OrderedDict")();
                               for (std::size_t i = 0; i < mesh.axis_names().size(); ++i)
                                 ordered[py::str(mesh.axis_names()[i])] = mesh.axis_sizes()[i];
                               return ordered;
                             })
      .def("__repr__", [](const Mesh& mesh) { return mesh.repr(profile()); })
      .def("__str__", [](const Mesh& mesh) { return mesh.str(profile()); })
      .def("__eq__", [](const Mesh& a, const py::object& b) { return py::isinstance<Mesh>(b) && a == b.cast<Mesh>(); })
      .def("__hash__", [](const Mesh& mesh) { return py::hash(py::str(mesh.repr(profile()))); });
  m.def(
      "make_mesh",
      [](const std::vector<int64_t>& shape, const std::vector<std::string>& names,
         std::optional<std::vector<AxisType>> types, const py::object& devices) {
        const std::vector<Device> pool =
            devices.is_none() ? api::session().devices : devices_from_python(devices, nullptr);
        return make_mesh(shape, names, pool, profile(), types);
      },
      py::arg("axis_shapes"), py::arg("axis_names"), py::arg("axis_types") = py::none(),
      py::arg("devices") = py::none());
  m.def(
      "create_device_mesh",
      [](const std::vector<int64_t>& shape, const py::object& devices, bool contiguous, bool allow_split) {
        const std::vector<Device> pool =
            devices.is_none() ? api::session().devices : devices_from_python(devices, nullptr);
        return device_array(create_device_mesh(shape, pool, contiguous, allow_split), shape);
      },
      py::arg("mesh_shape"), py::arg("devices") = py::none(), py::arg("contiguous_submeshes") = false,
      py::arg("allow_split_physical_axes") = false);
  py::class_<AbstractMesh>(m, "AbstractMesh")
      .def(py::init([](const std::vector<int64_t>& sizes, const std::vector<std::string>& names,
                       std::optional<std::vector<AxisType>> types) {
             if (sizes.size() != names.size()) {
               throw value_error("Length of axis_sizes and axis_names must be equal. Got axis_sizes=" +
                                 python_int_tuple(sizes) + " and axis_names of length " + std::to_string(names.size()));
             }
             // Without axis_types an abstract mesh is as jax.make_mesh would make it under the profile.
             const AxisType fallback =
                 profile().has(JaxFeature::kMakeMeshDefaultsToExplicit) ? AxisType::kExplicit : AxisType::kAuto;
             return AbstractMesh{sizes, names, types.value_or(std::vector<AxisType>(sizes.size(), fallback)),
                                 {},    {},    {}};
           }),
           py::arg("axis_sizes"), py::arg("axis_names"), py::arg("axis_types") = py::none())
      .def_property_readonly("axis_names",
                             [](const AbstractMesh& mesh) { return py::tuple(py::cast(mesh.axis_names)); })
      .def_property_readonly("axis_sizes",
                             [](const AbstractMesh& mesh) { return py::tuple(py::cast(mesh.axis_sizes)); })
      .def_property_readonly("axis_types",
                             [](const AbstractMesh& mesh) { return py::tuple(py::cast(mesh.axis_types)); })
      .def_property_readonly("shape",
                             [](const AbstractMesh& mesh) {
                               py::object ordered = py::module_::import("collections").attr("OrderedDict")();
                               for (std::size_t i = 0; i < mesh.axis_names.size(); ++i)
                                 ordered[py::str(mesh.axis_names[i])] = mesh.axis_sizes[i];
                               return ordered;
                             })
      .def_property_readonly("empty", [](const AbstractMesh& mesh) { return mesh.axis_names.empty(); })
      .def_property_readonly("size",
                             [](const AbstractMesh& mesh) {
                               int64_t size = 1;
                               for (const int64_t n : mesh.axis_sizes) size *= n;
                               return mesh.axis_names.empty() ? int64_t{0} : size;
                             })
      .def("__repr__", [](const AbstractMesh& mesh) { return abstract_mesh_repr(mesh, profile()); });
  m.def("get_concrete_mesh", [] { return get_concrete_mesh(); });
  m.def("get_abstract_mesh", [] { return get_abstract_mesh(); });
  m.def("set_mesh", [](std::optional<Mesh> mesh) { set_mesh(mesh, profile()); });
  m.def("enter_resource_mesh", [](const Mesh& mesh) { enter_resource_mesh(mesh); });
  m.def("exit_resource_mesh", [] { exit_resource_mesh(); });
}

void bind_shardings(py::module_& m) {
  py::class_<PartitionSpec>(m, "PartitionSpec")
      .def(py::init([](const py::args& entries, const py::kwargs& keywords) {
        std::vector<SpecEntry> parsed;
        for (const py::handle entry : entries) parsed.push_back(spec_entry(entry));
        PartitionSpec spec(std::move(parsed));
        apply_unreduced_keywords(spec, keywords);
        return spec;
      }))
      .def("__repr__", [](const PartitionSpec& spec) { return spec.repr(profile()); })
      .def("__len__", &PartitionSpec::size)
      .def("__iter__",
           [](const PartitionSpec& spec) {
             refuse_positional_use(spec, "*pspec", "*spec.partitions");
             return py::iter(spec_entries(spec));
           })
      // The item is read before the entries' tuple goes away (an accessor into the temporary would dangle).
      .def("__getitem__",
           [](const PartitionSpec& spec, const py::object& key) {
             refuse_positional_use(spec, "pspec[...]", "spec.partitions[...]");
             return py::object(spec_entries(spec)[key]);
           })
      .def_property_readonly("partitions", [](const PartitionSpec& spec) { return spec_entries(spec); })
      .def_property_readonly("unreduced",
                             [](const PartitionSpec& spec) { return py::frozenset(py::cast(spec.unreduced())); })
      .def_property_readonly("reduced",
                             [](const PartitionSpec& spec) { return py::frozenset(py::cast(spec.reduced())); })
      .def_property_readonly("unreduced_kind",
                             [](const PartitionSpec& spec) -> py::object {
                               if (spec.unreduced().empty()) return py::none();
                               return py::module_::import("jax.sharding")
                                   .attr("UnreducedKind")
                                   .attr(unreduced_kind_python_name(spec.unreduced_kind()));
                             })
      .def("__eq__",
           [](const PartitionSpec& a, const py::object& b) {
             if (py::isinstance<PartitionSpec>(b)) return a == b.cast<PartitionSpec>();
             if (py::isinstance<py::tuple>(b))
               return a.unreduced().empty() && a.reduced().empty() && spec_entries(a).equal(b);
             return false;
           })
      .def("__hash__", [](const PartitionSpec& spec) {
        // A spec without unreduced/reduced axes equals its tuple of entries, so it hashes as that tuple.
        if (spec.unreduced().empty() && spec.reduced().empty()) return py::hash(spec_entries(spec));
        return py::hash(py::make_tuple(spec_entries(spec), py::frozenset(py::cast(spec.unreduced())),
                                       py::frozenset(py::cast(spec.reduced()))));
      });
  py::class_<NamedSharding> named(m, "NamedSharding");
  named
      .def(py::init([](const Mesh& mesh, const PartitionSpec& spec, std::optional<std::string> memory_kind) {
             return make_named_sharding(mesh, spec, profile(), std::move(memory_kind));
           }),
           py::arg("mesh"), py::arg("spec"), py::kw_only(), py::arg("memory_kind") = py::none())
      // Before 0.11 JAX also took a plain tuple of entries as the spec (NamedSharding(mesh, ()) replicates); 0.11
      // reads spec.partitions, which a tuple lacks.
      .def(py::init([](const Mesh& mesh, const py::tuple& entries, std::optional<std::string> memory_kind) {
             if (profile().version() >= JaxVersion{0, 11, 0}) {
               throw py::attribute_error("'tuple' object has no attribute 'partitions'");
             }
             const auto spec = py::module_::import("_shardscope").attr("PartitionSpec")(*entries).cast<PartitionSpec>();
             return make_named_sharding(mesh, spec, profile(), std::move(memory_kind));
           }),
           py::arg("mesh"), py::arg("spec"), py::kw_only(), py::arg("memory_kind") = py::none())
      // Any other spec fails where JAX's NamedSharding reads the spec's partitions.
      .def(py::init([](const Mesh&, const py::object& spec, const py::object&) -> NamedSharding {
             throw py::attribute_error("'" + py::type::of(spec).attr("__name__").cast<std::string>() +
                                       "' object has no attribute 'partitions'");
           }),
           py::arg("mesh"), py::arg("spec"), py::kw_only(), py::arg("memory_kind") = py::none())
      .def_property_readonly("mesh", [](const NamedSharding& s) { return s.mesh; })
      .def_property_readonly("spec", [](const NamedSharding& s) { return s.spec; })
      .def_property_readonly("memory_kind", [](const NamedSharding& s) { return s.memory_kind; })
      .def("with_memory_kind",
           [](const NamedSharding& s, const std::string& kind) {
             return make_named_sharding(s.mesh, s.spec, profile(), kind);
           })
      .def("__repr__", [](const NamedSharding& s) { return sharding_repr(s, profile()); })
      .def("__eq__",
           [](const NamedSharding& a, const py::object& b) {
             return py::isinstance<NamedSharding>(b) && a == b.cast<NamedSharding>();
           })
      .def("__hash__", [](const NamedSharding& s) { return py::hash(py::str(sharding_repr(s, profile()))); });
  add_sharding_queries(named);
  py::class_<SingleDeviceSharding> single(m, "SingleDeviceSharding");
  single
      .def(py::init([](const Device& device, std::optional<std::string> memory_kind) {
             return make_single_device_sharding(device, profile(), std::move(memory_kind));
           }),
           py::arg("device"), py::kw_only(), py::arg("memory_kind") = py::none())
      .def_property_readonly("memory_kind", [](const SingleDeviceSharding& s) { return s.memory_kind; })
      .def("with_memory_kind",
           [](const SingleDeviceSharding& s, const std::string& kind) {
             return make_single_device_sharding(s.device, profile(), kind);
           })
      .def("__repr__", [](const SingleDeviceSharding& s) { return sharding_repr(s, profile()); })
      .def("__eq__",
           [](const SingleDeviceSharding& a, const py::object& b) {
             return py::isinstance<SingleDeviceSharding>(b) && a == b.cast<SingleDeviceSharding>();
           })
      .def("__hash__", [](const SingleDeviceSharding& s) { return py::hash(py::str(sharding_repr(s, profile()))); });
  add_sharding_queries(single);
}

void bind_arrays(py::module_& m) {
  py::class_<PyValue>(m, "ArrayImpl", py::dynamic_attr())
      .def_property_readonly("shape", [](const PyValue& v) { return int_tuple(v.value().aval().shape); })
      .def_property_readonly("ndim", [](const PyValue& v) { return v.value().aval().rank(); })
      .def_property_readonly("size", [](const PyValue& v) { return product(v.value().aval().shape); })
      .def_property_readonly("dtype", [](const PyValue& v) { return python_dtype(v.value().aval().dtype); })
      .def_property_readonly("_dtype_name",
                             [](const PyValue& v) { return std::string(dtype_name(v.value().aval().dtype)); })
      .def_property_readonly("weak_type", [](const PyValue& v) { return v.value().aval().weak_type; })
      .def_property_readonly("_is_tracer", [](const PyValue& v) { return !v.value().is_concrete(); })
      .def_property_readonly("_known_value",
                             [](const PyValue& v) -> py::object {
                               const api::Value* known = v.value().known();
                               if (known == nullptr) return py::none();
                               return py::object(from_values({*known})[0]);
                             })
      // (the trace's level, the positions of the trace arguments the value depends on), or None when not traced.
      .def_property_readonly("_progenitors",
                             [](const PyValue& v) -> py::object {
                               if (v.leaked()) return py::none();
                               const auto positions = api::argument_progenitors(v.value());
                               if (!positions) return py::none();
                               return py::make_tuple(v.value().trace()->level(), py::cast(*positions));
                             })
      .def_property_readonly("_origin_operations",
                             [](const PyValue& v) {
                               return v.leaked() ? std::vector<std::string>{}
                                                 : api::tracer_origin_operations(v.value());
                             })
      .def_property_readonly(
          "_batch_origin",
          [](const PyValue& v) { return v.leaked() ? std::nullopt : api::batch_tracer_origin(v.value()); })
      .def_property_readonly("_concrete_kind",
                             [](const PyValue& v) -> std::string {
                               const api::Trace* trace = v.live_trace();
                               return trace != nullptr && v.value().known() != nullptr ? trace->concrete_kind() : "";
                             })
      // An eager shard_map body's value: (mesh axis names, [(device, mesh coordinates, numpy block)...]) in mesh
      // order, or None.
      .def_property_readonly(
          "_per_device_blocks",
          [](const PyValue& v) -> py::object {
            const std::vector<BufferPtr>* blocks = v.value().blocks();
            const api::Trace* trace = v.live_trace();
            if (blocks == nullptr || trace == nullptr || trace->per_device_mesh() == nullptr) {
              return py::none();
            }
            const Mesh& mesh = *trace->per_device_mesh();
            const Sharding single = make_single_device_sharding(api::default_device(), profile());
            py::list items;
            for (std::size_t k = 0; k < blocks->size() && k < mesh.devices().size(); ++k) {
              std::vector<int64_t> coords(mesh.axis_sizes().size());
              auto rest = static_cast<int64_t>(k);
              for (std::size_t a = coords.size(); a-- > 0;) {
                coords[a] = rest % mesh.axis_sizes()[a];
                rest /= mesh.axis_sizes()[a];
              }
              items.append(py::make_tuple(py::cast(mesh.devices()[k]), py::cast(coords).cast<py::tuple>(),
                                          to_numpy(Array::from_host((*blocks)[k], single, profile()))));
            }
            return py::make_tuple(py::cast(mesh.axis_names()), items);
          })
      .def_property_readonly("_vmap_axis_size", [](const PyValue& v) { return v.vmap_axis_size(); })
      .def_property_readonly("_aval_str", [](const PyValue& v) { return v.value().aval().str_short(false); })
      .def_property_readonly("_aval_short", [](const PyValue& v) { return v.value().aval().str_short(true); })
      .def_property_readonly("_typeof_str", [](const PyValue& v) { return api::typeof_text(v.value(), profile()); })
      // The spec of the value's type (jax.typeof(x).sharding.spec): the mesh axes each dimension is sharded over.
      .def_property_readonly("_type_spec", [](const PyValue& v) { return type_partition_spec(v.value().aval()); })
      // The manual axes the value varies over (its type's vma), in mesh order.
      .def_property_readonly("_varying_axes", [](const PyValue& v) { return v.value().aval().varying; })
      // The AbstractMesh of the value's type: a placed array's mesh, or (for a tracer) the mesh its type names.
      .def_property_readonly("_abstract_mesh",
                             [](const PyValue& v) {
                               if (v.value().is_concrete()) {
                                 if (const auto* named = std::get_if<NamedSharding>(&v.value().array().sharding())) {
                                   return AbstractMesh::from_mesh(named->mesh);
                                 }
                               }
                               return type_abstract_mesh(v.value().aval().dim_axes);
                             })
      .def_property_readonly("_typeof_repr",
                             [](const PyValue& v) { return api::typeof_repr_text(v.value(), profile()); })
      .def_property_readonly("sharding", [](const PyValue& v) { return sharding_object(v.value().array().sharding()); })
      .def_property_readonly("nbytes", [](const PyValue& v) { return v.value().array().nbytes(); })
      .def("_value", [](const PyValue& v) { return to_numpy(v.operand().array()); })
      .def("delete", &PyValue::mark_deleted)
      .def("is_deleted", &PyValue::deleted)
      .def("devices",
           [](const PyValue& v) {
             py::set set;
             for (const Device& d : sharding_devices(v.value().array().sharding())) set.add(py::cast(d));
             return set;
           })
      // (device, index, replica_id, data) per shard in the sharding's device-assignment order; each data is a
      // single-device array on that shard's device, as JAX's per-device buffers are.
      .def(
          "_shards",
          [](const PyValue& v, bool addressable_only) {
            py::list shards;
            const Array& array = v.value().array();
            for (const Array::Shard& shard : array.shards()) {
              if (addressable_only && !is_addressable(shard.device)) continue;
              py::object data = shard.data ? py::cast(PyValue(api::Value::concrete(Array::from_host(
                                                 shard.data, make_single_device_sharding(shard.device, profile()),
                                                 profile(), array.aval().weak_type))))
                                           : py::none();
              shards.append(py::make_tuple(py::cast(shard.device), index_tuple(shard.index), shard.replica_id, data));
            }
            return shards;
          },
          py::arg("addressable_only") = true)
      .def("_bytes_per_device", [](const PyValue& v) { return v.value().array().bytes_per_device(); });
  m.def(
      "asarray",
      [](const py::object& data, const py::object& dtype) {
        const std::optional<DType> target =
            dtype.is_none() ? std::nullopt : std::optional<DType>(dtype_from_python(dtype));
        const BufferPtr buffer = buffer_from_python(data, target);
        return PyValue(api::Value::concrete(
            Array::from_host(buffer, make_single_device_sharding(api::default_device(), profile()), profile())));
      },
      py::arg("data"), py::arg("dtype") = py::none());
  // make_array_from_callback / make_array_from_single_device_arrays: [(device, data)] with data a numpy array
  // or a single-device jax Array; core checks every block against the sharding.
  m.def("array_from_device_blocks", [](const Shape& shape, const py::object& dtype, const py::object& sharding,
                                       const py::list& blocks) {
    const std::optional<Sharding> target = engine_sharding(sharding);
    if (!target) throw type_error("sharding should be an instance of `jax.sharding`.");
    const DType element = dtype_from_python(dtype);
    std::map<int64_t, BufferPtr> by_device;
    for (const py::handle item : blocks) {
      const auto pair = item.cast<py::tuple>();
      const auto device = pair[0].cast<Device>();
      const py::object data = pair[1];
      by_device[device.id] = py::isinstance<PyValue>(data) ? data.cast<PyValue>().value().array().gather()
                                                           : buffer_from_python(data, std::nullopt);
    }
    return PyValue(api::Value::concrete(Array::from_device_blocks(
        ShapedArray{shape, element, false}, *target, by_device, py::repr(sharding).cast<std::string>(), profile())));
  });
  m.def("device_put", [](const py::object& x, const py::object& target) {
    const api::Value value = to_value(x);
    if (value.is_traced()) {
      // Inside jit: an equation of the program, placed by the partitioner.
      if (target.is_none()) return PyValue(value);
      const Sharding sharding = sharding_from_python(target);
      const auto* named = std::get_if<NamedSharding>(&sharding);
      if (named == nullptr) {
        throw not_implemented_error(
            "jax.device_put inside a traced function supports NamedSharding targets only, got " +
            py::repr(target).cast<std::string>());
      }
      return PyValue(api::lax::device_put(value, *named));
    }
    const Array array =
        value.is_concrete() ? value.array() : to_value(py::module_::import("numpy").attr("asarray")(x)).array();
    if (target.is_none()) return PyValue(value.is_concrete() ? value : api::Value::concrete(array));
    const Sharding sharding = sharding_from_python(target);
    check_device_put_sharding(sharding, array.shape());
    return PyValue(api::Value::concrete(reshard(array, sharding, profile(), nullptr, "device_put")));
  });
  m.def("check_annotation_divisible",
        [](const std::string& what, const std::string& keypath, const py::object& sharding, const Shape& shape) {
          check_annotation_divisible(what, keypath, sharding_from_python(sharding), shape);
        });
  m.def("check_annotation_rank",
        [](const std::string& what, const std::string& keypath, const py::object& sharding, std::size_t rank) {
          check_annotation_rank(what, keypath, sharding_from_python(sharding), rank, profile());
        });
  m.def("bind", [](const std::string& primitive, const py::list& inputs, const py::dict& params) {
    return from_values(api::bind(primitive, to_values(inputs), params_from_python(params)));
  });
  m.def(
      "visualize_sharding",
      [](const Shape& shape, const py::object& sharding, bool use_color, double scale, const py::object& min_width,
         const py::object& max_width, const py::object& color_map, bool highlight) {
        VizOptions options;
        options.use_color = use_color;
        options.scale = scale;
        // Python's ints are unbounded: checked before they are narrowed to the layout's ints.
        const int64_t min_columns = int_argument(min_width, "min_width");
        const int64_t max_columns = int_argument(max_width, "max_width");
        check_viz_width("min_width", min_columns);
        check_viz_width("max_width", max_columns);
        options.min_width = static_cast<int>(min_columns);
        options.max_width = static_cast<int>(max_columns);
        options.color_map = color_map_from_python(color_map);
        TextRenderOptions text_options;
        text_options.highlight_numbers = highlight;
        return render_text(compute_layout(shape, sharding_from_python(sharding), options, profile()), text_options);
      },
      py::arg("shape"), py::arg("sharding"), py::arg("use_color") = false, py::arg("scale") = 1.0,
      py::arg("min_width") = 9, py::arg("max_width") = 80, py::arg("color_map") = py::none(),
      py::arg("highlight") = false);
  // The text/html rich gives a notebook for the console text visualize_sharding printed.
  m.def("jupyter_html", [](const std::string& ansi_text) { return ansi_to_jupyter_html(ansi_text); });
  // shardscope.display's picture: the coloured grid as SVG, captioned with the sharding's repr.
  m.def("sharding_svg", [](const Shape& shape, const py::object& sharding) {
    VizOptions options;
    options.use_color = true;
    const Sharding engine = sharding_from_python(sharding);
    return render_svg(compute_layout(shape, engine, options, profile()),
                      SvgRenderOptions{9.0, 18.0, sharding_repr(engine, profile())});
  });
}

// jax.Array's binary operators: the engine's jnp functions (the same as `_shardscope.numpy`'s), reading
// array operands by reference. Operators are the hottest path of eager code; copying each operand's value
// (every shard's index and the mesh) would cost about a microsecond per call.
void bind_operators(py::module_& m) {
  using Binary = api::Value (*)(const api::Value&, const api::Value&);
  py::module_ ops = m.def_submodule("_operators");
  const std::vector<std::pair<const char*, Binary>> table = {
      {"add", api::jnp::add},
      {"subtract", api::jnp::subtract},
      {"multiply", api::jnp::multiply},
      {"true_divide", api::jnp::true_divide},
      {"floor_divide", api::jnp::floor_divide},
      {"mod", api::jnp::remainder},
      {"power", api::jnp::power},
      {"equal", api::jnp::equal},
      {"not_equal", api::jnp::not_equal},
      {"less", api::jnp::less},
      {"less_equal", api::jnp::less_equal},
      {"greater", api::jnp::greater},
      {"greater_equal", api::jnp::greater_equal},
      {"bitwise_and", api::jnp::bitwise_and},
      {"bitwise_or", api::jnp::bitwise_or},
      {"matmul", [](const api::Value& a, const api::Value& b) { return api::jnp::matmul(a, b); }}};
  for (const auto& [name, fn] : table) {
    ops.def(name, [fn = fn](const py::object& x, const py::object& y) {
      std::optional<api::Value> x_storage;
      std::optional<api::Value> y_storage;
      return from_value(fn(operand_ref(x, x_storage), operand_ref(y, y_storage)));
    });
  }
}

}  // namespace

void bind_core(py::module_& m) {
  bind_devices(m);
  bind_meshes(m);
  bind_shardings(m);
  bind_arrays(m);
  bind_operators(m);
}

}  // namespace shardscope::python
