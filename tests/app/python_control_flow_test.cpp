// jax.lax.scan / fori_loop / while_loop / cond / switch / map and jax.checkpoint from Python: values equal to
// Python loops, JAX 0.11's jaxpr text and errors, grad and vmap, and sharded carries inside jit.
#include <doctest/doctest.h>

#include <string>

#include "api/transforms.h"
#include "app/python_test_support.h"
#include "python/host.h"
#include "spmd/comm_log.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding\n"
    "def step(c, x):\n    return c * 0.5 + x, c + x\n"
    "def py_scan(c, xs, reverse=False):\n"
    "    ys = [None] * len(xs)\n"
    "    for i in (reversed(range(len(xs))) if reverse else range(len(xs))):\n"
    "        c, ys[i] = step(c, xs[i])\n"
    "    return c, ys\n"
    "xs_np = np.array([1.0, 0.25, -2.0, 0.0625], np.float32)\n";

std::string last_run_kinds() {
  const auto run = shardscope::api::last_program_run();
  if (run == nullptr) return "";
  std::string kinds;
  for (const auto& record : run->log.records()) kinds += shardscope::collective_name(record.kind) + " ";
  return kinds;
}

}  // namespace

TEST_CASE("scan, fori_loop, while_loop and map equal their Python loops") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("for rev in (False, True):\n"
                "    c, ys = lax.scan(step, jnp.float32(3.0), jnp.asarray(xs_np), reverse=rev)\n"
                "    rc, rys = py_scan(np.float32(3.0), xs_np, rev)\n"
                "    print(float(c) == float(rc), np.asarray(ys).tolist() == [float(y) for y in rys])") ==
        "True True\nTrue True\n");
  CHECK(printed("print(lax.fori_loop(0, 5, lambda i, x: x + i * i, 0))") == "30\n");
  CHECK(printed("print(lax.fori_loop(jnp.int32(2), jnp.int32(6), lambda i, x: x * 2 + i, 1))") == "57\n");
  CHECK(printed("print(lax.while_loop(lambda v: v[0] < 5, lambda v: (v[0] + 1, v[1] * 2), (0, 1.0)))") ==
        "(Array(5, dtype=int32, weak_type=True), Array(32., dtype=float32, weak_type=True))\n");
  CHECK(printed("print(lax.map(lambda x: x * 3, jnp.arange(4)))") == "[0 3 6 9]\n");
  // length with xs=None, pytrees of carries and xs.
  CHECK(printed("print(lax.scan(lambda c, _: (c + 1, c * c), 0, None, length=4)[1])") == "[0 1 4 9]\n");
  CHECK(printed("c, ys = lax.scan(lambda c, x: ({'a': c['a'] + x[0]}, (x[1], c['a'])), {'a': 0.0},\n"
                "                 (jnp.arange(3.0), jnp.ones(3)))\nprint(c['a'], ys[0], ys[1])") ==
        "3.0 [1. 1. 1.] [0. 0. 1.]\n");
}

TEST_CASE("cond and switch pick a branch, the old five-argument cond still works") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(lax.cond(True, lambda x: x + 1, lambda x: x - 1, 3), "
                "lax.cond(0.0, lambda x: x + 1, lambda x: x - 1, 3))") == "4 2\n");
  CHECK(printed("print([float(lax.switch(i, [lambda x: x, lambda x: x * 2, lambda x: x * 3], 2.0)) "
                "for i in (-1, 0, 1, 2, 7)])") == "[2.0, 2.0, 4.0, 6.0, 6.0]\n");
  CHECK(printed("print(lax.cond(False, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1))") == "1.0\n");
}

