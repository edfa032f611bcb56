// `shardscope run` end to end: scripts and notebooks written to a temp dir, run by the built binary.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace {

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::filesystem::path temp_dir() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("shardscope_run_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write_file(const std::string& name, const std::string& contents) {
  const std::filesystem::path path = temp_dir() / name;
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

CliResult run_cli(const std::vector<std::string>& args, const std::string& environment = "") {
  const std::filesystem::path err_path = temp_dir() / "stderr.txt";
  std::string command = environment + " " + shell_quote(SHARDSCOPE_BINARY);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " 2>" + shell_quote(err_path.string());
  CliResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_file(err_path);
  std::stringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  return result;
}

// A one-code-cell-per-entry notebook; each entry is (source, outputs JSON array text).
std::string notebook(const std::vector<std::pair<std::string, std::string>>& cells) {
  std::string json = R"({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [)";
  json += R"({"cell_type": "markdown", "metadata": {}, "source": ["# A title"]})";
  for (const auto& [source, outputs] : cells) {
    json += R"(, {"cell_type": "code", "metadata": {}, "execution_count": null, "source": )" + source +
            R"(, "outputs": )" + outputs + "}";
  }
  return json + "]}";
}

}  // namespace

TEST_CASE("run a plain script: stdout then the last value") {
  const std::string file = write_file("plain.py", "x = 20\nprint('x is', x)\nx + 1\n");
  const CliResult result = run_cli({"run", file});
  CHECK(result.status == 0);
  CHECK(result.out == "x is 20\n21\n");
  CHECK(result.err.empty());
}

TEST_CASE("run a percent script cell by cell, skipping markdown") {
  const std::string file = write_file("percent.py",
                                      "# %% [markdown]\n# Some prose\n"
                                      "# %%\nvalues = [1, 2, 3]\nsum(values)\n"
                                      "# %%\nprint(len(values))\nvalues[0];\n"
                                      "# %%\n# %timeit -n 1 -r 1 sum(values)\nmax(values)\n");
  const CliResult result = run_cli({"run", file});
  CHECK(result.status == 0);
  const std::string timing_line_end = " per loop (mean \u00b1 std. dev. of 1 run, 1 loop each)\n";
  REQUIRE(result.out.starts_with("6\n3\n"));
  CHECK(result.out.ends_with(timing_line_end + "3\n"));
}

TEST_CASE("a failing cell prints its traceback and the run goes on") {
  const std::string file = write_file("failing.py", "# %%\n{}['k']\n# %%\nprint('next cell')\n");
  const CliResult result = run_cli({"run", file});
  CHECK(result.status == 1);
  CHECK(result.out == "next cell\n");
  CHECK(result.err.find("Traceback (most recent call last):") != std::string::npos);
  CHECK(result.err.ends_with("KeyError: 'k'\n"));
}

TEST_CASE("run an ipynb and check it against its recorded outputs") {
  const std::string passing =
      write_file("passing.ipynb", notebook({{R"j(["a = 2\n", "print('a =', a)\n", "a * 21"])j",
                                             R"([{"output_type": "stream", "name": "stdout", "text": ["a = 2\n"]},
                    {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                     "data": {"text/plain": ["42"]}}])"},
                                            {R"("b = a + 1")", "[]"},
                                            {R"j("int('x')")j", R"j([{"output_type": "error", "ename": "ValueError",
                    "evalue": "invalid literal for int() with base 10: 'x'", "traceback": []}])j"}}));
  const CliResult run = run_cli({"run", passing});
  CHECK(run.out == "a = 2\n42\n");
  const CliResult checked = run_cli({"run", passing, "--check"});
  CHECK(checked.status == 0);
  CHECK(checked.out ==
        "cell  result  first difference\n"
        "   1  pass  \n"
        "   2  pass  \n"
        "   3  pass  \n"
        "3 passed, 0 failed\n");
}

TEST_CASE("check reports the first differing line of a failing cell") {
  const std::string failing = write_file(
      "failing.ipynb",
      notebook({{R"j("print('same')")j", R"j([{"output_type": "stream", "name": "stdout", "text": "same\n"}])j"},
                {R"j("print('one')\nprint('two')")j",
                 R"([{"output_type": "stream", "name": "stdout", "text": "one\nTWO\n"}])"}}));
  const CliResult checked = run_cli({"--check", "run", failing});
  CHECK(checked.status == 2);  // options go after the command
  const CliResult result = run_cli({"run", "--check", failing});
  CHECK(result.status == 1);
  CHECK(result.out ==
        "cell  result  first difference\n"
        "   1  pass  \n"
        "   2  FAIL    line 2: expected 'TWO', got 'two'\n"
        "1 passed, 1 failed\n");
}

