// jax.ad_checkpoint.print_saved_residuals and checkpoint policies from Python: residuals named by argument path,
// operation and user source line, policies (built-in, combined and custom) deciding what is kept, exact gradients.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

// The model lives in a file of its own name, so the residuals' source lines do not depend on cell numbering.
constexpr const char* kModel =
    "import jax\nimport jax.numpy as jnp\nimport numpy as np\n"
    "from jax.ad_checkpoint import print_saved_residuals, checkpoint_name\n"
    "model_source = '''\n"
    "def layer(w, h):\n"           // line 2
    "    return jnp.cos(w @ h)\n"  // line 3: cos at column 11, the product at 19
    "\n"
    "def net(params, h):\n"                                     // line 5
    "    h = checkpoint_name(layer(params[0], h), 'hidden')\n"  // line 6: the name at column 8
    "    return layer(params[1], h)\n"
    "'''\n"
    "model = {'jnp': jnp, 'checkpoint_name': checkpoint_name}\n"
    "exec(compile(model_source, 'model.py', 'exec'), model)\n"
    "layer, net = model['layer'], model['net']\n"
    "params = [jnp.linspace(-1.0, 1.0, 12).reshape(3, 4), jnp.linspace(0.5, -0.5, 6).reshape(2, 3)]\n"
    "h = jnp.array([1.0, 0.5, -0.25, 2.0])\n"
    "loss = lambda f: (lambda params, h: f(params, h).sum())\n";

constexpr const char* kArguments =
    "f32[3,4] from the argument params[0]\n"
    "f32[2,3] from the argument params[1]\n"
    "f32[4] from the argument h\n";

}  // namespace

TEST_CASE("print_saved_residuals names arguments by path and values by operation and source line") {
  REQUIRE(run_cell(kModel).ok());
  CHECK(printed("print_saved_residuals(net, params, h)") == std::string(kArguments) +
                                                                "f32[3] output of sin from model.py:3:11 (layer)\n"
                                                                "f32[3] named 'hidden' from model.py:6:8 (net)\n"
                                                                "f32[2] output of sin from model.py:3:11 (layer)\n");
  // saved_residuals returns the types and the texts; a weakly typed scalar is kept after its promotion.
  CHECK(printed("res = jax.ad_checkpoint.saved_residuals(lambda w, *, x: jnp.sin(w * x), jnp.ones(3), x=2.0)\n"
                "print([(a.str_short(short_dtypes=True), s.split(' from')[0]) for a, s in res])") ==
        "[('f32[3]', 'from the argument w'), ('f32[]', 'output of convert_element_type'), ('f32[3]', 'output of "
        "cos')]\n");
}

TEST_CASE("keyword arguments are named by keyword") {
  REQUIRE(run_cell(kModel).ok());
  const std::string text =
      printed("print_saved_residuals(lambda w, *, x: jnp.sin(w * x), jnp.ones(3), x=jnp.float32(2.0))");
  CHECK(text.starts_with("f32[3] from the argument w\nf32[] from the argument x\nf32[3] output of cos from <cell "));
  CHECK(text.ends_with(">:1:38 (<lambda>)\n"));
}

