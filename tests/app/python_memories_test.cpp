// Device memories as jaxlib gives them: Memory objects from Device.addressable_memories(), default_memory() and
// memory(kind), and jaxlib's INVALID_ARGUMENT runtime error for a kind the device cannot address.
#include <doctest/doctest.h>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

TEST_CASE("a device's memories are Memory objects with their kinds") {
  REQUIRE(run_cell("import jax\nd = jax.devices()[0]").ok());
  CHECK(printed("print(d.default_memory().kind, [m.kind for m in d.addressable_memories()])") ==
        "device ['device', 'pinned_host', 'unpinned_host']\n");
  CHECK(printed("m = d.memory('pinned_host')\nprint(type(m).__name__, m.kind, m.platform, m.process_index,"
                " m.addressable_by_devices() == [d], m == d.memory('pinned_host'))") ==
        "Memory pinned_host tpu 0 True True\n");
  CHECK(printed("try:\n    d.memory('hbm')\nexcept jax.errors.JaxRuntimeError as e:\n    print(e)") ==
        "INVALID_ARGUMENT: Could not find memory addressable by device TPU v3. Device TPU v3 can address the "
        "following memory kinds: device, pinned_host, unpinned_host. Got memory kind: hbm\n");
  CHECK(printed("print(jax.errors.JaxRuntimeError.__module__, issubclass(jax.errors.JaxRuntimeError, RuntimeError))") ==
        "jax.errors True\n");
}
