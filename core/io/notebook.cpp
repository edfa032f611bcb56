// Notebook parsing: cells of percent scripts and .ipynb files, and the text a cell's outputs compare by.
#include "io/notebook.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"

namespace shardscope {

namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (std::string& line : lines) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
  }
  return lines;
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

std::string_view trim_left(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  return first == std::string_view::npos ? std::string_view{} : line.substr(first);
}

// `# %%`, `#%%` or `# %% title [markdown] key="value"`: the `%%` is followed by nothing or a space.
bool is_cell_marker(std::string_view line) {
  std::string_view rest = trim_left(line);
  if (!rest.starts_with('#')) return false;
  rest = trim_left(rest.substr(1));
  if (!rest.starts_with("%%")) return false;
  rest.remove_prefix(2);
  return rest.empty() || rest.front() == ' ' || rest.front() == '\t';
}

CellKind marker_kind(std::string_view line) {
  if (line.find("[markdown]") != std::string_view::npos || line.find("[md]") != std::string_view::npos)
    return CellKind::kMarkdown;
  if (line.find("[raw]") != std::string_view::npos) return CellKind::kRaw;
  return CellKind::kCode;
}

// Jupytext writes magics as comments in scripts (`# %timeit f(x)`, `# !pip install jax`).
std::string uncomment_magic(const std::string& line) {
  const std::size_t hash = line.find_first_not_of(" \t");
  if (hash == std::string::npos || line[hash] != '#') return line;
  std::size_t body = hash + 1;
  if (body < line.size() && line[body] == ' ') ++body;
  if (body >= line.size()) return line;
  const char lead = line[body];
  std::size_t name = body + 1;
  if (lead == '%' && name < line.size() && line[name] == '%') ++name;
  if ((lead != '%' && lead != '!') || name >= line.size()) return line;
  const char first = line[name];
  const bool magic_name = std::isalpha(static_cast<unsigned char>(first)) != 0;
  if (!magic_name) return line;
  return line.substr(0, hash) + line.substr(body);
}

std::string join_cell(const std::vector<std::string>& lines, std::size_t begin, std::size_t end) {
  while (begin < end && is_blank(lines[begin])) ++begin;
  while (end > begin && is_blank(lines[end - 1])) --end;
  std::string joined;
  for (std::size_t i = begin; i < end; ++i) {
    if (i > begin) joined += '\n';
    joined += lines[i];
  }
  return joined;
}

// Jupytext's YAML header: `# ---` ... `# ---` at the top of the file.
std::size_t skip_header(const std::vector<std::string>& lines) {
  if (lines.empty() || lines[0] != "# ---") return 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i] == "# ---") return i + 1;
  }
  return 0;
}

std::string cell_source(const nlohmann::json& cell) {
  const nlohmann::json& source = cell.value("source", nlohmann::json(""));
  if (source.is_string()) return source.get<std::string>();
  std::string joined;
  for (const auto& piece : source) joined += piece.get<std::string>();
  return joined;
}

std::string json_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  std::string joined;
  for (const auto& piece : value) joined += piece.get<std::string>();
  return joined;
}

void append_with_newline(std::string& out, const std::string& piece) {
  out += piece;
  if (!piece.empty() && piece.back() != '\n') out += '\n';
}

}  // namespace

std::vector<const NotebookCell*> Notebook::code_cells() const {
  std::vector<const NotebookCell*> code;
  for (const NotebookCell& cell : cells) {
    if (cell.kind == CellKind::kCode) code.push_back(&cell);
  }
  return code;
}

bool Notebook::has_recorded_outputs() const {
  for (const NotebookCell& cell : cells) {
    if (cell.recorded_output) return true;
  }
  return false;
}