TEST_CASE("make_jaxpr prints scan, while and cond as JAX 0.11 does") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.make_jaxpr(lambda c, xs: lax.scan(step, c, xs))(jnp.float32(0), jnp.asarray(xs_np)))") ==
        "{ lambda ; a:f32[] b:f32[4]. let\n"
        "    c:f32[] d:f32[4] = scan[\n"
        "      ft_in=((), (None,), (None,))\n"
        "      ft_out=((None,), (RightsOnly(Right(None)),))\n"
        "      jaxpr={ lambda ; e:f32[] f:f32[]. let\n"
        "          g:f32[] = mul e 0.5:f32[]\n"
        "          h:f32[] = add g f\n"
        "          i:f32[] = add e f\n"
        "        in (h, i) }\n"
        "      length=4\n"
        "      reverse=False\n"
        "      unroll=1\n"
        "    ] a b\n"
        "  in (c, d) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda x: lax.while_loop(lambda v: v < 5.0, lambda v: v + 1.0, x))(1.0))") ==
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = while[\n"
        "      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = add c 1.0:f32[] in (d,) }\n"
        "      body_nconsts=0\n"
        "      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 5.0:f32[] in (f,) }\n"
        "      cond_nconsts=0\n"
        "    ] a\n"
        "  in (b,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x + 1, lambda x: x - 1, x))(True, 3))") ==
        "{ lambda ; a:bool[] b:i32[]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:i32[] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:i32[]. let f:i32[] = sub e 1:i32[] in (f,) }\n"
        "        { lambda ; g:i32[]. let h:i32[] = add g 1:i32[] in (h,) }\n"
        "      )\n"
        "    ] c b\n"
        "  in (d,) }\n");
  CHECK(printed("print(jax.make_jaxpr(jax.checkpoint(lambda x: jnp.sin(x) * x))(1.0))") ==
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = remat2[\n"
        "      differentiated=False\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = mul d c in (e,) }\n"
        "      policy=None\n"
        "      prevent_cse=True\n"
        "    ] a\n"
        "  in (b,) }\n");
  CHECK(printed("print(jax.make_jaxpr(jax.remat(lambda x: x * 2, "
                "policy=jax.checkpoint_policies.save_only_these_names('h')))(1.0))")
            .find("policy=SaveOnlyTheseNames(saveable_names=frozenset({'h'}))") != std::string::npos);
  CHECK(printed("from jax.ad_checkpoint import checkpoint_name\n"
                "print(jax.make_jaxpr(lambda x: checkpoint_name(x * 2, 'h'))(1.0))") ==
        "{ lambda ; a:f32[]. let\n    b:f32[] = mul a 2.0:f32[]\n    c:f32[] = name[name=h] b\n  in (c,) }\n");
}

TEST_CASE("control flow raises JAX's errors") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("def err(f):\n    try:\n        f()\n    except Exception as e:\n"
                   "        print(type(e).__name__ + ': ' + str(e))\n")
              .ok());
  CHECK(printed("err(lambda: lax.scan(lambda c, x: (c.astype(jnp.int32), x), 1.0, jnp.ones(2)))") ==
        "TypeError: scan body function carry input and carry output must have equal types, but they differ:\n\n"
        "The input carry c has type float32[] but the corresponding output carry component has type int32[], so "
        "the dtypes do not match.\n\nRevise the function so that all output types match the corresponding input "
        "types.\n");
  CHECK(printed("err(lambda: lax.while_loop(lambda v: v, lambda v: v + 1, 0))") ==
        "TypeError: cond_fun must return a boolean scalar, but got output type(s) "
        "[ShapedArray(int32[], weak_type=True)].\n");
  CHECK(printed("err(lambda: lax.switch(1.0, [lambda: 1, lambda: 2]))") ==
        "TypeError: Index type must be an integer, got 1.0 as float32\n");
  CHECK(printed("err(lambda: jax.grad(lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * v, x))(1.5))") ==
        "ValueError: Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
        "start/stop values. Try using lax.scan, or using fori_loop with static start/stop.\n");
  CHECK(printed("err(lambda: lax.scan(step, 0.0, jnp.ones(3), length=4))") ==
        "ValueError: scan got `length` argument of 4 which disagrees with leading axis sizes [3].\n");
  const std::string branch_error =
      printed("err(lambda: lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0))");
  CHECK(branch_error.find("TypeError: cond branches must have equal output types but they differ.\n\ntrue_fun is "
                          "<lambda> at ") == 0);
  CHECK(branch_error.find("The output of true_fun has type float32[] but the corresponding output of false_fun has "
                          "type int32[], so the dtypes do not match.\n\nRevise true_fun and/or false_fun so that all "
                          "output types match.\n") != std::string::npos);
}

