// The debug primitives (debug_callback, debug_print, inspect_sharding): shape rules, kernels that call the host
// back per call, per device or per batch element, their vmap and autodiff rules, and jit's partitioned dispatch.
#include "exec/debug_callbacks.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>

#include "base/error.h"
#include "transforms/autodiff.h"
#include "transforms/batching.h"

namespace shardscope {
namespace {

// Hidden params: the host callback, and the per-operand batch dims a vmap left for the kernel to unroll.
const char* const kCallbackId = "callback_id";
const char* const kBatchDims = "batch_dims";
const char* const kBatchSize = "batch_size";

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Never destroyed: callbacks may hold host objects (Python callables) that must not be released after the host
// has shut down; the host drops them itself while it still can (clear_debug_callbacks).
std::map<int64_t, DebugCallback>& registry() {
  static auto* callbacks = new std::map<int64_t, DebugCallback>();
  return *callbacks;
}

DebugCallback callback_of(const Params& params) {
  const int64_t id = param(params, kCallbackId).as_int(kCallbackId);
  const std::lock_guard lock(registry_mutex());
  const auto it = registry().find(id);
  if (it == registry().end()) throw runtime_error("debug callback " + std::to_string(id) + " is not registered");
  return it->second;
}

bool is_inspect(const std::string& name) { return name == "inspect_sharding"; }

// Element `i` of `value` along `dim`, the dim removed (JAX's batching rule indexes each mapped operand).
BufferPtr index_in_dim(const BufferPtr& value, int64_t dim, int64_t i) {
  std::vector<DimSlice> index(value->shape().size());
  index[static_cast<std::size_t>(dim)] = DimSlice{false, i, i + 1, i};
  const BufferPtr block = slice_block(*value, index);
  Shape shape = value->shape();
  shape.erase(shape.begin() + dim);
  return Buffer::view_of(block, 0, shape);
}

// Calls the host with the values, once, or once per element of the vmapped axis when a vmap left batch dims.
void call_with_values(const DebugCallback& callback, std::span<const BufferPtr> values, const Params& params,
                      std::optional<int64_t> device) {
  if (!callback.on_values) return;
  const ParamValue* dims = find_param(params, kBatchDims);
  if (dims == nullptr) {
    callback.on_values(values, device);
    return;
  }
  const std::vector<int64_t> batch_dims = dims->as_ints(kBatchDims);
  const int64_t size = param(params, kBatchSize).as_int(kBatchSize);
  for (int64_t i = 0; i < size; ++i) {
    std::vector<BufferPtr> element;
    for (std::size_t o = 0; o < values.size(); ++o) {
      element.push_back(batch_dims.at(o) < 0 ? values[o] : index_in_dim(values[o], batch_dims[o], i));
    }
    callback.on_values(element, device);
  }
}

// JAX's params, sorted, without the hidden ones; object addresses masked where the profile's printer masks them.
Params visible_params(const Eqn& eqn, const JaxProfile& profile) {
  Params params;
  for (const auto& [key, value] : eqn.params) {
    if (key == kCallbackId || key == kBatchDims || key == kBatchSize) continue;
    const std::string* text = value.get_if<std::string>();
    if (text != nullptr && profile.has(JaxFeature::kUnusedOutputsPrintUnderscore)) {
      static const std::regex address(" at 0x[0-9a-fA-F]+");
      params.emplace_back(key, ParamValue::Verbatim{std::regex_replace(*text, address, " at 0xXXXXXXXX")});
    } else {
      params.emplace_back(key, value);
    }
  }
  std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return params;
}

Primitive debug_primitive(const std::string& name) {
  Primitive p;
  p.name = name;
  p.multiple_results = true;
  p.host_call = HostCall::kDebug;
  p.abstract_eval = [name](std::span<const Aval> in, const Params&) {
    if (is_inspect(name) && in.size() != 1) {
      throw type_error("inspect_sharding takes one operand, got " + std::to_string(in.size()));
    }
    return std::vector<Aval>{};
  };
  // Outside a partitioned program (eager, one device, a vmapped body): the values are whole.
  p.impl = [name](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const DebugCallback callback = callback_of(params);
    if (is_inspect(name)) {
      if (callback.on_sharding) callback.on_sharding(nullptr, PartitionSpec{});
    } else {
      call_with_values(callback, in, params, std::nullopt);
    }
    return std::vector<BufferPtr>{};
  };
  // Per-device bodies (shard_map, pmap): each device calls back with its own blocks, in mesh order; a manual
  // value's sharding is reported replicated on the body's mesh, as JAX's partitioner reports manual shardings.
  p.collective_impl = [name](const SpmdContext& context, std::span<const DeviceBuffers> in, std::span<const Aval>,
                             const Params& params) {
    const DebugCallback callback = callback_of(params);
    if (is_inspect(name)) {
      if (callback.on_sharding) callback.on_sharding(context.mesh, PartitionSpec{});
      return std::vector<DeviceBuffers>{};
    }
    const std::size_t devices = in.empty() ? 1 : in.front().size();
    for (std::size_t d = 0; d < devices; ++d) {
      std::vector<BufferPtr> local;
      for (const DeviceBuffers& operand : in) local.push_back(operand.at(d));
      call_with_values(callback, local, params, static_cast<int64_t>(d));
    }
    return std::vector<DeviceBuffers>{};
  };
  p.printed_params = visible_params;
  return p;
}

// vmap: one equation over the batched operands; the kernel unrolls the mapped axis (JAX unrolls it into one
// equation per element). inspect_sharding reports the batched value's sharding once.
std::vector<BatchedValue> batch_debug(const std::string& name, JaxprBuilder& builder,
                                      std::span<const BatchedValue> args, Params params, const BatchAxis& axis) {
  std::vector<Atom> operands;
  std::vector<int64_t> dims;
  for (const BatchedValue& arg : args) {
    operands.push_back(arg.value);
    dims.push_back(arg.batch_dim.value_or(-1));
  }
  if (!is_inspect(name)) {
    if (find_param(params, kBatchDims) != nullptr) {
      throw not_implemented_error(name + " under nested vmap is not supported by shardscope yet");
    }
    params.emplace_back(kBatchDims, ParamValue::int_tuple(dims));
    params.emplace_back(kBatchSize, axis.size);
  }
  builder.bind(name, operands, params);
  return {};
}

}  // namespace

int64_t register_debug_callback(DebugCallback callback) {
  static int64_t next_id = 0;
  const std::lock_guard lock(registry_mutex());
  const int64_t id = next_id++;
  registry().emplace(id, std::move(callback));
  return id;
}

void clear_debug_callbacks() {
  std::map<int64_t, DebugCallback> dropped;
  {
    const std::lock_guard lock(registry_mutex());
    dropped.swap(registry());
  }
}

bool is_debug_effect(const Eqn& eqn) { return eqn.primitive->host_call == HostCall::kDebug; }

void ensure_debug_primitives() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : {"debug_callback", "debug_print", "inspect_sharding"}) {
      register_primitive(debug_primitive(name));
      register_batch_rule(name, [name = std::string(name)](JaxprBuilder& builder, std::span<const BatchedValue> args,
                                                           const Params& params, const BatchAxis& axis) {
        return batch_debug(name, builder, args, params, axis);
      });
      // Differentiation calls back with the primals and has no tangents or cotangents to give.
      register_jvp_rule(name, [name = std::string(name)](JaxprBuilder& builder, std::span<const Atom> primals,
                                                         std::span<const std::optional<Atom>>, const Params& params) {
        builder.bind(name, std::vector<Atom>(primals.begin(), primals.end()), params);
        return std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>>{};
      });
      register_transpose_rule(
          name, [](JaxprBuilder&, std::span<const std::optional<Atom>>, std::span<const std::optional<Atom>> primals,
                   std::span<const Aval>, const Params&) { return std::vector<std::optional<Atom>>(primals.size()); });
    }
  });
}

