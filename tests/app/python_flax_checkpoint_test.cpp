// flax.serialization and flax.training.checkpoints (Flax's legacy msgpack checkpoints): msgpack bytes derived by
// hand from the msgpack spec and Flax's ndarray ext layout, state dicts of a TrainState and of Partitioned boxes,
// round trips, and checkpoint files in a temporary directory (keep, overwrite, latest, restore with and without a
// target).
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

// Cells here must also be quiet: no warnings on stderr.
std::string printed(const std::string& code) { return python_test::printed(code, true); }

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.5.1')\n_shardscope.set_device_preset('cpu:8')\n"
    "import os\nimport tempfile\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\nimport flax\n"
    "from flax import linen as nn\nfrom flax import serialization\nimport optax\n"
    "from flax.training import train_state, checkpoints\n";

// A TrainState of a two-layer model with Adam, after one step so that every Adam leaf is nonzero.
constexpr const char* kTrainState =
    "class Model(nn.Module):\n"
    "  @nn.compact\n"
    "  def __call__(self, x):\n"
    "    return nn.Dense(2)(nn.relu(nn.Dense(3)(x)))\n"
    "model = Model()\n"
    "x = jnp.linspace(-1.0, 1.0, 8).reshape(2, 4)\n"
    "state = train_state.TrainState.create(apply_fn=model.apply, params=model.init(jax.random.key(0), x)['params'],\n"
    "                                      tx=optax.adam(0.01))\n"
    "grads = jax.grad(lambda p: model.apply({'params': p}, x).sum())(state.params)\n"
    "state = state.apply_gradients(grads=grads)\n"
    "def same_leaves(a, b):\n"
    "  la, lb = jax.tree.leaves(a), jax.tree.leaves(b)\n"
    "  return len(la) == len(lb) and all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in zip(la, lb))\n";

}  // namespace

TEST_CASE("importing flax.serialization and flax.training.checkpoints prints nothing") {
  CHECK(printed(std::string(kPrelude) + "import flax.serialization\nimport flax.training.checkpoints\n") == "");
  CHECK(printed("print(flax.serialization is serialization, callable(checkpoints.save_checkpoint))") == "True True\n");
}

TEST_CASE("msgpack bytes are the spec's: fixmap, fixstr, every int width, float64, bin, nil and bool") {
  REQUIRE(run_cell(kPrelude).ok());
  // {'a': 1}: fixmap of 1 (0x81), fixstr of 1 (0xa1) 'a' (0x61), positive fixint 1.
  CHECK(printed("print(serialization.msgpack_serialize({'a': 1}).hex())") == "81a16101\n");
  // -1 is a negative fixint (0xff); 200 needs uint8 (0xcc c8); -200 int16 (0xd1 ff38); 70000 uint32
  // (0xce 00011170); 2**40 uint64 (0xcf ...); 0.5 a float64 (0xcb 3fe0...); b'\0' bin8 (0xc4 01 00); None 0xc0,
  // True 0xc3; a list is a fixarray (0x92). in_place=True keeps the dict's own key order.
  CHECK(printed("print(serialization.msgpack_serialize({'n': -1, 'u': 200, 'm': -200, 'w': 70000, 'q': 2**40,\n"
                "  'f': 0.5, 'b': b'\\x00', 'z': None, 't': True, 'l': [1, 'hi']}, in_place=True).hex())") ==
        "8a"
        "a16eff"
        "a175ccc8"
        "a16dd1ff38"
        "a177ce00011170"
        "a171cf0000010000000000"
        "a166cb3fe0000000000000"
        "a162c40100"
        "a17ac0"
        "a174c3"
        "a16c9201a26869\n");
  // Without in_place Flax copies the tree with tree_map first, which sorts dict keys.
  CHECK(printed("print(serialization.msgpack_serialize({'b': 1, 'a': 2}).hex(),\n"
                "      serialization.msgpack_serialize({'b': 1, 'a': 2}, in_place=True).hex())") ==
        "82a16102a16201 82a16201a16102\n");
  // Python ints beyond uint64/int64 have no msgpack form; tuples are refused at the top level (strict types).
  CHECK(printed("for v in ({'big': 2**64}, {'t': (1, 2)}):\n"
                "  try:\n"
                "    serialization.msgpack_serialize(v, in_place=True)\n"
                "  except (OverflowError, TypeError) as e:\n"
                "    print(type(e).__name__, e)") ==
        "OverflowError Integer value out of range\nTypeError can not serialize 'tuple' object\n");
}

