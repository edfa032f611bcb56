// The parts of JAX's API tutorial notebooks reach for beyond sharding: jax.tree_util in full, jnp's comparison,
// padding, rolling and einsum forms, jax.nn's activations, jax.device_get, the Sharding API's queries,
// ShapeDtypeStruct and jax.dtypes, arrays from per-device data, addressable shards, and jnp.array of traced values.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_device_preset('cpu:8')\n"
    "import collections, dataclasses, functools\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, SingleDeviceSharding\n"
    "mesh = jax.make_mesh((4, 2), ('x', 'y'))\n";

// The Python exception type a failing cell raised (the traceback's last line starts with it).
std::string error_type(const std::string& code) {
  const CellResult result = run_cell(code);
  CAPTURE(code);
  CHECK_FALSE(result.ok());
  // The exception's line is the first unindented one after the traceback header (its message may span lines).
  std::istringstream lines(result.error);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.starts_with(" ") || line.starts_with("Traceback")) continue;
    return line.substr(0, line.find(':'));
  }
  return "";
}

}  // namespace

TEST_CASE("jax.tree and jax.tree_util: reductions, transposition, structures and their reprs") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("t = jax.tree.structure([(1, 2), 3, {'a': 4}])\nprint(t, t.num_leaves, t.num_nodes)\n"
                "print(jax.tree_util.treedef_children(t))") ==
        "PyTreeDef([(*, *), *, {'a': *}]) 4 7\n[PyTreeDef((*, *)), PyTreeDef(*), PyTreeDef({'a': *})]\n");
  CHECK(printed("print(jax.tree_util.treedef_is_leaf(jax.tree.structure(1)), "
                "jax.tree_util.treedef_is_leaf(jax.tree.structure([1])), "
                "jax.tree_util.treedef_is_leaf(jax.tree.structure(None)))") == "True False True\n");
  CHECK(printed("print(jax.tree.all([True, {'a': 1}]), jax.tree.all([1, (0,)]), "
                "jax.tree_util.tree_all([None], is_leaf=lambda x: x is None))") == "True False False\n");
  CHECK(printed("print(jax.tree.reduce(lambda a, b: a + b, [1, (2, 3)]), "
                "jax.tree_util.tree_reduce(lambda a, b: a * b, {'x': 2, 'y': [3]}, 10))") == "6 60\n");
  CHECK(printed("print(jax.tree.transpose(jax.tree.structure([0, 0]), jax.tree.structure((0, 0)), [(1, 2), (3, 4)]))\n"
                "print(jax.tree_util.tree_transpose(jax.tree.structure({'a': 0, 'b': 0}), None, "
                "{'a': [1, 2], 'b': [3, 4]}))") == "([1, 3], [2, 4])\n[{'a': 1, 'b': 3}, {'a': 2, 'b': 4}]\n");
  CHECK(printed("print(jax.tree.map(lambda x, y, z: x + y * z, [1, {'a': 2}], [10, {'a': 20}], [2, {'a': 3}]))") ==
        "[21, {'a': 62}]\n");
  CHECK(printed("print(jax.tree.leaves([1, [2, (3,)]]), jax.tree.flatten({'b': 1, 'a': 2}))\n"
                "print(jax.tree.unflatten(jax.tree.structure((0, [0])), [7, 8]))") ==
        "[1, 2, 3] ([2, 1], PyTreeDef({'a': *, 'b': *}))\n(7, [8])\n");
  CHECK(printed("print(jax.tree_util.all_leaves([1, 2]), jax.tree_util.all_leaves([[1]]), "
                "jax.tree_util.all_leaves([None]))") == "True False False\n");
  CHECK(printed("Point = collections.namedtuple('Point', 'x y')\nprint(jax.tree.structure(Point(1, 2)))") ==
        "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))\n");
  // A structure mismatch names what was expected, as jaxlib does.
  CHECK(error_type("jax.tree.map(lambda a, b: a, [1, 2], (1, 2))") == "ValueError");
  // Only the exact builtin containers are nodes: a dict subclass is a leaf unless registered.
  CHECK(printed("class D(dict): pass\nprint(len(jax.tree.leaves(D(a=1, b=2))), "
                "jax.tree.flatten(collections.OrderedDict([('b', 1), ('a', 2)])))") ==
        "1 ([1, 2], PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *])))\n");
  // build_tree was deprecated in 0.6.0 and is gone in the newest JAX.
  CHECK(error_type("jax.tree_util.build_tree") == "AttributeError");
}

TEST_CASE("register_dataclass, register_static and Partial are pytrees as JAX defines them") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("@jax.tree_util.register_dataclass\n@dataclasses.dataclass\nclass MyOp:\n"
                   "  x: object\n  y: object\n  op: str = jax.tree.static(default='add')\n")
              .ok());
  CHECK(printed("leaves, t = jax.tree.flatten(MyOp(jnp.ones(2), 3))\nprint(len(leaves), t)\n"
                "print(jax.tree.unflatten(t, [5, 6]))\n"
                "print([jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(MyOp(1, 2))[0]])") ==
        "2 PyTreeDef(CustomNode(MyOp[('add',)], [*, *]))\nMyOp(x=5, y=6, op='add')\n['.x', '.y']\n");
  CHECK(printed("print(jax.jit(lambda m: m.x + m.y if m.op == 'add' else m.x - m.y)(MyOp(jnp.ones(2), 2.0)))") ==
        "[3. 3.]\n");
  CHECK(error_type("@jax.tree_util.register_dataclass\n@dataclasses.dataclass\nclass Bad:\n  x: int\n"
                   "jax.tree_util.register_dataclass(Bad, data_fields=['x'], meta_fields=None)") == "TypeError");
  REQUIRE(run_cell("@jax.tree_util.register_static\nclass StaticStr(str):\n  pass\n").ok());
  CHECK(
      printed(
          "f = jax.jit(lambda x, y, s: x + y if s == 'add' else x - y)\n"
          "print(repr(f(1, 2, StaticStr('add'))), repr(f(1, 2, StaticStr('sub'))), jax.tree.leaves(StaticStr('a')))") ==
      "Array(3, dtype=int32, weak_type=True) Array(-1, dtype=int32, weak_type=True) []\n");
  CHECK(printed("add_one = jax.tree_util.Partial(jnp.add, 1)\nprint(repr(add_one(2)))\n"
                "print(repr(jax.jit(lambda f, *a: f(*a))(add_one, 2)), isinstance(add_one, functools.partial))") ==
        "Array(3, dtype=int32, weak_type=True)\nArray(3, dtype=int32, weak_type=True) True\n");
}