TEST_CASE("run validates its options like the other commands") {
  const std::string file = write_file("ok.py", "1\n");
  const CliResult unknown_preset = run_cli({"run", file, "--devices", "tpu-v9-3"});
  CHECK(unknown_preset.status == 1);
  CHECK(unknown_preset.err.starts_with("ValueError: "));
  CHECK(run_cli({"run", file, "--devices", "cpu:4", "--jax-version", "0.4.26"}).status == 0);
  CHECK(run_cli({"run"}).status == 2);
  const CliResult missing = run_cli({"run", (temp_dir() / "absent.py").string()});
  CHECK(missing.status == 1);
  CHECK(missing.err.starts_with("FileNotFoundError: "));
  CHECK(run_cli({"run", file, "--check"}).status == 2);  // a .py has no recorded outputs
}

TEST_CASE("a script is read as python3 reads it: BOM, PEP 263 coding line, its folder on sys.path") {
  const std::string bom = write_file("bom.py", "\xEF\xBB\xBFprint('bom')\n");
  CHECK(run_cli({"run", bom}).out == "bom\n");
  const std::string latin = write_file("latin.py", "# -*- coding: latin-1 -*-\nprint('caf\xE9')\n");
  CHECK(run_cli({"run", latin}).out == "caf\xC3\xA9\n");
  const std::string windows = write_file("windows.py", "#!/usr/bin/env python3\n# coding=cp1252\nprint('\x80')\n");
  CHECK(run_cli({"run", windows}).out == "\xE2\x82\xAC\n");
  const CliResult unknown = run_cli({"run", write_file("koi.py", "# coding: koi8-r\nprint(1)\n")});
  CHECK(unknown.status == 1);
  CHECK(unknown.err == "SyntaxError: encoding problem: koi8-r\n");
  std::filesystem::create_directories(temp_dir() / "tutorial");
  write_file("tutorial/helper_for_run_test.py", "VALUE = 42\n");
  const std::string main = write_file("tutorial/main.py",
                                      "import sys, helper_for_run_test\n"
                                      "print(helper_for_run_test.VALUE, sys.argv[0].endswith('main.py'))\n");
  CHECK(run_cli({"run", main}).out == "42 True\n");
}

TEST_CASE("a malformed notebook is an error naming the cell and the field") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"cells": [{"cell_type": "code", "source": 7}]})",
       "ValueError: not a notebook: cell 1's 'source' must be a string or a list of strings, got number\n"},
      {R"({"cells": [{"cell_type": "code", "source": "1"}, 5]})",
       "ValueError: not a notebook: cell 2 must be an object, got number\n"},
      {R"({"cells": [{"cell_type": "code", "source": ["x = 1", 3]}]})",
       "ValueError: not a notebook: cell 1's 'source' must be a string or a list of strings, got a list holding "
       "number\n"},
      {R"({"cells": [{"cell_type": "code", "source": "", "outputs": [{"output_type": "stream", "text": {}}]}]})",
       "ValueError: not a notebook: cell 1's output's 'text' must be a string or a list of strings, got object\n"},
      {R"({"cells": [{"cell_type": "code", "source": "", "outputs": [{"output_type": "error", "ename": 1}]}]})",
       "ValueError: not a notebook: cell 1's output's 'ename' must be a string, got number\n"},
  };
  for (const auto& [json, expected] : cases) {
    CAPTURE(json);
    const CliResult result = run_cli({"run", write_file("malformed.ipynb", json)});
    CHECK(result.status == 1);
    CHECK(result.err == expected);
  }
}

TEST_CASE("output Python cannot encode fails the cell, not the run") {
  const std::string file = write_file("surrogate.py", "# %%\nprint('\\udcff')\n# %%\nprint('after')\n");
  const CliResult result = run_cli({"run", file});
  CHECK(result.status == 1);
  CHECK(result.out == "after\n");
  CHECK(result.err.find("UnicodeEncodeError: 'utf-8' codec can't encode character '\\udcff' in position 0: "
                        "surrogates not allowed") != std::string::npos);
  const CliResult no_import =
      run_cli({"run", write_file("noimport.py", "import builtins\ndel builtins.__import__\nprint('survived')\n")});
  CHECK(no_import.status == 0);
  CHECK(no_import.out == "survived\n");
  CHECK(no_import.err.empty());
}

