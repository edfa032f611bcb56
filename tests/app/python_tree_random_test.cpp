// jax.tree_util key paths (the entries JAX prints, over dicts, sequences, namedtuples and Flax's pytrees) and
// jax.random's bits, bernoulli, randint and uniform inside jit and vmap, drawn bit for bit like the eager calls.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

TEST_CASE("key paths name each leaf as JAX does and keystr joins them") {
  REQUIRE(run_cell("import collections\nimport jax\nimport jax.numpy as jnp\n"
                   "Point = collections.namedtuple('Point', ['x', 'y'])\n")
              .ok());
  CHECK(printed("tree = {'b': [1, (2, None)], 'a': Point(3, 4)}\n"
                "for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:\n"
                "  print(jax.tree_util.keystr(path), repr(path), leaf)\n") ==
        "['a'].x (DictKey(key='a'), GetAttrKey(name='x')) 3\n"
        "['a'].y (DictKey(key='a'), GetAttrKey(name='y')) 4\n"
        "['b'][0] (DictKey(key='b'), SequenceKey(idx=0)) 1\n"
        "['b'][1][0] (DictKey(key='b'), SequenceKey(idx=1), SequenceKey(idx=0)) 2\n");
  CHECK(printed("print(jax.tree_util.tree_map_with_path(lambda p, x: jax.tree_util.keystr(p) + '=' + str(x),"
                " {'w': 1, 'v': [2]}))") == "{'v': [\"['v'][0]=2\"], 'w': \"['w']=1\"}\n");
  CHECK(printed("print(jax.tree_util.keystr((jax.tree_util.DictKey('a'), jax.tree_util.SequenceKey(2)),"
                " simple=True, separator='/'))") == "a/2\n");
  CHECK(printed("print([str(k) for k, _ in [(p[0], l) for p, l in jax.tree.leaves_with_path({'k': 1})]])") ==
        "[\"['k']\"]\n");
  // A registered node without keys gets flat indices.
  CHECK(printed("class Box:\n  def __init__(self, a, b): self.a, self.b = a, b\n"
                "jax.tree_util.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda _, c: Box(*c))\n"
                "print([jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(Box(1, 2))])") ==
        "['[<flat index 0>]', '[<flat index 1>]']\n");
}

TEST_CASE("Flax's pytrees have attribute and dict keys down to the boxed parameter") {
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.5.1')\n_shardscope.set_device_preset('cpu:8')\n"
                   "import jax\nimport jax.numpy as jnp\nimport flax.linen as nn\nimport optax\n"
                   "from flax.core import freeze\nfrom flax.training import train_state\n")
              .ok());
  CHECK(printed("v = nn.Dense(2, kernel_init=nn.with_partitioning(nn.initializers.ones, (None, 'model')))"
                ".init(jax.random.key(0), jnp.ones((1, 3)))\n"
                "state = train_state.TrainState.create(apply_fn=None, params=freeze(v['params']), tx=optax.sgd(0.1))\n"
                "for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:\n"
                "  print(jax.tree_util.keystr(path), jnp.shape(leaf))\n") ==
        ".step ()\n.params['bias'] (2,)\n.params['kernel'].value (3, 2)\n");
}