void run_debug_effect(const Eqn& eqn, const Mesh& mesh, const JaxProfile& profile,
                      const std::function<PlacedOperand(const Atom&)>& read) {
  const DebugCallback callback = callback_of(eqn.params);
  std::vector<PlacedOperand> operands;
  for (const Atom& input : eqn.inputs) operands.push_back(read(input));
  if (is_inspect(eqn.primitive->name)) {
    if (callback.on_sharding)
      callback.on_sharding(&mesh, sharding_of_layout(mesh, operands.at(0).first, std::nullopt).spec);
    return;
  }
  const ParamValue* partitioned = find_param(eqn.params, "partitioned");
  if (partitioned != nullptr && partitioned->as_bool("partitioned")) {
    for (std::size_t d = 0; d < static_cast<std::size_t>(mesh.size()); ++d) {
      std::vector<BufferPtr> local;
      for (const PlacedOperand& operand : operands) local.push_back(operand.second.at(d));
      call_with_values(callback, local, eqn.params, static_cast<int64_t>(d));
    }
    return;
  }
  std::vector<BufferPtr> whole;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Aval& aval = atom_aval(eqn.inputs[i]);
    whole.push_back(whole_buffer(mesh, aval.dtype, aval.shape, operands[i].first, operands[i].second, profile));
  }
  call_with_values(callback, whole, eqn.params, std::nullopt);
}

}  // namespace shardscope
