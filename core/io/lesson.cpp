// Lessons as steps of prose and code, and the cursor the lesson player and presentation mode step with.
#include "io/lesson.h"

#include <sstream>

namespace shardscope {
namespace {

constexpr std::string_view kRunHeader = "# shardscope-run:";

bool only_comments(const std::string& source) {
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find_first_not_of(" \t\r");
    if (at != std::string::npos && line[at] != '#') return false;
  }
  return true;
}

std::string first_heading(const std::vector<MarkdownBlock>& blocks) {
  for (const MarkdownBlock& block : blocks) {
    if (block.kind == MarkdownBlockKind::kHeading) return plain_text(block.spans);
  }
  return "";
}

}  // namespace

LessonRunFlags lesson_run_flags(std::string_view file_text) {
  LessonRunFlags flags;
  std::istringstream lines{std::string(file_text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# %%") || line.starts_with("#%%")) break;
    if (!line.starts_with(kRunHeader)) continue;
    std::istringstream words(line.substr(kRunHeader.size()));
    for (std::string word; words >> word;) flags.words.push_back(word);
    for (std::size_t i = 0; i + 1 < flags.words.size(); ++i) {
      if (flags.words[i] == "--devices") flags.devices = flags.words[i + 1];
      if (flags.words[i] == "--jax-version") flags.jax_version = flags.words[i + 1];
    }
    break;
  }
  return flags;
}

Lesson make_lesson(const Notebook& notebook, bool percent_script, std::string_view file_text) {
  Lesson lesson;
  lesson.run = lesson_run_flags(file_text);
  std::optional<LessonStep> pending;  // prose waiting for its code
  for (const NotebookCell& cell : notebook.cells) {
    if (cell.kind == CellKind::kMarkdown) {
      if (pending) lesson.steps.push_back(std::move(*pending));
      pending = LessonStep{};
      pending->prose = percent_script ? uncomment_markdown(cell.source) : cell.source;
      pending->blocks = parse_markdown(pending->prose);
      if (lesson.title.empty()) lesson.title = first_heading(pending->blocks);
    } else if (cell.kind == CellKind::kCode) {
      if (only_comments(cell.source)) continue;
      LessonStep step = pending ? std::move(*pending) : LessonStep{};
      pending.reset();
      step.code = cell.source;
      lesson.steps.push_back(std::move(step));
    }
  }
  if (pending) lesson.steps.push_back(std::move(*pending));
  return lesson;
}

std::vector<std::size_t> LessonCursor::start() {
  current_ = 0;
  ran_ = 0;
  if (count_ == 0) return {};
  ran_ = 1;
  return {0};
}

std::vector<std::size_t> LessonCursor::next() {
  if (count_ == 0) return {};
  if (ran_ == 0) return start();
  if (at_end()) return {};
  ++current_;
  std::vector<std::size_t> due;
  while (ran_ <= current_) due.push_back(ran_++);
  return due;
}

void LessonCursor::previous() {
  if (current_ > 0) --current_;
}

std::vector<std::size_t> LessonCursor::rerun() {
  std::vector<std::size_t> due;
  if (count_ == 0) return due;
  for (std::size_t i = 0; i <= current_; ++i) due.push_back(i);
  ran_ = current_ + 1;
  return due;
}

std::vector<std::size_t> LessonCursor::run_all() {
  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < count_; ++i) due.push_back(i);
  ran_ = count_;
  return due;
}

}  // namespace shardscope
