// The physical TPU torus and the mapping of logical mesh axes onto its axes, as jax._src.mesh_utils does it.
#include "mesh/tpu_axis_assignment.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {

constexpr const char* kTpuV2 = "TPU v2";
constexpr const char* kTpuV3 = "TPU v3";
constexpr const char* kTpuV5 = "TPU v5";
constexpr const char* kTpuV5p = "TPU v5p";
constexpr const char* kTpu7x = "TPU7x";
constexpr const char* kTpu7 = "TPU7";
constexpr const char* kTpu8i = "TPU8i";

std::string device_list_repr(const std::vector<Device>& devices) {
  std::vector<std::string> reprs;
  reprs.reserve(devices.size());
  for (const Device& d : devices) reprs.push_back(device_repr(d));
  return python_list(reprs);
}

// numpy's shape text in reshape errors has no spaces: (2,4) or (8,).
std::string numpy_shape_text(const std::vector<int64_t>& shape) {
  std::vector<std::string> items;
  items.reserve(shape.size());
  for (const int64_t v : shape) items.push_back(std::to_string(v));
  if (items.size() == 1) return "(" + items[0] + ",)";
  return "(" + join(items, ",") + ")";
}

// numpy refuses more than one negative ("unknown") dimension before anything else; with the
// product already equal to the device count, any negative size means at least two of them.
void check_reshape(int64_t element_count, const std::vector<int64_t>& shape) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t v) { return v < 0; })) {
    throw value_error("can only specify one unknown dimension");
  }
  if (product(shape) != element_count) {
    throw value_error("cannot reshape array of size " + std::to_string(element_count) + " into shape " +
                      numpy_shape_text(shape));
  }
}

std::size_t to_index(int64_t value) { return static_cast<std::size_t>(value); }

// Row-major flat index of `position` within `shape`.
std::size_t flat_index(const std::vector<int64_t>& shape, const std::vector<int64_t>& position) {
  std::size_t index = 0;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    index = index * to_index(shape[axis]) + to_index(position[axis]);
  }
  return index;
}

// Calls visit(combination) for every k-subset of {0..n-1} in itertools.combinations order; stops
// early when visit returns true.
template <typename Visit>
bool for_each_combination(std::size_t n, std::size_t k, Visit&& visit) {
  if (k > n) return false;
  std::vector<std::size_t> chosen(k);
  for (std::size_t i = 0; i < k; ++i) chosen[i] = i;
  while (true) {
    if (visit(chosen)) return true;
    std::size_t i = k;
    while (i > 0 && chosen[i - 1] == i - 1 + n - k) --i;
    if (i == 0) return false;
    ++chosen[i - 1];
    for (std::size_t j = i; j < k; ++j) chosen[j] = chosen[j - 1] + 1;
  }
}

// Calls visit(point) for every integer point with 0 <= point[i] <= upper[i] (once for an empty box
// of rank 0).
template <typename Visit>
void for_each_in_box(const std::vector<int64_t>& upper, Visit&& visit) {
  std::vector<int64_t> point(upper.size(), 0);
  while (true) {
    visit(point);
    std::size_t axis = upper.size();
    while (axis > 0 && point[axis - 1] == upper[axis - 1]) point[--axis] = 0;
    if (axis == 0) return;
    ++point[axis - 1];
  }
}

int64_t multiplicity(int64_t value, int64_t prime) {
  int64_t count = 0;
  while (value % prime == 0) {
    value /= prime;
    ++count;
  }
  return count;
}

int64_t power(int64_t base, int64_t exponent) {
  int64_t result = 1;
  for (int64_t i = 0; i < exponent; ++i) result *= base;
  return result;
}

}  // namespace

