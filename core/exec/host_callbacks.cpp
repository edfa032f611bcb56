// jax.pure_callback and io_callback: shape rules from the declared results, kernels that call the registered host
// function, vmap by the callback's vmap_method (JAX's ffi batching rule), and JAX's errors for differentiation.
#include "exec/host_callbacks.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "base/error.h"
#include "exec/hlo_program.h"
#include "ir/primitive.h"
#include "transforms/autodiff.h"
#include "transforms/batching.h"

namespace shardscope {
namespace {

const char* const kCallbackId = "callback_id";

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Never destroyed: functions hold host objects that must not be released after the host has shut down; the host
// drops them itself while it still can (clear_host_functions).
std::map<int64_t, HostFunction>& registry() {
  static auto* functions = new std::map<int64_t, HostFunction>();
  return *functions;
}

HostFunction function_of(const Params& params) {
  const int64_t id = param(params, kCallbackId).as_int(kCallbackId);
  const std::lock_guard lock(registry_mutex());
  const auto it = registry().find(id);
  if (it == registry().end()) throw runtime_error("host callback " + std::to_string(id) + " is not registered");
  return it->second;
}

std::vector<Aval> result_avals(const Params& params) {
  const ParamValue& shapes = param(params, "result_shapes");
  const ParamValue& dtypes = param(params, "result_dtypes");
  const auto& shape_items = shapes.as_items("result_shapes");
  const auto& dtype_items = dtypes.as_items("result_dtypes");
  std::vector<Aval> out;
  for (std::size_t r = 0; r < shape_items.size() && r < dtype_items.size(); ++r) {
    const DType* dtype = dtype_items[r].get_if<DType>();
    if (dtype == nullptr) throw value_error("result_dtypes holds a value that is not a dtype");
    out.push_back(Aval::of(shape_items[r].as_ints("result_shapes"), *dtype));
  }
  return out;
}

// What JAX prints: the callable, the declared results as ShapedArrays, and the callback's own options.
Params printed_params(const Eqn& eqn, const JaxProfile&) {
  // A Python tuple's repr: "()", "(a,)", "(a, b)".
  const std::vector<Aval> declared = result_avals(eqn.params);
  std::string avals = "(";
  for (std::size_t r = 0; r < declared.size(); ++r) {
    avals += (r == 0 ? "" : ", ") + std::string("ShapedArray(") + declared[r].str_short(false) + ")";
  }
  avals += declared.size() == 1 ? ",)" : ")";
  Params out{{"callback", ParamValue::Verbatim{param(eqn.params, "callback").as_string("callback")}}};
  if (eqn.primitive->name == "io_callback") out.emplace_back("ordered", param(eqn.params, "ordered"));
  out.emplace_back("result_avals", ParamValue::Verbatim{avals});
  out.emplace_back("sharding", ParamValue::None{});
  if (eqn.primitive->name == "pure_callback") {
    const std::string method = param(eqn.params, "vmap_method").as_string("vmap_method");
    out.emplace_back("vmap_method", method.empty() ? ParamValue(ParamValue::None{}) : ParamValue::Verbatim{method});
  }
  return out;
}

Primitive callback_primitive(const std::string& name) {
  Primitive p;
  p.name = name;
  p.multiple_results = true;
  p.host_call = name == "io_callback" ? HostCall::kIoCallback : HostCall::kPureCallback;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) { return result_avals(params); };
  p.impl = [name](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    std::vector<BufferPtr> out = function_of(params)(in);
    const std::vector<Aval> declared = result_avals(params);
    if (out.size() != declared.size()) {
      throw runtime_error("INTERNAL: " + name + " returned " + std::to_string(out.size()) + " values, but " +
                          std::to_string(declared.size()) + " were declared in result_shape_dtypes");
    }
    for (std::size_t r = 0; r < out.size(); ++r) {
      if (out[r]->shape() != declared[r].shape || out[r]->dtype() != declared[r].dtype) {
        throw Error("JaxRuntimeError",
                    "INTERNAL: Generated function failed: CpuCallback error: RuntimeError: Incorrect output shape or "
                    "dtype for return value " +
                        std::to_string(r) + ": Expected: " + declared[r].str_short(false) +
                        ", Actual: " + Aval::of(out[r]->shape(), out[r]->dtype()).str_short(false));
      }
    }
    return out;
  };
  p.printed_params = printed_params;
  return p;
}

// Differentiation: a callback whose operands carry no tangent runs as is (its results get none); otherwise JAX's
// error.
JvpRule jvp_rule(const std::string& name, const std::string& message) {
  return [name, message](JaxprBuilder& b, std::span<const Atom> primals, std::span<const std::optional<Atom>> tangents,
                         const Params& params) {
    for (const auto& tangent : tangents) {
      if (tangent) throw value_error(message);
    }
    std::vector<Atom> outs = b.bind(name, std::vector<Atom>(primals.begin(), primals.end()), params);
    return std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>>{
        outs, std::vector<std::optional<Atom>>(outs.size())};
  };
}

Params with_result_batch(Params params, int64_t size) {
  std::vector<ParamValue> shapes;
  for (const ParamValue& shape : param(params, "result_shapes").as_items("result_shapes")) {
    const std::vector<int64_t> element = shape.as_ints("result_shapes");
    std::vector<int64_t> dims{size};
    dims.insert(dims.end(), element.begin(), element.end());
    shapes.push_back(ParamValue::int_tuple(dims));
  }
  return batching::with_param(std::move(params), "result_shapes", ParamValue::tuple(std::move(shapes)));
}

// vmap by the callback's method: "sequential" calls it once per element (JAX maps it with a scan; here the loop is
// unrolled), "expand_dims"/"broadcast_all" call it once on the batch with unbatched operands given a leading dim of
// one or of the batch size.
std::vector<BatchedValue> batch_callback(const std::string& name, JaxprBuilder& b, std::span<const BatchedValue> args,
                                         const Params& params, const BatchAxis& axis) {
  if (name == "io_callback" && param(params, "ordered").as_bool("ordered")) {
    throw value_error("Cannot `vmap` ordered IO callback.");
  }
  const std::string method =
      name == "io_callback" ? std::string("sequential") : param(params, "vmap_method").as_string("vmap_method");
  const int64_t size = axis.size;
  if (method == "expand_dims" || method == "broadcast_all") {
    std::vector<Atom> inputs;
    for (const BatchedValue& arg : args) {
      inputs.push_back(arg.batch_dim || method == "broadcast_all" ? batching::bdim_at_front(b, arg, size)
                                                                  : batching::expand_dims(b, arg.value, {0}));
    }
    return batching::all_at(b.bind(name, std::move(inputs), with_result_batch(params, size)), 0);
  }
  if (method != "sequential" && method != "sequential_unrolled") {
    throw not_implemented_error("vmap is only supported for the " + name +
                                " primitive when vmap_method is one of "
                                "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
                                "'legacy_vectorized'. Got vmap_method=" +
                                (method.empty() ? std::string("None") : "'" + method + "'") + ".");
  }
  std::vector<std::vector<Atom>> per_element;
  for (int64_t i = 0; i < size; ++i) {
    std::vector<Atom> inputs;
    for (const BatchedValue& arg : args) {
      if (!arg.batch_dim) {
        inputs.push_back(arg.value);
        continue;
      }
      const Atom front = batching::bdim_at_front(b, arg, size);
      Shape start(batching::shape_of(front).size(), 0);
      Shape limit = batching::shape_of(front);
      start[0] = i;
      limit[0] = i + 1;
      const Atom slice = b.bind1("slice", {front},
                                 {{"start_indices", ParamValue::int_tuple(start)},
                                  {"limit_indices", ParamValue::int_tuple(limit)},
                                  {"strides", ParamValue::None{}}});
      inputs.push_back(b.bind1("squeeze", {slice}, {{"dimensions", ParamValue::int_tuple({0})}}));
    }
    per_element.push_back(b.bind(name, std::move(inputs), params));
  }
  std::vector<Atom> stacked;
  for (std::size_t r = 0; r < (per_element.empty() ? 0 : per_element.front().size()); ++r) {
    std::vector<Atom> rows;
    for (const auto& element : per_element) rows.push_back(batching::expand_dims(b, element[r], {0}));
    stacked.push_back(b.bind1("concatenate", rows, {{"dimension", int64_t{0}}}));
  }
  return batching::all_at(std::move(stacked), 0);
}

}  // namespace

