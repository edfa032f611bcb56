// JAX's exception types and texts for bad input to device_put, jit, indexing, reshape, reshard and shard_map,
// and the pvary casts shard_map bodies get when an op mixes values of different varying axes.
#include <doctest/doctest.h>

#include <string>

#include "python/host.h"
#include "python_test_support.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

std::string prelude(const std::string& version) {
  return "import _shardscope\n_shardscope.set_jax_version('" + version +
         "')\n_shardscope.set_device_preset('cpu:8')\n"
         "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
         "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
         "mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))\n" +
         python_test::kAttemptHelper;
}

std::string attempt(const std::string& thunk) { return printed("attempt(lambda: " + thunk + ")"); }

}  // namespace

TEST_CASE("device_put names its args in rank and divisibility errors, 0.11 prints the user's source line") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.device_put(jnp.ones(8), NamedSharding(mesh, P('data', 'model')))") ==
        "ValueError One of device_put args is incompatible with its sharding annotation "
        "NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), spec=P('data', 'model'), "
        "memory_kind=device): Sharding NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), "
        "spec=P('data', 'model'), memory_kind=device) is only valid for values of rank at least 2, but was applied "
        "to a value of rank 1.\n");
  const std::string uneven = attempt("jax.device_put(jnp.ones((6, 4)), NamedSharding(mesh, P('data')))");
  CHECK(uneven.starts_with("<cell "));
  CHECK(uneven.find(">:1:16 (<lambda>)\nIndivisibleError One of device_put args was given the sharding ") !=
        std::string::npos);
  CHECK(uneven.find("should evenly divide the shape). This error occurs at source:  <cell ") != std::string::npos);
  CHECK(attempt("jax.device_put(jnp.ones(8), 'cpu')") ==
        "ValueError `jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, `Format`, "
        "`jax.memory.Space` or a pytree of these values. Received invalid value: cpu\n");
  CHECK(attempt("jax.device_put(jnp.ones(8), jax.devices()[:2])") ==
        "ValueError device_put device specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (1 found):\n"
        "  pytree structure error: different types at key path\n"
        "    device_put device\n"
        "At that key path, the prefix pytree device_put device has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'jax._src.api_util.PytreeLeaf'>.\n");

  REQUIRE(run_cell(prelude("0.10.2")).ok());
  const std::string older = attempt("jax.device_put(jnp.ones((6, 4)), NamedSharding(mesh, P('data')))");
  CHECK(older.starts_with("IndivisibleError "));
  CHECK(attempt("jax.device_put(jnp.ones(8), 'cpu')").find("`Format`, `jax.memory.Space` or a pytree") !=
        std::string::npos);
  REQUIRE(run_cell(prelude("0.6.2")).ok());
  CHECK(attempt("jax.device_put(jnp.ones(8), 'cpu')").find("`jax.Device`, `Layout` or a pytree") != std::string::npos);
}

TEST_CASE("jit checks the arity of in_shardings and the rank of out_shardings") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.jit(lambda a: a, in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P())))"
                "(jnp.ones(8))") ==
        "ValueError pjit in_shardings specification must be a tree prefix of the positional arguments tuple. In "
        "particular, pjit in_shardings must either be a Sharding, a PartitionSpec, or a tuple of length equal to "
        "the number of positional arguments. But pjit in_shardings is the wrong length: got a tuple or list of "
        "length 2 for an args tuple of length 1.\n");
  CHECK(attempt("jax.jit(lambda a: (a, a), out_shardings=NamedSharding(mesh, P('data', 'model')))(jnp.ones(8))")
            .starts_with("ValueError One of pjit outputs with pytree key path result[0] is incompatible with its "
                         "sharding annotation NamedSharding("));
}