TEST_CASE("the REPL survives a 10,000-term expression and runs a block cut off by end of input") {
  std::string terms = "1";
  for (int i = 1; i < 10000; ++i) terms += "+1";
  const std::string input =
      write_file("repl_input.txt", "x = " + terms + "\nprint('alive')\nfor i in range(2):\n    print(i)");
  const CliResult result = run_cli(
      {"repl"}, "SHARDSCOPE_CONFIG_DIR=" + shell_quote((temp_dir() / "config").string()) + " <" + shell_quote(input));
  CHECK(result.status == 0);
  CHECK(result.err.find("RecursionError: maximum recursion depth exceeded during compilation") != std::string::npos);
  CHECK(result.out.find("alive") != std::string::npos);
  CHECK(result.out.find("0\n1\n") != std::string::npos);
}

TEST_CASE("REPL history: in the config folder, the old file moved there, symlinks kept, a cap that is announced") {
  const std::filesystem::path root = temp_dir() / "history";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "home");
  std::filesystem::create_directories(root / "config");
  const std::string input = write_file("history_input.txt", "print(40 + 2)\n");
  const auto repl = [&]() {
    return run_cli({"repl"}, "HOME=" + shell_quote((root / "home").string()) + " SHARDSCOPE_CONFIG_DIR=" +
                                 shell_quote((root / "config").string()) + " <" + shell_quote(input));
  };
  const auto read = [](const std::filesystem::path& path) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
  };
  std::ofstream(root / "home" / ".shardscope_history") << "old_entry\n";
  const CliResult migrated = repl();
  CHECK(migrated.out.find("42") != std::string::npos);
  CHECK(migrated.err.find("moved history from") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(root / "home" / ".shardscope_history"));
  CHECK(read(root / "config" / "repl_history") == "old_entry\n");
  // A symlinked history stays a symlink; its target is what is rewritten.
  std::filesystem::remove(root / "config" / "repl_history");
  std::ofstream(root / "kept_history") << "linked_entry\n";
  std::filesystem::create_symlink(root / "kept_history", root / "config" / "repl_history");
  CHECK(repl().status == 0);
  CHECK(std::filesystem::is_symlink(root / "config" / "repl_history"));
  CHECK(read(root / "kept_history") == "linked_entry\n");
  // A directory in its place: said once, and nothing written beside it.
  std::filesystem::remove(root / "config" / "repl_history");
  std::filesystem::create_directories(root / "config" / "repl_history");
  const CliResult directory = repl();
  CHECK(directory.err.find("is a directory, not a file: history is neither loaded nor saved") != std::string::npos);
  CHECK(directory.out.find("42") != std::string::npos);
  CHECK(std::distance(std::filesystem::directory_iterator(root / "config"), std::filesystem::directory_iterator()) ==
        1);
  // Past the cap: the newest 10,000 entries are kept, and the user is told.
  std::filesystem::remove_all(root / "config" / "repl_history");
  {
    std::ofstream big(root / "config" / "repl_history");
    for (int i = 0; i < 20000; ++i) big << "entry_" << i << "\n";
  }
  const CliResult capped = repl();
  CHECK(capped.err.find("holds 20000 entries; keeping the newest 10000 (the history cap)") != std::string::npos);
  const std::string kept = read(root / "config" / "repl_history");
  CHECK(kept.starts_with("entry_10000\n"));
  CHECK(std::count(kept.begin(), kept.end(), '\n') == 10000);
}

TEST_CASE("sys.exit in a script ends the run with its status") {
  const std::string file =
      write_file("exit.py", "# %%\nimport sys\nprint('before')\nsys.exit(4)\n# %%\nprint('never')\n");
  const CliResult result = run_cli({"run", file});
  CHECK(result.status == 4);
  CHECK(result.out == "before\n");
}

TEST_CASE("XLA_FLAGS and JAX_PLATFORMS reach the Python code") {
  const std::string file = write_file("env.py", "import os\nos.environ['XLA_FLAGS'], os.environ['JAX_PLATFORMS']\n");
  const CliResult result =
      run_cli({"run", file}, "XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu");
  CHECK(result.out == "('--xla_force_host_platform_device_count=8', 'cpu')\n");
}