TEST_CASE("jnp comparisons return bool Arrays and padding, rolling and einsum follow numpy's forms") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed(
            "x = jnp.arange(12.0).reshape(3, 4)\n"
            "print(repr(jnp.allclose(x, x * (1 + 1e-7))), repr(jnp.allclose(x, x + 1e-6)))\n"
            "print(repr(jnp.isclose(jnp.array([1.0, jnp.inf, jnp.nan]), jnp.array([1.0 + 1e-7, jnp.inf, jnp.nan]))))\n"
            "print(repr(jnp.isclose(jnp.nan, jnp.nan, equal_nan=True)))") ==
        "Array(True, dtype=bool) Array(False, dtype=bool)\nArray([ True,  True, False], dtype=bool)\n"
        "Array(True, dtype=bool)\n");
  CHECK(printed("print(repr(jnp.array_equal(x, x)), repr(jnp.array_equal(x, x[0])), "
                "repr(jnp.array_equiv(x[0], jnp.arange(4.0))), repr(jnp.array_equiv(x, jnp.ones(3))))") ==
        "Array(True, dtype=bool) Array(False, dtype=bool) Array(True, dtype=bool) Array(False, dtype=bool)\n");
  CHECK(printed("print(jnp.pad(jnp.arange(3), 2), jnp.pad(jnp.arange(3.), (1, 2), constant_values=9))\n"
                "print(jnp.pad(jnp.arange(6).reshape(2, 3), ((1, 0), (0, 2)), mode='edge').tolist())") ==
        "[0 0 0 1 2 0 0] [9. 0. 1. 2. 9. 9.]\n[[0, 1, 2, 2, 2], [0, 1, 2, 2, 2], [3, 4, 5, 5, 5]]\n");
  // Reflect and symmetric agree with numpy; wrap follows JAX's own tiling.
  CHECK(
      printed("a = np.arange(4)\nprint(all((np.asarray(jnp.pad(a, (5, 3), mode=m)) == np.pad(a, (5, 3), mode=m)).all()"
              " for m in ('reflect', 'symmetric', 'edge', 'constant')))\n"
              "print(jnp.pad(a, (2, 3), mode='wrap'))") == "True\n[2 3 0 1 2 3 0 1 2]\n");
  CHECK(error_type("jnp.pad(jnp.ones(3), 1, mode='median')") == "NotImplementedError");
  CHECK(printed("print(jnp.roll(jnp.arange(5), 2), jnp.roll(jnp.arange(5), -1))\n"
                "print(jnp.roll(x, (1, 2), axis=(0, 1)).tolist())\nprint(jnp.roll(x, 2).tolist())") ==
        "[3 4 0 1 2] [1 2 3 4 0]\n[[10.0, 11.0, 8.0, 9.0], [2.0, 3.0, 0.0, 1.0], [6.0, 7.0, 4.0, 5.0]]\n"
        "[[10.0, 11.0, 0.0, 1.0], [2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0]]\n");
  CHECK(printed("b = jnp.arange(24.0).reshape(2, 3, 4)\n"
                "print(bool((jnp.einsum('bij->jb', b) == np.einsum('bij->jb', np.asarray(b))).all()))\n"
                "print(float(jnp.einsum('i,ij,j->', jnp.arange(3.), x, jnp.arange(4.))))\n"
                "print(jnp.einsum('...ij,...jk->...ik', jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5))).shape, "
                "jnp.einsum('ij', x).shape, jnp.einsum('ij->', x))") == "True\n162.0\n(2, 3, 5) (3, 4) 66.0\n");
  CHECK(error_type("jnp.einsum('ii->i', jnp.eye(3))") == "NotImplementedError");
  CHECK(printed("print(jnp.repeat(jnp.arange(3), 2), [a.tolist() for a in jnp.array_split(jnp.arange(7), 3)])\n"
                "print([g.tolist() for g in jnp.meshgrid(jnp.arange(2), jnp.arange(3))])\n"
                "print([g.shape for g in jnp.meshgrid(jnp.arange(2), jnp.arange(3), indexing='ij', sparse=True)])") ==
        "[0 0 1 1 2 2] [[0, 1, 2], [3, 4], [5, 6]]\n[[[0, 1], [0, 1], [0, 1]], [[0, 0], [1, 1], [2, 2]]]\n"
        "[(2, 1), (1, 3)]\n");
  CHECK(printed("print(jnp.where(jnp.array([0, 3, 0, 4]) > 0), jnp.hstack([jnp.ones(2), jnp.zeros(1)]), "
                "jnp.vstack([jnp.ones(2), jnp.zeros(2)]).shape, jnp.flip(jnp.arange(3)))") ==
        "(Array([1, 3], dtype=int32),) [1. 1. 0.] (2, 2) [2 1 0]\n");
}