TEST_CASE("arrays are ext type 1 holding msgpack of (shape, dtype name, C-order bytes), as Flax writes them") {
  REQUIRE(run_cell(kPrelude).ok());
  // The payload: fixarray 3 (0x93), shape fixarray [2] (0x91 02), fixstr 'float32' (0xa7 ...), bin8 of 8 bytes
  // (0xc4 08) holding little-endian 1.0f and 2.0f: 21 bytes, so ext8 (0xc7 15) of type 1.
  CHECK(printed("print(serialization.msgpack_serialize({'w': jnp.array([1.0, 2.0], dtype=jnp.float32)}).hex())") ==
        "81a177c71501939102a7666c6f61743332c4080000803f00000040\n");
  // A numpy scalar is the same payload with shape () (0x90) as ext type 3: 16 bytes, so fixext16 (0xd8 03).
  // A Python complex is ext type 2 holding the float64 pair (0x92 cb.. cb..): 19 bytes, ext8 (0xc7 13 02).
  CHECK(printed("print(serialization.msgpack_serialize({'s': np.float32(1.5), 'c': 1 + 2j}, in_place=True).hex())") ==
        "82"
        "a173d8039390a7666c6f61743332c4040000c03f"
        "a163c7130292cb3ff0000000000000cb4000000000000000\n");
  // bfloat16 keeps its name and two bytes per element (1.0 = 0x3f80, -2.5 = 0xc020, 3.140625 = 0x4049), and comes
  // back as a bfloat16 jax array (numpy has no bfloat16 here) that encodes to the same bytes.
  CHECK(printed("x = jnp.array([1.0, -2.5, 3.140625], dtype=jnp.bfloat16)\n"
                "enc = serialization.msgpack_serialize({'w': x})\n"
                "print(enc.hex())\n"
                "r = serialization.msgpack_restore(enc)['w']\n"
                "print(type(r) is type(x), repr(r) == repr(x), np.asarray(r).tolist())\n"
                "print(serialization.msgpack_serialize({'w': r}) == enc)") ==
        "81a177c71401939103a862666c6f61743136c406803f20c04940\n"
        "True True [1.0, -2.5, 3.140625]\n"
        "True\n");
}

TEST_CASE("msgpack_restore gives back nested maps, scalars and strings, and arrays as numpy arrays") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("tree = {'f32': jnp.arange(6, dtype=jnp.float32).reshape(2, 3) / 4,\n"
                "        'i32': jnp.array([-3, 0, 2**31 - 1], dtype=jnp.int32), 'b': jnp.array([True, False]),\n"
                "        'nested': {'s': 'h\u00e9llo', 'i': -7, 'x': 2.25, 'deep': {'n': None, 'l': [1, 2**40]}}}\n"
                "back = serialization.msgpack_restore(serialization.msgpack_serialize(tree))\n"
                "for k in ('f32', 'i32', 'b'):\n"
                "  print(k, type(back[k]).__name__, back[k].dtype, back[k].shape,\n"
                "        np.array_equal(back[k], np.asarray(tree[k])))\n"
                "print(back['nested'])\n"
                "print(serialization.msgpack_restore(serialization.msgpack_serialize(-129)))") ==
        "f32 ndarray float32 (2, 3) True\n"
        "i32 ndarray int32 (3,) True\n"
        "b ndarray bool (2,) True\n"
        "{'deep': {'l': [1, 1099511627776], 'n': None}, 'i': -7, 's': 'h\u00e9llo', 'x': 2.25}\n"
        "-129\n");
}

