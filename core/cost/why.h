// "Why": the chain of layout origins behind a value's sharding or a collective, from the arguments, constraints
// and out_shardings through each equation that passed the mesh axes on, in words, each step naming its equation.
// It reads the partition plan's per-dim provenance (propagation/auto_propagation.h), so it explains the plan that
// runs. shardscope's own explanation, not JAX output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/lowering.h"

namespace shardscope {

struct WhyStep {
  std::string text;       // one sentence
  int64_t equation = -1;  // the equation it names (an index into the program's equations), -1 for none
  int depth = 0;          // 0 answers the question; a deeper step explains the step above it
};

struct WhyAnswer {
  std::string subject;  // what was asked about, e.g. "all-gather over 'x' for eq 4 (sharding_constraint)"
  std::vector<WhyStep> steps;
  // The subject, then each step on its own line, indented by depth.
  [[nodiscard]] std::string text() const;
};

// Why a value of the program (an argument, an equation's result) has its layout.
[[nodiscard]] WhyAnswer why_value(const Compiled& compiled, int64_t var_id);

// Why the program's result `output` has its layout.
[[nodiscard]] WhyAnswer why_output(const Compiled& compiled, std::size_t output);

// Why the partitioner inserted collective `index` (in the plan's order, the order of lower()'s plan and of the
// Program tab's table): the op that needs it, the layouts on both sides and where each came from.
[[nodiscard]] WhyAnswer why_collective(const Compiled& compiled, std::size_t index);

// Every collective's answer, then every result's, headed by the program's name: what `shardscope explain --why`
// prints after the table.
[[nodiscard]] std::string why_program_text(const Compiled& compiled, const std::string& name);

}  // namespace shardscope