TEST_CASE("jax.nn activations give JAX's values") {
  REQUIRE(run_cell(kPrelude).ok());
  // Each activation against its definition evaluated in float64 numpy.
  REQUIRE(run_cell("v = jnp.array([-2.0, -0.5, 0.0, 1.5])\nn = np.asarray(v, np.float64)\n"
                   "sig = lambda t: 1 / (1 + np.exp(-t))\nsp = lambda t: np.log1p(np.exp(t))\n"
                   "def near(y, ref):\n  return bool(np.abs(np.asarray(y, np.float64) - ref).max() < 2e-6)\n"
                   "erf = np.vectorize(__import__('math').erf)\n")
              .ok());
  CHECK(printed("print(near(jax.nn.leaky_relu(v), np.where(n >= 0, n, 0.01 * n)), "
                "near(jax.nn.leaky_relu(v, negative_slope=0.2), np.where(n >= 0, n, 0.2 * n)), "
                "near(jax.nn.elu(v), np.where(n > 0, n, np.expm1(n))), "
                "near(jax.nn.celu(v, alpha=2.0), np.maximum(n, 0) + 2 * np.expm1(np.minimum(n, 0) / 2)))") ==
        "True True True True\n");
  CHECK(printed("a, l = 1.6732632423543772, 1.0507009873554805\n"
                "print(near(jax.nn.selu(v), l * np.where(n > 0, n, a * np.expm1(n))), "
                "near(jax.nn.log_sigmoid(v), -sp(-n)), near(jax.nn.tanh(v), np.tanh(n)), "
                "near(jax.nn.gelu(v, approximate=False), n * (1 + erf(n / np.sqrt(2))) / 2), "
                "near(jax.nn.gelu(v), n * (1 + np.tanh(np.sqrt(2 / np.pi) * (n + 0.044715 * n ** 3))) / 2))") ==
        "True True True True True\n");
  CHECK(printed("e = np.exp(n - n.max())\nm = n > -1\nem = np.where(m, np.exp(n), 0)\n"
                "print(near(jax.nn.softmax(v), e / e.sum()), near(jax.nn.softmax(v, where=v > -1), em / em.sum()), "
                "near(jax.nn.log_softmax(v), n - np.log(np.exp(n).sum())), "
                "jax.nn.softmax(jnp.ones((2, 2)), axis=None).tolist())") ==
        "True True True [[0.25, 0.25], [0.25, 0.25]]\n");
  CHECK(printed("print(near(jax.nn.standardize(v), (n - n.mean()) / np.sqrt(n.var() + 1e-5)), "
                "near(jax.nn.hard_tanh(v * 2), np.clip(2 * n, -1, 1)), near(jax.nn.mish(v), n * np.tanh(sp(n))), "
                "near(jax.nn.glu(v), n[:2] * sig(n[2:])), near(jax.nn.relu6(v * 5), np.clip(5 * n, 0, 6)), "
                "near(jax.nn.soft_sign(v), n / (1 + np.abs(n))), near(jax.nn.squareplus(v), (n + np.sqrt(n * n + 4)) / "
                "2))") == "True True True True True True True\n");
  CHECK(
      printed(
          "print(jax.nn.one_hot(jnp.array([0, 2]), 3).tolist(), near(jax.nn.logsumexp(v), np.log(np.exp(n).sum())))") ==
      "[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]] True\n");
}

TEST_CASE("device_get, ShapeDtypeStruct and jax.dtypes") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("out = jax.device_get({'a': jnp.arange(3), 'b': 1.5})\nprint(type(out['a']).__name__, out)") ==
        "ndarray {'a': array([0, 1, 2], dtype=int32), 'b': 1.5}\n");
  CHECK(printed("print(jax.ShapeDtypeStruct((2, 3), jnp.bfloat16), jax.ShapeDtypeStruct((2,), jnp.float32, "
                "weak_type=True))\n"
                "print(jax.ShapeDtypeStruct((8, 2), jnp.int32, sharding=NamedSharding(mesh, P('x'))))") ==
        "ShapeDtypeStruct(shape=(2, 3), dtype=bfloat16) ShapeDtypeStruct(shape=(2,), dtype=float32, weak_type=True)\n"
        "ShapeDtypeStruct(shape=(8, 2), dtype=int32, sharding=NamedSharding(mesh=Mesh('x': 4, 'y': 2, "
        "axis_types=(Explicit, Explicit)), spec=P('x',), memory_kind=device))\n");
  CHECK(error_type("s = jax.ShapeDtypeStruct((2,), jnp.float32)\ns.shape = (3,)") == "RuntimeError");
  CHECK(error_type("jax.ShapeDtypeStruct((2, None), jnp.float32)") == "ValueError");
  CHECK(printed(
            "print(jax.dtypes.canonicalize_dtype(np.float64), jax.dtypes.canonicalize_dtype(jnp.bfloat16), "
            "jax.dtypes.float0)\n"
            "print(jax.dtypes.result_type(jnp.int32, 1.0), jax.dtypes.result_type(1, 2.0, return_weak_type_flag=True), "
            "jax.dtypes.issubdtype(jnp.bfloat16, jnp.floating))\n"
            "print(jnp.result_type(jnp.ones(2, jnp.int8), 1), jnp.promote_types(jnp.int8, jnp.float16), "
            "jax.dtypes.issubdtype(jax.random.key(0).dtype, jax.dtypes.prng_key))") ==
        "float32 bfloat16 [('float0', 'V')]\nfloat32 (dtype('float32'), True) True\nint8 float16 True\n");
}