PhysicalTpuMesh physical_tpu_mesh(const std::vector<Device>& devices) {
  if (devices.empty()) throw Error("IndexError", "list index out of range");
  const std::string& device_kind = devices.front().device_kind;

  std::vector<int64_t> min_coords(3, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> max_coords(3, std::numeric_limits<int64_t>::min());
  int min_core = std::numeric_limits<int>::max();
  int max_core = std::numeric_limits<int>::min();
  for (const Device& d : devices) {
    for (std::size_t i = 0; i < 3; ++i) {
      min_coords[i] = std::min<int64_t>(min_coords[i], d.coords[i]);
      max_coords[i] = std::max<int64_t>(max_coords[i], d.coords[i]);
    }
    min_core = std::min(min_core, d.core_on_chip);
    max_core = std::max(max_core, d.core_on_chip);
  }
  std::vector<int64_t> dims(3);
  for (std::size_t i = 0; i < 3; ++i) dims[i] = max_coords[i] - min_coords[i] + 1;
  const int64_t cores_per_chip = int64_t{max_core} - min_core + 1;

  if (static_cast<int64_t>(devices.size()) != product(dims) * cores_per_chip) {
    throw Error("AssertionError", "jax_devices=" + device_list_repr(devices) + " dims=" + python_int_tuple(dims) +
                                      " cores_per_chip=" + std::to_string(cores_per_chip));
  }

  auto chip_position = [&](const Device& d, std::size_t axes) {
    std::vector<int64_t> position;
    for (std::size_t i = 0; i < axes; ++i) position.push_back(d.coords[i] - min_coords[i]);
    return position;
  };

  PhysicalTpuMesh mesh;
  std::vector<std::optional<Device>> slots;
  auto place = [&](const Device& d, const std::vector<int64_t>& position) {
    slots[flat_index(mesh.shape, position)] = d;
  };

  if (device_kind == kTpuV2 || device_kind == kTpuV3) {
    // v2/v3 slices are flat (z is always 0), so the third axis holds each chip's cores instead.
    mesh.shape = {dims[0], dims[1], cores_per_chip};
    slots.resize(to_index(product(mesh.shape)));
    for (const Device& d : devices) {
      if (d.coords[2] != 0) throw Error("AssertionError", device_str(d, JaxProfile{}));
      std::vector<int64_t> position = chip_position(d, 2);
      position.push_back(d.core_on_chip - min_core);
      place(d, position);
    }
  } else if (device_kind == kTpu7x || device_kind == kTpu7 || device_kind == kTpu8i ||
             ((device_kind == kTpuV5p || device_kind == kTpuV5) && cores_per_chip == 2)) {
    mesh.shape = {dims[0], dims[1], dims[2], cores_per_chip};
    slots.resize(to_index(product(mesh.shape)));
    for (const Device& d : devices) {
      std::vector<int64_t> position = chip_position(d, 3);
      position.push_back(d.core_on_chip - min_core);
      place(d, position);
    }
  } else {
    mesh.shape = dims;
    slots.resize(to_index(product(mesh.shape)));
    for (const Device& d : devices) {
      if (d.core_on_chip != 0) {
        throw Error("AssertionError",
                    "Creating meshes for TPU >v3 requires one device per chip (\"megacore\" mode). Got device id " +
                        std::to_string(d.core_on_chip) + " for a device of kind " + device_kind + ": " +
                        device_str(d, JaxProfile{}) + ".");
      }
      place(d, chip_position(d, 3));
    }
  }

  mesh.devices.reserve(slots.size());
  for (const std::optional<Device>& slot : slots) {
    if (!slot) {
      throw Error("AssertionError",
                  "Constructed mesh contains a \"hole\"; probable cause: coordinates of jax_devices are not a "
                  "contiguous cuboid: " +
                      device_list_repr(devices));
    }
    mesh.devices.push_back(*slot);
  }
  return mesh;
}

std::vector<int64_t> transposed_indices(const std::vector<int64_t>& shape, const std::vector<std::size_t>& axes) {
  const std::size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (std::size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  std::vector<int64_t> out_shape(rank);
  for (std::size_t i = 0; i < rank; ++i) out_shape[i] = shape[axes[i]];

  std::vector<int64_t> result;
  const int64_t total = product(shape);
  if (total <= 0) return result;
  result.reserve(to_index(total));
  std::vector<int64_t> position(rank, 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t source = 0;
    for (std::size_t i = 0; i < rank; ++i) source += position[i] * strides[axes[i]];
    result.push_back(source);
    for (std::size_t i = rank; i-- > 0;) {
      if (++position[i] < out_shape[i]) break;
      position[i] = 0;
    }
  }
  return result;
}

TorusAssignment assign_logical_axes_to_torus(const std::vector<int64_t>& physical_shape,
                                             const std::vector<int64_t>& mesh_shape, bool allow_split_physical_axes) {
  const std::size_t physical_rank = physical_shape.size();
  // Assigned physical axes read as size 0 so that no later product can match them.
  std::vector<int64_t> assignable = physical_shape;
  std::vector<std::vector<std::size_t>> assigned_axes(mesh_shape.size());

  for (std::size_t logical_axis = mesh_shape.size(); logical_axis-- > 0;) {
    const int64_t logical_size = mesh_shape[logical_axis];
    bool found = false;
    // More physical axes first: they give the logical axis more links.
    for (std::size_t subset_size = physical_rank; subset_size >= 1 && !found; --subset_size) {
      found = for_each_combination(physical_rank, subset_size, [&](const std::vector<std::size_t>& subset) {
        int64_t size = 1;
        for (const std::size_t axis : subset) size *= assignable[axis];
        if (size != logical_size) return false;
        assigned_axes[logical_axis] = subset;
        for (const std::size_t axis : subset) assignable[axis] = 0;
        return true;
      });
    }
    if (found || logical_size <= 1) continue;
    if (!allow_split_physical_axes) {
      std::vector<std::string> remaining;
      remaining.reserve(assignable.size());
      for (const int64_t v : assignable) remaining.push_back(std::to_string(v));
      // The doubled space before "allow_split" is JAX's.
      throw not_implemented_error(
          "Failed to find assignment for logical_axis_index " + std::to_string(logical_axis) + " of size " +
          std::to_string(logical_size) + " with remaining assignable mesh " + python_list(remaining) +
          ". The size of each axis in your logical mesh must be equal to the product of some subset of the physical "
          "mesh axis sizes. E.g. logical mesh (4, 16) is compatible with physical mesh 4x4x4 since 4=4 and 16=4x4. "
          "If you want to split physical axes, set  allow_split_physical_axes to True.");
    }
    return assign_logical_axes_splitting_physical(physical_shape, mesh_shape);
  }

  TorusAssignment result;
  result.matrix.assign(physical_rank, std::vector<int64_t>(mesh_shape.size(), 1));
  std::vector<std::size_t> transpose;
  for (std::size_t logical_axis = 0; logical_axis < mesh_shape.size(); ++logical_axis) {
    for (const std::size_t physical_axis : assigned_axes[logical_axis]) {
      result.matrix[physical_axis][logical_axis] = physical_shape[physical_axis];
      transpose.push_back(physical_axis);
    }
  }
  if (transpose.size() != physical_rank) throw value_error("axes don't match array");
  result.physical_index = transposed_indices(physical_shape, transpose);
  check_reshape(product(physical_shape), mesh_shape);
  return result;
}

std::vector<int64_t> prime_factors(int64_t value) {
  if (value <= 0) throw Error("AssertionError", "");
  std::vector<int64_t> factors;
  for (int64_t p = 2; p * p <= value; ++p) {
    while (value % p == 0) {
      factors.push_back(p);
      value /= p;
    }
  }
  if (value > 1) factors.push_back(value);
  return factors;
}

std::vector<std::vector<int64_t>> feasible_logical_axis_assignments(
    const std::vector<int64_t>& physical_shape, const std::vector<int64_t>& assigned_per_physical_axis,
    int64_t logical_axis_size) {
  const std::size_t rank = physical_shape.size();
  std::vector<int64_t> available(rank);
  for (std::size_t i = 0; i < rank; ++i) available[i] = physical_shape[i] / assigned_per_physical_axis[i];

  // Distinct primes of the logical size with how often each occurs.
  std::vector<std::pair<int64_t, int64_t>> prime_counts;
  for (const int64_t p : prime_factors(logical_axis_size)) {
    if (!prime_counts.empty() && prime_counts.back().first == p) {
      ++prime_counts.back().second;
    } else {
      prime_counts.emplace_back(p, 1);
    }
  }

  // Per prime, every way to spread its count over the physical axes within their capacity for it,
  // as the power of the prime each axis receives.
  std::vector<std::vector<std::vector<int64_t>>> spreads_per_prime;
  for (const auto& prime_count : prime_counts) {
    const int64_t prime = prime_count.first;
    const int64_t count = prime_count.second;
    std::vector<int64_t> capacity(rank);
    for (std::size_t i = 0; i < rank; ++i) capacity[i] = available[i] > 0 ? multiplicity(available[i], prime) : 0;
    std::vector<std::vector<int64_t>> spreads;
    for_each_in_box(capacity, [&](const std::vector<int64_t>& exponents) {
      if (std::accumulate(exponents.begin(), exponents.end(), int64_t{0}) == count) spreads.push_back(exponents);
    });
    spreads_per_prime.push_back(std::move(spreads));
  }

  // One candidate per choice of spread for every prime.
  std::vector<int64_t> last_choice;
  last_choice.reserve(spreads_per_prime.size());
  for (const auto& spreads : spreads_per_prime) {
    if (spreads.empty()) return {};
    last_choice.push_back(static_cast<int64_t>(spreads.size()) - 1);
  }
  std::vector<std::vector<int64_t>> candidates;
  for_each_in_box(last_choice, [&](const std::vector<int64_t>& choice) {
    std::vector<int64_t> sizes(rank, 1);
    for (std::size_t prime_index = 0; prime_index < choice.size(); ++prime_index) {
      const std::vector<int64_t>& exponents = spreads_per_prime[prime_index][to_index(choice[prime_index])];
      for (std::size_t i = 0; i < rank; ++i) sizes[i] *= power(prime_counts[prime_index].first, exponents[i]);
    }
    candidates.push_back(std::move(sizes));
  });
  return candidates;
}

bool prefer_first_logical_axis_assignment(const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                                          const std::vector<int64_t>& physical_shape,
                                          const std::vector<int64_t>& assigned_per_physical_axis) {
  auto whole_axes_size = [&](const std::vector<int64_t>& c) {
    int64_t size = 1;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (c[i] == physical_shape[i]) size *= c[i];
    }
    return size;
  };
  auto whole_axes_count = [&](const std::vector<int64_t>& c) {
    int64_t count = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (c[i] == physical_shape[i] && c[i] > 1) ++count;
    }
    return count;
  };
  // JAX's comment says this criterion avoids axes already used by more intensive logical axes, but
  // its code prefers the larger product on them; the code decides the meshes, so follow it.
  auto size_on_used_axes = [&](const std::vector<int64_t>& c) {
    int64_t size = 1;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (assigned_per_physical_axis[i] > 1) size *= c[i];
    }
    return size;
  };
  if (whole_axes_size(first) != whole_axes_size(second)) return whole_axes_size(first) > whole_axes_size(second);
  if (whole_axes_count(first) != whole_axes_count(second)) return whole_axes_count(first) > whole_axes_count(second);
  if (size_on_used_axes(first) != size_on_used_axes(second)) {
    return size_on_used_axes(first) > size_on_used_axes(second);
  }
  return first > second;
}

