// Lessons: a notebook as steps of prose and code, its `# shardscope-run:` flags, and stepping through it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/markdown.h"
#include "io/notebook.h"

namespace shardscope {

// What the lesson's `# shardscope-run: --devices P --jax-version V` line asks for.
struct LessonRunFlags {
  std::optional<std::string> devices;
  std::optional<std::string> jax_version;
  std::vector<std::string> words;  // the whole line after the colon, split on spaces
};

// One step: a markdown cell's prose and the code cell that follows it (either may be missing).
struct LessonStep {
  std::string prose;  // markdown, uncommented
  std::vector<MarkdownBlock> blocks;
  std::optional<std::string> code;
};

struct Lesson {
  std::string title;  // the first heading's text, else empty
  LessonRunFlags run;
  std::vector<LessonStep> steps;
};

// Reads the run line among the comment lines before the first `# %%` marker.
[[nodiscard]] LessonRunFlags lesson_run_flags(std::string_view file_text);

// Builds the steps. `percent_script`: markdown cells carry `# ` comment prefixes (a .py file). A code cell
// holding nothing but comments (the run line) is not a step.
[[nodiscard]] Lesson make_lesson(const Notebook& notebook, bool percent_script, std::string_view file_text = {});

// Which step is shown and how far the lesson's code has run. Next runs the next step's code the first time
// it is reached; Previous only moves back (what ran stays run, as in a notebook).
class LessonCursor {
 public:
  LessonCursor() = default;
  explicit LessonCursor(std::size_t step_count) : count_(step_count) {}
  [[nodiscard]] std::size_t current() const { return current_; }
  [[nodiscard]] std::size_t step_count() const { return count_; }
  // Steps whose code has been sent to run: [0, ran()).
  [[nodiscard]] std::size_t ran() const { return ran_; }
  [[nodiscard]] bool at_start() const { return current_ == 0; }
  [[nodiscard]] bool at_end() const { return count_ == 0 || current_ + 1 >= count_; }

  // The first show: the first step, whose code must run. Returns the steps to run now.
  std::vector<std::size_t> start();
  // Moves on one step; returns the steps whose code must run now (none when already run or at the end).
  std::vector<std::size_t> next();
  void previous();
  // Runs the lesson again from scratch (another device preset): every step up to the current one.
  std::vector<std::size_t> rerun();
  // Run all: every step's code runs (again); the shown step stays.
  std::vector<std::size_t> run_all();

 private:
  std::size_t count_ = 0;
  std::size_t current_ = 0;
  std::size_t ran_ = 0;
};

}  // namespace shardscope