TEST_CASE("0-d arrays made outside jit are Arrays, and stay tracers inside it") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(repr(jnp.zeros(())), repr(jnp.zeros((), jnp.int32)), repr(jnp.ones((), 'int8')))\n"
                "print(repr(jnp.full((), 3)), repr(jnp.full([], 2.5, jnp.float32)), jnp.zeros(()) + 1)\n"
                "print(repr(jax.lax.convert_element_type(3, jnp.float32)), jnp.zeros((), jnp.int32).sharding)") ==
        "Array(0., dtype=float32) Array(0, dtype=int32) Array(1, dtype=int8)\n"
        "Array(3, dtype=int32, weak_type=True) Array(2.5, dtype=float32) 1.0\n"
        "Array(3., dtype=float32) SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)\n");
  CHECK(printed("@jax.jit\ndef f(x):\n    z = jnp.zeros((), jnp.int32)\n    print(z)\n    return x + z\n"
                "print(f(jnp.int32(2)))") == "JitTracer(int32[])\n2\n");
}

TEST_CASE("bfloat16 arrays print each element as ml_dtypes does: %g, without a common width") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(repr(jnp.ones((2, 3), jnp.bfloat16)))\nx = jnp.array([0.1, 1.5, -2.0, 300.0], jnp.bfloat16)\n"
                "print(repr(x))\nprint(x, jnp.bfloat16(2.5), repr(jnp.array(1e-7, jnp.bfloat16)))\n"
                "print(repr(jnp.array([1.5, 2.0])))") ==
        "Array([[1, 1, 1],\n       [1, 1, 1]], dtype=bfloat16)\n"
        "Array([0.100098, 1.5, -2, 300], dtype=bfloat16)\n"
        "[0.100098 1.5 -2 300] 2.5 Array(1.00117e-07, dtype=bfloat16)\n"
        "Array([1.5, 2. ], dtype=float32)\n");
}

TEST_CASE(
    "from 0.11.2 an array of a million elements or more reprs as its shape, smaller ones and 0.11.1 print values") {
  REQUIRE(run_cell("import _shardscope\nprofile_before = _shardscope.jax_version()\n"
                   "_shardscope.set_jax_version('0.11.2')\nimport jax\nimport jax.numpy as jnp\n")
              .ok());
  CHECK(printed("print(repr(jnp.arange(10**6) * 1.5))\nprint(repr(jnp.ones((1000, 1000), jnp.int8)))") ==
        "Array(shape=(1000000,), dtype=float32, weak_type=True)\nArray(shape=(1000, 1000), dtype=int8)\n");
  CHECK(printed("print(repr(jnp.arange(999999)))") ==
        "Array([     0,      1,      2, ..., 999996, 999997, 999998], dtype=int32)\n");
  // print (str) shows the same form for a big array and numpy's for a smaller one.
  CHECK(printed("print(jnp.ones((1000, 1000)))\nprint(jnp.arange(5))") ==
        "Array(shape=(1000, 1000), dtype=float32)\n[0 1 2 3 4]\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.11.1')\n").ok());
  CHECK(printed("print(repr(jnp.arange(10**6)))") ==
        "Array([     0,      1,      2, ..., 999997, 999998, 999999], dtype=int32)\n");
  CHECK(printed("print(jnp.arange(10**6))") == "[     0      1      2 ... 999997 999998 999999]\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)\n").ok());
}

TEST_CASE("jnp.array keeps a Python number weakly typed, jax.typeof takes only arrays and scalars") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("profile_before = _shardscope.jax_version()\n_shardscope.set_jax_version('0.11.2')\n").ok());
  CHECK(printed("print(repr(jnp.array(42)), repr(jnp.asarray(3.5)), repr(jnp.array(True)), repr(jnp.array([1, 2])))") ==
        "Array(42, dtype=int32, weak_type=True) Array(3.5, dtype=float32, weak_type=True) Array(True, dtype=bool) "
        "Array([1, 2], dtype=int32)\n");
  // A dtype makes it strong; a weakly typed array stays weak; a ref never is.
  CHECK(printed("print(repr(jnp.array(42, jnp.int32)), jnp.array(jnp.array(2.0)).weak_type, "
                "jax.new_ref(0.0)[...].weak_type)") == "Array(42, dtype=int32) True False\n");
  CHECK(printed("print(jax.typeof(1), jax.typeof(np.float32(2)), jax.typeof(np.ones(3)))") ==
        "~int32[] float32[] float32[3]\n");
  CHECK(printed("for bad in ('a', [1, 2], None):\n"
                "    try:\n"
                "        jax.typeof(bad)\n"
                "    except TypeError as ex:\n"
                "        print(ex)") ==
        "Argument 'a' of type <class 'str'> is not a valid JAX type\n"
        "Argument '[1, 2]' of type '<class 'list'>' is not a valid JAX type\n"
        "Argument 'None' of type '<class 'NoneType'>' is not a valid JAX type\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)\n").ok());
}