int64_t register_host_function(HostFunction function) {
  static int64_t next = 0;
  const std::lock_guard lock(registry_mutex());
  registry().emplace(next, std::move(function));
  return next++;
}

void clear_host_functions() {
  const std::lock_guard lock(registry_mutex());
  registry().clear();
}

bool is_host_callback(const Eqn& eqn) {
  return eqn.primitive->host_call == HostCall::kPureCallback || eqn.primitive->host_call == HostCall::kIoCallback;
}

std::vector<bool> unused_pure_callbacks(const Jaxpr& jaxpr) {
  const bool any = std::any_of(jaxpr.eqns.begin(), jaxpr.eqns.end(),
                               [](const Eqn& eqn) { return eqn.primitive->name == "pure_callback"; });
  if (!any) return {};
  const std::vector<bool> live = live_equations(jaxpr);
  std::vector<bool> unused(jaxpr.eqns.size(), false);
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    unused[e] = jaxpr.eqns[e].primitive->name == "pure_callback" && !live[e];
  }
  return unused;
}

void ensure_host_callback_primitives() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : {"pure_callback", "io_callback"}) {
      register_primitive(callback_primitive(name));
      register_batch_rule(name, [name = std::string(name)](JaxprBuilder& b, std::span<const BatchedValue> args,
                                                           const Params& params, const BatchAxis& axis) {
        return batch_callback(name, b, args, params, axis);
      });
    }
    register_jvp_rule("pure_callback", jvp_rule("pure_callback",
                                                "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to "
                                                "use callbacks while taking gradients."));
    register_jvp_rule("io_callback", jvp_rule("io_callback", "IO callbacks do not support JVP."));
  });
}

}  // namespace shardscope
