// Fusion groups of elementwise equations and their chunked evaluation with the primitives' own kernels.
#include "exec/fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "exec/cancellation.h"
#include "exec/interpreter.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace shardscope {

bool reads_as_scalar(const Aval& aval, const Shape& group_shape) {
  return aval.rank() == 0 || (aval.rank() > 0 && product(aval.shape) == 1 && product(group_shape) > 1);
}

namespace {

// A value of one element that is not rank 0 ([1], [1, 1]): lax broadcasts it as it does a scalar, and a fusion
// group reads it as one (XLA fuses such a broadcast into the loop, so its products contract like any other).
bool is_unit(const Aval& aval) { return aval.rank() > 0 && product(aval.shape) == 1; }

// An equation chunking cannot change: elementwise, one result, operands scalar, of one element, or of the result's
// shape.
bool fusible(const Eqn& eqn) {
  if (eqn.primitive == nullptr || !eqn.primitive->elementwise || !eqn.primitive->impl) return false;
  if (eqn.outputs.size() != 1 || eqn.inputs.empty()) return false;
  const Shape& shape = eqn.outputs[0].aval.shape;
  if (shape.empty()) return false;
  const bool many = product(shape) > 1;
  return std::all_of(eqn.inputs.begin(), eqn.inputs.end(), [&](const Atom& input) {
    const Aval& aval = atom_aval(input);
    return aval.rank() == 0 || aval.shape == shape || (many && is_unit(aval) && aval.rank() == shape.size());
  });
}

bool contractible_float(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kFloat64; }

// LLVM's contraction of `fadd/fsub (fmul x, y), z` as XLA:CPU emits it for a fused elementwise loop: the first
// operand's product is taken when both are products; a subtracted product negates its multiplicand.
std::optional<FusedMultiplyAdd> contraction(const Eqn& eqn, const FusionStep& step,
                                            const std::map<std::size_t, const FusionStep*>& product_of_slot) {
  const std::string& name = eqn.primitive->name;
  const bool is_sub = name == "sub";
  if (!(is_sub || name == "add" || name == "add_any") || step.operands.size() != 2) return std::nullopt;
  if (!contractible_float(eqn.outputs[0].aval.dtype)) return std::nullopt;
  for (std::size_t which = 0; which < 2; ++which) {
    const std::ptrdiff_t operand = step.operands[which];
    if (operand < 0) continue;
    const auto product = product_of_slot.find(static_cast<std::size_t>(operand));
    if (product == product_of_slot.end()) continue;
    FusedMultiplyAdd fma;
    fma.product_lhs = product->second->operands[0];
    fma.product_rhs = product->second->operands[1];
    fma.addend = step.operands[1 - which];
    fma.negate_product = is_sub && which == 1;
    fma.negate_addend = is_sub && which == 0;
    return fma;
  }
  return std::nullopt;
}

// Numbers the group's values and turns its literals into buffers, once per plan.
void compile(const Jaxpr& jaxpr, FusionGroup& group) {
  std::map<std::size_t, const FusionStep*> product_of_slot;
  std::map<int64_t, std::size_t> slot_of;
  for (const Var& input : group.inputs) slot_of.emplace(input.id, group.slots++);
  for (std::size_t e = group.begin; e < group.end; ++e) {
    const Eqn& eqn = jaxpr.eqns[e];
    FusionStep step;
    step.eqn = e;
    for (const Atom& input : eqn.inputs) {
      if (const auto* literal = std::get_if<Literal>(&input)) {
        step.operands.push_back(-1 - static_cast<std::ptrdiff_t>(group.literals.size()));
        group.literals.push_back(literal_buffer(*literal));
      } else {
        step.operands.push_back(static_cast<std::ptrdiff_t>(slot_of.at(std::get<Var>(input).id)));
      }
    }
    step.out_slot = group.slots++;
    slot_of[eqn.outputs[0].id] = step.out_slot;
    group.steps.push_back(std::move(step));
  }
  // Products are looked up by slot once every step is in place (steps' addresses are then stable).
  product_of_slot.clear();
  for (FusionStep& step : group.steps) {
    const Eqn& eqn = jaxpr.eqns[step.eqn];
    step.fma = contraction(eqn, step, product_of_slot);
    if (eqn.primitive->name == "mul" && step.operands.size() == 2 && contractible_float(eqn.outputs[0].aval.dtype)) {
      product_of_slot[step.out_slot] = &step;
    }
  }
  for (const Var& output : group.outputs) group.output_slots.push_back(slot_of.at(output.id));
  // A product read by nothing but the steps that contract it (and not a group output) need not be computed.
  std::map<std::size_t, int> other_reads;
  for (const std::size_t slot : group.output_slots) ++other_reads[slot];
  for (const FusionStep& step : group.steps) {
    for (const std::ptrdiff_t operand : step.operands) {
      if (operand < 0) continue;
      const auto slot = static_cast<std::size_t>(operand);
      const bool contracted = step.fma && product_of_slot.count(slot) != 0 && operand != step.fma->addend;
      if (!contracted) ++other_reads[slot];
    }
  }
  for (const auto& [slot, product] : product_of_slot) {
    if (other_reads[slot] == 0) {
      group.steps[static_cast<std::size_t>(product - group.steps.data())].only_feeds_contraction = true;
    }
  }
}

// out[i] = fma(product_sign * x[i], y[i], addend_sign * z[i]); a stride of 0 broadcasts a rank-0 operand. The
// strides are template arguments so the loops vectorize; on x86 a copy built for the FMA instruction set is used
// (with AVX2) when the processor has it (std::fma is otherwise a library call per element). The signs are ±1: exact.
template <class Float, int SX, int SY, int SZ>
void fma_loop(const Float* x, const Float* y, const Float* z, Float product_sign, Float addend_sign, Float* out,
              int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::fma(product_sign * x[i * SX], y[i * SY], addend_sign * z[i * SZ]);
}

#if SHARDSCOPE_HAS_FMA_TARGET
template <class Float, int SX, int SY, int SZ>
SHARDSCOPE_FMA_LOOP void fma_loop_hardware(const Float* x, const Float* y, const Float* z, Float product_sign,
                                           Float addend_sign, Float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::fma(product_sign * x[i * SX], y[i * SY], addend_sign * z[i * SZ]);
}
#endif

template <class Float, int SX, int SY, int SZ>
void fma_strided(const Float* x, const Float* y, const Float* z, Float product_sign, Float addend_sign, Float* out,
                 int64_t n) {
#if SHARDSCOPE_HAS_FMA_TARGET
  if (has_fma_instructions()) {
    fma_loop_hardware<Float, SX, SY, SZ>(x, y, z, product_sign, addend_sign, out, n);
    return;
  }
#endif
  fma_loop<Float, SX, SY, SZ>(x, y, z, product_sign, addend_sign, out, n);
}

template <class Float>
void fused_multiply_add(const Buffer& lhs, const Buffer& rhs, const Buffer& addend, const FusedMultiplyAdd& fma,
                        Buffer& out) {
  const auto* x = reinterpret_cast<const Float*>(lhs.bytes().data());
  const auto* y = reinterpret_cast<const Float*>(rhs.bytes().data());
  const auto* z = reinterpret_cast<const Float*>(addend.bytes().data());
  auto* result = reinterpret_cast<Float*>(out.mutable_bytes().data());
  const Float ps = fma.negate_product ? Float(-1) : Float(1);
  const Float as = fma.negate_addend ? Float(-1) : Float(1);
  const int64_t n = out.size();
  const int pattern = (lhs.size() == 1 && n != 1 ? 4 : 0) | (rhs.size() == 1 && n != 1 ? 2 : 0) |
                      (addend.size() == 1 && n != 1 ? 1 : 0);
  switch (pattern) {  // bit set: that operand is broadcast
    case 0: fma_strided<Float, 1, 1, 1>(x, y, z, ps, as, result, n); break;
    case 1: fma_strided<Float, 1, 1, 0>(x, y, z, ps, as, result, n); break;
    case 2: fma_strided<Float, 1, 0, 1>(x, y, z, ps, as, result, n); break;
    case 3: fma_strided<Float, 1, 0, 0>(x, y, z, ps, as, result, n); break;
    case 4: fma_strided<Float, 0, 1, 1>(x, y, z, ps, as, result, n); break;
    case 5: fma_strided<Float, 0, 1, 0>(x, y, z, ps, as, result, n); break;
    case 6: fma_strided<Float, 0, 0, 1>(x, y, z, ps, as, result, n); break;
    default: fma_strided<Float, 0, 0, 0>(x, y, z, ps, as, result, n); break;
  }
}

// One contracted step over a chunk: the product's operands and the addend are the step's inputs.
BufferPtr run_fused_multiply_add(const FusedMultiplyAdd& fma, const BufferPtr& lhs, const BufferPtr& rhs,
                                 const BufferPtr& addend, const Aval& out_aval) {
  auto out = std::make_shared<Buffer>(out_aval.dtype, out_aval.shape, Buffer::Uninitialized{});
  if (out_aval.dtype == DType::kFloat32) {
    fused_multiply_add<float>(*lhs, *rhs, *addend, fma, *out);
  } else {
    fused_multiply_add<double>(*lhs, *rhs, *addend, fma, *out);
  }
  return out;
}

Aval with_shape(const Aval& aval, Shape shape) {
  Aval local = aval;
  local.shape = std::move(shape);
  local.dim_axes.clear();
  return local;
}

// Asks for transparent huge pages on a big output about to be written (as numpy does for big arrays):
// one fault per 2 MiB instead of per 4 KiB page. Only the page-aligned interior can be advised.
void advise_huge_pages([[maybe_unused]] std::byte* data, [[maybe_unused]] std::size_t bytes) {
#ifdef __linux__
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  constexpr std::size_t kPage = 4096;
  if (bytes < 2 * kHugePage) return;
  const auto start = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) / kPage * kPage;
  const auto stop = (reinterpret_cast<std::uintptr_t>(data) + bytes) / kPage * kPage;
  // Advice only: a kernel without THP refuses it and the pages stay small.
  (void)madvise(reinterpret_cast<void*>(start), stop - start, MADV_HUGEPAGE);
#endif
}

