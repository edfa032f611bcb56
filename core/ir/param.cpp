// Equation parameter values and their Python-style printing.
#include "ir/param.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {

ParamValue ParamValue::int_tuple(const std::vector<int64_t>& values) {
  std::vector<ParamValue> items(values.begin(), values.end());
  return tuple(std::move(items));
}

ParamValue ParamValue::name_tuple(const std::vector<std::string>& names) {
  std::vector<ParamValue> items(names.begin(), names.end());
  return tuple(std::move(items));
}

int64_t ParamValue::as_int(const std::string& what) const {
  if (const auto* v = get_if<int64_t>()) return *v;
  throw type_error(what + " must be an int");
}

bool ParamValue::as_bool(const std::string& what) const {
  if (const auto* v = get_if<bool>()) return *v;
  throw type_error(what + " must be a bool");
}

const std::vector<ParamValue>& ParamValue::as_items(const std::string& what) const {
  if (const auto* t = get_if<Tuple>()) return t->items;
  throw type_error(what + " must be a tuple");
}

std::vector<int64_t> ParamValue::as_ints(const std::string& what) const {
  const auto* t = get_if<Tuple>();
  if (t == nullptr) throw type_error(what + " must be a tuple of ints");
  std::vector<int64_t> values;
  for (const ParamValue& item : t->items) values.push_back(item.as_int(what));
  return values;
}

const std::string& ParamValue::as_string(const std::string& what) const {
  if (const auto* v = get_if<std::string>()) return *v;
  throw type_error(what + " must be a string");
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  // Shortest round-trip digits, fixed-point (plain to_chars would write 100000.0 as "1e+05").
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  std::string text(buffer, end);
  // Python switches to exponent form below 1e-4 and from 1e16, and writes "1e-05" with two exponent digits.
  const double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude < 1e-4 || magnitude >= 1e16)) {
    const auto [e_end, e_ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    text.assign(buffer, e_end);
    const std::size_t e = text.find('e');
    std::string mantissa = text.substr(0, e);
    std::string exponent = text.substr(e + 1);
    const char sign = exponent[0] == '-' ? '-' : '+';
    if (exponent[0] == '-' || exponent[0] == '+') exponent.erase(0, 1);
    while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
    if (exponent.size() < 2) exponent = "0" + exponent;
    return mantissa + "e" + sign + exponent;
  }
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string ParamValue::str(const JaxProfile& profile) const {
  if (const auto* s = get_if<std::string>()) return *s;
  if (const auto* d = get_if<DType>()) return std::string(dtype_name(*d));
  return repr(profile);
}

std::string ParamValue::repr(const JaxProfile& profile) const {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, None>) {
          return "None";
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "True" : "False";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return python_float_repr(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return python_string_repr(v);
        } else if constexpr (std::is_same_v<T, Tuple>) {
          std::vector<std::string> items;
          for (const ParamValue& item : v.items) items.push_back(item.repr(profile));
          return v.is_list ? python_list(items) : python_tuple(items);
        } else if constexpr (std::is_same_v<T, FrozenSet>) {
          std::vector<std::string> items;
          for (const std::string& name : v.names) items.push_back(python_string_repr(name));
          std::sort(items.begin(), items.end());
          // 0.11's pp_kv_pair formats frozensets itself; before, str() gave frozenset() when empty.
          const bool braced = !items.empty() || profile.has(JaxFeature::kFrozenSetParamsBraced);
          return braced ? "frozenset({" + join(items, ", ") + "})" : "frozenset()";
        } else if constexpr (std::is_same_v<T, DType>) {
          return "dtype('" + std::string(dtype_name(v)) + "')";
        } else if constexpr (std::is_same_v<T, PartitionSpec>) {
          return v.repr(profile);
        } else if constexpr (std::is_same_v<T, Mesh>) {
          return v.str(profile);
        } else if constexpr (std::is_same_v<T, NamedSharding>) {
          return sharding_repr(v, profile);
        } else if constexpr (std::is_same_v<T, JaxprRef>) {
          return "<jaxpr>";
        } else {
          return v.text;
        }
      },
      value_);
}

bool ParamValue::operator==(const ParamValue& other) const { return value_ == other.value_; }

const ParamValue* find_param(const Params& params, const std::string& key) {
  for (const auto& [name, value] : params) {
    if (name == key) return &value;
  }
  return nullptr;
}

const ParamValue& param(const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr) throw value_error("missing equation parameter '" + key + "'");
  return *value;
}

}  // namespace shardscope