TEST_CASE("device choice: --devices, then SHARDSCOPE_DEVICES, then XLA_FLAGS with JAX_PLATFORMS=cpu") {
  const std::string file = write_file("devices.py", "import jax\nprint(len(jax.devices()), jax.devices()[0])\n");
  CHECK(run_cli({"run", file}).out == "8 TPU_0(process=0,(0,0,0,0))\n");
  CHECK(run_cli({"run", file}, "SHARDSCOPE_DEVICES=cpu:4").out == "4 cpu:0\n");
  CHECK(run_cli({"run", file, "--devices", "gpu:2"}, "SHARDSCOPE_DEVICES=cpu:4").out == "2 cuda:0\n");
  CHECK(run_cli({"run", file}, "XLA_FLAGS=--xla_force_host_platform_device_count=6 JAX_PLATFORMS=cpu").out ==
        "6 cpu:0\n");
  const CliResult unknown = run_cli({"run", file}, "SHARDSCOPE_DEVICES=tpu-v9-1");
  CHECK(unknown.status != 0);
  CHECK(unknown.err.find("tpu-v9-1") != std::string::npos);
}

TEST_CASE("Ctrl-C stops a long engine call: the cell ends in KeyboardInterrupt within moments") {
  // About 200 x 17 GFLOP in one jit call (tens of seconds): SIGINT after 3 s must reach the engine, which
  // holds the interpreter until the program returns.
  const std::string script = write_file("long_engine_call.py",
                                        "# %%\nimport jax, jax.numpy as jnp\n"
                                        "def many(x):\n    for _ in range(200):\n        x = jnp.tanh(x @ x)\n"
                                        "    return x\nprint('start', flush=True)\n"
                                        "y = jax.jit(many)(jnp.ones((2048, 2048)))\nprint('end')\n");
  const auto started = std::chrono::steady_clock::now();
  const CliResult result = run_cli({"run", script}, "timeout -s INT 3");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(result.out);
  INFO(result.err);
  CHECK(seconds < 15);
  CHECK(result.out.find("start") != std::string::npos);
  CHECK(result.out.find("end") == std::string::npos);
  CHECK(result.err.find("KeyboardInterrupt") != std::string::npos);
  CHECK(result.err.find("EMPTY MESSAGE") == std::string::npos);
}

TEST_CASE("the array class and jax.tree_map's deprecation follow the JAX version profile") {
  const std::string script = write_file("array_class.py",
                                        "# %%\nimport jax, jax.numpy as jnp\nprint(type(jnp.ones(2)))\n"
                                        "print(jax.tree_map(lambda a: a + 1, [1, 2]))\n");
  const std::string warning = "DeprecationWarning: jax.tree_map is deprecated: use jax.tree.map";
  const CliResult old = run_cli({"run", script, "--jax-version", "0.4.1"});
  CHECK(old.out == "<class 'jaxlib.xla_extension.Array'>\n[2, 3]\n");
  CHECK(old.err.find(warning) == std::string::npos);
  const CliResult mid = run_cli({"run", script, "--jax-version", "0.4.26"});
  CHECK(mid.out == "<class 'jaxlib.xla_extension.ArrayImpl'>\n[2, 3]\n");
  CHECK(mid.err.find(warning) != std::string::npos);
  CHECK(mid.err.find("  print(jax.tree_map(lambda a: a + 1, [1, 2]))") != std::string::npos);
  // 0.6.0 made the alias an AttributeError naming its removal, and 0.9.0 dropped the name altogether.
  const CliResult removed = run_cli({"run", script, "--jax-version", "0.7.0"});
  CHECK(removed.out == "<class 'jaxlib._jax.ArrayImpl'>\n");
  CHECK(removed.err.find("AttributeError: jax.tree_map was removed in JAX v0.6.0: use jax.tree.map (jax v0.4.25 or "
                         "newer) or jax.tree_util.tree_map (any JAX version).") != std::string::npos);
  const CliResult now = run_cli({"run", script, "--jax-version", "0.11.2"});
  CHECK(now.err.find("AttributeError: module 'jax' has no attribute 'tree_map'") != std::string::npos);
  CHECK(now.err.find(warning) == std::string::npos);
}