// A task's working state: slot values, and its operands' avals for the chunk shape last seen.
struct Scratch {
  std::vector<BufferPtr> values;
  std::vector<BufferPtr> operands;
  std::optional<Shape> avals_for;
  std::vector<std::vector<Aval>> step_avals;  // per step, its operands' avals
};

}  // namespace

bool large_equation(const Eqn& eqn) {
  int64_t elements = 0;
  for (const Atom& input : eqn.inputs) elements += product(atom_aval(input).shape);
  for (const Var& output : eqn.outputs) elements += product(output.aval.shape);
  return elements >= kParallelMinElements;
}

std::vector<FusionGroup> plan_fusion(const Jaxpr& jaxpr) {
  // Where each variable is last read: a group must write a value only if it is read after the group.
  std::map<int64_t, std::size_t> last_use;
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    for (const Atom& input : jaxpr.eqns[e].inputs) {
      if (const auto* var = std::get_if<Var>(&input)) last_use[var->id] = e;
    }
  }
  std::set<int64_t> returned;
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* var = std::get_if<Var>(&out)) returned.insert(var->id);
  }
  std::vector<FusionGroup> groups;
  std::size_t e = 0;
  while (e < jaxpr.eqns.size()) {
    if (!fusible(jaxpr.eqns[e])) {
      ++e;
      continue;
    }
    FusionGroup group;
    group.begin = e;
    group.shape = jaxpr.eqns[e].outputs[0].aval.shape;
    std::set<int64_t> produced;
    std::set<int64_t> consumed;
    while (e < jaxpr.eqns.size() && fusible(jaxpr.eqns[e]) && jaxpr.eqns[e].outputs[0].aval.shape == group.shape) {
      for (const Atom& input : jaxpr.eqns[e].inputs) {
        const auto* var = std::get_if<Var>(&input);
        if (var != nullptr && !produced.contains(var->id) && consumed.insert(var->id).second) {
          group.inputs.push_back(*var);
        }
      }
      produced.insert(jaxpr.eqns[e].outputs[0].id);
      ++e;
    }
    group.end = e;
    for (std::size_t g = group.begin; g < group.end; ++g) {
      const Var& out = jaxpr.eqns[g].outputs[0];
      const auto it = last_use.find(out.id);
      if (returned.contains(out.id) || (it != last_use.end() && it->second >= group.end)) group.outputs.push_back(out);
    }
    compile(jaxpr, group);
    groups.push_back(std::move(group));
  }
  return groups;
}