TEST_CASE("indexing, reshape, NamedSharding specs and reshard give JAX's texts") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  // Static indices are unchecked (jax_check_static_indices is off): the dynamic_slice clamps.
  CHECK(printed("print(jnp.arange(4)[10], jnp.arange(4)[-9])") == "3 0\n");
  CHECK(attempt("jnp.arange(4)[1.5]") ==
        "TypeError Indexer must have integer or boolean type, got indexer with type float64\n");
  CHECK(attempt("jnp.ones(8).reshape(3, 3)") ==
        "TypeError cannot reshape array of shape (8,) (size 8) into shape (3, 3) (size 9)\n");
  CHECK(attempt("jnp.ones(8).reshape(3, -1)") ==
        "TypeError cannot reshape array of shape (8,) (size 8) into shape (3, -1) because the product of specified "
        "axis sizes (3) does not evenly divide 8\n");
  CHECK(attempt("NamedSharding(mesh, 'data')") == "AttributeError 'str' object has no attribute 'partitions'\n");
  // From 0.11 the constructor is C++: None fails its argument conversion, and memory_kind may come positionally.
  CHECK(attempt("NamedSharding(mesh, None)") ==
        "TypeError __init__(): incompatible function arguments. The following argument types are supported:\n"
        "    1. __init__(self, mesh: object, spec: object, memory_kind: object | None = None, _logical_device_ids: "
        "object | None = None) -> None\n\nInvoked with types: jax.sharding.NamedSharding, jax._src.mesh.Mesh, "
        "NoneType\n");
  CHECK(printed("print(NamedSharding(mesh, P('data'), 'device').memory_kind)") == "device\n");
  const std::string import_pjit_constraint =
      "try:\n    from jax.experimental.pjit import with_sharding_constraint\n    print('imported')\n"
      "except ImportError as ex:\n    print(str(ex).split(' (')[0])";
  CHECK(printed(import_pjit_constraint) ==
        "cannot import name 'with_sharding_constraint' from 'jax.experimental.pjit'\n");
  CHECK(printed("try:\n    from jax.experimental import maps\nexcept ImportError as ex:\n    print(str(ex).split(' "
                "(')[0])") == "cannot import name 'maps' from 'jax.experimental'\n");
  CHECK(printed("import jax.experimental\nprint(hasattr(jax.experimental, 'PartitionSpec'))") == "False\n");
  CHECK(attempt("jax.sharding.reshard(jnp.ones(8), P('data'))") ==
        "ValueError Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a "
        "NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got P('data',)\n");
  // Before: check_pspec iterated the spec (0.5.3 to 0.10), and earlier still None meant replicated; the pjit module
  // re-exported with_sharding_constraint until 0.4.24.
  REQUIRE(run_cell(prelude("0.10.2")).ok());
  CHECK(attempt("NamedSharding(mesh, None)") == "TypeError 'NoneType' object is not iterable\n");
  CHECK(attempt("NamedSharding(mesh, P('data'), 'device')") ==
        "TypeError NamedSharding.__init__() takes 3 positional arguments but 4 were given\n");
  REQUIRE(run_cell(prelude("0.4.20")).ok());
  CHECK(printed("print(NamedSharding(mesh, None).spec)") == "PartitionSpec()\n");
  CHECK(printed("import warnings\nwarnings.simplefilter('ignore')\n" + import_pjit_constraint) == "imported\n");
}

TEST_CASE("shard_map spec errors: tree prefixes, unknown axes, the parameter an argument binds") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(),), out_specs=P())(jnp.ones(8), "
                "jnp.ones(8))") ==
        "ValueError pytree structure error: different lengths of tuple at key path\n"
        "    shard_map in_specs\n"
        "At that key path, the prefix pytree shard_map in_specs has a subtree of type tuple of length 1, but the "
        "full pytree has a subtree of the same type but of length 2.\n");
  CHECK(attempt("jax.shard_map(lambda a: a, mesh=mesh, in_specs=P('zzz'), out_specs=P())(jnp.ones(8))") ==
        "ValueError shard_map in_specs argument must refer to an axis marked as manual (frozenset({'data', "
        "'model'})), but:\n\n  in_specs refers to 'zzz'\n\nCheck the in_specs values passed to shard_map.\n");
  const std::string uneven =
      attempt("jax.shard_map(lambda b: b, mesh=mesh, in_specs=P('data'), out_specs=P('data'))(jnp.ones(6))");
  CHECK(uneven.find("the passed args[0] of shape float32[6], where args[0] is bound to <lambda>'s parameter 'b', "
                    "corresponds to in_specs of value P('data',), which maps") != std::string::npos);
  const std::string two = attempt(
      "jax.shard_map(lambda a, *rest: a, mesh=mesh, in_specs=(P(), P('data')), out_specs=P())(jnp.ones(8), "
      "jnp.ones(6))");
  CHECK(two.find("the passed args[1] of shape float32[6], where args[1] is the index 0 component of <lambda>'s "
                 "varargs parameter 'rest', corresponds to in_specs[1] of value") != std::string::npos);
}

