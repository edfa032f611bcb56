// Builds the pretty-printer document of a jaxpr the way jax._src.core does, then lays it out.
#include "ir/jaxpr_printer.h"

#include <charconv>
#include <cmath>
#include <deque>
#include <map>
#include <regex>
#include <set>

#include "base/half_float.h"
#include "ir/pretty.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

using pp::Doc;

std::string alphabetic_name(int64_t n) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n != 0);
  return s;
}

std::string float32_repr(float value) {
  char buffer[64];
  // numpy's str of a float32: shortest digits, fixed-point from 1e-4 up to 1e16 (as Python's float repr).
  const float magnitude = std::fabs(value);
  const bool fixed = std::isfinite(value) && (magnitude == 0 || (magnitude >= 1e-4F && magnitude < 1e16F));
  const auto [end, ec] = fixed ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                               : std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

class Printer {
 public:
  Printer(const JaxProfile& profile) : profile_(profile) {}

  Doc document(const Jaxpr& top) {
    find_shared(top);
    std::vector<Doc> docs;
    for (const auto& [jaxpr, name] : shared_order_) {
      docs.push_back(pp::concat(
          {pp::text("let "), pp::text(name), pp::text(" = "), skeleton(*jaxpr, false), pp::text(" in"), pp::brk()}));
    }
    docs.push_back(skeleton(top, true));
    return pp::concat(std::move(docs));
  }

  Doc equation_document(const Eqn& eqn) { return equation(eqn); }

 private:
  // Sub-jaxprs referenced more than once (or, in newer JAX, large ones) print once, up front.
  void find_shared(const Jaxpr& top) {
    std::map<const Jaxpr*, int> counts;
    std::map<const Jaxpr*, std::string> names;
    std::vector<const Jaxpr*> order;
    std::deque<const Jaxpr*> queue = {&top};
    while (!queue.empty()) {
      const Jaxpr* jaxpr = queue.front();
      queue.pop_front();
      if (counts[jaxpr]++ == 0) order.push_back(jaxpr);
      if (jaxpr != &top && jaxpr->eqns.size() > 10 && profile_.has(JaxFeature::kLargeSubJaxprsShared)) {
        ++counts[jaxpr];
      }
      for (const Eqn& eqn : jaxpr->eqns) {
        const ParamValue* name = find_param(eqn.params, "name");
        for (const Jaxpr* sub : sub_jaxprs(eqn.params)) {
          queue.push_back(sub);
          if (name != nullptr && name->get_if<std::string>() != nullptr && names.count(sub) == 0) {
            std::string stripped = *name->get_if<std::string>();
            std::erase(stripped, '<');
            std::erase(stripped, '>');
            names[sub] = stripped;
          }
        }
      }
    }
    std::map<std::string, int> name_counts;
    for (const Jaxpr* jaxpr : order) {
      if (counts[jaxpr] < 2) continue;
      std::string name = names.count(jaxpr) != 0 ? names[jaxpr] : "jaxpr";
      if (const int count = name_counts[name]; count > 0) {
        ++name_counts[name];
        name += std::to_string(count);
      }
      ++name_counts[name];
      shared_names_.insert(name);
      shared_[jaxpr] = name;
      shared_order_.emplace_back(jaxpr, name);
    }
  }

  static std::vector<const Jaxpr*> sub_jaxprs(const Params& params) {
    std::vector<const Jaxpr*> out;
    for (const auto& [key, value] : params) {
      if (const auto* ref = value.get_if<ParamValue::JaxprRef>()) out.push_back(ref->get());
      if (const auto* tuple = value.get_if<ParamValue::Tuple>()) {
        for (const ParamValue& item : tuple->items) {
          if (const auto* inner = item.get_if<ParamValue::JaxprRef>()) out.push_back(inner->get());
        }
      }
    }
    return out;
  }

  const std::string& name_of(const Var& var) {
    auto it = names_.find(var.id);
    if (it != names_.end()) return it->second;
    std::string name;
    do {
      name = alphabetic_name(next_name_++);
    } while (shared_names_.count(name) != 0);
    return names_.emplace(var.id, name).first->second;
  }

  std::string atom_text(const Atom& atom) {
    if (const auto* literal = std::get_if<Literal>(&atom)) return literal_text(*literal, profile_);
    const Var& var = std::get<Var>(atom);
    if (dropped_.count(var.id) != 0) return "_";
    return name_of(var);
  }

  Doc vars(const std::vector<Atom>& atoms, const std::string& separator, bool with_types) {
    std::vector<Doc> items;
    for (const Atom& atom : atoms) {
      std::string text = atom_text(atom);
      if (with_types) text += ":" + atom_aval(atom).str_short(true);
      items.push_back(pp::text(text));
    }
    return pp::nest(2, pp::group(pp::join(pp::text(separator) + pp::group(pp::brk()), items)));
  }

  static std::vector<Atom> as_atoms(const std::vector<Var>& vars) { return {vars.begin(), vars.end()}; }

  Doc skeleton(const Jaxpr& jaxpr, bool top_level) {
    if (top_level && profile_.has(JaxFeature::kUnusedOutputsPrintUnderscore)) mark_dropped(jaxpr);
    Doc constvars = vars(as_atoms(jaxpr.constvars), "", true);
    Doc invars = vars(as_atoms(jaxpr.invars), "", true);
    std::vector<Doc> eqns;
    for (const Eqn& eqn : jaxpr.eqns) eqns.push_back(equation(eqn));
    Doc outvars =
        pp::concat({pp::text("("), vars(jaxpr.outvars, ",", false), pp::text(jaxpr.outvars.size() == 1 ? ",)" : ")")});
    return pp::group(pp::nest(
               2, pp::concat({pp::text("{ "), pp::text("lambda "), constvars, pp::text("; "), invars, pp::text(". "),
                              pp::text("let"), pp::nest(2, pp::brk() + pp::join(pp::brk("; "), eqns)), pp::brk(),
                              pp::text("in "), outvars}))) +
           pp::text(" }");
  }

  void mark_dropped(const Jaxpr& jaxpr) {
    std::set<int64_t> used;
    for (const Eqn& eqn : jaxpr.eqns) {
      for (const Atom& input : eqn.inputs) {
        if (const auto* v = std::get_if<Var>(&input)) used.insert(v->id);
      }
    }
    for (const Atom& out : jaxpr.outvars) {
      if (const auto* v = std::get_if<Var>(&out)) used.insert(v->id);
    }
    for (const Eqn& eqn : jaxpr.eqns) {
      for (const Var& out : eqn.outputs) {
        if (used.count(out.id) == 0) dropped_.insert(out.id);
      }
    }
  }

  Doc jaxpr_doc(const Jaxpr& jaxpr) {
    if (const auto it = shared_.find(&jaxpr); it != shared_.end()) return pp::text(it->second);
    return skeleton(jaxpr, false);
  }

  Doc param_value(const ParamValue& value) {
    if (const auto* ref = value.get_if<ParamValue::JaxprRef>()) return jaxpr_doc(**ref);
    if (const auto* tuple = value.get_if<ParamValue::Tuple>()) {
      const bool all_jaxprs =
          !tuple->items.empty() && std::all_of(tuple->items.begin(), tuple->items.end(), [](const ParamValue& v) {
            return v.get_if<ParamValue::JaxprRef>() != nullptr;
          });
      if (all_jaxprs) {
        std::vector<Doc> docs;
        for (const ParamValue& item : tuple->items) docs.push_back(jaxpr_doc(**item.get_if<ParamValue::JaxprRef>()));
        return pp::group(pp::concat({pp::nest(2, pp::concat({pp::text("("), pp::brk(""), pp::join(pp::brk(), docs)})),
                                     pp::brk(""), pp::text(")")}));
      }
    }
    std::string text = value.str(profile_);
    if (profile_.has(JaxFeature::kUnusedOutputsPrintUnderscore)) {
      static const std::regex address(" at 0x([0-9a-fA-F]+)");
      std::string masked;
      std::sregex_iterator it(text.begin(), text.end(), address);
      std::size_t last = 0;
      for (; it != std::sregex_iterator(); ++it) {
        masked += text.substr(last, static_cast<std::size_t>(it->position()) - last);
        masked += " at 0x" + std::string(static_cast<std::size_t>((*it)[1].length()), 'X');
        last = static_cast<std::size_t>(it->position() + it->length());
      }
      text = masked + text.substr(last);
    }
    return pp::text(text);
  }

  Doc equation(const Eqn& eqn) {
    const Primitive& primitive = *eqn.primitive;
    Params params;
    if (primitive.printed_params) {
      params = primitive.printed_params(eqn, profile_);
    } else {
      params = eqn.params;
      std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    // A jit's inner jaxpr reuses the names of the values it is called with and returns.
    if (primitive.name == "jit" && profile_.has(JaxFeature::kJitPpReusesOuterNames)) {
      if (const ParamValue* inner = find_param(eqn.params, "jaxpr")) {
        const auto* ref = inner->get_if<ParamValue::JaxprRef>();
        if (ref != nullptr && shared_.count(ref->get()) == 0) {
          suggest_names((*ref)->invars, eqn.inputs);
          suggest_names((*ref)->outvars, as_atoms(eqn.outputs));
        }
      }
    }
    Doc lhs = vars(as_atoms(eqn.outputs), "", true);
    Doc params_doc = pp::nil();
    if (!params.empty()) {
      std::vector<Doc> pairs;
      for (const auto& [key, value] : params) pairs.push_back(pp::text(key + "=") + param_value(value));
      params_doc =
          pp::group(pp::concat({pp::nest(2, pp::concat({pp::text("["), pp::brk(""), pp::join(pp::brk(), pairs)})),
                                pp::brk(""), pp::text("]")}));
    }
    const std::string name = primitive.printed_name ? primitive.printed_name(profile_) : primitive.name;
    std::vector<Doc> rhs = {pp::text(name), params_doc, pp::text(" ") + vars(eqn.inputs, "", false)};
    if (eqn.outputs.empty()) return pp::concat(rhs);
    rhs.insert(rhs.begin(), {lhs, pp::text(" = ")});
    return pp::concat(rhs);
  }

  template <typename ForVars>
  void suggest_names(const ForVars& for_vars, const std::vector<Atom>& like_vars) {
    if (for_vars.size() != like_vars.size()) return;
    std::set<int64_t> used_like;
    for (std::size_t i = 0; i < for_vars.size(); ++i) {
      const Var* for_var = nullptr;
      if constexpr (std::is_same_v<typename ForVars::value_type, Var>) {
        for_var = &for_vars[i];
      } else {
        for_var = std::get_if<Var>(&for_vars[i]);
      }
      const auto* like_var = std::get_if<Var>(&like_vars[i]);
      if (for_var == nullptr || like_var == nullptr || used_like.count(like_var->id) != 0 ||
          names_.count(for_var->id) != 0) {
        continue;
      }
      used_like.insert(like_var->id);
      const std::string name = name_of(*like_var);
      names_[for_var->id] = name;
    }
  }

  const JaxProfile& profile_;
  std::map<int64_t, std::string> names_;
  int64_t next_name_ = 0;
  std::set<std::string> shared_names_;
  std::map<const Jaxpr*, std::string> shared_;
  std::vector<std::pair<const Jaxpr*, std::string>> shared_order_;
  std::set<int64_t> dropped_;
};

}  // namespace

namespace {

double value_in_dtype(double value, DType dtype) {
  if (dtype == DType::kBFloat16) return bf16_to_float(double_to_bf16(value));
  if (dtype == DType::kFloat16) return f16_to_float(double_to_f16(value));
  return static_cast<float>(value);
}

}  // namespace

std::string literal_text(const Literal& literal, const JaxProfile& profile) {
  std::string value = std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "True" : "False";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else {
          if (literal.aval.dtype == DType::kFloat64) return python_float_repr(v);
          // Literal.__str__ prints np.asarray(val).item(): the dtype's value widened to a Python float.
          if (profile.has(JaxFeature::kLiteralsPrintItem))
            return python_float_repr(value_in_dtype(v, literal.aval.dtype));
          return float32_repr(static_cast<float>(v));
        }
      },
      literal.value);
  if (profile.has(JaxFeature::kTypedLiterals)) value += ":" + literal.aval.str_short(true);
  return value;
}

std::string print_jaxpr(const Jaxpr& jaxpr, const JaxProfile& profile, int width) {
  Printer printer(profile);
  return pp::format(printer.document(jaxpr), width);
}

std::string print_equation(const Eqn& eqn, const JaxProfile& profile, int width) {
  Printer printer(profile);
  return pp::format(printer.equation_document(eqn), width);
}

}  // namespace shardscope