TEST_CASE("bits and bernoulli inside jit draw what the eager calls draw") {
  REQUIRE(run_cell("import jax\nimport jax.numpy as jnp\nkey = jax.random.key(7)\n").ok());
  CHECK(printed("print(bool((jax.jit(lambda k: jax.random.bits(k, (5, 3)))(key) == "
                "jax.random.bits(key, (5, 3))).all()))") == "True\n");
  CHECK(printed("eager = jax.random.bernoulli(key, 0.3, (64,))\n"
                "traced = jax.jit(lambda k: jax.random.bernoulli(k, 0.3, (64,)))(key)\n"
                "print(traced.dtype, bool((eager == traced).all()), 5 < int(eager.sum()) < 40)") == "bool True True\n");
  // p as an array (one probability per element) and p traced: uniform draws compared with p.
  CHECK(printed("p = jnp.linspace(0.0, 1.0, 8)\n"
                "a = jax.random.bernoulli(key, p)\n"
                "b = jax.jit(lambda k, p: jax.random.bernoulli(k, p))(key, p)\n"
                "u = jax.random.uniform(key, (8,))\n"
                "print(bool((a == b).all()), bool((a == (u < p)).all()), bool(a[0]), bool(a[-1]))") ==
        "True True False True\n");
  CHECK(printed("print(bool((jax.jit(lambda k: jax.random.bernoulli(k, 0.5, (16,), mode='high'))(key) == "
                "jax.random.bernoulli(key, jnp.float32(0.5), (16,), mode='high')).all()))") == "True\n");
  const CellResult wider = run_cell("jax.random.bernoulli(key, jnp.ones((2, 4)) * 0.5, (4,))");
  CHECK(wider.error.find("ValueError: bernoulli parameter shapes must be broadcast-compatible with shape argument, "
                         "and the result of broadcasting the shapes must equal the shape argument, but got result "
                         "(2, 4) for shape argument (4,).") != std::string::npos);
  const CellResult incompatible = run_cell("jax.random.bernoulli(key, jnp.ones(3) * 0.5, (2, 4))");
  CHECK(incompatible.error.find("ValueError: Incompatible shapes for broadcasting: shapes=[(2, 4), (3,)]") !=
        std::string::npos);
  CHECK(printed("print(jnp.issubdtype(jnp.float32, jnp.floating), jnp.issubdtype(jnp.int32, jnp.floating),"
                " jnp.issubdtype(jnp.bfloat16, jnp.floating), jnp.issubdtype(jnp.uint8, jnp.integer))") ==
        "True False True True\n");
}

TEST_CASE("randint and uniform on traced keys or array bounds draw what the eager calls draw, as nested jits") {
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.11.2')\nimport numpy as np\nimport jax\n"
                   "import jax.numpy as jnp\nkey = jax.random.key(42)\nkeys = jax.random.split(key, 2)\n")
              .ok());
  // JAX's algorithm (two draws of the dtype's width modulo the span) on every width, empty and reversed ranges,
  // and a maxval one past the dtype's range.
  CHECK(printed("bad = []\n"
                "for dtype in (jnp.int32, jnp.uint8, jnp.int8, jnp.int16, jnp.uint32):\n"
                "    for lo, hi in ((0, 10), (-5, 5), (3, 3), (7, 2), (0, 256), (-128, 127), (100, 1000)):\n"
                "        e = jax.random.randint(key, (7,), lo, hi, dtype)\n"
                "        t = jax.jit(lambda k: jax.random.randint(k, (7,), lo, hi, dtype))(key)\n"
                "        if not (np.array_equal(e, t) and e.dtype == t.dtype):\n"
                "            bad.append((dtype, lo, hi))\n"
                "print(bad)") == "[]\n");
  CHECK(printed("v = jax.vmap(lambda k: jax.random.randint(k, (3,), 0, 100))(keys)\n"
                "print(v.dtype, np.array_equal(v[1], jax.random.randint(keys[1], (3,), 0, 100)))") == "int32 True\n");
  // Bounds per element broadcast against the shape.
  CHECK(printed("r = jax.random.randint(key, (500, 3), jnp.array([0, 10, 100]), jnp.array([5, 20, 200]))\n"
                "print(r.shape, bool((r.min(0) >= jnp.array([0, 10, 100])).all()), "
                "bool((r.max(0) < jnp.array([5, 20, 200])).all()))") == "(500, 3) True True\n");
  // A product and a sum of the sampler contract into one rounding in the compiled program, eager or traced, its
  // bounds broadcast as [1] values, on one device or laid out over eight.
  CHECK(printed("from jax.sharding import NamedSharding, PartitionSpec as P\n"
                "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                "f = lambda k: jax.random.uniform(k, (16, 16), minval=-3., maxval=2.)\n"
                "e = f(key)\nt = jax.jit(f)(key)\n"
                "s = jax.jit(f, out_shardings=NamedSharding(mesh, P(None, 'model')))(key)\n"
                "print(np.array_equal(e, t), np.array_equal(e, s), int((e != jnp.round(e)).sum()) > 0)") ==
        "True True True\n");
  const std::string jaxpr = printed("print(jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(key))");
  CHECK(jaxpr.find("name=_normal\n") != std::string::npos);
  CHECK(jaxpr.find("name=_normal_real\n") != std::string::npos);
  CHECK(jaxpr.find("name=_uniform\n") != std::string::npos);
  CHECK(jaxpr.find(":u32[3] = shift_right_logical") != std::string::npos);
  CHECK(jaxpr.find(" 9:u32[]\n") != std::string::npos);  // a numpy constant is a literal, as JAX inlines it
  CHECK(printed("try:\n    jax.random.randint(key, (3,), jnp.zeros(4, jnp.int32), 5)\nexcept ValueError as e:\n"
                "    print(e)") == "Incompatible shapes for broadcasting: shapes=[(3,), (4,), ()]\n");
  CHECK(printed("try:\n    jax.random.randint(key, (3,), jnp.zeros((2, 3), jnp.int32), 5)\nexcept ValueError as e:\n"
                "    print(e)") ==
        "randint parameter shapes must be broadcast-compatible with shape argument, and the result of broadcasting "
        "the shapes must equal the shape argument, but got result (2, 3) for shape argument (3,).\n");
}

