// Notebook parsing: Jupytext percent cells, plain scripts, .ipynb cells and recorded outputs.
#include "io/notebook.h"

#include <doctest/doctest.h>

#include "base/error.h"

using namespace shardscope;

TEST_CASE("percent script splits cells and skips markdown") {
  const std::string script =
      "# ---\n# jupyter:\n#   jupytext:\n#     format_name: percent\n# ---\n\n"
      "import jax\n\n"
      "# %% [markdown]\n# # Title\n# Some text\n\n"
      "# %%\nx = 1\nx + 1\n\n"
      "# %% Second cell [md]\n# more prose\n"
      "#%%\n\n\ny = 2\n\n\n"
      "# %% [raw]\nraw text\n";
  const Notebook notebook = parse_percent_script(script);
  REQUIRE(notebook.cells.size() == 6);
  CHECK(notebook.cells[0].kind == CellKind::kCode);
  CHECK(notebook.cells[0].source == "import jax");
  CHECK(notebook.cells[1].kind == CellKind::kMarkdown);
  CHECK(notebook.cells[2].source == "x = 1\nx + 1");
  CHECK(notebook.cells[3].kind == CellKind::kMarkdown);
  CHECK(notebook.cells[4].kind == CellKind::kCode);
  CHECK(notebook.cells[4].source == "y = 2");
  CHECK(notebook.cells[5].kind == CellKind::kRaw);
  const auto code = notebook.code_cells();
  REQUIRE(code.size() == 3);
  CHECK(code[1]->source == "x = 1\nx + 1");
}

TEST_CASE("percent script without leading code starts at the first marker") {
  const Notebook notebook = parse_percent_script("\n\n# %%\na = 1\n# %%\nb = 2\n");
  REQUIRE(notebook.cells.size() == 2);
  CHECK(notebook.cells[0].source == "a = 1");
  CHECK(notebook.cells[1].source == "b = 2");
}

TEST_CASE("percent script uncomments the magics Jupytext comments out") {
  const Notebook notebook = parse_percent_script(
      "# %%\n# %timeit f(x)\n# !pip install -U jax\n# a comment\n# 100% sure\n#%%\n# %%timeit\nf(x)\n");
  REQUIRE(notebook.cells.size() == 2);
  CHECK(notebook.cells[0].source == "%timeit f(x)\n!pip install -U jax\n# a comment\n# 100% sure");
  CHECK(notebook.cells[1].source == "%%timeit\nf(x)");
}

TEST_CASE("a plain script is one cell") {
  const std::string script = "import os\n\nprint(os.sep)\n";
  const Notebook notebook = parse_python_script(script);
  REQUIRE(notebook.cells.size() == 1);
  CHECK(notebook.cells[0].source == script);
  CHECK(parse_python_script("a = 1\n# %%\nb = 2\n").cells.size() == 2);
}

