// The programs a session ran or lowered, kept (when asked) so `shardscope explain` can price each one afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/lowering.h"

namespace shardscope::api {

// One distinct program: the same traced program on arguments of the same types and placements.
struct LoggedProgram {
  std::string name;
  JaxprPtr program;  // captured values as leading arguments, as the run received them
  std::vector<ShapeDtypeStruct> args;
  LoweringOptions options;
  int64_t runs = 0;      // times it ran on arrays
  bool lowered = false;  // also (or only) lowered with .lower()
};

// Off by default: logging keeps every program alive until the log is cleared.
void set_program_logging(bool enabled);
[[nodiscard]] bool program_logging();

// Records a run (`ran`) or a lowering of `program`; repeats of the same program and signature are counted once.
void log_program(const std::string& name, const JaxprPtr& program, std::vector<ShapeDtypeStruct> args,
                 const LoweringOptions& options, bool ran);

// In the order each program first appeared.
[[nodiscard]] std::vector<LoggedProgram> logged_programs();
void clear_program_log();

}  // namespace shardscope::api
