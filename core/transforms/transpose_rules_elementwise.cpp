// Transpose rules of the elementwise primitives that can be linear in a tangent (add, mul by a constant, ...).
#include "base/error.h"
#include "transforms/autodiff_internal.h"

namespace shardscope::ad {
namespace {

using Cts = std::vector<std::optional<Atom>>;

void register_arithmetic() {
  register_transpose_rule("neg", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto,
                                                            const Params&) { return Cts{neg(b, ct)}; }));
  register_transpose_rule("add",
                          single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals, const Params&) {
                            return Cts{unbroadcast(b, avals[0], ct), unbroadcast(b, avals[1], ct)};
                          }));
  register_transpose_rule("add_any",
                          single_output_transpose([](JaxprBuilder&, const Atom& ct, auto, auto, const Params&) {
                            return Cts{ct, ct};
                          }));
  register_transpose_rule("sub",
                          single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals, const Params&) {
                            return Cts{unbroadcast(b, avals[0], ct), unbroadcast(b, avals[1], neg(b, ct))};
                          }));
  register_transpose_rule("mul", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals,
                                                            const Params& params) {
                            if (!primals[0] && !primals[1]) throw runtime_error("nonlinear mul can't be transposed");
                            if (!primals[0])
                              return Cts{unbroadcast(b, avals[0], b.bind1("mul", {ct, *primals[1]}, params)), {}};
                            return Cts{{}, unbroadcast(b, avals[1], b.bind1("mul", {*primals[0], ct}, params))};
                          }));
  register_transpose_rule(
      "div", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals, const Params&) {
        if (!primals[1]) throw runtime_error("nonlinear div can't be transposed");
        return Cts{unbroadcast(b, avals[0], div(b, ct, *primals[1])), {}};
      }));
}

void register_type_and_selection() {
  register_transpose_rule("convert_element_type",
                          single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals, const Params&) {
                            if (!has_tangent_space(avals[0].dtype)) return Cts{std::nullopt};
                            return Cts{convert(b, ct, avals[0].dtype, avals[0].weak_type)};
                          }));
  register_transpose_rule("copy", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto,
                                                             const Params&) { return Cts{b.bind1("copy", {ct})}; }));
  register_transpose_rule(
      "select_n", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals, const Params&) {
        const Atom which = *primals[0];
        const Atom zeros = full_like(b, atom_aval(ct), 0);
        Cts cts(primals.size());
        if (avals[0].dtype == DType::kBool) {
          if (!primals[1]) cts[1] = select_n(b, which, {ct, zeros});
          if (primals.size() > 2 && !primals[2]) cts[2] = select_n(b, which, {zeros, ct});
          return cts;
        }
        for (std::size_t i = 1; i < primals.size(); ++i) {
          if (primals[i]) continue;
          const Atom chosen = compare(b, "eq", which, const_like(avals[0], static_cast<double>(i - 1)));
          cts[i] = select_n(b, chosen, {zeros, ct});
        }
        return cts;
      }));
}

}  // namespace

void register_elementwise_transpose_rules() {
  register_arithmetic();
  register_type_and_selection();
}

}  // namespace shardscope::ad
