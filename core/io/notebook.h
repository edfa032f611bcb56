// Notebook files as cell lists: Jupytext percent scripts, plain .py files and .ipynb JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

enum class CellKind { kCode, kMarkdown, kRaw };

struct NotebookCell {
  CellKind kind = CellKind::kCode;
  std::string source;
  // .ipynb only: the outputs the notebook recorded, as text (see recorded_output_text).
  std::optional<std::string> recorded_output;
  // .ipynb only: `ename: evalue` of a recorded error output.
  std::optional<std::string> recorded_error;
};

struct Notebook {
  std::vector<NotebookCell> cells;
  [[nodiscard]] std::vector<const NotebookCell*> code_cells() const;
  [[nodiscard]] bool has_recorded_outputs() const;
};

// A Jupytext "percent" script: `# %%` lines start cells (`# %% [markdown]` / `[md]` / `[raw]`
// cells are not code). Text before the first marker is a cell when it holds code. Magics that
// Jupytext writes commented out (`# %timeit ...`, `# !pip ...`) are uncommented, as Jupytext does
// when it opens the script as a notebook.
[[nodiscard]] Notebook parse_percent_script(std::string_view text);

// A .py file: percent cells when it has a `# %%` marker, otherwise one code cell.
[[nodiscard]] Notebook parse_python_script(std::string_view text);

// An .ipynb (nbformat 4). ValueError when the JSON is not a notebook.
[[nodiscard]] Notebook parse_ipynb(std::string_view json_text);

// Reads FILE and picks the parser by extension (.ipynb, anything else is Python). OSError if unreadable.
[[nodiscard]] Notebook load_notebook(const std::string& path);

// A .py file's bytes as UTF-8 text, as CPython reads a source file: a UTF-8 byte-order mark is dropped and a
// PEP 263 `coding:` comment in the first two lines is honoured (UTF-8, ASCII, Latin-1 and Windows-1252 are
// decoded; another declared encoding is CPython's SyntaxError "encoding problem: NAME").
[[nodiscard]] std::string decode_python_source(std::string bytes);

// Removes ANSI SGR escape sequences (`ESC [ ... m`), as the notebook text outputs carry them.
[[nodiscard]] std::string strip_ansi(std::string_view text);

// The comparable text of a cell run: stdout, then every display/execute_result text, each ending with
// a newline; ANSI colour removed and trailing blank lines dropped.
[[nodiscard]] std::string normalize_output_text(std::string_view text);

// First line where two normalized outputs differ (1-based), or nullopt when they are equal.
struct OutputDifference {
  std::size_t line = 0;
  std::string expected;
  std::string actual;
};
[[nodiscard]] std::optional<OutputDifference> first_difference(std::string_view expected, std::string_view actual);

}  // namespace shardscope
