// Fusion groups of elementwise equations and their chunked evaluation with the primitives' own kernels.
#include "exec/fusion.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

#include "base/error.h"
#include "exec/cancellation.h"
#include "exec/interpreter.h"
#include "exec/thread_pool.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace shardscope {
namespace {

// An equation chunking cannot change: elementwise, one result, operands scalar or of the result's shape.
bool fusible(const Eqn& eqn) {
  if (eqn.primitive == nullptr || !eqn.primitive->elementwise || !eqn.primitive->impl) return false;
  if (eqn.outputs.size() != 1 || eqn.inputs.empty()) return false;
  const Shape& shape = eqn.outputs[0].aval.shape;
  if (shape.empty()) return false;
  return std::all_of(eqn.inputs.begin(), eqn.inputs.end(), [&](const Atom& input) {
    const Aval& aval = atom_aval(input);
    return aval.rank() == 0 || aval.shape == shape;
  });
}

// Numbers the group's values and turns its literals into buffers, once per plan.
void compile(const Jaxpr& jaxpr, FusionGroup& group) {
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
  for (const Var& output : group.outputs) group.output_slots.push_back(slot_of.at(output.id));
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
                                            const std::vector<DeviceBuffers>& inputs) {
  if (inputs.size() != group.inputs.size()) throw runtime_error("fusion: wrong number of group inputs");
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
      slot_avals[i] = with_shape(aval, aval.rank() == 0 ? Shape{} : chunk_shape);
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
        const Eqn& eqn = jaxpr.eqns.at(step.eqn);
        std::vector<BufferPtr>& operands = scratch.operands;
        operands.clear();
        for (const std::ptrdiff_t operand : step.operands) {
          operands.push_back(operand < 0 ? group.literals[static_cast<std::size_t>(-1 - operand)]
                                         : values[static_cast<std::size_t>(operand)]);
        }
        std::vector<BufferPtr> results;
        if (const std::ptrdiff_t o = output_of_slot[step.out_slot]; o >= 0 && !whole) {
          // The kernel may write this chunk of a group output straight into the device's block.
          const auto index = static_cast<std::size_t>(o);
          const std::size_t item = dtype_size(group.outputs[index].aval.dtype);
          const StorageOffer offer(
              blocks[index][task.device],
              blocks[index][task.device]->mutable_bytes().data() + static_cast<std::size_t>(offset) * item,
              static_cast<std::size_t>(length) * item);
          results = eqn.primitive->impl(operands, scratch.step_avals[k], eqn.params);
        } else {
          results = eqn.primitive->impl(operands, scratch.step_avals[k], eqn.params);
        }
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
