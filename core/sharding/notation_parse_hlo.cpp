// HloSharding text back to a PartitionSpec: the tile assignment read in iota or explicit form, then the spec over
// the mesh's axes that gives it found by search.
#include <algorithm>
#include <functional>
#include <set>

#include "sharding/notation.h"
#include "sharding/notation_parse.h"
#include "sharding/notation_reader.h"

namespace shardscope {

using notation_detail::axes_list_text;
using notation_detail::closed;
using notation_detail::finish;
using notation_detail::Reader;

namespace {

// A tile assignment: tiles per dim (the replicated group last when `replicate`), and each tile's devices.
struct TileAssignment {
  std::vector<int64_t> tiles;
  std::vector<std::vector<int64_t>> groups;  // row-major over the array dims' tiles; each group sorted
};

// The devices of `order`-permuted iota over `reshape`, row-major: XLA's IotaTileAssignment.
std::vector<int64_t> iota_devices(const std::vector<int64_t>& reshape, const std::vector<int64_t>& perm,
                                  int64_t count) {
  std::vector<int64_t> strides(reshape.size(), 1);
  for (std::size_t a = reshape.size(); a-- > 1;) strides[a - 1] = strides[a] * reshape[a];
  std::vector<int64_t> counter(perm.size(), 0);
  std::vector<int64_t> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int64_t n = 0; n < count; ++n) {
    int64_t flat = 0;
    for (std::size_t k = 0; k < perm.size(); ++k) flat += counter[k] * strides[static_cast<std::size_t>(perm[k])];
    out.push_back(flat);
    for (std::size_t k = perm.size(); k-- > 0;) {
      if (++counter[k] < reshape[static_cast<std::size_t>(perm[k])]) break;
      counter[k] = 0;
    }
  }
  return out;
}

// Reads an HloSharding over `device_count` devices into its tiles over `rank` dims and their device groups.
TileAssignment read_hlo(Reader& reader, int64_t device_count, std::size_t rank) {
  (void)reader.eat("sharding=");
  reader.expect("{");
  TileAssignment out;
  if (reader.eat("replicated")) {
    reader.expect("}");
    reader.expect_end();
    out.tiles.assign(rank, 1);
    out.groups.emplace_back();
    for (int64_t d = 0; d < device_count; ++d) out.groups.back().push_back(d);
    return out;
  }
  if (reader.eat("maximal")) {
    if (device_count != 1)
      reader.fail("a maximal sharding puts the whole array on one device, which no spec over a mesh of " +
                  std::to_string(device_count) + " devices does");
    reader.expect("device");
    reader.expect("=");
    (void)reader.integer("device");
    reader.expect("}");
    reader.expect_end();
    out.tiles.assign(rank, 1);
    out.groups = {{0}};
    return out;
  }
  if (reader.eat("manual")) reader.fail("a manual sharding has no layout over the mesh");
  reader.expect("devices=");
  const std::vector<int64_t> tiles = reader.integer_list("[", "]", "tile count");
  if (tiles.empty()) reader.fail("no tile dims");
  int64_t total = 1;
  for (const int64_t t : tiles) {
    if (t < 1) reader.fail("a tile count of 0");
    if (t > device_count || total * t > device_count) {
      reader.fail("the tiles need more devices than the mesh's " + std::to_string(device_count));
    }
    total *= t;
  }
  std::vector<int64_t> devices;
  if (reader.eat("<=")) {
    const std::vector<int64_t> reshape = reader.integer_list("[", "]", "iota dim");
    int64_t iota_total = 1;
    for (const int64_t r : reshape) {
      if (r < 1 || r > device_count || iota_total * r > device_count) {
        reader.fail("the iota's dims do not multiply to the mesh's " + std::to_string(device_count) + " devices");
      }
      iota_total *= r;
    }
    std::vector<int64_t> perm(reshape.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    if (reader.eat("T")) {
      perm = reader.integer_list("(", ")", "transpose dim");
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (sorted.size() != reshape.size() || sorted[i] != static_cast<int64_t>(i)) {
          reader.fail("the transpose is not a permutation of the iota's " + std::to_string(reshape.size()) + " dims");
        }
      }
    }
    if (iota_total != total) {
      reader.fail("the iota has " + std::to_string(iota_total) + " devices but the tiles need " +
                  std::to_string(total));
    }
    devices = iota_devices(reshape, perm, total);
  } else {
    std::set<int64_t> seen;
    do {
      const int64_t device = reader.integer("device number");
      if (device >= device_count) {
        reader.fail("device " + std::to_string(device) + " is not in the mesh's " + std::to_string(device_count) +
                    " devices");
      }
      if (!seen.insert(device).second) reader.fail("device " + std::to_string(device) + " appears twice");
      devices.push_back(device);
    } while (reader.eat(","));
    if (static_cast<int64_t>(devices.size()) != total) {
      reader.fail(std::to_string(devices.size()) + " devices listed but the tiles need " + std::to_string(total));
    }
  }
  bool replicate = false;
  if (reader.eat("last_tile_dim_replicate")) {
    replicate = true;
  } else if (reader.eat("last_tile_dims")) {
    reader.expect("=");
    reader.expect("{");
    if (!reader.eat("replicated")) reader.fail_here("only last_tile_dims={replicated} has a layout over the mesh");
    reader.expect("}");
    replicate = true;
  }
  reader.expect("}");
  reader.expect_end();
  if (total != device_count) {
    reader.fail("the tiles cover " + std::to_string(total) + " devices but the mesh has " +
                std::to_string(device_count));
  }
  const std::size_t dims = tiles.size() - (replicate ? 1 : 0);
  if (dims != rank) {
    reader.fail(std::to_string(dims) + (dims == 1 ? " tiled dim" : " tiled dims") + " for an array of rank " +
                std::to_string(rank));
  }
  const int64_t group = replicate ? tiles.back() : 1;
  out.tiles.assign(tiles.begin(), tiles.begin() + static_cast<std::ptrdiff_t>(dims));
  for (std::size_t start = 0; start < devices.size(); start += static_cast<std::size_t>(group)) {
    std::vector<int64_t> members(devices.begin() + static_cast<std::ptrdiff_t>(start),
                                 devices.begin() + static_cast<std::ptrdiff_t>(start) + group);
    std::sort(members.begin(), members.end());
    out.groups.push_back(std::move(members));
  }
  return out;
}

// The tile assignment of a candidate layout, read back from the formatter's explicit form.
TileAssignment candidate_assignment(const Mesh& mesh, const std::vector<std::vector<std::string>>& dims) {
  const std::string text = hlo_sharding_notation(mesh, dims, false);
  Reader reader("HloSharding", text);
  return read_hlo(reader, mesh.size(), dims.size());
}

}  // namespace

