// Cooperative cancellation: a pending request stops the next program at its first check, once.
#include "exec/cancellation.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "exec/interpreter.h"
#include "ops/ops.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

BufferPtr run_negate(const BufferPtr& input) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("neg", {x})});
  return evaluate_jaxpr(*jaxpr, {input}).at(0);
}

}  // namespace

TEST_CASE("a cancellation request raises KeyboardInterrupt in the next program, then is gone") {
  ensure_core_primitives();
  const BufferPtr input = make_buffer(DType::kFloat32, {4}, std::vector<float>{1, 2, 3, 4});
  request_cancellation();
  try {
    (void)run_negate(input);
    FAIL("the program ran to the end despite the request");
  } catch (const Error& error) {
    CHECK(error.python_type() == "KeyboardInterrupt");
  }
  // The request was consumed: the same program now runs.
  CHECK(run_negate(input)->element_as_double(2) == -3.0);
  // A request cleared before work starts stops nothing.
  request_cancellation();
  clear_cancellation();
  CHECK(run_negate(input)->element_as_double(0) == -1.0);
}