TEST_CASE("an eager shard_map's replication error names JAX's matching helper, under jit, the function") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const std::string call = "jax.shard_map(lambda b: b, mesh=mesh, in_specs=P('data'), out_specs=P())";
  CHECK(attempt(call + "(jnp.ones(8))")
            .starts_with("ValueError shard_map applied to the function '_rem_singleton' was given out_specs"));
  CHECK(attempt("jax.jit(" + call + ")(jnp.ones(8))")
            .starts_with("ValueError shard_map applied to the function '<lambda>' was given out_specs"));
}

TEST_CASE("ops mixing varying axes cast the less varying operands with pvary, literals included") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const std::string jaxpr = printed(
      "f = jax.shard_map(lambda a: a * 2. + lax.axis_index('model'), mesh=mesh, in_specs=P('data', 'model'), "
      "out_specs=P('data', 'model'))\nprint(jax.make_jaxpr(f)(jnp.ones((8, 8))))");
  CHECK(jaxpr.find("d:f32[]{V:(data,model)} = pvary[axes=('data', 'model')] 2.0:f32[]\n"
                   "          e:f32[2,4]{V:(data,model)} = mul c d\n") != std::string::npos);
  CHECK(jaxpr.find("h:f32[]{V:(data,model)} = pvary[axes=('data',)] g\n") != std::string::npos);
  // Without check_vma nothing varies and nothing is cast.
  CHECK(printed("g = jax.shard_map(lambda a: a * 2., mesh=mesh, in_specs=P('data'), out_specs=P('data'), "
                "check_vma=False)\nprint(jax.make_jaxpr(g)(jnp.ones(8)))")
            .find("pvary") == std::string::npos);
}

TEST_CASE("jaxpr literals print their value in the literal's dtype from 0.7.2, frozenset params braced from 0.11") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const std::string gelu = printed("print(jax.make_jaxpr(lambda x: x * 0.044715 + (x < 100000.0))(jnp.ones(2)))");
  CHECK(gelu.find("mul a 0.044714998453855515:f32[]") != std::string::npos);
  CHECK(gelu.find("lt a 100000.0:f32[]") != std::string::npos);
  const std::string wsc =
      "print(jax.make_jaxpr(lambda t: lax.with_sharding_constraint(t, NamedSharding(mesh, "
      "P('data'))))(jnp.ones(8)))";
  CHECK(printed(wsc).find("unconstrained_dims=frozenset({})") != std::string::npos);
  REQUIRE(run_cell(prelude("0.7.1")).ok());
  CHECK(printed("print(jax.make_jaxpr(lambda x: x * 0.044715)(jnp.ones(2)))").find("mul a 0.044715:f32[]") !=
        std::string::npos);
  REQUIRE(run_cell(prelude("0.10.2")).ok());
  CHECK(printed(wsc).find("unconstrained_dims=frozenset()") != std::string::npos);
}

TEST_CASE("a shard_map's transpose takes the cotangents first, then the residuals") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const std::string jaxpr = printed(
      "def loss(w, v):\n"
      "    return jax.shard_map(lambda w, v: lax.psum((w * v).sum(), 'data'), mesh=mesh, in_specs=(P(), P('data')),"
      " out_specs=P())(w, v)\n"
      "print(jax.make_jaxpr(jax.grad(loss))(jnp.ones(2), jnp.arange(8.)))");
  const std::size_t transposed = jaxpr.rfind("shard_map[");
  REQUIRE(transposed != std::string::npos);
  CHECK(jaxpr.find("in_specs=(P(), P('data',))", transposed) != std::string::npos);
  CHECK(jaxpr.find("= pvary[axes=('data',)] c\n") != std::string::npos);
}

