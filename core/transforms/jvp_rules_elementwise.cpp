// JVP rules of the elementwise primitives, following the derivative each lax primitive registers in JAX.
#include <cmath>
#include <numbers>

#include "compat/jax_version.h"
#include "transforms/autodiff_internal.h"

namespace shardscope::ad {
namespace {

// The derivative of one operand: (builder, g, primals, ans, params) -> tangent contribution.
using PartialRule =
    std::function<Atom(JaxprBuilder&, const Atom& g, std::span<const Atom> x, const Atom& ans, const Params&)>;

// JAX's defjvp/defjvp2: one rule per operand, contributions summed with add_any in operand order;
// operands with symbolic-zero tangents (or no rule) contribute nothing.
void defjvp(const std::string& name, std::vector<PartialRule> partials) {
  register_jvp_rule(name, single_output_jvp(name, [partials](JaxprBuilder& b, std::span<const Atom> x,
                                                             std::span<const std::optional<Atom>> t, const Atom& ans,
                                                             const Params& params) {
                      std::optional<Atom> total;
                      for (std::size_t i = 0; i < partials.size() && i < t.size(); ++i) {
                        if (!t[i] || !partials[i]) continue;
                        total = add_tangents(b, total, partials[i](b, *t[i], x, ans, params));
                      }
                      return total;
                    }));
}

void defjvp1(const std::string& name, PartialRule rule) { defjvp(name, {std::move(rule)}); }

Params accuracy_of(const Params& params) {
  const ParamValue* accuracy = find_param(params, "accuracy");
  return {{"accuracy", accuracy != nullptr ? *accuracy : ParamValue::None{}}};
}

const Aval& av(const Atom& atom) { return atom_aval(atom); }

// select(pred, on_true, on_false) as lax.select spells it.
Atom select(JaxprBuilder& b, const Atom& pred, const Atom& on_true, const Atom& on_false) {
  return select_n(b, pred, {on_false, on_true});
}

// lax._balanced_eq: 1 where x attains z, halved where y ties it.
Atom balanced_eq(JaxprBuilder& b, const Atom& x, const Atom& z, const Atom& y) {
  const Aval& za = av(z);
  const Atom num = select(b, compare(b, "eq", x, z), full_like(b, za, 1), full_like(b, za, 0));
  const Atom den = select(b, compare(b, "eq", y, z), full_like(b, za, 2), full_like(b, za, 1));
  return div(b, num, den);
}

void register_unary_calculus() {
  defjvp1("exp", [](JaxprBuilder& b, const Atom& g, auto, const Atom& ans, const Params&) { return mul(b, g, ans); });
  defjvp1("exp2", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    return mul(b, unary_accurate(b, "log", const_like(av(x[0]), 2)), mul(b, g, ans));
  });
  defjvp1("log", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) { return div(b, g, x[0]); });
  defjvp1("log1p", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return div(b, g, add(b, x[0], scalar_literal(1, av(x[0]).dtype, av(x[0]).weak_type)));
  });
  defjvp1("expm1", [](JaxprBuilder& b, const Atom& g, auto, const Atom& ans, const Params&) {
    return mul(b, g, add(b, ans, scalar_literal(1, av(ans).dtype, av(ans).weak_type)));
  });
  defjvp1("tanh", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    const Atom one = scalar_literal(1, av(x[0]).dtype, av(x[0]).weak_type);
    // One statement per operation: JAX's Python evaluates operands left to right, and the equations print in the
    // order they are bound. 0.11.2 multiplies the tangent by one residual, (1 - ans) * (1 + ans); before,
    // (g + g * ans) * (1 - ans) kept two (and rounds differently).
    if (active_profile().has(JaxFeature::kTanhJvpOneResidual)) {
      const Atom below = sub(b, one, ans);
      const Atom above = add(b, one, ans);
      return mul(b, g, mul(b, below, above));
    }
    const Atom scaled = mul(b, g, ans);
    const Atom sum = add(b, g, scaled);
    return mul(b, sum, sub(b, one, ans));
  });
  defjvp1("logistic", [](JaxprBuilder& b, const Atom& g, auto, const Atom& ans, const Params&) {
    return mul(b, g, mul(b, ans, sub(b, scalar_literal(1, av(ans).dtype, av(ans).weak_type), ans)));
  });
  defjvp1("sin", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params& params) {
    return mul(b, g, unary(b, "cos", x[0], accuracy_of(params)));
  });
  defjvp1("cos", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params& params) {
    return neg(b, mul(b, g, unary(b, "sin", x[0], accuracy_of(params))));
  });
  defjvp1("tan", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    return mul(b, g, add(b, const_like(av(x[0]), 1), unary(b, "square", ans)));
  });
  defjvp1("asin", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, unary_accurate(b, "rsqrt", sub(b, const_like(av(x[0]), 1), unary(b, "square", x[0]))));
  });
  defjvp1("acos", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, neg(b, unary_accurate(b, "rsqrt", sub(b, const_like(av(x[0]), 1), unary(b, "square", x[0])))));
  });
  defjvp1("atan", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return div(b, g, add(b, const_like(av(x[0]), 1), unary(b, "square", x[0])));
  });
  defjvp1("sinh", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, unary(b, "cosh", x[0]));
  });
  defjvp1("cosh", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, unary(b, "sinh", x[0]));
  });
  defjvp1("asinh", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    const Literal one = scalar_literal(1, av(x[0]).dtype, av(x[0]).weak_type);
    return mul(b, g, unary_accurate(b, "rsqrt", add(b, unary(b, "square", x[0]), one)));
  });
  defjvp1("acosh", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    const Literal one = scalar_literal(1, av(x[0]).dtype, av(x[0]).weak_type);
    return mul(b, g, unary_accurate(b, "rsqrt", sub(b, unary(b, "square", x[0]), one)));
  });
  defjvp1("atanh", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    const Literal one = scalar_literal(1, av(x[0]).dtype, av(x[0]).weak_type);
    // lax.reciprocal(v) is integer_pow(v, -1).
    return mul(b, integer_pow(b, add(b, one, x[0]), -1), div(b, g, sub(b, one, x[0])));
  });
  defjvp1("sqrt", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    return mul(b, g, div(b, const_like(av(x[0]), 0.5), ans));
  });
  defjvp1("rsqrt", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    return mul(b, g, mul(b, const_like(av(x[0]), -0.5), div(b, ans, x[0])));
  });
  defjvp1("cbrt", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    return mul(b, g, mul(b, const_like(av(x[0]), 1.0 / 3.0), integer_pow(b, ans, -2)));
  });
  defjvp1("square", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, mul(b, const_like(av(x[0]), 2), x[0]));
  });
  defjvp1("abs", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return select(b, compare(b, "ge", x[0], scalar_literal(0, av(x[0]).dtype, av(x[0]).weak_type)), g, neg(b, g));
  });
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  defjvp1("erf", [two_over_sqrt_pi](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, const_like(av(x[0]), two_over_sqrt_pi),
               mul(b, g, unary_accurate(b, "exp", neg(b, unary(b, "square", x[0])))));
  });
  defjvp1("erfc", [two_over_sqrt_pi](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, const_like(av(x[0]), -two_over_sqrt_pi),
               mul(b, g, unary_accurate(b, "exp", neg(b, unary(b, "square", x[0])))));
  });
  defjvp1("erf_inv", [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
    return mul(b, const_like(av(x[0]), std::sqrt(std::numbers::pi) / 2),
               mul(b, g, unary_accurate(b, "exp", unary(b, "square", ans))));
  });
  defjvp1("lgamma", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, unary(b, "digamma", x[0]));
  });
  defjvp1("digamma", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
    return mul(b, g, b.bind1("polygamma", {const_like(av(x[0]), 1), x[0]}));
  });
}

