// Where an equation came from: the user's file, line, column and function, as JAX's source_info summarizes it.
#pragma once

#include <memory>
#include <string>

namespace shardscope {

struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;  // 0-based, as Python's code positions count it
  std::string function;
};

// Shared: every equation a transform derives from one traced operation points at the same location.
using SourceInfo = std::shared_ptr<const SourceLocation>;

// "file:line:column (function)", or "unknown" when nothing recorded where the equation came from.
[[nodiscard]] std::string summarize(const SourceInfo& source);

// The location equations bound now are attributed to: the innermost SourceScope's, else none.
[[nodiscard]] const SourceInfo& current_source_info();

// Attributes the equations bound while it lives to `source`. Transforms open one per equation they rewrite, so
// the equations a rule emits keep the location of the operation they came from, as JAX's do.
class SourceScope {
 public:
  explicit SourceScope(SourceInfo source);
  ~SourceScope();
  SourceScope(const SourceScope&) = delete;
  SourceScope& operator=(const SourceScope&) = delete;

 private:
  SourceInfo previous_;
};

// A rewritten equation's location: its own, or the enclosing scope's when it recorded none.
[[nodiscard]] inline SourceInfo source_or_current(const SourceInfo& source) {
  return source ? source : current_source_info();
}

// The host language's "where is the user now": installed by the Python bindings, called when an operation is
// traced from user code with no enclosing scope. Returns null where it cannot tell.
using SourceCapture = SourceInfo (*)();
void set_source_capture(SourceCapture capture);
// The enclosing scope's location if any, else what the installed capture reports, else null.
[[nodiscard]] SourceInfo capture_source_info();

}  // namespace shardscope
