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

bool same_layouts(const LayoutMap& a, const LayoutMap& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second.layout == y.second.layout && x.second.closed == y.second.closed &&
           x.second.origin == y.second.origin && x.second.dim_sources == y.second.dim_sources;
  });
}

// What propagation reads besides the program, borrowed for lookups and copied into an entry on a miss.
struct LayoutProbe {
  const Mesh* mesh;
  const LayoutMap* known;
};

struct LayoutKey {
  explicit LayoutKey(const LayoutProbe& probe) : mesh(*probe.mesh), known(*probe.known) {}
  bool operator==(const LayoutProbe& probe) const { return same_layouts(known, *probe.known) && mesh == *probe.mesh; }
  Mesh mesh;
  LayoutMap known;
};

struct NoKey {
  bool operator==(const NoKey&) const = default;
};

// Enough for the programs a session alternates between; the least recently used entry goes first.
constexpr std::size_t kCacheEntries = 64;

}  // namespace

std::shared_ptr<const LayoutMap> cached_layouts(const Jaxpr& jaxpr, const Mesh& mesh, const LayoutMap& known) {
  static ProgramCache<LayoutKey, LayoutMap> cache(kCacheEntries);
  return cache.get(jaxpr, LayoutProbe{&mesh, &known}, [&] { return propagate_layouts(jaxpr, mesh, known); });
}

std::shared_ptr<const InlinedProgram> cached_inlined(const Jaxpr& jaxpr) {
  static ProgramCache<NoKey, InlinedProgram> cache(kCacheEntries);
  return cache.get(jaxpr, NoKey{}, [&] { return inline_calls(jaxpr); });
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
