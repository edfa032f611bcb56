// Variables and the primitive registry.
#include "ir/jaxpr.h"

#include <atomic>
#include <map>
#include <mutex>

#include "ir/primitive.h"

namespace shardscope {

const Aval& atom_aval(const Atom& atom) {
  return std::visit([](const auto& a) -> const Aval& { return a.aval; }, atom);
}

Var new_var(Aval aval) {
  static std::atomic<int64_t> next_id{1};
  return Var{next_id.fetch_add(1), std::move(aval)};
}

namespace {
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Primitive>> primitives;
};
Registry& registry() {
  static Registry instance;
  return instance;
}
}  // namespace

const Primitive* find_primitive(const std::string& name) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto it = r.primitives.find(name);
  return it == r.primitives.end() ? nullptr : it->second.get();
}

const Primitive& register_primitive(Primitive primitive) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  auto& slot = r.primitives[primitive.name];
  if (slot) {
    *slot = std::move(primitive);  // keep the address stable for equations already built
  } else {
    slot = std::make_unique<Primitive>(std::move(primitive));
  }
  return *slot;
}

std::vector<const Primitive*> all_primitives() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<const Primitive*> out;
  for (const auto& [name, p] : r.primitives) out.push_back(p.get());
  return out;
}

std::vector<Aval> outvar_avals(const Jaxpr& jaxpr) {
  std::vector<Aval> out;
  out.reserve(jaxpr.outvars.size());
  for (const Atom& atom : jaxpr.outvars) out.push_back(atom_aval(atom));
  return out;
}

}  // namespace shardscope
