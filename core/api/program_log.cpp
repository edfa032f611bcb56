// The session's program log: distinct (program, signature) pairs in first-seen order, guarded by one mutex.
#include "api/program_log.h"

#include <mutex>

namespace shardscope::api {
namespace {

std::mutex log_mutex;
bool logging_enabled = false;                    // guarded by log_mutex
std::vector<LoggedProgram> logged;               // guarded by log_mutex
constexpr std::size_t kMaxLoggedPrograms = 256;  // a script that retraces in a loop must not grow without bound

bool same_signature(const LoggedProgram& entry, const JaxprPtr& program, const std::vector<ShapeDtypeStruct>& args,
                    const LoweringOptions& options) {
  return entry.program == program && entry.args == args && entry.options.in_shardings == options.in_shardings &&
         entry.options.out_shardings == options.out_shardings;
}

}  // namespace

void set_program_logging(bool enabled) {
  const std::lock_guard lock(log_mutex);
  logging_enabled = enabled;
}

bool program_logging() {
  const std::lock_guard lock(log_mutex);
  return logging_enabled;
}

void log_program(const std::string& name, const JaxprPtr& program, std::vector<ShapeDtypeStruct> args,
                 const LoweringOptions& options, bool ran) {
  const std::lock_guard lock(log_mutex);
  if (!logging_enabled || program == nullptr) return;
  for (LoggedProgram& entry : logged) {
    if (!same_signature(entry, program, args, options)) continue;
    entry.runs += ran ? 1 : 0;
    entry.lowered = entry.lowered || !ran;
    return;
  }
  if (logged.size() >= kMaxLoggedPrograms) return;
  logged.push_back({name, program, std::move(args), options, ran ? 1 : 0, !ran});
}

std::vector<LoggedProgram> logged_programs() {
  const std::lock_guard lock(log_mutex);
  return logged;
}

void clear_program_log() {
  const std::lock_guard lock(log_mutex);
  logged.clear();
}

}  // namespace shardscope::api