TEST_CASE("a TrainState's state dict is its pytree fields, and to_bytes/from_bytes restores every leaf") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kTrainState).ok());
  CHECK(printed("sd = serialization.to_state_dict(state)\n"
                "print(list(sd), sorted(sd['params']), list(sd['opt_state']), list(sd['opt_state']['0']),\n"
                "      sd['opt_state']['1'])") ==
        "['step', 'params', 'opt_state'] ['Dense_0', 'Dense_1'] ['0', '1'] ['count', 'mu', 'nu'] {}\n");
  // As in Flax, from_bytes rebuilds the target's classes with numpy leaves.
  CHECK(printed("restored = serialization.from_bytes(state, serialization.to_bytes(state))\n"
                "print(type(restored).__name__, restored.step, same_leaves(restored, state))\n"
                "print(type(restored.opt_state[0]).__name__, type(restored.opt_state[1]).__name__,\n"
                "      restored.opt_state[0].count, type(restored.params['Dense_0']['kernel']).__name__)\n"
                "print(restored.tx is state.tx, restored.apply_fn is state.apply_fn)") ==
        "TrainState 1 True\nScaleByAdamState EmptyState 1 ndarray\nTrue True\n");
  CHECK(printed("for edit in ('bias', 'extra'):\n"
                "  sd = serialization.to_state_dict(state)\n"
                "  if edit == 'bias':\n"
                "    del sd['params']['Dense_1']['bias']\n"
                "  else:\n"
                "    sd['extra'] = 1\n"
                "  try:\n"
                "    serialization.from_state_dict(state, sd)\n"
                "  except ValueError as e:\n"
                "    print(e)") ==
        "The target dict keys and state dict keys do not match, target dict contains keys {'bias'} which are not "
        "present in state dict at path ./params/Dense_1\n"
        "Unknown field(s) \"extra\" in state dict while restoring an instance of TrainState at path .\n");
}

TEST_CASE("Partitioned and LogicallyPartitioned boxes serialize as {'value': ...} and come back boxed") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("class Boxed(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    init = nn.initializers.lecun_normal()\n"
                "    x = nn.Dense(2, kernel_init=nn.with_partitioning(init, (None, 'm')))(x)\n"
                "    logical = nn.with_logical_partitioning(init, ('embed', 'mlp'))\n"
                "    return nn.Dense(2, use_bias=False, kernel_init=logical)(x)\n"
                "v = Boxed().init(jax.random.key(1), jnp.ones((1, 3)))\n"
                "sd = serialization.to_state_dict(v)\n"
                "k0, k1 = sd['params']['Dense_0']['kernel'], sd['params']['Dense_1']['kernel']\n"
                "print(k0.keys(), isinstance(k0['value'], jax.Array), list(k1))\n"
                "back = serialization.from_bytes(v, serialization.to_bytes(v))\n"
                "for name in ('Dense_0', 'Dense_1'):\n"
                "  k, k0 = back['params'][name]['kernel'], v['params'][name]['kernel']\n"
                "  print(type(k).__name__, k.names, np.array_equal(k.value, np.asarray(k0.value)))") ==
        "dict_keys(['value']) True ['value']\n"
        "Partitioned (None, 'm') True\n"
        "LogicallyPartitioned ('embed', 'mlp') True\n");
}