void register_binary_calculus() {
  register_jvp_rule("add", [](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                              const Params& params) {
    const Atom out = b.bind1("add", {x[0], x[1]}, params);
    std::optional<Atom> tangent;
    if (t[0] && t[1]) {
      tangent = add(b, *t[0], *t[1]);
    } else if (t[0] || t[1]) {
      tangent = maybe_broadcast(b, t[0] ? *t[0] : *t[1], av(out).shape);
    }
    return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
  });
  register_jvp_rule("sub", [](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                              const Params& params) {
    const Atom out = b.bind1("sub", {x[0], x[1]}, params);
    std::optional<Atom> tangent;
    if (t[0] && t[1]) {
      tangent = sub(b, *t[0], *t[1]);
    } else if (t[0]) {
      tangent = maybe_broadcast(b, *t[0], av(out).shape);
    } else if (t[1]) {
      tangent = maybe_broadcast(b, neg(b, *t[1]), av(out).shape);
    }
    return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
  });
  defjvp("mul", {[](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params& p) {
                   return b.bind1("mul", {g, x[1]}, p);
                 },
                 [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params& p) {
                   return b.bind1("mul", {x[0], g}, p);
                 }});
  defjvp("div", {[](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) { return div(b, g, x[1]); },
                 [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                   return mul(b, mul(b, neg(b, g), x[0]), integer_pow(b, x[1], -2));
                 }});
  defjvp("rem", {[](JaxprBuilder& b, const Atom& g, auto, const Atom& ans, const Params&) {
                   return maybe_broadcast(b, g, av(ans).shape);
                 },
                 [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                   const Atom ratio = div(b, x[0], x[1]);
                   return mul(b, neg(b, g),
                              mul(b, unary(b, "sign", ratio), unary(b, "floor", unary(b, "abs", div(b, x[0], x[1])))));
                 }});
  for (const char* name : {"max", "min"}) {
    defjvp(name, {[](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
                    return mul(b, g, balanced_eq(b, x[0], ans, x[1]));
                  },
                  [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
                    return mul(b, g, balanced_eq(b, x[1], ans, x[0]));
                  }});
  }
  defjvp("atan2", {[](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                     return mul(b, g, div(b, x[1], add(b, unary(b, "square", x[0]), unary(b, "square", x[1]))));
                   },
                   [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                     return mul(b, g, div(b, neg(b, x[0]), add(b, unary(b, "square", x[0]), unary(b, "square", x[1]))));
                   }});
  defjvp("pow", {[](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                   const Aval& xa = av(x[0]);
                   const Aval& ya = av(x[1]);
                   if (is_floating(ya.dtype)) {
                     return mul(b, g, mul(b, x[1], b.bind1("pow", {x[0], sub(b, x[1], full_like(b, ya, 1))})));
                   }
                   // Integer exponents: d/dx x^y = y x^(y-1), with y = 0 giving exactly 0.
                   const Atom y = convert(b, x[1], xa.dtype, false);
                   const Aval& yf = av(y);
                   const Atom safe_y = select(b, compare(b, "eq", y, const_like(yf, 0)), full_like(b, yf, 1), y);
                   const Atom jac = select(b, compare(b, "eq", y, const_like(yf, 0)), full_like(b, yf, 0),
                                           mul(b, safe_y, b.bind1("pow", {x[0], sub(b, y, full_like(b, yf, 1))})));
                   return mul(b, g, jac);
                 },
                 [](JaxprBuilder& b, const Atom& g, auto x, const Atom& ans, const Params&) {
                   const Aval& xa = av(x[0]);
                   const Atom safe_x = select(b, compare(b, "eq", x[0], const_like(xa, 0)), full_like(b, xa, 1), x[0]);
                   return mul(b, g, mul(b, unary_accurate(b, "log", safe_x), ans));
                 }});
  defjvp("clamp", {[](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                     const Atom pred = b.bind1("and", {compare(b, "gt", x[0], x[1]), compare(b, "lt", x[0], x[2])});
                     return select(b, pred, maybe_broadcast(b, g, av(x[1]).shape), full_like(b, av(x[1]), 0));
                   },
                   [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                     const Atom pred = b.bind1("and", {compare(b, "gt", x[1], x[0]), compare(b, "lt", x[1], x[2])});
                     return select(b, pred, maybe_broadcast(b, g, av(x[1]).shape), full_like(b, av(x[1]), 0));
                   },
                   [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params&) {
                     return select(b, compare(b, "lt", x[2], x[1]), maybe_broadcast(b, g, av(x[1]).shape),
                                   full_like(b, av(x[1]), 0));
                   }});
}