Notebook parse_percent_script(std::string_view text) {
  const std::vector<std::string> lines = split_lines(text);
  Notebook notebook;
  std::size_t start = skip_header(lines);
  CellKind kind = CellKind::kCode;
  bool explicit_cell = false;
  auto flush = [&](std::size_t end) {
    std::vector<std::string> body(lines.begin() + static_cast<std::ptrdiff_t>(start),
                                  lines.begin() + static_cast<std::ptrdiff_t>(end));
    if (kind == CellKind::kCode) {
      for (std::string& line : body) line = uncomment_magic(line);
    }
    std::string source = join_cell(body, 0, body.size());
    // Text before the first marker is a cell only when it holds something.
    if (explicit_cell || !source.empty()) notebook.cells.push_back({kind, std::move(source), {}, {}});
  };
  for (std::size_t i = start; i < lines.size(); ++i) {
    if (!is_cell_marker(lines[i])) continue;
    flush(i);
    start = i + 1;
    kind = marker_kind(lines[i]);
    explicit_cell = true;
  }
  flush(lines.size());
  return notebook;
}

Notebook parse_python_script(std::string_view text) {
  for (const std::string& line : split_lines(text)) {
    if (is_cell_marker(line)) return parse_percent_script(text);
  }
  Notebook notebook;
  notebook.cells.push_back({CellKind::kCode, std::string(text), {}, {}});
  return notebook;
}

Notebook parse_ipynb(std::string_view json_text_in) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(json_text_in);
  } catch (const nlohmann::json::parse_error& e) {
    throw value_error(std::string("not a notebook: ") + e.what());
  }
  if (!document.is_object() || !document.contains("cells") || !document["cells"].is_array())
    throw value_error("not a notebook: no 'cells' list");
  Notebook notebook;
  for (const auto& cell : document["cells"]) {
    NotebookCell parsed;
    const std::string type = cell.value("cell_type", "code");
    parsed.kind = type == "code" ? CellKind::kCode : type == "markdown" ? CellKind::kMarkdown : CellKind::kRaw;
    parsed.source = cell_source(cell);
    if (parsed.kind == CellKind::kCode && cell.contains("outputs") && !cell["outputs"].empty()) {
      std::string recorded;
      for (const auto& output : cell["outputs"]) {
        const std::string output_type = output.value("output_type", "");
        if (output_type == "stream") {
          // Warnings and logs go to stderr; only stdout is compared.
          if (output.value("name", "stdout") == "stdout") append_with_newline(recorded, json_text(output["text"]));
        } else if (output_type == "execute_result" || output_type == "display_data") {
          if (output.contains("data") && output["data"].contains("text/plain"))
            append_with_newline(recorded, json_text(output["data"]["text/plain"]));
        } else if (output_type == "error") {
          parsed.recorded_error = output.value("ename", "") + ": " + output.value("evalue", "");
        }
      }
      parsed.recorded_output = recorded;
    }
    notebook.cells.push_back(std::move(parsed));
  }
  return notebook;
}

Notebook load_notebook(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("FileNotFoundError", "[Errno 2] No such file or directory: '" + path + "'");
  std::stringstream contents;
  contents << file.rdbuf();
  if (path.ends_with(".ipynb")) return parse_ipynb(contents.str());
  return parse_python_script(contents.str());
}

std::string strip_ansi(std::string_view text) {
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < text.size() && ((text[j] >= '0' && text[j] <= '9') || text[j] == ';')) ++j;
      if (j < text.size() && text[j] == 'm') {
        i = j;
        continue;
      }
    }
    plain += text[i];
  }
  return plain;
}

std::string normalize_output_text(std::string_view text) {
  std::vector<std::string> lines = split_lines(strip_ansi(text));
  while (!lines.empty() && is_blank(lines.back())) lines.pop_back();
  std::string normalized;
  for (const std::string& line : lines) normalized += line + "\n";
  return normalized;
}

std::optional<OutputDifference> first_difference(std::string_view expected, std::string_view actual) {
  const std::vector<std::string> want = split_lines(normalize_output_text(expected));
  const std::vector<std::string> got = split_lines(normalize_output_text(actual));
  const std::size_t count = std::max(want.size(), got.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::string w = i < want.size() ? want[i] : "<no line>";
    const std::string g = i < got.size() ? got[i] : "<no line>";
    if (i >= want.size() || i >= got.size() || w != g) return OutputDifference{i + 1, w, g};
  }
  return std::nullopt;
}

}  // namespace shardscope