TEST_CASE("ipynb code cells and recorded outputs") {
  const std::string ipynb = R"json({
    "nbformat": 4, "nbformat_minor": 5, "metadata": {},
    "cells": [
      {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"]},
      {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["x = 1\n", "print(x)\n", "x + 1"],
       "outputs": [
         {"output_type": "stream", "name": "stdout", "text": ["1\n"]},
         {"output_type": "stream", "name": "stderr", "text": ["warning\n"]},
         {"output_type": "execute_result", "execution_count": 1, "metadata": {},
          "data": {"text/plain": ["2"]}}]},
      {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": "import os", "outputs": []},
      {"cell_type": "code", "metadata": {}, "execution_count": 3, "source": "1/0",
       "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                    "traceback": ["..."]}]},
      {"cell_type": "code", "metadata": {}, "execution_count": 4, "source": "show()",
       "outputs": [{"output_type": "display_data", "metadata": {},
                    "data": {"text/plain": "\u001b[38;2;0;0;0;48;2;57;59;121m  CPU 0  \u001b[0m\n",
                             "text/html": "<pre>...</pre>"}}]}
    ]})json";
  const Notebook notebook = parse_ipynb(ipynb);
  REQUIRE(notebook.cells.size() == 5);
  CHECK(notebook.cells[0].kind == CellKind::kMarkdown);
  CHECK(notebook.cells[1].source == "x = 1\nprint(x)\nx + 1");
  REQUIRE(notebook.cells[1].recorded_output.has_value());
  CHECK(*notebook.cells[1].recorded_output == "1\n2\n");
  CHECK_FALSE(notebook.cells[2].recorded_output.has_value());
  CHECK(notebook.cells[3].recorded_error == std::optional<std::string>("ZeroDivisionError: division by zero"));
  CHECK(normalize_output_text(*notebook.cells[4].recorded_output) == "  CPU 0  \n");
  CHECK(notebook.has_recorded_outputs());
  CHECK(notebook.code_cells().size() == 4);
}

TEST_CASE("ipynb errors are ValueErrors") {
  CHECK_THROWS_AS((void)parse_ipynb("{not json"), Error);
  CHECK_THROWS_WITH_AS((void)parse_ipynb("[1, 2]"), "not a notebook: no 'cells' list", Error);
  // Found by fuzzing: a number too large for a double is nlohmann's out_of_range, not a parse_error.
  CHECK_THROWS_WITH_AS((void)parse_ipynb(R"({"cells": [], "n": 1e999})"),
                       "not a notebook: number overflow parsing '1e999'", Error);
}

TEST_CASE("output comparison ignores colour and trailing blank lines") {
  CHECK(strip_ansi("\x1b[1;31mred\x1b[0m plain") == "red plain");
  CHECK(normalize_output_text("a\nb\n\n\n") == "a\nb\n");
  CHECK_FALSE(first_difference("a\nb\n", "a\nb").has_value());
  const auto difference = first_difference("a\nb\nc\n", "a\nB\nc\n");
  REQUIRE(difference.has_value());
  CHECK(difference->line == 2);
  CHECK(difference->expected == "b");
  CHECK(difference->actual == "B");
  const auto missing = first_difference("a\nb\n", "a\n");
  REQUIRE(missing.has_value());
  CHECK(missing->line == 2);
  CHECK(missing->actual == "<no line>");
}

TEST_CASE("python sources are decoded as CPython reads them: BOM, PEP 263 cookie") {
  CHECK(decode_python_source("\xEF\xBB\xBFx = 1\n") == "x = 1\n");
  CHECK(decode_python_source("# -*- coding: latin-1 -*-\ns = '\xE9'\n") ==
        "# -*- coding: latin-1 -*-\ns = '\xC3\xA9'\n");
  CHECK(decode_python_source("#!/usr/bin/python\n# vim: set fileencoding=cp1252 :\n'\x80'") ==
        "#!/usr/bin/python\n# vim: set fileencoding=cp1252 :\n'\xE2\x82\xAC'");
  CHECK(decode_python_source("# coding: utf-8\n'\xC3\xA9'") == "# coding: utf-8\n'\xC3\xA9'");
  // A cookie below a line of code is not one.
  CHECK(decode_python_source("x = 1\n# coding: latin-1\n'\xE9'") == "x = 1\n# coding: latin-1\n'\xE9'");
  CHECK_THROWS_WITH_AS((void)decode_python_source("# coding: koi8-r\n"), "encoding problem: koi8-r", Error);
  CHECK_THROWS_WITH_AS((void)decode_python_source("\xEF\xBB\xBF# coding: latin-1\n"),
                       "encoding problem: latin-1 with BOM", Error);
}

TEST_CASE("a malformed ipynb names the cell and the field") {
  CHECK_THROWS_WITH_AS((void)parse_ipynb(R"({"cells": [{"source": 7}]})"),
                       "not a notebook: cell 1's 'source' must be a string or a list of strings, got number", Error);
  CHECK_THROWS_WITH_AS((void)parse_ipynb(R"({"cells": [{"source": ""}, []]})"),
                       "not a notebook: cell 2 must be an object, got array", Error);
  CHECK_THROWS_WITH_AS((void)parse_ipynb(R"({"cells": [{"source": "", "outputs": 3}]})"),
                       "not a notebook: cell 1's 'outputs' must be a list, got number", Error);
  CHECK(parse_ipynb(R"({"cells": [{"source": ["a", "b"], "outputs": [{"output_type": "stream"}]}]})").cells[0].source ==
        "ab");
}
