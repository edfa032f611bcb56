// The embedded Python host: notebook display rules, captured streams, errors, interrupts, magics.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "base/python_format.h"
#include "python/host.h"

using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

// The line Python prints last for an exception: the traceback's final line.
std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

}  // namespace

TEST_CASE("the last expression is shown as its repr") {
  const CellResult result = run_cell("x = 6\ny = 7\nx * y");
  CHECK(result.ok());
  REQUIRE(result.output.has_value());
  CHECK(*result.output == "42");
  CHECK(*run_cell("'a' + 'b'").output == "'ab'");
  CHECK(*run_cell("(1,)").output == "(1,)");
}

TEST_CASE("None, statements and a trailing semicolon show nothing") {
  CHECK_FALSE(run_cell("None").output.has_value());
  CHECK_FALSE(run_cell("z = 3").output.has_value());
  CHECK_FALSE(run_cell("3 + 4;").output.has_value());
  CHECK_FALSE(run_cell("3 + 4;  # quiet").output.has_value());
  CHECK(*run_cell("z + 1  # not quiet").output == "4");
  CHECK_FALSE(run_cell("def f():\n    return 1\n").output.has_value());
}

TEST_CASE("the session keeps its names between cells") {
  CHECK(run_cell("import math\nvalue = math.factorial(5)").ok());
  CHECK(*run_cell("value").output == "120");
  CHECK(*run_cell("_ + 1").output == "121");  // `_` is the last shown value, as in IPython
}

TEST_CASE("stdout and stderr are captured separately and in order") {
  const CellResult result = run_cell("import sys\nprint('one')\nsys.stderr.write('warn\\n')\nprint('two', 2)\n'shown'");
  CHECK(result.stdout_text == "one\ntwo 2\n");
  CHECK(result.stderr_text == "warn\n");
  CHECK(*result.output == "'shown'");
}

TEST_CASE("long containers break one element per line like IPython") {
  // IPython breaks a list wider than 79 columns after every comma, indenting by the bracket.
  std::string expected = "[";
  for (int i = 0; i < 30; ++i) expected += (i == 0 ? "" : ",\n ") + std::to_string(i * 1000);
  expected += "]";
  CHECK(*run_cell("[i * 1000 for i in range(30)]").output == expected);
  CHECK(*run_cell("list(range(5))").output == "[0, 1, 2, 3, 4]");
  CHECK(*run_cell("{'a': 1, 'b': [1, 2]}").output == "{'a': 1, 'b': [1, 2]}");
}

TEST_CASE("an exception leaves a traceback and a usable session") {
  const CellResult result = run_cell("a = 1\nb = {}\nb['missing']");
  CHECK(result.status == CellResult::Status::kError);
  CHECK(result.error.starts_with("Traceback (most recent call last):\n"));
  CHECK(last_line(result.error) == "KeyError: 'missing'");
  CHECK(result.error.find("b['missing']") != std::string::npos);  // the cell's line is quoted
  CHECK(result.error.find("shardscope-host") == std::string::npos);
  CHECK(*run_cell("a + 1").output == "2");
  CHECK(last_line(run_cell("1 / 0").error) == "ZeroDivisionError: division by zero");
  CHECK(last_line(run_cell("raise ValueError('bad value')").error) == "ValueError: bad value");
}

TEST_CASE("a syntax error is reported and the session goes on") {
  const CellResult result = run_cell("x = (1,\n");
  CHECK(result.status == CellResult::Status::kError);
  CHECK(last_line(result.error) == "SyntaxError: '(' was never closed");
  CHECK(*run_cell("2 ** 10").output == "1024");
}

TEST_CASE("SystemExit ends the cell with its code") {
  const CellResult result = run_cell("import sys\nsys.exit(3)");
  CHECK(result.status == CellResult::Status::kExit);
  CHECK(result.exit_code == 3);
  CHECK(*run_cell("'alive'").output == "'alive'");
}

TEST_CASE("SIGINT raises KeyboardInterrupt in the running code") {
  // The signal goes only once the cell runs (it touches a file first): sent earlier, before the interpreter
  // installed its handler (a slow start under a sanitizer), it would end the test process instead.
  const std::filesystem::path started =
      std::filesystem::temp_directory_path() / ("shardscope_sigint_" + std::to_string(::getpid()));
  std::filesystem::remove(started);
  std::thread interrupter([&started] {
    for (int i = 0; i < 2000 && !std::filesystem::exists(started); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::kill(::getpid(), SIGINT);
  });
  const CellResult result = run_cell("import time\nopen(" + shardscope::python_string_repr(started.string()) +
                                     ", 'w').close()\ndeadline = time.time() + 20\nwhile time.time() < deadline:\n"
                                     "    pass\n");
  std::filesystem::remove(started);
  interrupter.join();
  CHECK(result.status == CellResult::Status::kInterrupted);
  CHECK(last_line(result.error) == "KeyboardInterrupt");
  CHECK(*run_cell("'after interrupt'").output == "'after interrupt'");
}

TEST_CASE("timeit prints IPython's summary line") {
  // "%.3g" as IPython formats: a value that rounds up to 1000 of its unit prints as "1e+03".
  // On a loaded machine IPython's caching warning may come first (the slowest run over 4 times the fastest).
  const std::regex line(
      R"((The slowest run took [0-9.]+ times longer than the fastest\. This could mean that an intermediate result )"
      R"(is being cached\.\n)?)"
      R"([0-9.e+]+ (s|ms|µs|ns) ± [0-9.e+]+ (s|ms|µs|ns) per loop \(mean ± std\. dev\. of 3 runs, 5 loops each\)\n)");
  const CellResult magic = run_cell("%timeit -n 5 -r 3 sum(range(100))");
  INFO(magic.stdout_text << magic.error);
  CHECK(magic.ok());
  CHECK(std::regex_match(magic.stdout_text, line));
  const CellResult cell = run_cell("%%timeit -n 5 -r 3 data = list(range(50))\nsorted(data)");
  INFO(cell.stdout_text << cell.error);
  CHECK(std::regex_match(cell.stdout_text, line));
  // Without -n, loops grow by powers of ten until one batch takes 0.2 s; 7 runs by default.
  const CellResult automatic = run_cell("%timeit sum(range(10))");
  INFO(automatic.stdout_text << automatic.error);
  CHECK(std::regex_search(automatic.stdout_text, std::regex(R"(of 7 runs, [0-9,]+ loops each\)\n$)")));
  CHECK(std::regex_search(automatic.stdout_text, std::regex(R"(loops each)")));
}

TEST_CASE("shell lines and unsupported magics are skipped with a note") {
  const CellResult result = run_cell("!pip install -q jax\n%matplotlib notebook\nx = 5\nx");
  CHECK(result.ok());
  CHECK(*result.output == "5");
  CHECK(result.stderr_text ==
        "shardscope: skipped `!pip install -q jax` (packages are not installed by shardscope)\n"
        "shardscope: skipped `%matplotlib notebook` (figures are shown inline by shardscope)\n");
}

TEST_CASE("env and capture magics") {
  const CellResult set = run_cell("%env SHARDSCOPE_TEST_VAR=abc");
  CHECK(set.stdout_text == "env: SHARDSCOPE_TEST_VAR=abc\n");
  CHECK(std::string(std::getenv("SHARDSCOPE_TEST_VAR")) == "abc");
  CHECK(*run_cell("%env SHARDSCOPE_TEST_VAR").output == "'abc'");
  const CellResult captured = run_cell("%%capture out\nprint('hidden')");
  CHECK(captured.stdout_text.empty());
  CHECK(*run_cell("out.stdout").output == "'hidden\\n'");
}
