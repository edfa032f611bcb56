// Helpers of the embedded-interpreter tests: run a cell that must succeed and read what it printed.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "python/host.h"

namespace python_test {

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