TEST_CASE("jax.random's permutation, choice, categorical and friends give real JAX 0.11.2's values for a key") {
  // The values are what real JAX 0.11.2 printed for key(0) (tests/data/real_jax/probes/p12_api.py cell 8).
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.11.2')\nimport jax\nimport jax.numpy as jnp\n"
                   "k = jax.random.key(0)\n")
              .ok());
  CHECK(printed("print(jax.random.permutation(k, 6), jax.random.choice(k, 5, (3,), replace=False), "
                "jax.random.categorical(k, jnp.zeros(4), shape=(3,)))") == "[0 1 5 4 3 2] [0 1 4] [1 3 2]\n");
  // Samplers built on uniform follow JAX's formulas: an exponential is -log1p(-u), a Gumbel -log(-log(u)).
  CHECK(printed("u = jax.random.uniform(k, (3,))\n"
                "print(bool((jax.random.exponential(k, (3,)) == -jnp.log1p(-u)).all()), "
                "jax.random.permutation(k, jnp.arange(12.).reshape(3, 4), axis=1).shape, "
                "jax.random.choice(k, jnp.arange(10), (2, 2)).shape)") == "True (3, 4) (2, 2)\n");
  CHECK(printed("try:\n    jax.random.choice(k, 3, (5,), replace=False)\nexcept ValueError as e:\n    print(e)") ==
        "Cannot take a larger sample (size 5) than population (size 3) when 'replace=False'\n");
}