TEST_CASE("save_checkpoint keeps the newest files, refuses outdated steps, and restore_checkpoint reads them back") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kTrainState).ok());
  REQUIRE(run_cell("d = tempfile.mkdtemp()").ok());
  CHECK(printed("paths = [checkpoints.save_checkpoint(d, state.replace(step=s), s, keep=2) for s in (1, 2, 3, 4)]\n"
                "print(sorted(os.listdir(d)), paths[-1] == os.path.join(d, 'checkpoint_4'))\n"
                "print(os.path.basename(checkpoints.latest_checkpoint(d)), checkpoints.available_steps(d))") ==
        "['checkpoint_3', 'checkpoint_4'] True\ncheckpoint_4 [3, 4]\n");
  // Flax's InvalidCheckpointError (flax.errors) for a step at or before the newest, with the link Flax appends.
  CHECK(printed("for step in (2, 4):\n"
                "  try:\n"
                "    checkpoints.save_checkpoint(d, state, step, keep=2)\n"
                "  except Exception as e:\n"
                "    print(type(e).__module__, type(e).__name__)\n"
                "    print(str(e).replace(d, '<dir>'))\n"
                "print(sorted(os.listdir(d)))") ==
        "flax.errors InvalidCheckpointError\n"
        "Trying to save an outdated checkpoint at step: \"2\" and path: \"<dir>/checkpoint_2\". "
        "(https://flax.readthedocs.io/en/latest/api_reference/flax.errors.html#flax.errors.InvalidCheckpointError)\n"
        "flax.errors InvalidCheckpointError\n"
        "Trying to save an outdated checkpoint at step: \"4\" and path: \"<dir>/checkpoint_4\". "
        "(https://flax.readthedocs.io/en/latest/api_reference/flax.errors.html#flax.errors.InvalidCheckpointError)\n"
        "['checkpoint_3', 'checkpoint_4']\n");
  // target=None: the raw state dict, numpy leaves.
  CHECK(printed("raw = checkpoints.restore_checkpoint(d, None)\n"
                "print(type(raw).__name__, sorted(raw), raw['step'], sorted(raw['opt_state']),\n"
                "      sorted(raw['opt_state']['0']), raw['opt_state']['1'])\n"
                "kernel = raw['params']['Dense_0']['kernel']\n"
                "print(type(kernel).__name__, np.array_equal(kernel, state.params['Dense_0']['kernel']))") ==
        "dict ['opt_state', 'params', 'step'] 4 ['0', '1'] ['count', 'mu', 'nu'] {}\n"
        "ndarray True\n");
  // With a target: the TrainState again, its array leaves jax arrays, ready for the next step.
  CHECK(printed("restored = checkpoints.restore_checkpoint(d, state)\n"
                "print(type(restored).__name__, restored.step, same_leaves(restored, state.replace(step=4)))\n"
                "print(all(isinstance(l, jax.Array) for l in jax.tree.leaves((restored.params, restored.opt_state))))\n"
                "nxt = restored.apply_gradients(grads=grads)\n"
                "print(int(nxt.step), int(nxt.opt_state[0].count))") == "TrainState 4 True\nTrue\n5 2\n");
  // A file path, a step, a missing directory (target returned as is) and a missing step (ValueError).
  CHECK(printed("print(checkpoints.restore_checkpoint(os.path.join(d, 'checkpoint_3'), None)['step'],\n"
                "      checkpoints.restore_checkpoint(d, None, step=3)['step'])\n"
                "print(checkpoints.restore_checkpoint(os.path.join(d, 'missing'), 'unchanged'))\n"
                "try:\n"
                "  checkpoints.restore_checkpoint(d, None, step=7)\n"
                "except ValueError as e:\n"
                "  print(str(e).replace(d, '<dir>'))") ==
        "3 3\nunchanged\nMatching checkpoint not found: <dir>/checkpoint_7\n");
  // overwrite=True saves an older step and removes the newer checkpoints.
  CHECK(printed("checkpoints.save_checkpoint(d, state.replace(step=2), 2, keep=2, overwrite=True)\n"
                "print(sorted(os.listdir(d)), checkpoints.restore_checkpoint(d, None)['step'])") ==
        "['checkpoint_2'] 2\n");
  // keep_every_n_steps spares older checkpoints at least n steps apart (Flax's rule, step by step).
  CHECK(printed("spaced = tempfile.mkdtemp()\n"
                "for s in range(1, 7):\n"
                "  checkpoints.save_checkpoint(spaced, {'s': s}, s, keep=1, keep_every_n_steps=2)\n"
                "print(checkpoints.available_steps(spaced))") == "[1, 3, 5, 6]\n");
  // Only the legacy path is simulated: Orbax and async arguments are refused by name.
  CHECK(printed("try:\n"
                "  checkpoints.save_checkpoint(d, state, 9, async_manager=object())\n"
                "except NotImplementedError as e:\n"
                "  print(e)") ==
        "flax.training.checkpoints.save_checkpoint: async_manager is not supported by shardscope (only the legacy "
        "msgpack checkpoints are simulated)\n");
  CHECK(printed("import shutil\nshutil.rmtree(d)\nshutil.rmtree(spaced)\nprint(os.path.exists(d))") == "False\n");
}

