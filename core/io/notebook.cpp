// Notebook parsing: cells of percent scripts and .ipynb files, and the text a cell's outputs compare by.
#include "io/notebook.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "io/json_errors.h"

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

// nbformat's multiline strings: a string or a list of strings; `what` names the field in the error.
std::string json_text(const nlohmann::json& value, const std::string& what) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) {
    throw value_error("not a notebook: " + what + " must be a string or a list of strings, got " + value.type_name());
  }
  std::string joined;
  for (const auto& piece : value) {
    if (!piece.is_string()) {
      throw value_error("not a notebook: " + what + " must be a string or a list of strings, got a list holding " +
                        std::string(piece.type_name()));
    }
    joined += piece.get<std::string>();
  }
  return joined;
}

std::string string_field(const nlohmann::json& object, const char* key, const std::string& fallback,
                         const std::string& what) {
  if (!object.contains(key)) return fallback;
  const nlohmann::json& value = object[key];
  if (!value.is_string()) {
    throw value_error("not a notebook: " + what + "'s '" + key + "' must be a string, got " + value.type_name());
  }
  return value.get<std::string>();
}

std::string cell_source(const nlohmann::json& cell, const std::string& what) {
  if (!cell.contains("source")) return "";
  return json_text(cell["source"], what + "'s 'source'");
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
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number too large for a double is out_of_range.406.
    throw value_error("not a notebook: " + json_error_text(e));
  }
  if (!document.is_object() || !document.contains("cells") || !document["cells"].is_array())
    throw value_error("not a notebook: no 'cells' list");
  Notebook notebook;
  std::size_t number = 0;
  // Every field is checked before it is read: a hand-edited or truncated file gets an error naming the cell
  // and the field, never the JSON library's own exception.
  for (const auto& cell : document["cells"]) {
    const std::string what = "cell " + std::to_string(++number);
    if (!cell.is_object()) throw value_error("not a notebook: " + what + " must be an object, got " + cell.type_name());
    NotebookCell parsed;
    const std::string type = string_field(cell, "cell_type", "code", what);
    parsed.kind = type == "code" ? CellKind::kCode : type == "markdown" ? CellKind::kMarkdown : CellKind::kRaw;
    parsed.source = cell_source(cell, what);
    const nlohmann::json outputs = cell.contains("outputs") ? cell["outputs"] : nlohmann::json::array();
    if (!outputs.is_array()) {
      throw value_error("not a notebook: " + what + "'s 'outputs' must be a list, got " + outputs.type_name());
    }
    if (parsed.kind == CellKind::kCode && !outputs.empty()) {
      std::string recorded;
      for (const auto& output : outputs) {
        const std::string where = what + "'s output";
        if (!output.is_object()) {
          throw value_error("not a notebook: " + where + " must be an object, got " + output.type_name());
        }
        const std::string output_type = string_field(output, "output_type", "", where);
        if (output_type == "stream") {
          // Warnings and logs go to stderr; only stdout is compared.
          if (string_field(output, "name", "stdout", where) == "stdout" && output.contains("text")) {
            append_with_newline(recorded, json_text(output["text"], where + "'s 'text'"));
          }
        } else if (output_type == "execute_result" || output_type == "display_data") {
          if (output.contains("data") && output["data"].is_object() && output["data"].contains("text/plain"))
            append_with_newline(recorded, json_text(output["data"]["text/plain"], where + "'s 'text/plain'"));
        } else if (output_type == "error") {
          parsed.recorded_error =
              string_field(output, "ename", "", where) + ": " + string_field(output, "evalue", "", where);
        }
      }
      parsed.recorded_output = recorded;
    }
    notebook.cells.push_back(std::move(parsed));
  }
  return notebook;
}

namespace {

// PEP 263's cookie, `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`, on one line; empty when absent.
std::string coding_cookie(std::string_view line) {
  const std::size_t start = line.find_first_not_of(" \t\f");
  if (start == std::string_view::npos || line[start] != '#') return "";
  for (std::size_t at = line.find("coding", start); at != std::string_view::npos; at = line.find("coding", at + 1)) {
    std::size_t i = at + 6;
    if (i >= line.size() || (line[i] != ':' && line[i] != '=')) continue;
    ++i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string name;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) != 0 || line[i] == '-' ||
                               line[i] == '_' || line[i] == '.')) {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(line[i++])));
    }
    if (!name.empty()) return name;
  }
  return "";
}

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Windows-1252's 0x80-0x9F (0 where the code page leaves a byte undefined).
constexpr uint32_t kCp1252High[32] = {0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                      0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
                                      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                      0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

}  // namespace

std::string decode_python_source(std::string bytes) {
  const bool bom = bytes.starts_with("\xEF\xBB\xBF");
  if (bom) bytes.erase(0, 3);
  std::string encoding;
  std::size_t line_start = 0;
  for (int line = 0; line < 2 && line_start <= bytes.size() && encoding.empty(); ++line) {
    const std::size_t end = std::min(bytes.find('\n', line_start), bytes.size());
    const std::string_view text = std::string_view(bytes).substr(line_start, end - line_start);
    encoding = coding_cookie(text);
    // The cookie may sit on the second line only below a first line that is a comment or blank.
    if (encoding.empty() && text.find_first_not_of(" \t\f\r") != std::string_view::npos &&
        text[text.find_first_not_of(" \t\f\r")] != '#') {
      break;
    }
    line_start = end + 1;
  }
  std::replace(encoding.begin(), encoding.end(), '_', '-');
  if (encoding.empty() || encoding == "utf-8" || encoding == "utf8" || encoding.starts_with("utf-8-") ||
      encoding == "ascii" || encoding == "us-ascii") {
    return bytes;
  }
  if (bom) throw Error("SyntaxError", "encoding problem: " + encoding + " with BOM");
  const bool latin1 = encoding == "latin-1" || encoding == "latin1" || encoding == "iso-8859-1" ||
                      encoding == "iso8859-1" || encoding == "l1" || encoding.starts_with("iso-8859-1-") ||
                      encoding.starts_with("latin-1-");
  const bool cp1252 = encoding == "cp1252" || encoding == "windows-1252";
  if (!latin1 && !cp1252) throw Error("SyntaxError", "encoding problem: " + encoding);
  std::string text;
  text.reserve(bytes.size());
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    uint32_t code = byte;
    if (cp1252 && byte >= 0x80 && byte < 0xA0) {
      code = kCp1252High[byte - 0x80];
      if (code == 0) {
        throw Error("SyntaxError", "(unicode error) 'charmap' codec can't decode byte 0x" +
                                       std::string(1, "0123456789abcdef"[byte >> 4]) +
                                       std::string(1, "0123456789abcdef"[byte & 15]) +
                                       ": character maps to <undefined>");
      }
    }
    append_utf8(text, code);
  }
  return text;
}

Notebook load_notebook(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("FileNotFoundError", "[Errno 2] No such file or directory: '" + path + "'");
  std::stringstream contents;
  contents << file.rdbuf();
  if (path.ends_with(".ipynb")) return parse_ipynb(contents.str());
  return parse_python_script(decode_python_source(contents.str()));
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