TEST_CASE("on an all-Explicit mesh shard_map takes arguments as typed and constraints name Auto axes only") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("em = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Explicit,))\n"
                   "sm = jax.shard_map(lambda b: b * 2, mesh=em, in_specs=P('x'), out_specs=P('x'))\n")
              .ok());
  CHECK(attempt("sm(jnp.arange(32))") ==
        "ValueError in_specs passed to shard_map: P('x',) does not match the specs of the input: P(None,) for arg: "
        "int32[32]. `in_specs` is an optional argument so you can omit specifying it and shard_map will infer the "
        "in_specs from the arguments. If you want to reshard your inputs, you can use `jax.reshard` on the arguments "
        "and then pass those args to shard_map.\n");
  // An argument already typed as the in_specs say goes in as it is.
  CHECK(attempt("sm(jax.device_put(jnp.arange(32), NamedSharding(em, P('x'))))") == "OK\n");
  // Outside a mesh context, a constraint naming an Explicit axis is an error, not an assertion.
  CHECK(attempt("jax.jit(lambda t: jax.lax.with_sharding_constraint(t, NamedSharding(em, P('x'))))(jnp.ones(8))") ==
        "ValueError The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the "
        "mesh. Got spec=P('x',) and mesh=AbstractMesh('x': 8, axis_types=(Explicit,), device_kind=cpu, "
        "num_cores=None, platform=cpu). You probably meant to use `reshard` API?\n");
  // Before 0.10 the in_specs were not checked against the types.
  REQUIRE(run_cell(prelude("0.9.0")).ok());
  REQUIRE(run_cell("em = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Explicit,))\n").ok());
  CHECK(attempt("jax.shard_map(lambda b: b * 2, mesh=em, in_specs=P('x'), out_specs=P('x'))(jnp.arange(32))") ==
        "OK\n");
}

TEST_CASE("an AttributeError suggests a close name, as Python 3.12 prints it") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const CellResult result = run_cell("jax.sharding.use_mesh");
  CHECK(result.error.find("AttributeError: module 'jax.sharding' has no attribute 'use_mesh'. Did you mean: "
                          "'set_mesh'?") != std::string::npos);
  CHECK(printed("print(jax.sharding.AbstractMesh((2, 4), ('a', 'b')), hasattr(jax.sharding, 'PositionalSharding'))") ==
        "AbstractMesh('a': 2, 'b': 4, axis_types=(Explicit, Explicit)) False\n");
}

TEST_CASE("a tracer that cannot become a Python value names the traced function and the arguments it came from") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("def branchy(x, scale):\n    if x * scale < 3:\n        return x\n    return -x\n"
                   "def sized(length, val):\n    return jnp.ones((length,)) * val\n"
                   "def three(a, b, c):\n    return int(a + b + c)\n")
              .ok());
  const std::string file = printed("print(branchy.__code__.co_filename)");
  const std::string where = file.substr(0, file.size() - 1);
  CHECK(attempt("jax.jit(branchy)(2., 1.)") ==
        "TracerBoolConversionError Attempted boolean conversion of traced array with shape bool[].\n"
        "The error occurred while tracing the function branchy at " +
            where +
            ":1 for jit. This concrete value was "
            "not available in Python because it depends on the values of the arguments x and scale.\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError\n");
  CHECK(attempt("jax.jit(sized)(10, 4)") ==
        "TypeError Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),).\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.\n"
        "The error occurred while tracing the function sized at " +
            where +
            ":5 for jit. This concrete value was "
            "not available in Python because it depends on the value of the argument length.\n");
  CHECK(attempt("jax.make_jaxpr(three)(1., 2., 3.)")
            .find("for make_jaxpr. This concrete value was not available in Python because it depends on the values of "
                  "the arguments a, b, and c.\n") != std::string::npos);
  // A value made from constants (not arguments) lists the operations it came from and their lines.
  REQUIRE(run_cell("def flat(x):\n    return x.reshape(jnp.array(x.shape).prod())\n").ok());
  CHECK(attempt("jax.jit(flat)(jnp.ones((2, 3)))") ==
        "TypeError Shapes must be 1D sequences of concrete values of integer type, got [JitTracer(int32[])].\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.\n"
        "The error occurred while tracing the function flat at " +
            printed("print(flat.__code__.co_filename, end='')") +
            ":1 for jit. This value became a tracer due to JAX operations on these lines:\n\n"
            "  operation a:i32[] = reduce_prod[axes=(0,)] b\n"
            "    from line " +
            printed("print(flat.__code__.co_filename, end='')") + ":2:21 (flat)\n");
  // Static arguments are not counted among the names.
  CHECK(attempt("jax.jit(branchy, static_argnums=1)(2., 1.)").find("depends on the value of the argument x.\n") !=
        std::string::npos);
}