TEST_CASE("the Sharding API's queries on NamedSharding, SingleDeviceSharding and PositionalSharding") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("s = NamedSharding(mesh, P('x'))\nsd = SingleDeviceSharding(jax.devices()[1])\n").ok());
  CHECK(printed("print(s.num_devices, len(s.device_set), len(s.addressable_devices), s.is_fully_addressable, "
                "s.is_fully_replicated, s.memory_kind, s.shard_shape((8, 4)))") == "8 8 8 True False device (2, 4)\n");
  CHECK(printed("print(s.is_equivalent_to(NamedSharding(mesh, P('x', None)), 2), "
                "s.is_equivalent_to(NamedSharding(mesh, P('y')), 2), "
                "s.is_equivalent_to(s.with_memory_kind('pinned_host'), 2))") == "True False False\n");
  CHECK(printed("m = s.addressable_devices_indices_map((8, 4))\nprint(len(m), m[jax.devices()[2]])") ==
        "8 (slice(2, 4, None), slice(None, None, None))\n");
  CHECK(printed("print(sd.num_devices, sd.shard_shape((3, 4)), sd.devices_indices_map((2,)), sd.is_fully_replicated)\n"
                "one = jax.make_mesh((1,), ('a',), devices=[jax.devices()[1]])\n"
                "print(sd.is_equivalent_to(NamedSharding(one, P()), 1), sd.is_equivalent_to(s, 1))") ==
        "1 (3, 4) {CpuDevice(id=1): (slice(None, None, None),)} True\nTrue False\n");
  // jax.sharding dropped PositionalSharding in 0.7; the class itself still serves the older profiles.
  CHECK(printed("print(hasattr(jax.sharding, 'PositionalSharding'))") == "False\n");
  CHECK(printed("from jax._src.positional_sharding import PositionalSharding\n"
                "ps = PositionalSharding(jax.devices()).reshape(8, 1)\n"
                "print(ps.num_devices, ps.shard_shape((16, 4)), ps.is_equivalent_to(NamedSharding(jax.make_mesh((8,), "
                "('d',)), P('d')), 2))") == "8 (2, 4) True\n");
}

TEST_CASE("arrays from per-device data and their addressable shards in device-assignment order") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("s = NamedSharding(mesh, P('x'))\nseen = []\n"
                   "a = jax.make_array_from_callback((8, 4), s, "
                   "lambda idx: (seen.append(idx), np.arange(32.).reshape(8, 4)[idx])[1])\n")
              .ok());
  // One call per device (replicas included), the float64 data canonicalized to float32.
  CHECK(printed("print(len(seen), seen[0], seen[2], a.dtype, a.sharding == s, a.sum())") ==
        "8 (slice(0, 2, None), slice(None, None, None)) (slice(2, 4, None), slice(None, None, None)) float32 True "
        "496.0\n");
  CHECK(printed("r = []\nb = jax.make_array_from_callback((3,), NamedSharding(mesh, P()), "
                "lambda idx: (r.append(idx), np.ones(3))[1])\nprint(r, b)") ==
        "[(slice(None, None, None),)] [1. 1. 1.]\n");
  CHECK(printed("c = jax.make_array_from_single_device_arrays((8, 4), s, [sh.data for sh in a.addressable_shards])\n"
                "print(bool((c == a).all()), c.sharding == s)") == "True True\n");
  CHECK(error_type("jax.make_array_from_callback((8, 4), s, lambda idx: np.zeros((3, 3)))") == "ValueError");
  // addressable_data(i) is the block of addressable_shards[i], on that shard's device.
  CHECK(printed("y = jax.device_put(jnp.arange(8.), NamedSharding(mesh, P('y')))\n"
                "print([sh.device.id for sh in y.addressable_shards])\n"
                "print(y.addressable_data(1), y.addressable_data(1).devices() == {y.addressable_shards[1].device})\n"
                "print(y.addressable_shards[2].data, list(y.addressable_shards[2].data.devices())[0].id)") ==
        "[0, 1, 2, 3, 4, 5, 6, 7]\n[4. 5. 6. 7.] True\n[0. 1. 2. 3.] 2\n");
  CHECK(printed("z = jax.device_put(jnp.arange(4.), NamedSharding(mesh, P()))\n"
                "print(z.addressable_data(5), list(z.addressable_data(5).devices())[0].id)") == "[0. 1. 2. 3.] 0\n");
}

TEST_CASE("jnp.array of lists mixing traced values and Python numbers stacks the promoted elements") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.jit(lambda a, b: jnp.array([a, b, 1.0]))(1.0, 2.0))\n"
                "print(jax.jit(lambda a: jnp.asarray([[a, 2], [3, a]]))(jnp.int32(5)).tolist())") ==
        "[1. 2. 1.]\n[[5, 2], [3, 5]]\n");
  CHECK(printed("print(jax.vmap(lambda a: jnp.array([a, 2 * a]))(jnp.arange(3.0)).tolist())\n"
                "print(jax.grad(lambda a: jnp.array([a, a * a, 3.0]).sum())(2.0))\n"
                "print(jax.pmap(lambda a: jnp.array([a, 0.0]))(jnp.arange(2.0)).tolist())") ==
        "[[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]]\n5.0\n[[0.0, 0.0], [1.0, 0.0]]\n");
  CHECK(printed("print(repr(jnp.array([jnp.array(1), 2])), repr(jnp.array([jnp.array(1), 2.5])), "
                "repr(jnp.array([jnp.float32(1), 2], dtype=jnp.int32)))") ==
        "Array([1, 2], dtype=int32) Array([1. , 2.5], dtype=float32) Array([1, 2], dtype=int32)\n");
}

