// scan, while, cond and remat2 inside shard_map bodies: every device steps through the loop together, so
// collectives in the bodies (psum in a fori_loop) run across devices as they do outside loops.
#include <algorithm>

#include "base/error.h"
#include "exec/cancellation.h"
#include "exec/interpreter.h"
#include "ir/primitive.h"
#include "ops/control_flow.h"

namespace shardscope {
namespace {

using Values = std::vector<DeviceBuffers>;

Values slice_of(const Values& operands, std::size_t begin, std::size_t end) {
  return Values(operands.begin() + static_cast<std::ptrdiff_t>(begin),
                operands.begin() + static_cast<std::ptrdiff_t>(end));
}

Values scan_per_device(const SpmdContext& context, std::span<const DeviceBuffers> in, std::span<const Aval>,
                       const Params& params) {
  const CompiledProgramScope compiled;  // JAX compiles a control-flow primitive even when it runs eagerly
  const ScanLayout layout = scan_layout(params);
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  const Values operands(in.begin(), in.end());
  const std::size_t devices = in.empty() ? 0 : in[0].size();
  const std::size_t carry_end = layout.num_consts + layout.num_carry;
  Values carry = slice_of(operands, layout.num_consts, carry_end);
  const std::size_t num_ys = body.outvars.size() - layout.num_carry;
  // ys[y][device][i]
  std::vector<std::vector<std::vector<BufferPtr>>> ys(
      num_ys,
      std::vector<std::vector<BufferPtr>>(devices, std::vector<BufferPtr>(static_cast<std::size_t>(layout.length))));
  for (int64_t step = 0; step < layout.length; ++step) {
    throw_if_cancelled();
    const int64_t i = layout.reverse ? layout.length - 1 - step : step;
    Values args = slice_of(operands, 0, layout.num_consts);
    args.insert(args.end(), carry.begin(), carry.end());
    for (std::size_t x = carry_end; x < operands.size(); ++x) {
      DeviceBuffers slices;
      for (const BufferPtr& buffer : operands[x]) slices.push_back(leading_slice(buffer, i));
      args.push_back(std::move(slices));
    }
    Values outs = evaluate_jaxpr_per_device(body, context, args);
    std::copy(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(layout.num_carry), carry.begin());
    for (std::size_t y = 0; y < num_ys; ++y) {
      for (std::size_t d = 0; d < devices; ++d) ys[y][d][static_cast<std::size_t>(i)] = outs[layout.num_carry + y][d];
    }
  }
  Values results = carry;
  for (std::size_t y = 0; y < num_ys; ++y) {
    DeviceBuffers stacked;
    for (std::size_t d = 0; d < devices; ++d) {
      stacked.push_back(stack_leading(ys[y][d], atom_aval(body.outvars[layout.num_carry + y])));
    }
    results.push_back(std::move(stacked));
  }
  return results;
}

// The predicate's value on each device; devices must agree to step together.
std::optional<int64_t> agreed(const DeviceBuffers& values) {
  const int64_t first = scalar_int(values.at(0));
  for (const BufferPtr& value : values) {
    if (scalar_int(value) != first) return std::nullopt;
  }
  return first;
}

// Runs the single-device kernel on each device separately (bodies without collectives may diverge).
Values each_device(const Primitive& primitive, std::span<const DeviceBuffers> in, std::span<const Aval> avals,
                   const Params& params, std::size_t outputs) {
  const std::size_t devices = in.empty() ? 0 : in[0].size();
  Values results(outputs, DeviceBuffers(devices));
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<BufferPtr> local;
    for (const DeviceBuffers& operand : in) local.push_back(operand[d]);
    const std::vector<BufferPtr> outs = primitive.impl(local, avals, params);
    for (std::size_t r = 0; r < outputs; ++r) results[r][d] = outs.at(r);
  }
  return results;
}

Values while_per_device(const Primitive& self, const SpmdContext& context, std::span<const DeviceBuffers> in,
                        std::span<const Aval> avals, const Params& params) {
  const CompiledProgramScope compiled;  // JAX compiles a control-flow primitive even when it runs eagerly
  const WhileLayout layout = while_layout(params);
  const Jaxpr& body = *nested_jaxpr(params, "body_jaxpr");
  const Jaxpr& cond = *nested_jaxpr(params, "cond_jaxpr");
  const Values operands(in.begin(), in.end());
  const std::size_t consts_end = layout.cond_nconsts + layout.body_nconsts;
  Values carry = slice_of(operands, consts_end, operands.size());
  while (true) {
    throw_if_cancelled();
    Values cond_args = slice_of(operands, 0, layout.cond_nconsts);
    cond_args.insert(cond_args.end(), carry.begin(), carry.end());
    const std::optional<int64_t> go = agreed(evaluate_jaxpr_per_device(cond, context, cond_args).at(0));
    if (!go) {
      Values rest = slice_of(operands, 0, consts_end);
      rest.insert(rest.end(), carry.begin(), carry.end());
      return each_device(self, rest, avals, params, carry.size());
    }
    if (*go == 0) return carry;
    Values body_args = slice_of(operands, layout.cond_nconsts, consts_end);
    body_args.insert(body_args.end(), carry.begin(), carry.end());
    carry = evaluate_jaxpr_per_device(body, context, body_args);
  }
}

Values cond_per_device(const Primitive& self, const SpmdContext& context, std::span<const DeviceBuffers> in,
                       std::span<const Aval> avals, const Params& params) {
  const CompiledProgramScope compiled;  // JAX compiles a control-flow primitive even when it runs eagerly
  const std::vector<JaxprPtr> branches = cond_branches(params);
  const std::optional<int64_t> index = agreed(in[0]);
  if (!index) return each_device(self, in, avals, params, branches[0]->outvars.size());
  const int64_t chosen = std::clamp<int64_t>(*index, 0, static_cast<int64_t>(branches.size()) - 1);
  return evaluate_jaxpr_per_device(*branches[static_cast<std::size_t>(chosen)], context,
                                   Values(in.begin() + 1, in.end()));
}

}  // namespace

void add_per_device_control_flow(Primitive& primitive) {
  const std::string& name = primitive.name;
  if (name == "scan") {
    primitive.collective_impl = scan_per_device;
  } else if (name == "while") {
    primitive.collective_impl = [](const SpmdContext& c, std::span<const DeviceBuffers> in, std::span<const Aval> a,
                                   const Params& p) { return while_per_device(*find_primitive("while"), c, in, a, p); };
  } else if (name == "cond") {
    primitive.collective_impl = [](const SpmdContext& c, std::span<const DeviceBuffers> in, std::span<const Aval> a,
                                   const Params& p) { return cond_per_device(*find_primitive("cond"), c, in, a, p); };
  } else if (name == "remat2") {
    primitive.collective_impl = [](const SpmdContext& c, std::span<const DeviceBuffers> in, std::span<const Aval>,
                                   const Params& p) {
      return evaluate_jaxpr_per_device(*nested_jaxpr(p, "jaxpr"), c, Values(in.begin(), in.end()));
    };
  }
}

}  // namespace shardscope
