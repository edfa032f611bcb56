// Mesh construction checks and reprs.
#include "mesh/mesh.h"

#include <algorithm>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {

std::string axis_types_tuple(const std::vector<AxisType>& types) {
  std::vector<std::string> names;
  names.reserve(types.size());
  for (const AxisType t : types) names.push_back(axis_type_name(t));
  return python_tuple(names);
}

std::string names_tuple(const std::vector<std::string>& names) {
  std::vector<std::string> items;
  items.reserve(names.size());
  for (const std::string& n : names) items.push_back(python_string_repr(n));
  return python_tuple(items);
}

// numpy's repr of an integer array laid out row-major over `shape`, as `array([[0, 1],\n       [2, 3]])`.
std::string numpy_int_array_repr(const std::vector<int64_t>& values, const std::vector<int64_t>& shape) {
  std::size_t width = 1;
  for (const int64_t v : values) width = std::max(width, std::to_string(v).size());
  const std::string prefix = "array(";
  std::string out = prefix;
  std::size_t next = 0;
  // Recursive lambda over dimensions; numpy separates sub-arrays of rank r with r-1 blank lines.
  auto render = [&](auto&& self, std::size_t dim, std::size_t indent) -> void {
    out += '[';
    for (int64_t i = 0; i < shape[dim]; ++i) {
      if (dim + 1 == shape.size()) {
        std::string text = std::to_string(values[next++]);
        out += std::string(width - text.size(), ' ') + text;
        if (i + 1 < shape[dim]) out += ", ";
      } else {
        self(self, dim + 1, indent + 1);
        if (i + 1 < shape[dim]) {
          out += ",";
          out += std::string(shape.size() - dim - 1, '\n');
          out += std::string(indent + 1, ' ');
        }
      }
    }
    out += ']';
  };
  if (shape.empty()) {
    out += std::to_string(values.empty() ? 0 : values[0]);
  } else {
    render(render, 0, prefix.size());
  }
  return out + ")";
}

}  // namespace

std::string axis_type_name(AxisType type) {
  switch (type) {
    case AxisType::kAuto: return "Auto";
    case AxisType::kExplicit: return "Explicit";
    case AxisType::kManual: return "Manual";
  }
  return "Auto";
}

Mesh::Mesh(std::vector<Device> devices, std::vector<int64_t> axis_sizes, std::vector<std::string> axis_names,
           std::vector<AxisType> axis_types) {
  if (axis_sizes.size() != axis_names.size()) {
    throw value_error(
        "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second argument "
        "(`axis_names`), but got devices.ndim == " +
        std::to_string(axis_sizes.size()) + " and len(axis_names) == " + std::to_string(axis_names.size()) + ".");
  }
  if (axis_types.size() != axis_names.size()) {
    throw value_error("Number of axis names should match the number of axis_types. Got axis_names=" +
                      names_tuple(axis_names) + " and axis_types=" + axis_types_tuple(axis_types));
  }
  for (std::size_t i = 0; i < axis_names.size(); ++i) {
    if (axis_sizes[i] < 1) {
      // JAX's own failure is an IndexError for an empty axis (no device to pick) and a ValueError for a negative one.
      throw Error(axis_sizes[i] == 0 ? "IndexError" : "ValueError",
                  "Mesh axis '" + axis_names[i] + "' must have a positive size, got " + std::to_string(axis_sizes[i]));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (axis_names[i] == axis_names[j]) {
        throw value_error("Mesh axis names must be unique, got " + names_tuple(axis_names));
      }
    }
  }
  if (product(axis_sizes) != static_cast<int64_t>(devices.size())) {
    throw value_error("cannot reshape " + std::to_string(devices.size()) + " devices into mesh shape " +
                      python_int_tuple(axis_sizes));
  }
  state_ = std::make_shared<const State>(
      State{std::move(devices), std::move(axis_sizes), std::move(axis_names), std::move(axis_types)});
}

const Mesh::State& Mesh::state() const {
  static const State empty;
  return state_ ? *state_ : empty;
}

bool Mesh::operator==(const Mesh& other) const { return state_ == other.state_ || state() == other.state(); }

