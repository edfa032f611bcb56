// jax.experimental.layout: Layout/Format reprs and equality, x.format, device_put and jit with Formats, the layouts
// Layout.AUTO picks, the compiled call's layout check, with_layout_constraint and the names per JAX version.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.7.0')\n_shardscope.set_device_preset('cpu:1')\n"
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\n"
    "from jax.experimental.layout import Layout, Format, with_layout_constraint\n"
    "from jax.sharding import SingleDeviceSharding\ndev = jax.devices()[0]\n"
    "def apply_fn(x, y):\n    return x[0, :], y[:, 0]\n"
    "duck = jax.ShapeDtypeStruct((4, 8), jnp.float32)\n";

}  // namespace

TEST_CASE("Layout and Format print, compare and validate as JAX's do") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(Layout(major_to_minor=(1, 0)))") ==
        "Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0)\n");
  CHECK(printed("print(Format(Layout.AUTO), Layout.AUTO)") == "Format(layout=AUTO, sharding=None) AUTO\n");
  CHECK(printed("print(Layout((1, 0)) == Layout([1, 0]), Layout((1, 0)) == Layout((0, 1)), "
                "len({Layout((1, 0)), Layout((1, 0))}), Format(Layout.AUTO) == Format(Layout.AUTO))") ==
        "True False 1 True\n");
  const CellResult no_sharding = run_cell("Format(Layout((0, 1)))");
  CHECK(no_sharding.error.find("ValueError: Sharding has to be concrete") != std::string::npos);
  CHECK(run_cell("Format(3)").error.find("TypeError: Invalid value received for the layout") != std::string::npos);
}

TEST_CASE("arrays carry the default row-major layout unless placed with a Format") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jnp.ones((2, 3, 4)).format.layout.major_to_minor)") == "(0, 1, 2)\n");
  CHECK(printed("y = jax.device_put(np.ones((4, 8)), Format(Layout((1, 0)), SingleDeviceSharding(dev)))\n"
                "print(y.format.layout.major_to_minor, y.sharding == SingleDeviceSharding(dev), float(y.sum()))") ==
        "(1, 0) True 32.0\n");
  CHECK(run_cell("jax.device_put(np.ones((4, 8)), Format(Layout((0, 1, 2)), SingleDeviceSharding(dev)))")
            .error.find("Length of major_to_minor and the rank of the value should match") != std::string::npos);
}

TEST_CASE("Layout.AUTO lays a parameter out for the one dimension its slice keeps, others by default") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("exe = jax.jit(apply_fn, in_shardings=Format(Layout.AUTO), out_shardings=Format(Layout.AUTO))"
                   ".trace(duck, duck).lower().compile()\nargs, kwargs = exe.input_formats")
              .ok());
  CHECK(printed("print(args[0].layout.major_to_minor, args[1].layout.major_to_minor, kwargs)") == "(0, 1) (1, 0) {}\n");
  CHECK(printed("print([f.layout.major_to_minor for f in exe.output_formats])") == "[(0,), (0,)]\n");
  // A transpose is not the modelled pattern: the default layout.
  CHECK(printed("t = jax.jit(lambda x: x.T + 1, in_shardings=Format(Layout.AUTO)).lower(duck).compile()\n"
                "print(t.input_formats[0][0].layout.major_to_minor)") == "(0, 1)\n");
  // The traced and lowered stages report the same formats.
  CHECK(printed("tr = jax.jit(apply_fn, in_shardings=Format(Layout.AUTO)).trace(duck, duck)\n"
                "print(tr.input_formats[0][1].layout.major_to_minor, "
                "tr.lower().input_formats[0][1].layout.major_to_minor)") == "(1, 0) (1, 0)\n");
  // out_shardings of Formats give the outputs those layouts; values are unaffected.
  REQUIRE(run_cell("init = jax.jit(lambda x, y: (x * 2, y * 3), out_shardings=args).trace(duck, duck).lower()"
                   ".compile()")
              .ok());
  CHECK(printed("print(init.output_formats == args)") == "True\n");
  CHECK(printed("a, b = init(jnp.ones((4, 8)), jnp.ones((4, 8)))\n"
                "print(a.format.layout.major_to_minor, b.format.layout.major_to_minor, float(b.sum()))") ==
        "(0, 1) (1, 0) 96.0\n");
}

TEST_CASE("a compiled call rejects a committed argument laid out differently, not an uncommitted one") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(
      run_cell("exe = jax.jit(apply_fn, in_shardings=Format(Layout.AUTO)).trace(duck, duck).lower().compile()").ok());
  CHECK(printed("print(exe(jnp.ones((4, 8)), jnp.ones((4, 8)))[1].shape)") == "(4,)\n");
  CHECK(printed("good = jax.device_put(np.ones((4, 8)), Format(Layout((1, 0)), SingleDeviceSharding(dev)))\n"
                "print(float(exe(jnp.ones((4, 8)), good)[1].sum()))") == "4.0\n");
  const CellResult bad = run_cell(
      "exe(jnp.ones((4, 8)), jax.device_put(np.ones((4, 8)), Format(Layout((0, 1)), SingleDeviceSharding(dev))))");
  CHECK(bad.error.find("ValueError: Layout passed to jit does not match the layout on the respective arg. Got jit "
                       "layout: Layout(major_to_minor=(1, 0)") != std::string::npos);
  // Lowered for a committed argument, the executable takes that argument's layout.
  CHECK(printed("c = jax.device_put(np.ones((4, 8)), Format(Layout((1, 0)), SingleDeviceSharding(dev)))\n"
                "print(jax.jit(lambda v: v + 1).lower(c).compile().input_formats[0][0].layout.major_to_minor)") ==
        "(1, 0)\n");
  // A committed array in the default layout is checked too.
  CHECK(run_cell("exe(jnp.ones((4, 8)), jax.device_put(np.ones((4, 8)), dev))").error.find("does not match") !=
        std::string::npos);
}

TEST_CASE("with_layout_constraint keeps values and records the layout") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("@jax.jit\ndef f(x):\n    return with_layout_constraint(x.T, Layout((0, 1))) * 2\n"
                "print(f(jnp.arange(6.0).reshape(2, 3)))") == "[[ 0.  6.]\n [ 2.  8.]\n [ 4. 10.]]\n");
  CHECK(printed("print(with_layout_constraint(jnp.ones((2, 3)), Layout((1, 0))).format.layout.major_to_minor)") ==
        "(1, 0)\n");
}

TEST_CASE("the layout API has each JAX version's names") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("_shardscope.set_jax_version('0.6.2')").ok());
  CHECK(printed("from jax.experimental import layout as L\n"
                "print(L.Layout is L.Format, L.DeviceLocalLayout((1, 0)))") ==
        "True DeviceLocalLayout(major_to_minor=(1, 0), _tiling=None, _sub_byte_element_size_in_bits=0)\n");
  CHECK(printed("print(jnp.ones(3).format.device_local_layout.major_to_minor)") == "(0,)\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.5.1')").ok());
  CHECK(run_cell("from jax.experimental.layout import Format").error.find("ImportError") != std::string::npos);
  CHECK(printed("from jax.experimental.layout import Layout, DeviceLocalLayout\n"
                "print(jnp.ones(3).layout)") ==
        "Layout(device_local_layout=DeviceLocalLayout(major_to_minor=(0,), "
        "_tiling=None, _sub_byte_element_size_in_bits=0), sharding="
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=unpinned_host))\n");
  CHECK(run_cell("jnp.ones(3).format").error.find("AttributeError") != std::string::npos);
  REQUIRE(run_cell("_shardscope.set_jax_version('0.11.0')").ok());
}