TEST_CASE("lax.dot_general and the convolutions from Python, under jit, grad and vmap") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed(
            "print(jax.lax.dot_general(jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5)), (((2,), (1,)), ((0,), (0,)))).shape, "
            "jax.lax.dot_general(jnp.ones(3, jnp.int8), jnp.ones(3, jnp.int8), (((0,), (0,)), ((), ())), "
            "preferred_element_type=jnp.int32).dtype)") == "(2, 3, 5) int32\n");
  REQUIRE(run_cell("dn = ('NHWC', 'HWIO', 'NHWC')\nrng = np.random.default_rng(0)\n"
                   "x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)\n"
                   "w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)\n"
                   "def ref(x, w, s, pads):\n"
                   "  xp = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))\n"
                   "  oh, ow = (xp.shape[1] - 3) // s[0] + 1, (xp.shape[2] - 3) // s[1] + 1\n"
                   "  out = np.zeros((x.shape[0], oh, ow, w.shape[3]))\n"
                   "  for i in range(oh):\n    for j in range(ow):\n"
                   "      out[:, i, j] = np.einsum('nabc,abco->no', xp[:, i*s[0]:i*s[0]+3, j*s[1]:j*s[1]+3], w)\n"
                   "  return out\n")
              .ok());
  CHECK(printed("y = jax.lax.conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=dn)\n"
                "print(y.shape, bool(np.abs(np.asarray(y) - ref(x, w, (1, 1), ((1, 1), (1, 1)))).max() < 1e-4))\n"
                "y = jax.jit(lambda a, b: jax.lax.conv_general_dilated(a, b, (2, 1), ((0, 1), (2, 0)), "
                "dimension_numbers=dn))(x, w)\n"
                "print(y.shape, bool(np.abs(np.asarray(y) - ref(x, w, (2, 1), ((0, 1), (2, 0)))).max() < 1e-4))") ==
        "(2, 6, 5, 4) True\n(2, 3, 5, 4) True\n");
  // lax.conv takes NCHW/OIHW; the result is the NHWC one transposed.
  CHECK(printed("y = jax.lax.conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), 'VALID')\n"
                "print(y.shape, bool(np.abs(np.asarray(y).transpose(0, 2, 3, 1) - ref(x, w, (1, 1), ((0, 0), (0, 0))))"
                ".max() < 1e-4))") == "(2, 4, 4, 3) True\n");
  CHECK(printed("g = jax.grad(lambda b: (jax.lax.conv_general_dilated(x, b, (1, 1), 'SAME', "
                "dimension_numbers=dn) ** 2).sum())(w)\n"
                "print(g.shape, jax.vmap(lambda a: jax.lax.conv_general_dilated(a[None], w, (1, 1), 'SAME', "
                "dimension_numbers=dn)[0])(x).shape)\n"
                "print(jax.lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), dn))") ==
        "(3, 3, 3, 4) (2, 6, 5, 4)\n"
        "ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))\n");
}

TEST_CASE("lax's array functions notebooks call directly") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("v = jnp.arange(4.0)\nx = jnp.arange(12.0).reshape(3, 4)\n"
                "print(jax.lax.select(v > 1, v, -v), jax.lax.broadcast_in_dim(v, (2, 4), (1,)).shape, "
                "jax.lax.reshape(x, (4, 3)).shape, jax.lax.broadcast(v, (2,)).shape)\n"
                "print(jax.lax.integer_pow(v, 2), jax.lax.convert_element_type(v, jnp.int32), "
                "jax.lax.iota(jnp.int32, 3), jax.lax.rev(v, (0,)))\n"
                "print(jax.lax.dynamic_slice(v, (1,), (2,)), jax.lax.slice(x, (0, 1), (3, 4), (2, 1)).tolist(), "
                "jax.lax.rsqrt(jnp.array([4.0])))\n"
                "print(jax.jit(lambda a: jax.lax.select(a > 1, jax.lax.integer_pow(a, 3), a))(v))") ==
        "[-0. -1.  2.  3.] (2, 4) (4, 3) (2, 4)\n[0. 1. 4. 9.] [0 1 2 3] [0 1 2] [3. 2. 1. 0.]\n"
        "[1. 2.] [[1.0, 2.0, 3.0], [9.0, 10.0, 11.0]] [0.5]\n[ 0.  1.  8. 27.]\n");
}

TEST_CASE("AxisType prints its bare name, as JAX's __repr__ does") {
  CHECK(printed(std::string(kPrelude) +
                "from jax.sharding import AxisType\n"
                "print(jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Explicit)).axis_types)\n"
                "print(repr(AxisType.Manual), str(AxisType.Manual))\n") ==
        "(Auto, Explicit)\nManual AxisType.Manual\n");
}

TEST_CASE("jnp's scalar types are JAX's: classes of jax.numpy that build arrays and stand for their dtypes") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(
      printed("print(jnp.float32, jnp.bfloat16, jnp.int32, jnp.bool_)") ==
      "<class 'jax.numpy.float32'> <class 'jax.numpy.bfloat16'> <class 'jax.numpy.int32'> <class 'jax.numpy.bool'>\n");
  CHECK(printed("print(repr(jnp.float32(3)), repr(jnp.int8(-2)), isinstance(jnp.float32(1), jax.Array))") ==
        "Array(3., dtype=float32) Array(-2, dtype=int8) True\n");
  // Equal to numpy's scalar types and dtypes, and usable wherever a dtype is.
  CHECK(printed("print(jnp.float32 == np.float32, jnp.ones(2).dtype == jnp.float32, jnp.float32 == jnp.int32,\n"
                "      np.dtype(jnp.int16), jnp.dtype(jnp.float16), jnp.zeros(2, jnp.uint8).dtype,\n"
                "      isinstance(np.float32(1), jnp.float32), jnp.issubdtype(jnp.bfloat16, jnp.floating),\n"
                "      jnp.issubdtype(jnp.int32, jnp.integer), {jnp.float32: 1}[np.float32])") ==
        "True True False int16 float16 uint8 True True True 1\n");
  // bfloat16 arrays report bfloat16 (this numpy has no ml_dtypes, so a stand-in dtype prints as ml_dtypes' does).
  CHECK(printed("b = jnp.ones(3, jnp.bfloat16)\nprint(b.dtype, repr(b.dtype), b.dtype == jnp.bfloat16,\n"
                "      jnp.dtype(jnp.bfloat16), jnp.dtype('bfloat16') == b.dtype, b.astype(jnp.float32).dtype,\n"
                "      jax.ShapeDtypeStruct((2,), jnp.bfloat16).dtype, isinstance(b.dtype, jnp.dtype))") ==
        "bfloat16 dtype(bfloat16) True bfloat16 True float32 bfloat16 True\n");
  CHECK(printed("print(repr(jnp.bfloat16(1.5)))") == "Array(1.5, dtype=bfloat16)\n");
}