TEST_CASE("a checkpoint's policy decides which residuals are kept") {
  REQUIRE(run_cell(kModel).ok());
  // Per-layer checkpoints keep only their inputs: layer 1's output is the one value in between.
  CHECK(printed("def per_layer(params, h):\n"
                "    return jax.checkpoint(layer)(params[1], jax.checkpoint(layer)(params[0], h))\n"
                "print_saved_residuals(per_layer, params, h)") ==
        std::string(kArguments) + "f32[3] output of cos from model.py:3:11 (layer)\n");
  CHECK(printed("print_saved_residuals(jax.checkpoint(net), params, h)") == kArguments);
  CHECK(printed("print_saved_residuals(jax.checkpoint(net, policy=jax.checkpoint_policies.dots_saveable), "
                "params, h)") == std::string(kArguments) +
                                     "f32[3] output of dot_general from model.py:3:19 (layer)\n"
                                     "f32[2] output of dot_general from model.py:3:19 (layer)\n");
  CHECK(printed("policy = jax.checkpoint_policies.save_only_these_names('hidden')\n"
                "print_saved_residuals(jax.checkpoint(net, policy=policy), params, h)") ==
        std::string(kArguments) + "f32[3] named 'hidden' from model.py:6:8 (net)\n");
  CHECK(printed("policy = jax.checkpoint_policies.save_any_names_but_these('hidden')\n"
                "print_saved_residuals(jax.checkpoint(net, policy=policy), params, h)") == kArguments);
  // Offloading: the value moves to host memory on the forward pass and back for the backward pass.
  CHECK(printed("policy = jax.checkpoint_policies.save_and_offload_only_these_names(\n"
                "    names_which_can_be_saved=[], names_which_can_be_offloaded=['hidden'],\n"
                "    offload_src='device', offload_dst='pinned_host')\n"
                "print_saved_residuals(jax.checkpoint(net, policy=policy), params, h)") ==
        std::string(kArguments) + "f32<host>[3] output of device_put from model.py:6:8 (net)\n");
  // Combined and custom policies: the engine asks the user's function about each operation.
  CHECK(printed("both = jax.checkpoint_policies.save_from_both_policies(\n"
                "    jax.checkpoint_policies.save_only_these_names('hidden'),\n"
                "    lambda prim, *avals, **params: prim.name == 'sin' and avals[0].shape == (2,))\n"
                "print_saved_residuals(jax.checkpoint(net, policy=both), params, h)") ==
        std::string(kArguments) +
            "f32[3] named 'hidden' from model.py:6:8 (net)\n"
            "f32[2] output of sin from model.py:3:11 (layer)\n");
  const auto bad = run_cell("jax.grad(loss(jax.checkpoint(net, policy=lambda *_, **__: 'yes')))(params, h)");
  CHECK(bad.error.find("TypeError: Value returned by a remat policy should be a bool") != std::string::npos);
}

TEST_CASE("every policy gives the gradient computed without checkpoint, bit for bit") {
  REQUIRE(run_cell(kModel).ok());
  CHECK(printed(
            "expected = jax.grad(loss(net))(params, h)\n"
            "policies = [None, jax.checkpoint_policies.nothing_saveable, jax.checkpoint_policies.everything_saveable,\n"
            "            jax.checkpoint_policies.dots_with_no_batch_dims_saveable,\n"
            "            jax.checkpoint_policies.save_only_these_names('hidden'),\n"
            "            jax.checkpoint_policies.save_and_offload_only_these_names(\n"
            "                names_which_can_be_saved=[], names_which_can_be_offloaded=['hidden'],\n"
            "                offload_src='device', offload_dst='pinned_host'),\n"
            "            lambda prim, *_, **__: prim.name == 'cos']\n"
            "for policy in policies:\n"
            "    got = jax.grad(loss(jax.checkpoint(net, policy=policy)))(params, h)\n"
            "    print(all(np.array_equal(a, b) for a, b in zip(got, expected)), end=' ')\n") ==
        "True True True True True True True ");
  // The backward half is a remat2 marked differentiated, reading what the forward half saved.
  CHECK(printed("text = str(jax.make_jaxpr(jax.grad(jax.checkpoint(jnp.sin)))(1.0))\n"
                "print('differentiated=True' in text, text.count('remat2['))") == "True 1\n");
}

