// Equation parameters: the Python values a primitive's params hold, printed as JAX's str() prints them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/dtype.h"
#include "compat/jax_version.h"
#include "mesh/mesh.h"
#include "sharding/partition_spec.h"
#include "sharding/sharding.h"

namespace shardscope {

struct Jaxpr;
struct RematPolicy;

class ParamValue {
 public:
  struct None {
    bool operator==(const None&) const = default;
  };
  struct Tuple {
    std::vector<ParamValue> items;
    bool is_list = false;  // printed with [] instead of ()
    bool operator==(const Tuple&) const = default;
  };
  struct FrozenSet {
    std::vector<std::string> names;
    bool operator==(const FrozenSet&) const = default;
  };
  // Text printed verbatim (e.g. an opaque object like `<axis 0x7f...>`).
  struct Verbatim {
    std::string text;
    bool operator==(const Verbatim&) const = default;
  };
  using JaxprRef = std::shared_ptr<const Jaxpr>;
  // A jax.checkpoint policy: printed as its Python str(), decided by `policy`.
  struct PolicyRef {
    std::string text;
    std::shared_ptr<const RematPolicy> policy;
    bool operator==(const PolicyRef&) const = default;
  };
  using Value = std::variant<None, bool, int64_t, double, std::string, Tuple, FrozenSet, DType, PartitionSpec, Mesh,
                             NamedSharding, JaxprRef, Verbatim, PolicyRef>;

  ParamValue() = default;
  ParamValue(None v) : value_(v) {}
  ParamValue(bool v) : value_(v) {}
  ParamValue(int v) : value_(int64_t{v}) {}
  ParamValue(int64_t v) : value_(v) {}
  ParamValue(double v) : value_(v) {}
  ParamValue(const char* v) : value_(std::string(v)) {}
  ParamValue(std::string v) : value_(std::move(v)) {}
  ParamValue(Tuple v) : value_(std::move(v)) {}
  ParamValue(FrozenSet v) : value_(std::move(v)) {}
  ParamValue(DType v) : value_(v) {}
  ParamValue(PartitionSpec v) : value_(std::move(v)) {}
  ParamValue(Mesh v) : value_(std::move(v)) {}
  ParamValue(NamedSharding v) : value_(std::move(v)) {}
  ParamValue(JaxprRef v) : value_(std::move(v)) {}
  ParamValue(Verbatim v) : value_(std::move(v)) {}
  ParamValue(PolicyRef v) : value_(std::move(v)) {}

  static ParamValue tuple(std::vector<ParamValue> items) { return Tuple{std::move(items), false}; }
  static ParamValue list(std::vector<ParamValue> items) { return Tuple{std::move(items), true}; }
  static ParamValue int_tuple(const std::vector<int64_t>& values);
  static ParamValue name_tuple(const std::vector<std::string>& names);

  [[nodiscard]] const Value& value() const { return value_; }
  [[nodiscard]] bool is_none() const { return std::holds_alternative<None>(value_); }
  template <typename T>
  [[nodiscard]] const T* get_if() const {
    return std::get_if<T>(&value_);
  }
  // Typed access for rules: the int, the tuple of ints, the string; ValueError naming `what` otherwise.
  [[nodiscard]] int64_t as_int(const std::string& what) const;
  [[nodiscard]] bool as_bool(const std::string& what) const;
  [[nodiscard]] const std::vector<ParamValue>& as_items(const std::string& what) const;
  [[nodiscard]] std::vector<int64_t> as_ints(const std::string& what) const;
  [[nodiscard]] const std::string& as_string(const std::string& what) const;

  // Python's str() of the value (strings bare) and repr() (strings quoted), per the JAX profile.
  [[nodiscard]] std::string str(const JaxProfile& profile) const;
  [[nodiscard]] std::string repr(const JaxProfile& profile) const;

  bool operator==(const ParamValue& other) const;

 private:
  Value value_;
};

// Params keep insertion order; printers sort them by key unless a primitive says otherwise.
using Params = std::vector<std::pair<std::string, ParamValue>>;

[[nodiscard]] const ParamValue* find_param(const Params& params, const std::string& key);
[[nodiscard]] const ParamValue& param(const Params& params, const std::string& key);

// Python's repr of a float: shortest round trip, always with a '.' or exponent ("1.0", "0.5", "1e-05").
[[nodiscard]] std::string python_float_repr(double value);

}  // namespace shardscope