std::optional<std::size_t> Mesh::axis_index(const std::string& name) const {
  const auto it = std::find(axis_names().begin(), axis_names().end(), name);
  if (it == axis_names().end()) return std::nullopt;
  return static_cast<std::size_t>(it - axis_names().begin());
}

int64_t Mesh::axis_size(const std::string& name) const {
  const auto index = axis_index(name);
  if (!index) throw value_error("Unknown mesh axis '" + name + "'; mesh axes are " + names_tuple(axis_names()));
  return axis_sizes()[*index];
}

int64_t Mesh::axes_size(const std::vector<std::string>& names) const {
  int64_t size = 1;
  for (const std::string& name : names) size *= axis_size(name);
  return size;
}

std::vector<int64_t> Mesh::position_of(std::size_t flat_index) const {
  std::vector<int64_t> position(axis_sizes().size());
  auto remaining = static_cast<int64_t>(flat_index);
  for (std::size_t i = axis_sizes().size(); i-- > 0;) {
    position[i] = remaining % axis_sizes()[i];
    remaining /= axis_sizes()[i];
  }
  return position;
}

Platform Mesh::platform() const { return devices().empty() ? Platform::kCpu : devices().front().platform; }

std::string Mesh::str(const JaxProfile& profile) const {
  if (!profile.has(JaxFeature::kMeshStrDefined)) return repr(profile);
  if (axis_names().empty()) return "Mesh()";
  std::vector<std::string> pairs;
  for (std::size_t i = 0; i < axis_names().size(); ++i) {
    pairs.push_back(python_string_repr(axis_names()[i]) + ": " + std::to_string(axis_sizes()[i]));
  }
  std::string out = "Mesh(" + join(pairs, ", ");
  if (profile.has(JaxFeature::kMeshStrShowsAxisTypes)) out += ", axis_types=" + axis_types_tuple(axis_types());
  return out + ")";
}

std::string Mesh::repr(const JaxProfile& profile) const {
  if (profile.has(JaxFeature::kMeshReprAxisSizes)) {
    if (axis_names().empty()) return "Mesh(axis_sizes=(), axis_names=())";
    return "Mesh(axis_sizes=" + python_int_tuple(axis_sizes()) + ", axis_names=" + names_tuple(axis_names()) +
           ", axis_types=" + axis_types_tuple(axis_types()) + ")";
  }
  std::vector<int64_t> ids;
  ids.reserve(devices().size());
  for (const Device& d : devices()) ids.push_back(d.id);
  std::string out =
      "Mesh(device_ids=" + numpy_int_array_repr(ids, axis_sizes()) + ", axis_names=" + names_tuple(axis_names());
  if (profile.has(JaxFeature::kMeshReprAxisTypes)) out += ", axis_types=" + axis_types_tuple(axis_types());
  return out + ")";
}

std::string AbstractMesh::repr() const {
  if (axis_names.empty()) return "AbstractMesh((), axis_types=())";
  std::vector<std::string> pairs;
  for (std::size_t i = 0; i < axis_names.size(); ++i) {
    pairs.push_back(python_string_repr(axis_names[i]) + ": " + std::to_string(axis_sizes[i]));
  }
  std::string out = "AbstractMesh(" + join(pairs, ", ") + ", axis_types=" + axis_types_tuple(axis_types);
  if (device_kind) {
    out += ", device_kind=" + *device_kind + ", num_cores=" + (num_cores ? std::to_string(*num_cores) : "None") +
           ", platform=" + platform.value_or("None");
  }
  return out + ")";
}

AbstractMesh AbstractMesh::from_mesh(const Mesh& mesh) {
  AbstractMesh abstract{mesh.axis_sizes(), mesh.axis_names(), mesh.axis_types(),
                        std::nullopt,      std::nullopt,      std::nullopt};
  if (!mesh.devices().empty()) {
    const Device& d = mesh.devices().front();
    abstract.device_kind = d.device_kind;
    abstract.platform = platform_name(d.platform);
    abstract.num_cores = d.num_cores;
  }
  return abstract;
}

}  // namespace shardscope