PartitionSpec parse_hlo_sharding(std::string_view text, const Mesh& mesh, std::size_t rank) {
  Reader reader("HloSharding", text);
  if (reader.at_end()) reader.fail("the text is empty");
  const TileAssignment wanted = read_hlo(reader, mesh.size(), rank);
  // Each dim takes, in order, distinct mesh axes whose sizes multiply to its tile count. Size-1 axes change no
  // device's place, so they stay out of the spec.
  std::vector<std::string> axes;
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    if (mesh.axis_sizes()[a] > 1) axes.push_back(mesh.axis_names()[a]);
  }
  std::vector<std::vector<std::string>> dims(rank);
  std::vector<bool> used(axes.size(), false);
  std::optional<std::vector<std::vector<std::string>>> found;
  // A dim's axes are checked as soon as they are chosen, so the search stays small on meshes of many axes: along
  // the dim (other dims at tile 0), each tile's lowest device is the position its axes' coordinates give.
  std::vector<int64_t> tile_strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) tile_strides[d - 1] = tile_strides[d] * wanted.tiles[d];
  const auto dim_fits = [&](std::size_t d) {
    for (int64_t i = 0; i < wanted.tiles[d]; ++i) {
      int64_t rest = i;
      int64_t position = 0;
      for (std::size_t k = dims[d].size(); k-- > 0;) {
        const std::size_t axis = *mesh.axis_index(dims[d][k]);
        const int64_t size = mesh.axis_sizes()[axis];
        int64_t stride = 1;
        for (std::size_t b = axis + 1; b < mesh.axis_sizes().size(); ++b) stride *= mesh.axis_sizes()[b];
        position += (rest % size) * stride;
        rest /= size;
      }
      if (wanted.groups[static_cast<std::size_t>(i * tile_strides[d])].front() != position) return false;
    }
    return true;
  };
  std::function<void(std::size_t, int64_t)> place = [&](std::size_t d, int64_t left) {
    if (found) return;
    if (d == rank) {
      if (candidate_assignment(mesh, dims).groups == wanted.groups) found = dims;
      return;
    }
    if (left == 1) {
      if (dim_fits(d)) place(d + 1, d + 1 < rank ? wanted.tiles[d + 1] : 1);
      return;
    }
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const int64_t size = mesh.axis_size(axes[a]);
      if (used[a] || left % size != 0) continue;
      used[a] = true;
      dims[d].push_back(axes[a]);
      place(d, left / size);
      dims[d].pop_back();
      used[a] = false;
    }
  };
  place(0, rank > 0 ? wanted.tiles[0] : 1);
  if (!found) {
    reader.fail("no PartitionSpec over the mesh's axes " + axes_list_text(mesh) +
                " puts the same devices on each tile");
  }
  return finish(reader, closed(*found), {}, rank);
}

}  // namespace shardscope
