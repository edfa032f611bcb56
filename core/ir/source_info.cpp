// The ambient source location of traced equations and its summary text.
#include "ir/source_info.h"

#include <atomic>

namespace shardscope {
namespace {

thread_local SourceInfo ambient_source;
std::atomic<SourceCapture> installed_capture{nullptr};

}  // namespace

std::string summarize(const SourceInfo& source) {
  if (!source) return "unknown";
  return source->file + ":" + std::to_string(source->line) + ":" + std::to_string(source->column) + " (" +
         source->function + ")";
}

const SourceInfo& current_source_info() { return ambient_source; }

SourceScope::SourceScope(SourceInfo source) : previous_(std::move(ambient_source)) {
  ambient_source = std::move(source);
}

SourceScope::~SourceScope() { ambient_source = std::move(previous_); }

void set_source_capture(SourceCapture capture) { installed_capture.store(capture); }

SourceInfo capture_source_info() {
  if (ambient_source) return ambient_source;
  const SourceCapture capture = installed_capture.load();
  return capture != nullptr ? capture() : nullptr;
}

}  // namespace shardscope