TEST_CASE("orbax.checkpoint's StandardCheckpointer restores a sharded tree onto the target's shardings") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("import orbax.checkpoint as ocp\n"
                   "from jax.sharding import NamedSharding, PartitionSpec as P\n"
                   "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                   "tree = {'w': jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P('data', "
                   "'model'))),\n        'b': jnp.arange(8, dtype=jnp.int32), 'n': [jnp.float32(2.5)]}\n"
                   "path = ocp.test_utils.erase_and_create_empty(tempfile.mkdtemp() + '/ckpt/')\n"
                   "ckpt = ocp.StandardCheckpointer()\n"
                   "ckpt.save(path / 'step', tree)\n")
              .ok());
  // The target's leaves give shape, dtype and sharding; values come from the file.
  CHECK(printed("target = {'w': jax.ShapeDtypeStruct((4, 8), jnp.float32, sharding=NamedSharding(mesh, P(None, "
                "'model'))),\n          'b': jax.ShapeDtypeStruct((8,), jnp.int32), 'n': [jax.ShapeDtypeStruct((), "
                "jnp.float32)]}\n"
                "back = ckpt.restore(path / 'step', target=target)\n"
                "print(back['w'].sharding.spec, back['b'].dtype, float(back['n'][0]), "
                "bool((back['w'] == tree['w']).all()))\n"
                "old = ckpt.restore(path / 'step', args=ocp.args.StandardRestore(target))\n"
                "print(old['w'].sharding.spec, sorted(ckpt.restore(path / 'step').keys()))") ==
        "PartitionSpec(None, 'model') int32 2.5 True\nPartitionSpec(None, 'model') ['b', 'n', 'w']\n");
  // Existing destinations, missing checkpoints, wrong shapes and unknown leaves are refused, naming what.
  CHECK(printed("for call in (lambda: ckpt.save(path / 'step', tree),\n"
                "             lambda: ckpt.restore(path / 'none', target=target),\n"
                "             lambda: ckpt.restore(path / 'step', target={**target, 'w': jax.ShapeDtypeStruct((2, "
                "8), jnp.float32)}),\n"
                "             lambda: ckpt.restore(path / 'step', target={**target, 'z': jax.ShapeDtypeStruct((1,), "
                "jnp.float32)})):\n"
                "  try:\n    call()\n  except Exception as e:\n"
                "    print(type(e).__name__, str(e).replace(str(path), 'PATH'))\n"
                "ckpt.save(path / 'step', tree, force=True)\nprint('forced')") ==
        "ValueError Destination PATH/step already exists.\n"
        "FileNotFoundError No checkpoint found at PATH/none.\n"
        "ValueError Requested shape (2, 8) for ['w'] differs from the saved shape (4, 8).\n"
        "ValueError The checkpoint at PATH/step has no value for ['z']; it holds ['b'], ['n'][0], ['w']\n"
        "forced\n");
}