const FusionGroup* group_starting_at(const std::vector<FusionGroup>& groups, std::size_t index) {
  const auto it = std::lower_bound(groups.begin(), groups.end(), index,
                                   [](const FusionGroup& group, std::size_t at) { return group.begin < at; });
  return it != groups.end() && it->begin == index ? &*it : nullptr;
}

std::vector<DeviceBuffers> run_fusion_group(const Jaxpr& jaxpr, const FusionGroup& group,
                                            const std::vector<DeviceBuffers>& given_inputs) {
  if (given_inputs.size() != group.inputs.size()) throw runtime_error("fusion: wrong number of group inputs");
  // One-element inputs that are not rank 0 are read as scalars (their one value broadcast), like rank-0 ones.
  std::vector<DeviceBuffers> unit_inputs;
  const auto scalarized = [&](const Var& input) {
    return is_unit(input.aval) && reads_as_scalar(input.aval, group.shape);
  };
  const bool any_unit = std::any_of(group.inputs.begin(), group.inputs.end(), scalarized);
  if (any_unit) {
    unit_inputs = given_inputs;
    for (std::size_t i = 0; i < group.inputs.size(); ++i) {
      if (!scalarized(group.inputs[i])) continue;
      for (BufferPtr& buffer : unit_inputs[i]) {
        const auto bytes = buffer->bytes();
        buffer = std::make_shared<Buffer>(buffer->dtype(), Shape{}, std::vector<std::byte>(bytes.begin(), bytes.end()));
      }
    }
  }
  const std::vector<DeviceBuffers>& inputs = any_unit ? unit_inputs : given_inputs;
  const std::size_t devices = inputs.empty() ? 0 : inputs.front().size();
  // Each device's block shape comes from its first non-scalar input (one exists: results are not scalars).
  std::vector<const Shape*> local_shapes(devices, nullptr);
  int64_t total = 0;
  for (std::size_t d = 0; d < devices; ++d) {
    for (const DeviceBuffers& input : inputs) {
      if (!input.at(d)->shape().empty()) {
        local_shapes[d] = &input[d]->shape();
        break;
      }
    }
    if (local_shapes[d] == nullptr) throw runtime_error("fusion: a group needs a non-scalar input");
    total += product(*local_shapes[d]);
  }
  const bool parallel = total >= kParallelMinElements;
  // One task per device when there are devices enough to keep every thread busy; a lone device is cut
  // into one range per thread. Every task reads its inputs in place and writes its chunks' results
  // straight into the device's output block, allocated unfilled up front, so output pages are written once.
  const std::size_t ranges_per_device = devices == 1 && parallel ? thread_count() : 1;
  struct Task {
    std::size_t device;
    int64_t begin;
    int64_t end;
  };
  std::vector<Task> tasks;
  tasks.reserve(devices * ranges_per_device);
  for (std::size_t d = 0; d < devices; ++d) {
    const int64_t n = product(*local_shapes[d]);
    const auto ranges = static_cast<int64_t>(ranges_per_device);
    // Range edges on chunk boundaries, so the ranges split the work evenly in whole chunks.
    const int64_t chunks = (n + kFusionChunkElements - 1) / kFusionChunkElements;
    for (int64_t r = 0; r < ranges; ++r) {
      const int64_t begin = std::min(n, chunks * r / ranges * kFusionChunkElements);
      const int64_t end = r + 1 == ranges ? n : std::min(n, chunks * (r + 1) / ranges * kFusionChunkElements);
      if (begin < end || (n == 0 && r == 0)) tasks.push_back({d, begin, end});
    }
  }
  std::vector<DeviceBuffers> outputs(group.outputs.size(), DeviceBuffers(devices));
  // Output blocks allocated up front, only for devices whose block spans several chunks (small blocks are
  // the kernels' own results, handed over without a copy); empty when no device needs one.
  std::vector<std::vector<std::shared_ptr<Buffer>>> blocks;
  for (std::size_t d = 0; d < devices; ++d) {
    if (product(*local_shapes[d]) <= kFusionChunkElements) continue;
    if (blocks.empty()) blocks.assign(group.outputs.size(), std::vector<std::shared_ptr<Buffer>>(devices));
    for (std::size_t o = 0; o < group.outputs.size(); ++o) {
      blocks[o][d] = std::make_shared<Buffer>(group.outputs[o].aval.dtype, *local_shapes[d], Buffer::Uninitialized{});
      advise_huge_pages(blocks[o][d]->mutable_bytes().data(), blocks[o][d]->nbytes());
      outputs[o][d] = blocks[o][d];
    }
  }
  // Which group output each slot is (-1: none), so kernels producing one can be offered its block.
  std::vector<std::ptrdiff_t> output_of_slot(group.slots, -1);
  for (std::size_t o = 0; o < group.output_slots.size(); ++o) {
    output_of_slot[group.output_slots[o]] = static_cast<std::ptrdiff_t>(o);
  }
  // Kernels read shapes from their operands' avals: they are built once per chunk shape, not per chunk.
  const auto build_avals = [&](Scratch& scratch, const Shape& chunk_shape) {
    if (scratch.avals_for && *scratch.avals_for == chunk_shape) return;
    std::vector<Aval> slot_avals(group.slots);
    for (std::size_t i = 0; i < group.inputs.size(); ++i) {
      const Aval& aval = group.inputs[i].aval;
      slot_avals[i] = with_shape(aval, reads_as_scalar(aval, group.shape) ? Shape{} : chunk_shape);
    }
    scratch.step_avals.assign(group.steps.size(), {});
    for (std::size_t k = 0; k < group.steps.size(); ++k) {
      const FusionStep& step = group.steps[k];
      const Eqn& eqn = jaxpr.eqns.at(step.eqn);
      for (std::size_t j = 0; j < step.operands.size(); ++j) {
        const std::ptrdiff_t operand = step.operands[j];
        scratch.step_avals[k].push_back(operand < 0 ? atom_aval(eqn.inputs[j])
                                                    : slot_avals[static_cast<std::size_t>(operand)]);
      }
      slot_avals[step.out_slot] = with_shape(eqn.outputs[0].aval, chunk_shape);
    }
    scratch.avals_for = chunk_shape;
  };
  // Read on the calling thread: the pool's threads do not see its scope.
  const bool contract = executing_compiled_program();
  const auto run_task = [&](std::size_t t, Scratch& scratch) {
    const Task& task = tasks[t];
    const Shape& local_shape = *local_shapes[task.device];
    Shape range_shape;
    const bool whole = blocks.empty() || !blocks.front()[task.device];
    std::vector<BufferPtr>& values = scratch.values;
    values.assign(group.slots, nullptr);
    for (int64_t offset = task.begin; offset < task.end || (whole && offset == task.begin);
         offset += kFusionChunkElements) {
      throw_if_cancelled();
      const int64_t length = std::min(kFusionChunkElements, task.end - offset);
      if (!whole) range_shape.assign(1, length);
      const Shape& chunk_shape = whole ? local_shape : range_shape;
      build_avals(scratch, chunk_shape);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        const BufferPtr& buffer = inputs[i][task.device];
        values[i] = buffer->shape().empty() || whole ? buffer : Buffer::view_of(buffer, offset, chunk_shape);
      }
      for (std::size_t k = 0; k < group.steps.size(); ++k) {
        const FusionStep& step = group.steps[k];
        if (contract && step.only_feeds_contraction) continue;
        const Eqn& eqn = jaxpr.eqns.at(step.eqn);
        std::vector<BufferPtr>& operands = scratch.operands;
        operands.clear();
        for (const std::ptrdiff_t operand : step.operands) {
          operands.push_back(operand < 0 ? group.literals[static_cast<std::size_t>(-1 - operand)]
                                         : values[static_cast<std::size_t>(operand)]);
        }
        // A group output's chunk may be written straight into the device's block by the step that makes it.
        std::optional<StorageOffer> offer;
        if (const std::ptrdiff_t o = output_of_slot[step.out_slot]; o >= 0 && !whole) {
          const auto index = static_cast<std::size_t>(o);
          const std::size_t item = dtype_size(group.outputs[index].aval.dtype);
          offer.emplace(blocks[index][task.device],
                        blocks[index][task.device]->mutable_bytes().data() + static_cast<std::size_t>(offset) * item,
                        static_cast<std::size_t>(length) * item);
        }
        if (step.fma && contract) {
          const auto operand_buffer = [&](std::ptrdiff_t operand) -> const BufferPtr& {
            return operand < 0 ? group.literals[static_cast<std::size_t>(-1 - operand)]
                               : values[static_cast<std::size_t>(operand)];
          };
          values[step.out_slot] = run_fused_multiply_add(
              *step.fma, operand_buffer(step.fma->product_lhs), operand_buffer(step.fma->product_rhs),
              operand_buffer(step.fma->addend), with_shape(eqn.outputs[0].aval, chunk_shape));
          continue;
        }
        std::vector<BufferPtr> results = eqn.primitive->impl(operands, scratch.step_avals[k], eqn.params);
        values[step.out_slot] = std::move(results.at(0));
      }
      for (std::size_t o = 0; o < group.output_slots.size(); ++o) {
        const BufferPtr& result = values[group.output_slots[o]];
        if (whole) {
          outputs[o][task.device] = result;
          continue;
        }
        const std::size_t item = dtype_size(group.outputs[o].aval.dtype);
        const std::size_t bytes = static_cast<std::size_t>(length) * item;
        if (result->nbytes() != bytes) throw runtime_error("fusion: a kernel returned a block of the wrong size");
        std::byte* target = blocks[o][task.device]->mutable_bytes().data() + static_cast<std::size_t>(offset) * item;
        if (result->bytes().data() != target) std::memcpy(target, result->bytes().data(), bytes);
      }
      if (whole) break;
    }
  };
  if (!parallel) {
    // Small work runs on the caller, sharing one scratch across devices.
    Scratch scratch;
    for (std::size_t t = 0; t < tasks.size(); ++t) run_task(t, scratch);
    return outputs;
  }
  parallel_for(tasks.size(), true, [&](std::size_t t) {
    Scratch scratch;
    run_task(t, scratch);
  });
  return outputs;
}

}  // namespace shardscope