TEST_CASE("a vmap body's tracer says where it was made: the operation's line, or the vmap call for an argument") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("def absolute(x):\n  if x > 0:\n    return x\n  return -x\n"
                   "def direct(x):\n  return x if x else -x\n")
              .ok());
  const std::string file = printed("print(absolute.__code__.co_filename, end='')");
  const std::string message = attempt("jax.vmap(absolute)(jnp.arange(-2.0, 3.0))");
  const std::string id = "object id ";
  REQUIRE(message.find(id) != std::string::npos);
  const std::size_t digits = message.find(id) + id.size();
  const std::size_t end = message.find(' ', digits);
  REQUIRE(end != std::string::npos);
  CHECK(message.substr(digits, end - digits).find_first_not_of("0123456789") == std::string::npos);
  CHECK(message.substr(0, digits) ==
        "TracerBoolConversionError Attempted boolean conversion of traced array with shape bool[].\n"
        "This BatchTracer with object id ");
  CHECK(message.substr(end) ==
        " was created on line:\n  " + file +
            ":2:5 (absolute)\n"
            "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError\n");
  // An argument itself was made where vmap was called.
  CHECK(attempt("jax.vmap(direct)(jnp.arange(-2.0, 3.0))").find(" was created on line:\n  <cell") != std::string::npos);
  // A jit inside the vmap body keeps jit's own message.
  CHECK(attempt("jax.vmap(jax.jit(absolute))(jnp.arange(-2.0, 3.0))").find("for jit.") != std::string::npos);
}

TEST_CASE("set_mesh's object prints as JAX's class, and jax.Device is the devices' type") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const std::string text =
      printed("ctx = jax.set_mesh(mesh)\nprint(ctx)\nprint(isinstance(jax.devices()[0], jax.Device))");
  CHECK(text.starts_with("<jax._src.sharding_impls.set_mesh object at 0x"));
  CHECK(text.ends_with(">\nTrue\n"));
  CHECK(printed("jax.set_mesh(None)\nprint(jax.sharding.get_abstract_mesh().empty)") == "True\n");
}

TEST_CASE("jit refuses a committed argument laid out unlike its in_shardings, and argnums past the signature") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P('data')))"
                "(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('model'))))") ==
        "ValueError Sharding passed to jit does not match the sharding on the respective arg. Got jit sharding: "
        "NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), spec=P('data',), "
        "memory_kind=device),\narg sharding: NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, "
        "Auto)), spec=P('model',), memory_kind=device) for arg type: float32[8,8]\n");
  // An uncommitted argument is placed as in_shardings says.
  CHECK(attempt("jax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P('data')))(jnp.ones((8, 8)))") == "OK\n");
  CHECK(attempt("jax.jit(lambda a: a, static_argnums=3)") ==
        "ValueError Jitted function has static_argnums=(3,), but only accepts 1 positional arguments.\n");
  CHECK(attempt("jax.jit(lambda a: a, donate_argnums=(0, 2))") ==
        "ValueError Jitted function has donate_argnums=(0, 2), but only accepts 1 positional arguments.\n");
}

TEST_CASE("jvp checks its tangents and a vjp pullback its cotangents") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.jvp(lambda a: a * 2, (jnp.ones(3),), (jnp.ones(4),))") ==
        "ValueError jvp called with different primal and tangent shapes;Got primal shape (3,) and tangent shape as "
        "(4,)\n");
  CHECK(attempt("jax.jvp(lambda a: a * 2, (jnp.ones(3),), (jnp.ones(3, jnp.int32),))") ==
        "TypeError primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case of "
        "int/bool primal dtype the tangent dtype must be float0.Got primal dtype float32 and so expected tangent "
        "dtype float32, but got tangent dtype int32 instead.\n");
  CHECK(attempt("jax.vjp(lambda a: a * 2, jnp.ones(3))[1](jnp.ones(4))") ==
        "ValueError unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got float32[4], but "
        "expected float32[3] because the corresponding output of the differentiated function had JAX type "
        "float32[3]\n");
  // A Python scalar cotangent for a scalar output is fine.
  CHECK(attempt("jax.vjp(lambda a: (a * 2).sum(), jnp.ones(3))[1](1.0)") == "OK\n");
}