TEST_CASE("grad through scan, static fori_loop, cond, switch and checkpoint, jvp through while") {
  REQUIRE(run_cell(kPrelude).ok());
  // d/dc of the final carry of step over 4 values is 0.5**4.
  CHECK(printed("print(jax.grad(lambda c: lax.scan(step, c, jnp.asarray(xs_np))[0])(1.0))") == "0.0625\n");
  // x -> x**8 by squaring three times: 8 * 1.5**7.
  CHECK(printed("print(jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, x: x * x, x))(1.5))") == "136.6875\n");
  CHECK(printed("print(jax.grad(lambda x: lax.cond(x > 0, lambda x: x * x, lambda x: -x, x))(3.0), "
                "jax.grad(lambda x: lax.switch(2, [jnp.sin, jnp.cos, lambda x: x ** 3], x))(2.0))") == "6.0 12.0\n");
  CHECK(printed("print(jax.grad(jax.checkpoint(lambda x: x * x * x, "
                "policy=jax.checkpoint_policies.nothing_saveable))(2.0))") == "12.0\n");
  CHECK(printed("print(jax.jvp(lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * v, x), (1.5,), (1.0,)))") ==
        "(Array(25.628906, dtype=float32, weak_type=True), Array(136.6875, dtype=float32, weak_type=True))\n");
}

TEST_CASE("vmap of scan, cond (a batched predicate selects) and while (a batched predicate)") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.vmap(lambda c: lax.scan(step, c, jnp.asarray(xs_np))[0])(jnp.array([1.0, 2.0])))") ==
        "[-0.6875 -0.625 ]\n");
  CHECK(printed("f = jax.vmap(lambda p, x: lax.cond(p, lambda x: x * 2, lambda x: -x, x))\n"
                "args = (jnp.array([True, False]), jnp.array([1.0, 2.0]))\nprint(f(*args))\n"
                "print(jax.make_jaxpr(f)(*args))") ==
        "[ 2. -2.]\n"
        "{ lambda ; a:bool[2] b:f32[2]. let\n"
        "    c:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:f32[2] = neg b\n"
        "    e:f32[2] = mul b 2.0:f32[]\n"
        "    f:f32[2] = select_n c d e\n"
        "  in (f,) }\n");
  CHECK(printed("print(jax.vmap(lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * 2, x))("
                "jnp.array([1.0, 3.0, 20.0])))") == "[16. 12. 20.]\n");
}

TEST_CASE("a P('x')-sharded carry stays sharded through jit with no all-gather") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("mesh = jax.make_mesh((8,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))\n"
                   "x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P('x')))\n")
              .ok());
  CHECK(printed("y = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + 1.0, x))(x)\n"
                "print(y.sharding.spec, np.asarray(y)[:4])") == "P('x',) [ 7. 15. 23. 31.]\n");
  CHECK(last_run_kinds().find("all-gather") == std::string::npos);
  CHECK(printed("c, ys = jax.jit(lambda x: lax.scan(lambda c, t: (c + t, c * t), x, jnp.arange(3.0)))(x)\n"
                "print(c.sharding.spec, np.asarray(c)[:3], np.asarray(ys)[:, 1])") ==
        "P('x',) [3. 4. 5.] [0. 1. 4.]\n");
  CHECK(last_run_kinds().find("all-gather") == std::string::npos);
  CHECK(printed("y = jax.jit(lambda x: lax.cond(x[0] < 1, lambda v: v * 2, lambda v: v, x))(x)\n"
                "print(np.asarray(y)[:3])") == "[0. 2. 4.]\n");
}

TEST_CASE("loops inside shard_map step together, so collectives in their bodies work") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("mesh = jax.make_mesh((8,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))\n"
                   "from jax.experimental.shard_map import shard_map\n")
              .ok());
  // Each device holds 1: c + psum(c) twice gives 1 + 8 = 9, then 9 + 72 = 81.
  CHECK(printed("g = shard_map(lambda b: lax.fori_loop(0, 2, lambda i, c: c + lax.psum(c, 'x'), b), mesh=mesh,\n"
                "              in_specs=P('x'), out_specs=P('x'))\nprint(np.asarray(g(jnp.ones(8))))") ==
        "[81. 81. 81. 81. 81. 81. 81. 81.]\n");
}

