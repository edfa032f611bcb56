// Structural equality of programs for the caches.
#include "exec/program_cache.h"

#include <algorithm>

namespace shardscope {
namespace {

bool same_var(const Var& a, const Var& b) { return a.id == b.id && a.aval == b.aval; }

bool same_atom(const Atom& a, const Atom& b) {
  if (a.index() != b.index()) return false;
  if (const auto* var = std::get_if<Var>(&a)) return same_var(*var, std::get<Var>(b));
  return std::get<Literal>(a) == std::get<Literal>(b);
}

template <typename T, typename Equal>
bool same_list(const std::vector<T>& a, const std::vector<T>& b, Equal equal) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), equal);
}

bool same_eqn(const Eqn& a, const Eqn& b) {
  return a.primitive == b.primitive && same_list(a.inputs, b.inputs, same_atom) &&
         same_list(a.outputs, b.outputs, same_var) && a.params == b.params;
}

struct LayoutKey {
  Mesh mesh;
  LayoutMap known;
  bool operator==(const LayoutKey& other) const {
    return mesh == other.mesh && std::equal(known.begin(), known.end(), other.known.begin(), other.known.end(),
                                            [](const auto& a, const auto& b) {
                                              return a.first == b.first && a.second.layout == b.second.layout &&
                                                     a.second.closed == b.second.closed;
                                            });
  }
};

struct NoKey {
  bool operator==(const NoKey&) const = default;
};

// Enough for the programs a session alternates between; the least recently used entry goes first.
constexpr std::size_t kCacheEntries = 64;

}  // namespace

std::shared_ptr<const LayoutMap> cached_layouts(const Jaxpr& jaxpr, const Mesh& mesh, const LayoutMap& known) {
  static ProgramCache<LayoutKey, LayoutMap> cache(kCacheEntries);
  return cache.get(jaxpr, LayoutKey{mesh, known}, [&] { return propagate_layouts(jaxpr, mesh, known); });
}

std::shared_ptr<const std::vector<FusionGroup>> cached_fusion_plan(const Jaxpr& jaxpr) {
  static ProgramCache<NoKey, std::vector<FusionGroup>> cache(kCacheEntries);
  return cache.get(jaxpr, NoKey{}, [&] { return plan_fusion(jaxpr); });
}

bool same_program(const Jaxpr& a, const Jaxpr& b) {
  if (&a == &b) return true;
  return same_list(a.invars, b.invars, same_var) && same_list(a.constvars, b.constvars, same_var) &&
         same_list(a.outvars, b.outvars, same_atom) && same_list(a.eqns, b.eqns, same_eqn);
}

}  // namespace shardscope