TEST_CASE("vmap names arguments by parameter and checks in_axes against them, tree_map explains a mismatch") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))") ==
        "ValueError vmap got inconsistent sizes for array axes to be mapped:\n  * one axis had size 3: axis 0 of "
        "argument a of type float32[3];\n  * one axis had size 4: axis 0 of argument b of type float32[4]\n");
  CHECK(attempt("jax.vmap(lambda a, b: a + b, in_axes=(0,))(jnp.ones(3), jnp.ones(3))") ==
        "ValueError vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
        "arguments passed to the function, but got len(in_axes)=1, len(args)=2.\n");
  CHECK(attempt("jax.tree.map(lambda a, b: a + b, [1, 2], [1])") ==
        "ValueError pytree structure error: different lengths of list at key path\n    tree_map tree\nAt that key "
        "path, the prefix pytree tree_map tree has a subtree of type list of length 2, but the full pytree has a "
        "subtree of the same type but of length 1.\n");
  CHECK(attempt("jax.tree.map(lambda a, b: a + b, {'a': 1}, {'b': 2})")
            .starts_with("ValueError pytree structure error: different pytree metadata at key path\n    tree_map "
                         "tree\n"));
}

TEST_CASE("shard_map names the function and the output whose out_specs entry is longer than its rank") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  const std::string expected =
      "ValueError shard_map applied to the function '<lambda>' was given an out_specs entry which is too long to be "
      "compatible with the corresponding output value from the function:\n\nout_specs is P('data',) which has "
      "length 1, but <lambda>(*args) has shape float32[], which has rank 0 (and 0 < 1)\n\nEntries in out_specs "
      "must be of length no greater than the number of axes in the corresponding output value.\n\nEither revise "
      "the spec to be shorter, or modify '<lambda>' so that its outputs have sufficient rank.\n\nFor scalar values "
      "(rank 0), consider using an out_specs entry of `P()`, where `P = jax.sharding.PartitionSpec`.\n";
  const std::string call = "jax.shard_map(lambda a: a.sum(), mesh=mesh, in_specs=P('data'), out_specs=P('data'))";
  CHECK(attempt(call + "(jnp.ones(8))") == expected);
  CHECK(attempt("jax.jit(" + call + ")(jnp.ones(8))") == expected);
}

TEST_CASE("an eager ufunc over arrays committed to different devices names its arguments in each era's words") {
  const std::string mixed =
      "on = lambda i: NamedSharding(jax.make_mesh((1,), ('x',), devices=[jax.devices()[i]]), P())\n"
      "attempt(lambda: jax.device_put(1.0, on(0)) + jax.device_put(2.0, on(1)))";
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed(mixed) ==
        "ValueError Received incompatible devices for jitted computation. Got argument x of add with shape float32[] "
        "and with device ids [0] on platform CPU and argument y of add with shape float32[] and with device ids [1] "
        "on platform CPU\n");
  REQUIRE(run_cell(prelude("0.4.31")).ok());
  CHECK(printed(mixed) ==
        "ValueError Received incompatible devices for jitted computation. Got argument x1 of jax.numpy.add with shape "
        "float32[] and device ids [0] on platform CPU and argument x2 of jax.numpy.add with shape float32[] and "
        "device ids [1] on platform CPU\n");
}

TEST_CASE("abuse inputs raise the exception types JAX raises, with messages that name the bad value") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.make_mesh((0, 8), ('x', 'y'))") == "IndexError Mesh axis 'x' must have a positive size, got 0\n");
  CHECK(attempt("jax.make_mesh((-4, -2), ('x', 'y'))") ==
        "ValueError Mesh axis 'x' must have a positive size, got -4\n");
  CHECK(attempt("NamedSharding(mesh, ['data', 'model'])") == "TypeError unhashable type: 'list'\n");
  CHECK(attempt("jax.random.split(1.5)") ==
        "TypeError JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype attributes. "
        "Got 1.5\n");
  CHECK(attempt("jax.shard_map(lambda a: lax.ppermute(a, 'data', [(0, 9)]), mesh=mesh, in_specs=P('data'), "
                "out_specs=P('data'))(jnp.arange(8.))") ==
        "IndexError ppermute perm entry (0, 9) is out of range for an axis of size 4\n");
}

