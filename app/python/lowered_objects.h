// Core's Lowered and Compiled as the `_shardscope` module holds them: with the arrays the function closed over
// (their leading arguments). Shared by the jit bindings and the explain bindings.
#pragma once

#include <vector>

#include "array/array.h"
#include "exec/lowering.h"

namespace shardscope::python {

struct PyLowered {
  Lowered lowered;
  std::vector<Array> captured;
};

struct PyCompiled {
  Compiled compiled;
  std::vector<Array> captured;
};

}  // namespace shardscope::python