void register_structured_elementwise() {
  defjvp1("integer_pow", [](JaxprBuilder& b, const Atom& g, auto x, const Atom&, const Params& params) {
    const int64_t y = param(params, "y").as_int("y");
    if (y == 0) return full_like(b, av(g), 0);
    if (y == 1) return g;
    const Literal factor = const_like(av(x[0]), static_cast<double>(y));
    if (y == 2) return mul(b, g, mul(b, factor, x[0]));
    return mul(b, g, mul(b, factor, integer_pow(b, x[0], y - 1)));
  });
  register_jvp_rule(
      "convert_element_type",
      single_output_jvp("convert_element_type", [](JaxprBuilder& b, auto, auto t, const Atom&, const Params& params) {
        return std::optional<Atom>(b.bind1("convert_element_type", {*t[0]}, params));
      }));
  register_jvp_rule("select_n", [](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                                   const Params& params) {
    const Atom out = b.bind1("select_n", {x.begin(), x.end()}, params);
    std::optional<Atom> tangent;
    if (!all_zero(t.subspan(1)) && has_tangent_space(av(out).dtype)) {
      std::vector<Atom> inputs{x[0]};
      for (std::size_t i = 1; i < x.size(); ++i) inputs.push_back(t[i] ? *t[i] : full_like(b, av(x[i]), 0));
      tangent = b.bind1("select_n", std::move(inputs));
    }
    return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
  });
  register_jvp_rule("copy", linear_jvp("copy"));
  register_jvp_rule("neg", linear_jvp("neg"));
}

}  // namespace

void register_elementwise_jvp_rules() {
  register_unary_calculus();
  register_binary_calculus();
  register_structured_elementwise();
  // Piecewise-constant, integer- or boolean-valued: JAX's defjvp_zero.
  for (const char* name : {"sign",
                           "floor",
                           "ceil",
                           "round",
                           "is_finite",
                           "not",
                           "and",
                           "or",
                           "xor",
                           "population_count",
                           "clz",
                           "shift_left",
                           "shift_right_logical",
                           "shift_right_arithmetic",
                           "eq",
                           "ne",
                           "lt",
                           "le",
                           "gt",
                           "ge"}) {
    register_jvp_rule(name, zero_jvp(name));
  }
}

}  // namespace shardscope::ad
