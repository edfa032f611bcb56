// Lessons: steps from a notebook's cells, the run line, and the cursor's Next/Previous/re-run.
#include "io/lesson.h"

#include <doctest/doctest.h>

using namespace shardscope;

namespace {

constexpr const char* kLesson =
    "# shardscope-run: --devices cpu:8 --jax-version 0.11.2\n"
    "# %% [markdown]\n# # Lesson 2: partition specs\n#\n# Split **rows**.\n\n"
    "# %%\nimport jax\n\n"
    "# %%\nx = 1\n\n"
    "# %% [markdown]\n# Only prose.\n\n"
    "# %% [markdown]\n# ## Predict, then run\n\n"
    "# %%\nprint(x)\n";

}  // namespace

TEST_CASE("a lesson's steps pair prose with the code after it, the run line is not a step") {
  const Lesson lesson = make_lesson(parse_percent_script(kLesson), true, kLesson);
  CHECK(lesson.title == "Lesson 2: partition specs");
  CHECK(lesson.run.devices == "cpu:8");
  CHECK(lesson.run.jax_version == "0.11.2");
  REQUIRE(lesson.steps.size() == 4);
  CHECK(lesson.steps[0].prose == "# Lesson 2: partition specs\n\nSplit **rows**.");
  CHECK(lesson.steps[0].blocks.size() == 2);
  CHECK(lesson.steps[0].code == "import jax");
  CHECK(lesson.steps[1].prose.empty());
  CHECK(lesson.steps[1].code == "x = 1");
  CHECK(lesson.steps[2].prose == "Only prose.");
  CHECK_FALSE(lesson.steps[2].code);
  CHECK(lesson.steps[3].code == "print(x)");
  // An .ipynb's markdown has no comment prefixes to remove.
  Notebook notebook;
  notebook.cells.push_back({CellKind::kMarkdown, "# Title", std::nullopt, std::nullopt});
  const Lesson plain = make_lesson(notebook, false);
  CHECK(plain.title == "Title");
  CHECK_FALSE(plain.run.devices);
}

TEST_CASE("the run line is only read before the first cell") {
  CHECK_FALSE(lesson_run_flags("# %%\n# shardscope-run: --devices cpu:8\n").devices);
  CHECK(lesson_run_flags("# shardscope-run: --devices tpu-v4-16\n# %%\n").devices == "tpu-v4-16");
}

TEST_CASE("the cursor runs each step once, going forward, back only moves, re-run repeats up to here") {
  LessonCursor cursor(3);
  CHECK(cursor.next() == std::vector<std::size_t>{0});  // the first Next starts the lesson
  CHECK(cursor.current() == 0);
  CHECK(cursor.next() == std::vector<std::size_t>{1});
  cursor.previous();
  CHECK(cursor.current() == 0);
  CHECK(cursor.next().empty());  // step 1 already ran
  CHECK(cursor.next() == std::vector<std::size_t>{2});
  CHECK(cursor.at_end());
  CHECK(cursor.next().empty());
  CHECK(cursor.current() == 2);
  cursor.previous();
  CHECK(cursor.rerun() == std::vector<std::size_t>{0, 1});
  CHECK(cursor.ran() == 2);
  CHECK(cursor.next() == std::vector<std::size_t>{2});  // the fresh namespace has not run step 2 yet
  CHECK(LessonCursor(0).next().empty());
  LessonCursor fresh(2);
  CHECK(fresh.start() == std::vector<std::size_t>{0});
  fresh.previous();
  CHECK(fresh.at_start());
  CHECK(fresh.run_all() == std::vector<std::size_t>{0, 1});
  CHECK(fresh.next().empty());  // moves to step 1, which ran
  CHECK(fresh.current() == 1);
}
