// Helpers of the embedded-interpreter tests: run a cell that must succeed and read what it printed.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "python/host.h"

namespace python_test {

// A prelude's Python helper: attempt(thunk) runs it and prints "OK", or the exception's type and message.
inline constexpr const char* kAttemptHelper =
    "def attempt(thunk):\n"
    "    try:\n"
    "        thunk()\n"
    "        print('OK')\n"
    "    except Exception as ex:\n"
    "        print(type(ex).__name__, ex)\n";

// Runs a cell that must succeed and returns what it printed; with `quiet`, it must also write nothing to
// stderr (no warnings).
inline std::string printed(const std::string& code, bool quiet = false) {
  const shardscope::python::CellResult result = shardscope::python::run_cell(code);
  CAPTURE(code);
  CAPTURE(result.error);
  CHECK(result.ok());
  if (quiet) CHECK(result.stderr_text == "");
  return result.stdout_text;
}

}  // namespace python_test