TorusAssignment assign_logical_axes_splitting_physical(const std::vector<int64_t>& physical_shape,
                                                       const std::vector<int64_t>& mesh_shape) {
  if (product(physical_shape) != product(mesh_shape)) {
    throw value_error("The number of devices in physical mesh " + python_int_tuple(physical_shape) +
                      " does not match the number of devices in logical mesh " + python_int_tuple(mesh_shape) + ".");
  }
  const std::size_t physical_rank = physical_shape.size();
  TorusAssignment result;
  result.matrix.assign(physical_rank, std::vector<int64_t>(mesh_shape.size(), 1));
  std::vector<int64_t> assigned_per_physical_axis(physical_rank, 1);

  for (std::size_t logical_axis = mesh_shape.size(); logical_axis-- > 0;) {
    std::optional<std::vector<int64_t>> best;
    for (std::vector<int64_t>& candidate :
         feasible_logical_axis_assignments(physical_shape, assigned_per_physical_axis, mesh_shape[logical_axis])) {
      if (!best || prefer_first_logical_axis_assignment(candidate, *best, physical_shape, assigned_per_physical_axis)) {
        best = std::move(candidate);
      }
    }
    // Matching device counts leave every prime of every logical axis a place, so this cannot fail;
    // numpy would reject storing None here.
    if (!best)
      throw type_error("int() argument must be a string, a bytes-like object or a real number, not 'NoneType'");
    for (std::size_t p = 0; p < physical_rank; ++p) {
      result.matrix[p][logical_axis] = (*best)[p];
      assigned_per_physical_axis[p] *= (*best)[p];
    }
  }
  result.physical_index = logical_mesh_from_assignment(physical_shape, mesh_shape, result.matrix);
  return result;
}

std::vector<int64_t> logical_mesh_from_assignment(const std::vector<int64_t>& physical_shape,
                                                  const std::vector<int64_t>& logical_shape,
                                                  const AxisAssignmentMatrix& matrix) {
  const std::size_t physical_rank = matrix.size();
  const std::size_t logical_rank = physical_rank == 0 ? 0 : matrix.front().size();
  std::vector<int64_t> factor_shape;
  for (const std::vector<int64_t>& row : matrix) factor_shape.insert(factor_shape.end(), row.begin(), row.end());
  check_reshape(product(physical_shape), factor_shape);
  // Factor axes are numbered physical-major; regroup them logical-major, physical order within.
  std::vector<std::size_t> axes;
  for (std::size_t l = 0; l < logical_rank; ++l) {
    for (std::size_t p = 0; p < physical_rank; ++p) axes.push_back(p * logical_rank + l);
  }
  std::vector<int64_t> order = transposed_indices(factor_shape, axes);
  check_reshape(product(physical_shape), logical_shape);
  return order;
}

}  // namespace shardscope