TEST_CASE("tracers print as the profile's JAX prints them: under jit, under vmap, weakly typed") {
  const std::string program =
      "import jax, jax.numpy as jnp\n"
      "jax.jit(lambda x: print(x, x * 2.0, repr(x)) or x)(3.0)\n"
      "jax.vmap(lambda r: print(r) or r)(jnp.ones((5, 2), jnp.int32))\n";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"0.6.2",
       "Traced<~float32[]>with<DynamicJaxprTrace> Traced<~float32[]>with<DynamicJaxprTrace> "
       "Traced<~float32[]>with<DynamicJaxprTrace>\nTraced<int32[2]>with<DynamicJaxprTrace>\n"},
      {"0.7.0", "JitTracer<~float32[]> JitTracer<~float32[]> JitTracer<~float32[]>\nVmapTracer<int32[2]>\n"},
      {"0.11.2",
       "JitTracer(~float32[]) JitTracer(~float32[]) JitTracer(~float32[])\n"
       "VmapTracer(aval=int32[2], batched=int32[5,2])\n"}};
  for (const auto& [version, text] : expected) {
    CAPTURE(version);
    REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('" + version + "')\n").ok());
    CHECK(printed(program) == text);
  }
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.11.0')\n").ok());
}

TEST_CASE("grad and jvp of concrete arguments evaluate primals: Python control flow works, as JAX's does") {
  REQUIRE(run_cell(kPrelude).ok());
  const std::string program =
      "def f(x):\n"
      "    if x < 3:\n"
      "        return 3. * x ** 2\n"
      "    return -4 * x\n"
      "def halve(x):\n"
      "    while x > 1:\n"
      "        x = x / 2\n"
      "    return x\n"
      "print(jax.grad(f)(2.), jax.grad(f)(4.), jax.grad(halve)(10.), jax.jvp(f, (1.,), (1.,))[1])\n"
      "jax.grad(lambda v: print(v) or jnp.sin(v).sum())(jnp.arange(3.))\n";
  CHECK(printed(program) == "12.0 -4.0 0.0625 6.0\nGradTracer(primal=[0. 1. 2.], typeof(tangent)=f32[3])\n");
  // Under jit the values are abstract: the same function raises JAX's error.
  CHECK(printed("try:\n    jax.jit(jax.grad(f))(2.)\nexcept Exception as e:\n    print(type(e).__name__)\n") ==
        "TracerBoolConversionError\n");
}

TEST_CASE("jax.typeof(x).sharding is the type's NamedSharding, shard_map without in_specs takes the types' specs") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("em = jax.make_mesh((4, 2), ('a', 'b'), axis_types=(jax.sharding.AxisType.Explicit,) * 2)\n"
                "xe = jax.device_put(jnp.arange(32.).reshape(8, 4), NamedSharding(em, P('a', None)))\n"
                "print(jax.typeof(xe).sharding.spec, jax.typeof(xe).sharding.spec[0], jax.typeof(xe).sharding.mesh)") ==
        "P('a', None) a AbstractMesh('a': 4, 'b': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu)\n");
  CHECK(printed("with jax.set_mesh(em):\n"
                "    total = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v.sum(), 'a'), out_specs=P()))(xe)\n"
                "print(total)") == "496.0\n");
}

TEST_CASE("shard_map on an Explicit mesh types its results, one on the context mesh names the AbstractMesh") {
  REQUIRE(run_cell(kPrelude).ok());
  const std::string program =
      "m2 = jax.make_mesh((2,), ('i',), axis_types=(jax.sharding.AxisType.Explicit,))\n"
      "with jax.set_mesh(m2):\n"
      "    f = jax.shard_map(lambda a, b: a * b, in_specs=(P('i'), P()), out_specs=P('i'))\n"
      "    text = str(jax.make_jaxpr(f)(jax.device_put(jnp.arange(6.), P('i')), jnp.arange(3.)))\n"
      "    print(jax.typeof(f(jax.device_put(jnp.arange(6.), P('i')), jnp.arange(3.))))\n"
      "print(text.splitlines()[1].strip())\n"
      "print([l.strip() for l in text.splitlines() if 'mesh=' in l][0])\n";
  CHECK(printed(program) ==
        "float32[6@i]\nc:f32[6@i] = shard_map[\n"
        "mesh=AbstractMesh('i': 2, axis_types=(Explicit,), device_kind=cpu, num_cores=None, platform=cpu)\n");
  CHECK(printed(
            "def g(v):\n    y = jax.lax.psum(v, 'x')\n    print(jax.typeof(y).manual_axis_type.varying)\n    return y\n"
            "jax.shard_map(g, mesh=mesh, in_specs=P('x', 'y'), out_specs=P(None, 'y'))(\n"
            "    jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P('x', 'y'))))\n") == "frozenset({'y'})\n");
}