TEST_CASE("custom_remat: under a checkpoint the rules see its policy and give the cotangents") {
  REQUIRE(run_cell(kModel).ok());
  CHECK(printed("seen = []\n"
                "def sin_fwd(policy, x):\n"
                "    seen.append(policy)\n"
                "    keep = isinstance(policy, jax.checkpoint_policies.SaveOnlyTheseNames)\n"
                "    return jnp.sin(x), (jnp.cos(x) if keep else None)\n"
                "def sin_rem(cos_x, x):\n"
                "    return jnp.sin(x), jnp.cos(x) if cos_x is None else cos_x\n"
                "def sin_bwd(cos_x, g):\n"
                "    return (3.0 * cos_x * g,)\n"  // a rule that differs from sin's derivative, to see it is used
                "sin = jax.custom_remat(jnp.sin, sin_fwd, sin_rem, sin_bwd)\n"
                "save = jax.checkpoint_policies.save_only_these_names('cos')\n"
                "print(jax.grad(jax.checkpoint(lambda x: sin(x), policy=save))(0.5) == 3 * jnp.cos(0.5),\n"
                "      jax.grad(jax.remat(lambda x: sin(x)))(0.5) == 3 * jnp.cos(0.5),\n"
                "      [type(p).__name__ for p in seen],\n"
                "      jax.grad(sin)(0.5) == jnp.cos(0.5), sin(0.5) == jnp.sin(0.5))") ==
        "True True ['SaveOnlyTheseNames', 'NoneType'] True True\n");
  CHECK(printed("import _shardscope\n_shardscope.set_jax_version('0.10.2')\n"
                "print(hasattr(jax, 'custom_remat'))\n_shardscope.set_jax_version('0.11.2')") == "False\n");
}

TEST_CASE("vjp runs the forward pass once on known primals, its pullback can be jitted and vmapped later") {
  REQUIRE(run_cell(kModel).ok());
  CHECK(printed("calls = []\n"
                "def branchy(x):\n"
                "    calls.append(1)\n"
                "    return 2 * x ** 3 if x < 3 else jnp.pi * x\n"
                "y, pull = jax.vjp(branchy, 4.)\n"
                "print(y, pull(1.), jax.jit(pull)(2.), len(calls))") ==
        "12.566371 (Array(3.1415927, dtype=float32, weak_type=True),) "
        "(Array(6.2831855, dtype=float32, weak_type=True),) 1\n");
  // Pytrees in and out, aux values, and the cotangents equal grad's.
  CHECK(printed("def f(p, h):\n"
                "    out = net(p, h)\n"
                "    return {'y': out}, out.sum()\n"
                "out, pull, aux = jax.vjp(f, params, h, has_aux=True)\n"
                "dp, dh = pull({'y': jnp.ones(2)})\n"
                "g = jax.grad(lambda p, h: net(p, h).sum(), argnums=(0, 1))(params, h)\n"
                "print(bool(jnp.allclose(aux, out['y'].sum())), all(np.array_equal(a, b) for a, b in zip(dp, g[0])),\n"
                "      np.array_equal(dh, g[1]),\n"
                "      bool(jnp.allclose(jax.vmap(pull)({'y': jnp.ones((3, 2))})[1][2], dh)))") ==
        "True True True True\n");
}

TEST_CASE("a checkpointed function is traced once per argument types, as JAX caches it") {
  REQUIRE(run_cell(kModel).ok());
  CHECK(printed("scale = 2.0\n"
                "def scaled(v):\n"
                "    return v * scale\n"
                "ck = jax.checkpoint(scaled)\n"
                "first = ck(jnp.ones(2))\n"
                "scale = 3.0\n"  // JAX reuses the first trace: the global read then stays
                "print(first, ck(jnp.ones(2)), ck(jnp.ones(3)))") == "[2. 2.] [2. 2.] [3. 3. 3.]\n");
  // A body closing over a value of an enclosing trace is traced afresh each time.
  CHECK(printed("def outer(c):\n"
                "    return jax.checkpoint(lambda v: v * c)(jnp.ones(2))\n"
                "f = jax.jit(lambda c: jax.checkpoint(lambda v: v * c)(jnp.ones(2)))\n"
                "print(f(2.0), f(5.0), jax.jit(outer)(4.0))") == "[2. 2.] [5. 5.] [4. 4.]\n");
}