TEST_CASE("refs are not arrays to jnp functions, and typeof names a key array's type") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jnp.sin(jax.new_ref(1.0))") ==
        "TypeError sin requires ndarray or scalar arguments, got <class "
        "'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> at position 0.\n");
  CHECK(attempt("jnp.add(2.0, jax.new_ref(1.0))").find("add requires ndarray or scalar arguments") !=
        std::string::npos);
  CHECK(printed("r = jax.new_ref(jnp.arange(3.0))\nprint(jnp.sin(r[...])[1] == jnp.sin(1.0))") == "True\n");
  CHECK(printed("print(jax.typeof(jax.random.key(42)), jax.typeof(jax.random.split(jax.random.key(0), 3)))") ==
        "key<fry>[] key<fry>[3]\n");
}

TEST_CASE("a device_put inside jit to other devices than the arguments' names the argument and the source line") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("mesh_a = jax.make_mesh((4,), ('x',), devices=jax.devices()[:4])\n"
                   "mesh_b = jax.make_mesh((4,), ('x',), devices=jax.devices()[4:])\n"
                   "xa = jax.device_put(jnp.arange(8.), NamedSharding(mesh_a, P('x')))\n"
                   "def move(x):\n"
                   "    return jax.device_put(x, NamedSharding(mesh_b, P('x')))\n")
              .ok());
  const std::string file = printed("print(move.__code__.co_filename, end='')");
  CHECK(attempt("jax.jit(move)(xa)") ==
        "ValueError Received incompatible devices for jitted computation. Got argument x of move with shape "
        "float32[8@x] and with device ids [0, 1, 2, 3] on platform CPU and device_put inside jit with device ids "
        "[4, 5, 6, 7] on platform CPU at " +
            file + ":5:11 (move)\n");
  // The same devices in another order are no mismatch.
  CHECK(printed("rev = jax.make_mesh((4,), ('x',), devices=jax.devices()[:4][::-1])\n"
                "print(jax.jit(lambda x: jax.device_put(x, NamedSharding(rev, P('x'))))(xa).shape)") == "(8,)\n");
}

TEST_CASE("mesh shapes must be sequences of ints from 0.4.36, and create_device_mesh took a bare int before") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("from jax.experimental import mesh_utils\n").ok());
  CHECK(attempt("mesh_utils.create_device_mesh(8)") == "TypeError 'int' object is not iterable\n");
  CHECK(attempt("mesh_utils.create_device_mesh(('a', 2))") ==
        "ValueError `mesh_shape` passed to `create_device_mesh` should be a sequence of ints. Got ('a', 2)\n");
  CHECK(attempt("jax.make_mesh([4, 'two'], ('x', 'y'))") ==
        "ValueError `axis_shapes` passed to `make_mesh` should be a sequence of ints. Got [4, 'two']\n");
  CHECK(attempt("jax.make_mesh(8, ('x',))") == "TypeError 'int' object is not iterable\n");
  // int() conversion: numpy integers and sizes given as strings of digits are accepted.
  CHECK(printed("import numpy as np\nprint(mesh_utils.create_device_mesh((np.int64(4), '2')).shape, "
                "dict(jax.make_mesh((np.int32(2), 4), ('x', 'y')).shape))") == "(4, 2) {'x': 2, 'y': 4}\n");
  REQUIRE(run_cell(prelude("0.4.35")).ok());
  REQUIRE(run_cell("from jax.experimental import mesh_utils\n").ok());
  CHECK(printed("print(mesh_utils.create_device_mesh(8).shape)") == "(8,)\n");
}

TEST_CASE("jax.experimental.pjit is an attribute without its import only where import jax imported it") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(attempt("jax.experimental.pjit") == "AttributeError module 'jax.experimental' has no attribute 'pjit'\n");
  REQUIRE(run_cell(prelude("0.4.1")).ok());
  CHECK(printed("print(jax.experimental.pjit.pjit.__name__)") == "pjit\n");
}