TEST_CASE("printing a value inside an eager shard_map shows each device's block, as JAX's shard_map tracer does") {
  REQUIRE(run_cell(kPrelude).ok());
  const std::string program =
      "m2 = jax.make_mesh((2,), ('i',), axis_types=(jax.sharding.AxisType.Auto,))\n"
      "def body(v):\n"
      "    print(v)\n"
      "    print(jax.lax.psum(v, 'i'))\n"
      "    return 2 * v\n"
      "out = jax.shard_map(body, mesh=m2, in_specs=P('i'), out_specs=P('i'))(jnp.arange(4.))\n"
      "print(out)\n";
  CHECK(printed(program) ==
        "On cpu:0 at mesh coordinates (i,) = (0,):\n[0. 1.]\n\nOn cpu:1 at mesh coordinates (i,) = (1,):\n[2. 3.]\n\n"
        "On cpu:0 at mesh coordinates (i,) = (0,):\n[2. 4.]\n\nOn cpu:1 at mesh coordinates (i,) = (1,):\n[2. 4.]\n\n"
        "[0. 2. 4. 6.]\n");
  // Under jit the body is abstract: its values print as tracers.
  CHECK(printed("_ = jax.jit(jax.shard_map(lambda v: print(v) or v, mesh=m2, in_specs=P('i'), out_specs=P('i')))"
                "(jnp.arange(4.))\n") == "JitTracer(float32[2]{V:i})\n");
}

TEST_CASE("arrays are uncommitted until device_put places them, and arrays laid out over a mesh are committed") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("x = jnp.arange(4.0)\nprint(x.committed, (x + 1).committed, jax.device_put(x).committed)") ==
        "False False False\n");
  CHECK(printed("print(jax.device_put(x, jax.devices()[1]).committed, x.committed)") == "True False\n");
  CHECK(printed("m = jax.make_mesh((8,), ('x',))\n"
                "z = jax.device_put(jnp.arange(8.), jax.sharding.NamedSharding(m, jax.sharding.PartitionSpec('x')))\n"
                "print(z.committed, (z * 2).committed)") == "True True\n");
}

TEST_CASE("typed PRNG keys are leaves to jax.tree and jax.tree_util, while transformations reach their data") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("k = jax.random.key(0)\n").ok());
  CHECK(printed("print(jax.tree.structure({'a': k, 'b': [k, 1]}))") == "PyTreeDef({'a': *, 'b': [*, *]})\n");
  CHECK(printed("print(jax.tree.leaves([k])[0] is k, len(jax.tree_util.tree_leaves(jax.random.split(k, 3))))") ==
        "True 1\n");
  CHECK(printed("print([jax.tree_util.keystr(p) for p, _ in jax.tree.flatten_with_path({'a': (k, 2.0)})[0]])") ==
        "[\"['a'][0]\", \"['a'][1]\"]\n");
  CHECK(printed("print(jax.tree.map(lambda x: x.dtype, {'a': k}), jax.tree_util.all_leaves([k]), "
                "jax.tree_util.is_tree_node(type(k)))") == "{'a': key<fry>} True False\n");
  // jit, vmap and grad's argument handling still carries the key through.
  CHECK(printed("print(jax.jit(lambda t: jax.random.uniform(t['a']))({'a': k}) == jax.random.uniform(k))") == "True\n");
  CHECK(printed("print(jax.vmap(lambda t: jax.random.bits(t))(jax.random.split(k, 2)).shape)") == "(2,)\n");
  // A jit argument's tracer is named by its key path, attribute names included.
  CHECK(printed(
            "import collections\nPoint = collections.namedtuple('Point', 'x y')\n"
            "try:\n    jax.jit(lambda p: bool(p.y > 0))(Point(1.0, 2.0))\n"
            "except jax.errors.TracerBoolConversionError as ex:\n    print(str(ex).split('\\n')[1].split('. ')[1])") ==
        "This concrete value was not available in Python because it depends on the value of the argument p.y.\n");
}

TEST_CASE("the jax.tree_* aliases warn from their deprecation, name their removal from 0.6.0 and go in 0.9.0") {
  REQUIRE(run_cell("import _shardscope\nprofile_before = _shardscope.jax_version()\n").ok());
  const std::string probe =
      "import warnings\nwith warnings.catch_warnings(record=True) as caught:\n    warnings.simplefilter('always')\n"
      "    try:\n        f = jax.tree_leaves\n        print(f([1, (2,)]), [str(w.message) for w in caught])\n"
      "    except AttributeError as ex:\n        print('AttributeError:', ex)";
  REQUIRE(run_cell("_shardscope.set_jax_version('0.3.5')\nimport jax").ok());
  CHECK(printed(probe) == "[1, 2] []\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.30')").ok());
  CHECK(printed(probe) ==
        "[1, 2] ['jax.tree_leaves is deprecated: use jax.tree.leaves (jax v0.4.25 or newer) or "
        "jax.tree_util.tree_leaves (any JAX version).']\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.8.1')").ok());
  CHECK(printed(probe) ==
        "AttributeError: jax.tree_leaves was removed in JAX v0.6.0: use jax.tree.leaves (jax v0.4.25 "
        "or newer) or jax.tree_util.tree_leaves (any JAX version).\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.9.0')").ok());
  CHECK(printed(probe) == "AttributeError: module 'jax' has no attribute 'tree_leaves'\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)").ok());
}

TEST_CASE("config options JAX removed are accepted until the release that dropped them") {
  REQUIRE(run_cell("import _shardscope\nprofile_before = _shardscope.jax_version()\nimport jax\n").ok());
  const std::string probe =
      "for name in ('jax_array', 'jax_eager_pmap', 'jax_spmd_mode'):\n"
      "    try:\n        jax.config.update(name, True)\n        print(name, 'set')\n"
      "    except AttributeError as ex:\n        print(ex)";
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.13')").ok());
  CHECK(printed(probe) == "jax_array set\njax_eager_pmap set\njax_spmd_mode set\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.6.0')").ok());
  CHECK(printed(probe) ==
        "Unrecognized config option: jax_array\nUnrecognized config option: jax_eager_pmap\njax_spmd_mode set\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)").ok());
}
