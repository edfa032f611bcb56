// The notations of one sharding: the scaling book's subscripts, Shardy's attribute and XLA's HloSharding text.
#include "sharding/notation.h"

#include <algorithm>
#include <numeric>

#include "base/python_format.h"

namespace shardscope {
namespace {

std::string quoted_axes(const std::vector<std::string>& axes) {
  std::vector<std::string> quoted;
  for (const std::string& axis : axes) quoted.push_back("\"" + axis + "\"");
  return "{" + join(quoted, ", ") + "}";
}

// "X", "{XY}" for one-letter axes, "{data,model}" otherwise.
std::string subscript(const std::vector<std::string>& axes) {
  if (axes.size() == 1) return axes.front().size() == 1 ? axes.front() : "{" + axes.front() + "}";
  const bool letters = std::all_of(axes.begin(), axes.end(), [](const std::string& a) { return a.size() == 1; });
  return "{" + join(axes, letters ? "" : ",") + "}";
}

std::string dim_letter(std::size_t d) {
  // I, J, K, L, M, N, O, then P onwards; past Z, I1, J1, ...
  constexpr std::string_view kLetters = "IJKLMNOPQRSTUVWXYZ";
  std::string letter(1, kLetters[d % kLetters.size()]);
  if (d >= kLetters.size()) letter += std::to_string(d / kLetters.size());
  return letter;
}

}  // namespace

std::vector<std::vector<std::string>> spec_dim_axes(const PartitionSpec& spec, std::size_t rank) {
  std::vector<std::vector<std::string>> out(std::max(rank, spec.size()));
  for (std::size_t d = 0; d < spec.size(); ++d) {
    if (spec.entries()[d].kind == SpecEntry::Kind::kAxes) out[d] = spec.entries()[d].axes;
  }
  return out;
}

std::string book_notation(const std::vector<std::vector<std::string>>& dim_axes,
                          const std::vector<std::string>& unreduced, const std::string& array_name) {
  std::vector<std::string> dims;
  for (std::size_t d = 0; d < dim_axes.size(); ++d) {
    dims.push_back(dim_letter(d) + (dim_axes[d].empty() ? "" : "_" + subscript(dim_axes[d])));
  }
  std::string out = array_name + "[" + join(dims, ", ") + "]";
  if (!unreduced.empty()) out += "{U_" + subscript(unreduced) + "}";
  return out;
}

std::string shardy_notation(const std::vector<std::vector<std::string>>& dim_axes,
                            const std::vector<std::string>& unreduced, const std::string& mesh_name) {
  std::vector<std::string> dims;
  for (const auto& axes : dim_axes) dims.push_back(quoted_axes(axes));
  std::string out = "#sdy.sharding<@" + mesh_name + ", [" + join(dims, ", ") + "]";
  if (!unreduced.empty()) out += ", unreduced=" + quoted_axes(unreduced);
  return out + ">";
}

std::string shardy_mesh_notation(const Mesh& mesh, const std::string& mesh_name) {
  std::vector<std::string> axes;
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    axes.push_back("\"" + mesh.axis_names()[a] + "\"=" + std::to_string(mesh.axis_sizes()[a]));
  }
  return "sdy.mesh @" + mesh_name + " = <[" + join(axes, ", ") + "]>";
}