TEST_CASE("save_and_offload_only_these_names is JAX's dataclass policy and checkpoints compute the same gradient") {
  CHECK(printed(std::string(kPrelude) +
                "cp = jax.checkpoint_policies\n"
                "pol = cp.save_and_offload_only_these_names(names_which_can_be_saved=[],\n"
                "    names_which_can_be_offloaded=['h'], offload_src='device', offload_dst='pinned_host')\n"
                "print(pol)\n"
                "print(isinstance(pol, cp.SaveAndOffloadOnlyTheseNames))\n"
                "from jax.ad_checkpoint import checkpoint_name\n"
                "f = lambda w: jnp.sum(checkpoint_name(jnp.sin(w * 2.0), 'h') ** 2)\n"
                "w = jnp.arange(4.0)\n"
                "print(bool(jnp.allclose(jax.grad(jax.checkpoint(f, policy=pol))(w), jax.grad(f)(w))))\n"
                "try:\n"
                "    cp.save_and_offload_only_these_names(names_which_can_be_saved=['h'],\n"
                "        names_which_can_be_offloaded=['h'], offload_src='device', offload_dst='pinned_host')\n"
                "except ValueError as e:\n"
                "    print(e)\n") ==
        "SaveAndOffloadOnlyTheseNames(names_which_can_be_saved=frozenset(), names_which_can_be_offloaded="
        "frozenset({'h'}), offload_src='device', offload_dst='pinned_host')\nTrue\nTrue\n"
        "The names should be exclusive and should not intersect in `names_which_can_be_saved` and "
        "`names_which_can_be_offloaded`. Got names_which_can_be_saved={'h'}, names_which_can_be_offloaded={'h'} "
        "and the intersection={'h'}\n");
}

TEST_CASE("grad through a scan with a non-linear carry from a constant init, eager and jitted over sharded operands") {
  // The tangent carry starts from instantiated zeros, so the transpose must treat it as linear; under jit the
  // stacked residual of the loop-invariant weight and the sharded carry give two factors the same axis, which the
  // plan must not put on one operand twice.
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)\n"
                   "r0 = jnp.arange(16.).reshape(4, 4) / 16\nw0 = jnp.eye(4) / 2 + 0.1\n"
                   "def loss(w, xs):\n"
                   "    return lax.scan(lambda c, x: (jnp.tanh(c @ w + x), None), jnp.zeros(4), xs)[0].sum()\n"
                   "def np_loss(w, xs):\n"
                   "    c = np.zeros(4)\n"
                   "    for x in xs:\n        c = np.tanh(c @ w + x)\n"
                   "    return c.sum()\n"
                   "wn, rn = np.asarray(w0, np.float64), np.asarray(r0, np.float64)\n"
                   "fd = np.zeros((4, 4))\n"
                   "for i in range(4):\n    for j in range(4):\n"
                   "        d = np.zeros((4, 4)); d[i, j] = 1e-6\n"
                   "        fd[i, j] = (np_loss(wn + d, rn) - np_loss(wn - d, rn)) / 2e-6\n")
              .ok());
  CHECK(printed("print(np.allclose(np.asarray(jax.grad(loss)(w0, r0)), fd, atol=1e-4))") == "True\n");
  CHECK(printed("for lw, lr in [(P(None, 'model'), P()), (P(), P(None, 'model')), (P(), P('data', None))]:\n"
                "    w = jax.device_put(w0, NamedSharding(mesh, lw))\n"
                "    r = jax.device_put(r0, NamedSharding(mesh, lr))\n"
                "    print(np.allclose(np.asarray(jax.jit(jax.grad(loss))(w, r)), fd, atol=1e-4))") ==
        "True\nTrue\nTrue\n");
}

TEST_CASE("grad through a checkpointed stack of layers whose jitted relu returns a primal and a tangent together") {
  REQUIRE(run_cell(kPrelude).ok());
  // Transposing the remat body splits off its primal half first; before, relu's joint output made the next
  // layer's dot look nonlinear ("nonlinear dot_general can't be transposed").
  CHECK(printed("layers = [(jnp.linspace(-1, 1, 64).reshape(8, 8), jnp.linspace(0, 1, 8)),\n"
                "          (jnp.linspace(1, -1, 32).reshape(8, 4), jnp.linspace(-1, 0, 4))]\n"
                "inputs = jnp.linspace(-2, 2, 16).reshape(2, 8)\n"
                "def mlp(params, x):\n"
                "    for W, b in params:\n"
                "        out = jnp.dot(x, W) + b\n"
                "        x = jax.nn.relu(out)\n"
                "    return out\n"
                "plain = jax.grad(lambda p: mlp(p, inputs).sum())(layers)\n"
                "for policy in (None, lambda *a, **k: True, lambda prim, *_, **__: str(prim) != 'dot_general'):\n"
                "    remat = jax.checkpoint(mlp, policy=policy)\n"
                "    got = jax.jit(jax.grad(lambda p: remat(p, inputs).sum()))(layers)\n"
                "    print(all(np.allclose(g, w) for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(plain))))") ==
        "True\nTrue\nTrue\n");
}
