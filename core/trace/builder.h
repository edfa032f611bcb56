// Builds jaxprs equation by equation: each bind runs the primitive's shape rule and records the equation.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace shardscope {

class JaxprBuilder {
 public:
  [[nodiscard]] Var arg(Aval aval);
  [[nodiscard]] Var constant(Aval aval);
  // Applies a registered primitive; raises the primitive's shape/dtype errors.
  std::vector<Atom> bind(const std::string& primitive, std::vector<Atom> inputs, Params params = {});
  Atom bind1(const std::string& primitive, std::vector<Atom> inputs, Params params = {});
  [[nodiscard]] JaxprPtr build(std::vector<Atom> outputs) const;
  // The equations and variables recorded so far (what an error raised mid-trace can explain).
  [[nodiscard]] const Jaxpr& so_far() const { return jaxpr_; }

 private:
  Jaxpr jaxpr_;
};

// Replays `jaxpr`'s equations into `builder` on `args` (shape rules rerun), returning its outputs;
// `args` may start with values for the constvars, else they become fresh constants of `builder`.
std::vector<Atom> inline_jaxpr(JaxprBuilder& builder, const Jaxpr& jaxpr, std::span<const Atom> args);

[[nodiscard]] Literal scalar_literal(double value, DType dtype, bool weak_type = true);

}  // namespace shardscope