TEST_CASE("the formula samplers (cauchy..lognormal) are JAX's jitted helpers: their moments, dtypes and shapes") {
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.11.2')\nimport numpy as np\nimport jax\n"
                   "import jax.numpy as jnp\nr = jax.random\nk = r.key(0)\nn = (20000,)\n"
                   "def near(x, want, tol):\n    return abs(float(x) - want) < tol\n")
              .ok());
  CHECK(
      printed("print(near(jnp.median(r.cauchy(k, n)), 0.0, 0.05), near(r.maxwell(k, n).mean(), 2 * np.sqrt(2 / np.pi), "
              "0.02), near(r.rayleigh(k, 1.0, n).mean(), np.sqrt(np.pi / 2), 0.02), "
              "near(jnp.median(r.pareto(k, 3.0, n)), 2 ** (1 / 3), 0.02), near(r.wald(k, 2.0, n).mean(), 2.0, 0.05), "
              "near(r.triangular(k, 0., 1., 3., n).mean(), 4 / 3, 0.02), "
              "near(jnp.median(r.lognormal(k, 0.5, n)), 1.0, 0.02), near(r.weibull_min(k, 2.0, 1.0, n).mean(), 2.0, "
              "0.05), near(r.double_sided_maxwell(k, 1.0, 2.0, n).mean(), 1.0, 0.1))") ==
      "True True True True True True True True True\n");
  CHECK(
      printed("x = r.rademacher(k, n)\ng = r.geometric(k, 0.25, n)\n"
              "print(x.dtype, sorted(set(np.asarray(x).tolist())), g.dtype, near(g.mean(), 4.0, 0.1), int(g.min()))") ==
      "int32 [-1, 1] int32 True 1\n");
  // Shapes default to the parameters' broadcast shape; a given shape must be what they broadcast to.
  CHECK(printed("print(r.rayleigh(k, jnp.ones((2, 3))).shape, r.maxwell(k, (4,)).shape, "
                "r.double_sided_maxwell(k, jnp.zeros(3), 1.0).shape, r.key_dtype(), r.clone(k).dtype)") ==
        "(2, 3) (4,) (3, 3) key<fry> key<fry>\n");  // JAX appends the parameters' shape to an empty one
  CHECK(printed("try:\n    r.pareto(k, jnp.ones(3), (2,))\nexcept ValueError as e:\n    print(e)") ==
        "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]\n");
  CHECK(printed("try:\n    r.cauchy(k, (2,), jnp.int32)\nexcept ValueError as e:\n    print(e)") ==
        "dtype argument to `cauchy` must be a float dtype, got int32\n");
  // Eager and traced draws agree bit for bit; the jaxpr nests JAX's named helpers.
  CHECK(printed("print(all(np.array_equal(f(k), jax.jit(f)(k)) for f in (lambda k: r.rayleigh(k, 1.5, (9,)), "
                "lambda k: r.wald(k, 2.0, (9,)), lambda k: r.triangular(k, 0., 1., 3., (9,)))))") == "True\n");
  const std::string jaxpr = printed("print(jax.make_jaxpr(lambda k: r.cauchy(k, (3,)))(k))");
  CHECK(jaxpr.find("name=_cauchy\n") != std::string::npos);
  // _uniform is over ten equations (its weakly typed maxval is converted), so it is printed once, shared.
  CHECK(jaxpr.find("jit[name=_uniform jaxpr=_uniform] o 1.1920928955078125e-07:f32[]") != std::string::npos);
  CHECK(jaxpr.find("tan") != std::string::npos);
}

TEST_CASE("truncated_normal runs JAX's jitted helper on traced keys and array bounds, drawing the eager values") {
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.11.2')\nimport numpy as np\nimport jax\n"
                   "import jax.numpy as jnp\nk = jax.random.key(3)\n")
              .ok());
  CHECK(printed("e = jax.random.truncated_normal(k, -2., 2., (64,))\n"
                "t = jax.jit(lambda k: jax.random.truncated_normal(k, -2., 2., (64,)))(k)\n"
                "print(np.array_equal(e, t), bool((jnp.abs(e) < 2).all()))") == "True True\n");
  // Bounds per column: every draw inside its own interval.
  CHECK(printed("lo = jnp.array([-1., 0., 2.])\nhi = jnp.array([1., 3., 2.5])\n"
                "d = jax.random.truncated_normal(k, lo, hi, (1000, 3))\n"
                "print(d.shape, bool(((d > lo) & (d < hi)).all()))") == "(1000, 3) True\n");
  CHECK(printed("print('name=_truncated_normal' in str(jax.make_jaxpr(lambda k: jax.random.truncated_normal(k, -1., "
                "1., (2,)))(k)))") == "True\n");
  CHECK(printed("try:\n    jax.random.truncated_normal(k, jnp.zeros(3), 1., (2,))\nexcept ValueError as e:\n"
                "    print(e)") == "Incompatible shapes for broadcasting: shapes=[(2,), (3,), ()]\n");
}