std::string hlo_sharding_notation(const Mesh& mesh, const std::vector<std::vector<std::string>>& dim_axes, bool iota) {
  const std::vector<int64_t>& sizes = mesh.axis_sizes();
  std::vector<int64_t> tiles;
  std::vector<std::size_t> order;  // mesh axes: the tiled dims' axes first, then the replicated ones
  int64_t tiled = 1;
  for (const auto& axes : dim_axes) {
    int64_t t = 1;
    for (const std::string& axis : axes) {
      t *= mesh.axis_size(axis);
      order.push_back(*mesh.axis_index(axis));
    }
    tiles.push_back(t);
    tiled *= t;
  }
  if (tiled == 1) return "{replicated}";
  for (std::size_t a = 0; a < sizes.size(); ++a) {
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  }
  const int64_t replication = mesh.size() / tiled;
  std::vector<std::string> dims;
  for (const int64_t t : tiles) dims.push_back(std::to_string(t));
  if (replication > 1) dims.push_back(std::to_string(replication));
  const std::string suffix = replication > 1 ? " last_tile_dim_replicate}" : "}";
  const std::string head = "{devices=[" + join(dims, ",") + "]";
  if (iota) {
    // The tile assignment is the mesh's iota with its axes transposed into `order`. Size-1 axes drop out, and
    // axes that stay neighbours in the same order merge, as XLA canonicalises the reshape dims.
    std::vector<int64_t> reshape;
    std::vector<int64_t> perm;
    std::vector<std::size_t> kept;  // mesh axes of size > 1, in mesh order
    for (std::size_t a = 0; a < sizes.size(); ++a) {
      if (sizes[a] > 1) kept.push_back(a);
    }
    std::vector<std::size_t> kept_order;
    for (const std::size_t a : order) {
      if (sizes[a] > 1) kept_order.push_back(a);
    }
    // Merge runs of consecutive mesh axes that appear consecutively in kept_order.
    std::vector<std::vector<std::size_t>> groups;  // in kept_order, each a run of consecutive kept axes
    for (std::size_t i = 0; i < kept_order.size(); ++i) {
      const std::size_t at =
          static_cast<std::size_t>(std::find(kept.begin(), kept.end(), kept_order[i]) - kept.begin());
      if (!groups.empty()) {
        const std::size_t last = groups.back().back();
        const std::size_t last_at = static_cast<std::size_t>(std::find(kept.begin(), kept.end(), last) - kept.begin());
        if (at == last_at + 1) {
          groups.back().push_back(kept_order[i]);
          continue;
        }
      }
      groups.push_back({kept_order[i]});
    }
    // The groups in mesh order give the reshape dims; their positions in kept_order give the permutation.
    std::vector<std::size_t> by_mesh(groups.size());
    std::iota(by_mesh.begin(), by_mesh.end(), 0);
    std::sort(by_mesh.begin(), by_mesh.end(),
              [&](std::size_t x, std::size_t y) { return groups[x].front() < groups[y].front(); });
    for (const std::size_t g : by_mesh) {
      int64_t size = 1;
      for (const std::size_t a : groups[g]) size *= sizes[a];
      reshape.push_back(size);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
      perm.push_back(std::find(by_mesh.begin(), by_mesh.end(), g) - by_mesh.begin());
    }
    bool identity = true;
    for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (identity) return head + "<=[" + std::to_string(mesh.size()) + "]" + suffix;
    std::vector<std::string> reshape_text;
    std::vector<std::string> perm_text;
    for (const int64_t r : reshape) reshape_text.push_back(std::to_string(r));
    for (const int64_t p : perm) perm_text.push_back(std::to_string(p));
    return head + "<=[" + join(reshape_text, ",") + "]T(" + join(perm_text, ",") + ")" + suffix;
  }
  // Walk the mesh with its axes permuted into `order`, row-major, listing each position's flat index.
  std::vector<int64_t> strides(sizes.size(), 1);
  for (std::size_t a = sizes.size(); a-- > 1;) strides[a - 1] = strides[a] * sizes[a];
  std::vector<int64_t> counter(order.size(), 0);
  std::vector<std::string> ids;
  for (int64_t n = 0; n < mesh.size(); ++n) {
    int64_t flat = 0;
    for (std::size_t k = 0; k < order.size(); ++k) flat += counter[k] * strides[order[k]];
    ids.push_back(std::to_string(flat));
    for (std::size_t k = order.size(); k-- > 0;) {
      if (++counter[k] < sizes[order[k]]) break;
      counter[k] = 0;
    }
  }
  return head + join(ids, ",") + suffix;
}

ShardingNotations sharding_notations(const NamedSharding& sharding, std::size_t rank, const JaxProfile& profile) {
  const auto dims = spec_dim_axes(sharding.spec, rank);
  const std::vector<std::string>& unreduced = sharding.spec.unreduced();
  ShardingNotations out;
  out.spec = sharding.spec.repr(profile);
  out.book = book_notation(dims, unreduced);
  out.shardy = shardy_notation(dims, unreduced);
  out.shardy_mesh = shardy_mesh_notation(sharding.mesh);
  // XLA prints tile assignments as iotas since the jaxlib that shipped with JAX 0.4.16.
  out.hlo = hlo_sharding_notation(sharding.mesh, dims, profile.version() >= JaxVersion{0, 4, 16});
  return out;
}

std::string notations_text(const ShardingNotations& notations) {
  return "# shardscope notations (beyond JAX)\n"
         "JAX spec:      " +
         notations.spec +
         "\n"
         "scaling book:  " +
         notations.book +
         "\n"
         "Shardy:        " +
         notations.shardy +
         "\n"
         "               " +
         notations.shardy_mesh +
         "\n"
         "HloSharding:   " +
         notations.hlo + "\n";
}

}  // namespace shardscope
