// Explicit sharding: the typeof text, rule results and errors recorded in JAX's explicit-sharding notebook,
// docs/parallel.md, pjit_test.py and the seeds, reproduced with programs built by JaxprBuilder.
#include <doctest/doctest.h>

#include "base/error.h"
#include "device/presets.h"
#include "exec/jit.h"
#include "explicit/mesh_context.h"
#include "explicit/sharding_rules.h"
#include "ops/structural.h"
#include "trace/builder.h"
#include "trace/explicit_reshard.h"

using namespace shardscope;

namespace {

const JaxProfile kNewest;
const JaxProfile kNotebook(JaxVersion{0, 5, 3});  // the notebook's outputs were recorded with a 0.5.x build

Mesh explicit_mesh(std::vector<int64_t> shape, std::vector<std::string> names) {
  return make_mesh(shape, names, make_device_preset("cpu:8").devices, kNewest,
                   std::vector<AxisType>(shape.size(), AxisType::kExplicit));
}

Aval typed(DType dtype, Shape shape, std::vector<std::vector<std::string>> axes = {}) {
  Aval a = Aval::of(std::move(shape), dtype);
  if (!axes.empty()) a.dim_axes = std::move(axes);
  return a;
}

Params dot(std::vector<int64_t> lc, std::vector<int64_t> rc, std::vector<int64_t> lb = {},
           std::vector<int64_t> rb = {}) {
  return {{"dimension_numbers", dot_dimension_numbers_param(lc, rc, lb, rb)},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", ParamValue::None{}},
          {"out_sharding", ParamValue::None{}}};
}

Params reshape_to(const Shape& sizes) {
  return {{"new_sizes", ParamValue::int_tuple(sizes)},
          {"dimensions", ParamValue::None{}},
          {"sharding", ParamValue::None{}}};
}

Params sum_over(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

const Aval& type_of(const Atom& atom) { return atom_aval(atom); }

// The message and Python type of the error `fn` raises.
template <typename Fn>
std::pair<std::string, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.python_type(), e.what()};
  }
  return {"", "no error"};
}

}  // namespace

TEST_CASE("get_abstract_mesh under set_mesh prints as the notebook recorded it, and scopes restore") {
  const Mesh mesh = explicit_mesh({2, 4}, {"X", "Y"});
  CHECK(is_empty(get_abstract_mesh()));
  {
    MeshScope scope(mesh, kNotebook);
    CHECK(abstract_mesh_repr(get_abstract_mesh(), kNotebook) ==
          "AbstractMesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit))");
    CHECK(get_concrete_mesh() == mesh);
  }
  CHECK(is_empty(get_abstract_mesh()));
  set_mesh(mesh, kNotebook);
  CHECK(get_concrete_mesh() == mesh);
  set_mesh(std::nullopt);
  CHECK_FALSE(get_concrete_mesh().has_value());
}

TEST_CASE("a traced value's type mesh: the mesh in effect, else the remembered mesh holding its sharded axes") {
  const Mesh mesh = explicit_mesh({4, 2}, {"rows", "cols"});
  CHECK(is_empty(type_abstract_mesh({{"rows"}, {}})));  // nothing remembered yet
  remember_typed_mesh(mesh);
  CHECK(abstract_mesh_repr(type_abstract_mesh({{"rows"}, {}}), kNotebook) ==
        "AbstractMesh('rows': 4, 'cols': 2, axis_types=(Explicit, Explicit))");
  // An unsharded type names no axes, and an axis no remembered mesh has finds none: the (empty) mesh in effect.
  CHECK(is_empty(type_abstract_mesh({{}, {}})));
  CHECK(is_empty(type_abstract_mesh({{"other"}})));
  const Mesh context = explicit_mesh({8}, {"ctx"});
  MeshScope scope(context, kNotebook);
  CHECK(abstract_mesh_repr(type_abstract_mesh({{"rows"}, {}}), kNotebook) ==
        "AbstractMesh('ctx': 8, axis_types=(Explicit,))");
}

TEST_CASE("typeof text: ShapedArray wrapper before JAX 0.6.1, bare short type after, ~ for weak types") {
  Aval a = typed(DType::kInt32, {4, 2}, {{"X"}, {}});
  CHECK(typeof_str(a, kNotebook) == "ShapedArray(int32[4@X,2])");
  CHECK(typeof_str(a, kNewest) == "int32[4@X,2]");
  Aval weak = Aval::of({}, DType::kFloat32, true);
  CHECK(typeof_str(weak, kNewest) == "~float32[]");
  CHECK(typeof_repr(weak) == "ShapedArray(float32[], weak_type=True)");
  CHECK(typeof_str(typed(DType::kFloat32, {128, 64}, {{"model", "data"}, {}}), kNewest) ==
        "float32[128@(model,data),64]");
}

TEST_CASE("notebook cells 5 to 7: reshard gives the type, broadcasting add combines X and Y") {
  const Mesh mesh = explicit_mesh({2, 4}, {"X", "Y"});
  MeshScope scope(mesh, kNotebook);
  JaxprBuilder b;
  const Var a0 = b.arg(typed(DType::kInt32, {4, 1}));
  const Var a1 = b.arg(typed(DType::kInt32, {1, 8}));
  const Atom x = reshard(b, a0, parse_partition_spec("P('X', None)"));
  const Atom y = reshard(b, a1, parse_partition_spec("P(None, 'Y')"));
  const Atom ans = b.bind1("add", {x, y});
  CHECK(typeof_str(type_of(x), kNotebook) == "ShapedArray(int32[4@X,1])");
  CHECK(typeof_str(type_of(y), kNotebook) == "ShapedArray(int32[1,8@Y])");
  CHECK(typeof_str(type_of(ans), kNotebook) == "ShapedArray(int32[4@X,8@Y])");

  // Under jit the output sharding is the type's, and the values are the plain sum (jnp broadcasts x first).
  JaxprBuilder jb;
  const Var j0 = jb.arg(typed(DType::kInt32, {4, 1}));
  const Var j1 = jb.arg(typed(DType::kInt32, {1, 8}));
  const Atom jy = reshard(jb, j1, parse_partition_spec("P(None, 'Y')"));
  const Atom jy8 = jb.bind1("broadcast_in_dim", {jy},
                            {{"shape", ParamValue::int_tuple({4, 8})},
                             {"broadcast_dimensions", ParamValue::int_tuple({0, 1})},
                             {"sharding", ParamValue::None{}}});
  const Atom wide = jb.bind1("broadcast_in_dim", {reshard(jb, j0, parse_partition_spec("P('X', None)"))},
                             {{"shape", ParamValue::int_tuple({4, 8})},
                              {"broadcast_dimensions", ParamValue::int_tuple({0, 1})},
                              {"sharding", ParamValue::None{}}});
  CHECK(typeof_str(type_of(wide), kNewest) == "int32[4@X,8]");
  const JaxprPtr program = jb.build({jb.bind1("add", {wide, jy8})});
  std::vector<int32_t> v0{0, 1, 2, 3};
  std::vector<int32_t> v1{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<Array> args{Array::from_host(make_buffer(DType::kInt32, {4, 1}, v0),
                                                 make_single_device_sharding(mesh.devices()[0], kNewest), kNewest),
                                Array::from_host(make_buffer(DType::kInt32, {1, 8}, v1),
                                                 make_single_device_sharding(mesh.devices()[0], kNewest), kNewest)};
  JitOptions options;
  options.in_shardings = {make_named_sharding(mesh, parse_partition_spec("P()"), kNewest),
                          make_named_sharding(mesh, parse_partition_spec("P()"), kNewest)};
  const JitRun run = run_jit(*program, args, options, kNewest);
  const auto& sharding = std::get<NamedSharding>(run.outputs[0].sharding());
  CHECK(sharding.spec.repr(kNewest) == "P('X', 'Y')");
  const BufferPtr value = run.outputs[0].gather();
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 8; ++c) CHECK(value->element_as_double(r * 8 + c) == static_cast<double>(r + c));
  }
}

TEST_CASE("notebook cell 8: conflicting shardings are an illegally sharded result") {
  MeshScope scope(explicit_mesh({2, 4}, {"X", "Y"}), kNotebook);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kInt32, {4, 4}, {{"X"}, {}}));
  const Var y = b.arg(typed(DType::kInt32, {4, 4}, {{}, {"X"}}));
  const auto [type, message] = error_of([&] { (void)b.bind1("add", {x, y}); });
  CHECK(type == "ShardingTypeError");
  CHECK(message ==
        "add operation with inputs: i32[4@X,4], i32[4,4@X] produces an illegally sharded result: i32[4@X,4@X]");
}

TEST_CASE("notebook cell 8: auto_axes runs the add in Auto mode and reshards the result") {
  MeshScope scope(explicit_mesh({2, 4}, {"X", "Y"}), kNotebook);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kInt32, {4, 4}, {{"X"}, {}}));
  const Var y = b.arg(typed(DType::kInt32, {4, 4}, {{}, {"X"}}));
  std::string inner_mesh;
  const auto out = auto_axes(
      b,
      [&](JaxprBuilder& inner, const std::vector<Atom>& args) {
        inner_mesh = abstract_mesh_repr(get_abstract_mesh(), kNotebook);
        return std::vector<Atom>{inner.bind1("add", {args[0], args[1]})};
      },
      {x, y}, std::vector<PartitionSpec>{parse_partition_spec("P('X', None)")});
  CHECK(inner_mesh == "AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto))");
  CHECK(typeof_str(type_of(out[0]), kNotebook) == "ShapedArray(int32[4@X,4])");
  CHECK(abstract_mesh_repr(get_abstract_mesh(), kNotebook) ==
        "AbstractMesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit))");
  const auto [type, message] = error_of([&] { (void)auto_axes(b, {}, {x}, std::nullopt); });
  CHECK(type == "TypeError");
  CHECK(message == "Missing required keyword argument: 'out_sharding'");
}

TEST_CASE("notebook cell 10: auto_axes over X keeps Y explicit inside") {
  MeshScope scope(explicit_mesh({2, 4}, {"X", "Y"}), kNotebook);
  JaxprBuilder b;
  const Var arr = b.arg(typed(DType::kFloat32, {4, 4}, {{"X"}, {"Y"}}));
  const Atom x = b.bind1("sin", {arr});
  CHECK(typeof_str(type_of(x), kNotebook) == "ShapedArray(float32[4@X,4@Y])");
  std::string inner_mesh;
  std::string inner_type;
  const auto z =
      auto_axes(b,
                [&](JaxprBuilder& inner, const std::vector<Atom>& args) {
                  inner_mesh = abstract_mesh_repr(get_abstract_mesh(), kNotebook);
                  inner_type = typeof_str(type_of(args[0]), kNotebook);
                  return std::vector<Atom>{inner.bind1("mul", {args[0], scalar_literal(2.0, DType::kFloat32)})};
                },
                {x}, std::vector<PartitionSpec>{parse_partition_spec("P('X', 'Y')")}, {"X"});
  CHECK(inner_mesh == "AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Explicit))");
  CHECK(inner_type == "ShapedArray(float32[4,4@Y])");
  CHECK(typeof_str(type_of(z[0]), kNotebook) == "ShapedArray(float32[4@X,4@Y])");
}

TEST_CASE("notebook cell 12: inside auto_axes the type's spec loses the Auto axis") {
  MeshScope scope(explicit_mesh({2, 4}, {"X", "Y"}), kNotebook);
  JaxprBuilder b;
  const Var raw = b.arg(typed(DType::kFloat32, {8}));
  const Atom mine = b.bind1("sin", {reshard(b, raw, parse_partition_spec("P('X')"))});
  CHECK(type_of(mine).dim_axes == std::vector<std::vector<std::string>>{{"X"}});
  std::vector<std::vector<std::string>> inside;
  (void)auto_axes(
      b,
      [&](JaxprBuilder&, const std::vector<Atom>& args) {
        inside = type_of(args[0]).dim_axes;
        return args;
      },
      {mine}, std::vector<PartitionSpec>{parse_partition_spec("P('X')")});
  CHECK(inside == std::vector<std::vector<std::string>>{{}});
}

TEST_CASE("seed 002 layer_auto: a contraction sharded on one side only drops the axis") {
  MeshScope scope(explicit_mesh({8}, {"X"}), kNotebook);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {32}, {{"X"}}));
  const Var w = b.arg(typed(DType::kFloat32, {32, 4}, {{}, {}}));
  const Var bias = b.arg(typed(DType::kFloat32, {4}, {{}}));
  const Atom out = b.bind1("add", {b.bind1("dot_general", {x, w}, dot({0}, {0})), bias});
  CHECK(typeof_str(type_of(x), kNotebook) == "ShapedArray(float32[32@X])");
  CHECK(typeof_str(type_of(out), kNotebook) == "ShapedArray(float32[4])");
}

TEST_CASE("dot_general sharding table of pjit_test on a 2x2 mesh") {
  MeshScope scope(explicit_mesh({2, 2}, {"x", "y"}), kNewest);
  using Axes = std::vector<std::vector<std::string>>;
  auto matmul = [](Axes l, Axes r) {
    JaxprBuilder b;
    const Var lhs = b.arg(typed(DType::kFloat32, {8, 2}, std::move(l)));
    const Var rhs = b.arg(typed(DType::kFloat32, {2, 8}, std::move(r)));
    return type_of(b.bind1("dot_general", {lhs, rhs}, dot({1}, {0}))).dim_axes;
  };
  CHECK(matmul({{"x"}, {}}, {{}, {"y"}}) == Axes{{"x"}, {"y"}});
  CHECK(matmul({{"x"}, {}}, {{}, {}}) == Axes{{"x"}, {}});
  CHECK(matmul({{"x"}, {"y"}}, {{}, {}}) == Axes{{"x"}, {}});
  CHECK(matmul({{"x"}, {}}, {{"x"}, {}}) == Axes{{"x"}, {}});
  CHECK(matmul({{}, {"y"}}, {{}, {"y"}}) == Axes{{}, {"y"}});
  const std::string contracting =
      "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please specify the "
      "output sharding via the `out_sharding` parameter. Got lhs_contracting_spec=('y',) and "
      "rhs_contracting_spec=('y',)";
  CHECK(error_of([&] { (void)matmul({{"x"}, {"y"}}, {{"y"}, {}}); }).second == contracting);
  CHECK(error_of([&] { (void)matmul({{}, {"y"}}, {{"y"}, {}}); }).second == contracting);
  CHECK(error_of([&] {
          (void)matmul({{"x"}, {}}, {{}, {"x"}});
        }).second ==
        "dot_general operation with inputs: f32[8@x,2], f32[2,8@x] produces an illegally sharded result: "
        "f32[8@x,8@x]");
}

TEST_CASE("dot_general with out_sharding: unreduced partial sums and their checks") {
  const Mesh mesh = explicit_mesh({2}, {"X"});
  MeshScope scope(mesh, kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {8, 4}, {{}, {"X"}}));
  const Var y = b.arg(typed(DType::kFloat32, {4, 16}, {{"X"}, {}}));
  Params params = dot({1}, {0});
  params.back().second = make_named_sharding(mesh, parse_partition_spec("P('X', None)"), kNewest);
  CHECK(type_of(b.bind1("dot_general", {x, y}, params)).str_short(true) == "f32[8@X,16]");
  params.back().second = make_named_sharding(mesh, parse_partition_spec("P(None, None, unreduced={'X'})"), kNewest);
  CHECK(type_of(b.bind1("dot_general", {x, y}, params)).str_short(false) == "float32[8,16]{U:X}");
  const Var z = b.arg(typed(DType::kFloat32, {4, 16}, {{}, {}}));
  CHECK(error_of([&] {
          (void)b.bind1("dot_general", {x, z}, params);
        }).second ==
        "lhs and rhs contracting dims should be sharded identically when out_sharding provided to dot_general "
        "mentions unreduced_axes. Got lhs_contracting_spec=('X',), rhs_contracting_spec=(None,)");
}

TEST_CASE("dot_general batch dims must agree") {
  MeshScope scope(explicit_mesh({2, 2}, {"x", "y"}), kNewest);
  JaxprBuilder b;
  const Var lhs = b.arg(typed(DType::kFloat32, {2, 8, 4}, {{"x"}, {}, {}}));
  const Var rhs = b.arg(typed(DType::kFloat32, {2, 4, 8}, {{"y"}, {}, {}}));
  CHECK(error_of([&] {
          (void)b.bind1("dot_general", {lhs, rhs}, dot({2}, {1}, {0}, {0}));
        }).second ==
        "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same sharding, got ('x',) "
        "and ('y',).");
}

TEST_CASE("broadcasting: None yields to a sharded entry, different entries conflict") {
  MeshScope scope(explicit_mesh({2, 2}, {"x", "y"}), kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {2, 2}, {{"x"}, {"y"}}));
  const Var y = b.arg(typed(DType::kFloat32, {2, 2}, {{"y"}, {"x"}}));
  const auto [type, message] = error_of([&] { (void)b.bind1("mul", {x, y}); });
  CHECK(type == "ShardingTypeError");
  CHECK(message == "mul got incompatible shardings for broadcasting: ('x', 'y'), ('y', 'x').");
  const Var small = b.arg(typed(DType::kFloat32, {1, 2}, {{}, {}}));
  const Var big = b.arg(typed(DType::kFloat32, {2, 2}, {{"x"}, {"y"}}));
  CHECK(type_of(b.bind1("mul", {big, small})).dim_axes == std::vector<std::vector<std::string>>{{"x"}, {"y"}});
}

TEST_CASE("reductions drop the reduced dims' axes") {
  MeshScope scope(explicit_mesh({2, 2}, {"x", "y"}), kNewest);
  using Axes = std::vector<std::vector<std::string>>;
  auto sum = [](Axes in, std::vector<int64_t> axes) {
    JaxprBuilder b;
    const Var x = b.arg(typed(DType::kFloat32, {8, 4}, std::move(in)));
    return type_of(b.bind1("reduce_sum", {x}, sum_over(std::move(axes)))).dim_axes;
  };
  CHECK(sum({{"x"}, {"y"}}, {0, 1}) == Axes{});
  CHECK(sum({{"x"}, {"y"}}, {0}) == Axes{{"y"}});
  CHECK(sum({{"x"}, {"y"}}, {1}) == Axes{{"x"}});
  CHECK(sum({{"x", "y"}, {}}, {0}) == Axes{{}});
  CHECK(sum({{"x", "y"}, {}}, {1}) == Axes{{"x", "y"}});
}

TEST_CASE("reshape keeps sharding through splits and merges that JAX allows, and errors otherwise") {
  MeshScope scope(explicit_mesh({2, 2}, {"x", "y"}), kNewest);
  auto reshaped = [](Shape from, std::vector<std::vector<std::string>> axes, Shape to) {
    JaxprBuilder b;
    const Var x = b.arg(typed(DType::kFloat32, std::move(from), std::move(axes)));
    return type_of(b.bind1("reshape", {x}, reshape_to(to))).str_short(true);
  };
  CHECK(reshaped({8}, {{"x", "y"}}, {2, 4}) == "f32[2@x,4@y]");
  CHECK(reshaped({8}, {{"x", "y"}}, {4, 2}) == "f32[4@(x,y),2]");
  CHECK(reshaped({2, 4}, {{"x"}, {"y"}}, {8}) == "f32[8@(x,y)]");
  CHECK(reshaped({8, 1}, {{"x"}, {}}, {1, 8}) == "f32[1,8@x]");
  CHECK(reshaped({4, 6}, {{}, {}}, {24}) == "f32[24]");
  const auto [type, message] = error_of([&] { (void)reshaped({2, 4}, {{}, {"y"}}, {8}); });
  CHECK(type == "ShardingTypeError");
  CHECK(message ==
        "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` argument of "
        "jax.lax.reshape. Got operand type: float32[2,4@y], new sizes: (8,)");
}

TEST_CASE("transpose, broadcast_in_dim and slicing rules") {
  MeshScope scope(explicit_mesh({2, 2}, {"X", "Y"}), kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {8, 4}, {{"X"}, {"Y"}}));
  const Atom t = b.bind1("transpose", {b.bind1("sin", {x})}, {{"permutation", ParamValue::int_tuple({1, 0})}});
  CHECK(type_of(t).str_short(true) == "f32[4@Y,8@X]");
  const Atom bc = b.bind1("broadcast_in_dim", {x},
                          {{"shape", ParamValue::int_tuple({3, 8, 4})},
                           {"broadcast_dimensions", ParamValue::int_tuple({1, 2})},
                           {"sharding", ParamValue::None{}}});
  CHECK(type_of(bc).str_short(true) == "f32[3,8@X,4@Y]");
  auto slice = [&](std::vector<int64_t> start, std::vector<int64_t> limit) {
    return b.bind1("slice", {x},
                   {{"start_indices", ParamValue::int_tuple(start)},
                    {"limit_indices", ParamValue::int_tuple(limit)},
                    {"strides", ParamValue::None{}}});
  };
  CHECK(type_of(slice({0, 0}, {4, 4})).str_short(true) == "f32[4@X,4@Y]");
  CHECK(error_of([&] {
          (void)slice({0, 0}, {3, 4});
        }).second ==
        "slicing on sharded dims where out dim (3) is not divisible by mesh axes (2) with spec (X) is not "
        "implemented. Got input type=f32[8@X,4@Y] and output shape=(3, 4)");
}

TEST_CASE("concatenate and select need equal shardings") {
  const Mesh mesh = explicit_mesh({2}, {"x"});
  MeshScope scope(mesh, kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {4}, {{"x"}}));
  const Var y = b.arg(typed(DType::kFloat32, {4}, {{}}));
  const std::string mesh_text = abstract_mesh_repr(AbstractMesh::from_mesh(mesh), kNewest);
  CHECK(error_of([&] {
          (void)b.bind1("concatenate", {x, y}, {{"dimension", 0}});
        }).second == "All operands should have the same sharding. Got shardings NamedSharding(mesh=" + mesh_text +
                         ", spec=P('x',)), NamedSharding(mesh=" + mesh_text + ", spec=P(None,))");
  const Var which = b.arg(typed(DType::kBool, {}));
  CHECK(error_of([&] {
          (void)b.bind1("select_n", {which, x, y});
        }).second == "select cases must have the same shardings, got [NamedSharding(mesh=" + mesh_text +
                         ", spec=P('x',)), NamedSharding(mesh=" + mesh_text + ", spec=P(None,))].");
}

TEST_CASE("stack inserts an unsharded dim into the common sharding, and unstack refuses a sharded axis") {
  const Mesh mesh = explicit_mesh({2, 4}, {"x", "y"});
  MeshScope scope(mesh, kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {4, 8}, {{"x"}, {"y"}}));
  const Var y = b.arg(typed(DType::kFloat32, {4, 8}, {{"x"}, {"y"}}));
  CHECK(type_of(b.bind1("stack", {x, y}, {{"axis", 0}})).str_short(true) == "f32[2,4@x,8@y]");
  CHECK(type_of(b.bind1("stack", {x, y}, {{"axis", 1}})).str_short(true) == "f32[4@x,2,8@y]");
  CHECK(type_of(b.bind1("stack", {x, y}, {{"axis", 2}})).str_short(true) == "f32[4@x,8@y,2]");
  const Var z = b.arg(typed(DType::kFloat32, {4, 8}, {{"x"}, {}}));
  const std::string mesh_text = abstract_mesh_repr(AbstractMesh::from_mesh(mesh), kNewest);
  CHECK(error_of([&] {
          (void)b.bind1("stack", {x, z}, {{"axis", 0}});
        }) == std::pair<std::string, std::string>{
                  "ShardingTypeError",
                  "All operands should have the same sharding. Got shardings NamedSharding(mesh=" + mesh_text +
                      ", spec=P('x', 'y')), NamedSharding(mesh=" + mesh_text + ", spec=P('x', None))"});
  const std::vector<Atom> columns = b.bind("unstack", {z}, {{"axis", 1}});
  REQUIRE(columns.size() == 8);
  CHECK(type_of(columns[7]).str_short(true) == "f32[4@x]");
  CHECK(error_of([&] {
          (void)b.bind("unstack", {x}, {{"axis", 0}});
        }) == std::pair<std::string, std::string>{
                  "ShardingTypeError",
                  "unstack operand cannot be sharded on the unstacking axis 0. Got operand type=f32[4@x,8@y]"});
}

TEST_CASE("with_sharding_constraint asserts in an all-Explicit mesh") {
  const Mesh mesh = explicit_mesh({2}, {"x"});
  MeshScope scope(mesh, kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {4, 2}, {{"x"}, {}}));
  const Atom same = with_sharding_constraint(b, x, make_named_sharding(mesh, parse_partition_spec("P('x')"), kNewest));
  CHECK(std::get<Var>(same) == x);
  const auto [type, message] = error_of(
      [&] { (void)with_sharding_constraint(b, x, make_named_sharding(mesh, parse_partition_spec("P()"), kNewest)); });
  CHECK(type == "AssertionError");
  CHECK(message ==
        "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The array "
        "sharding: P('x', None) did not match the sharding provided: P(None, None). Please use "
        "`jax.sharding.reshard` to shard your input to the sharding you want.");
}

TEST_CASE("cumulative ops refuse a sharded scan axis") {
  MeshScope scope(explicit_mesh({2}, {"x"}), kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {8, 2}, {{"x"}, {}}));
  CHECK(type_of(b.bind1("cumsum", {x}, {{"axis", 1}, {"reverse", false}})).str_short(true) == "f32[8@x,2]");
  CHECK(error_of([&] {
          (void)b.bind1("cumsum", {x}, {{"axis", 0}, {"reverse", false}});
        }).second == "Input should be unsharded over the axis being reduced. Got input type=float32[8@x,2] and axis=0");
}

TEST_CASE("Auto-mode context: rules are skipped and types are unsharded") {
  const Mesh mesh =
      make_mesh({2}, {"x"}, make_device_preset("cpu:8").devices, kNewest, std::vector<AxisType>{AxisType::kAuto});
  MeshScope scope(mesh, kNewest);
  JaxprBuilder b;
  const Var x = b.arg(typed(DType::kFloat32, {4, 4}));
  const Var y = b.arg(typed(DType::kFloat32, {4, 4}));
  CHECK(type_of(b.bind1("add", {x, y})).str_short(true) == "f32[4,4]");
}

TEST_CASE("random_fold_in and random_split keep the keys' batch sharding under an explicit mesh") {
  set_mesh(explicit_mesh({2, 4}, {"X", "Y"}));
  JaxprBuilder b;
  const Atom keys(b.arg(typed(DType::kUInt32, {4, 2}, {{"Y"}, {}})));
  const Atom message(b.arg(typed(DType::kUInt32, {})));
  const Aval folded = atom_aval(b.bind("random_fold_in", {keys, message}, {}).at(0));
  CHECK(folded.shape == Shape{4, 2});
  CHECK(folded.dim_axes == std::vector<std::vector<std::string>>{{"Y"}, {}});
  const Aval split = atom_aval(b.bind("random_split", {keys}, {{"shape", ParamValue::int_tuple({3})}}).at(0));
  CHECK(split.shape == Shape{4, 3, 2});
  CHECK(split.dim_axes == std::vector<std::vector<std::string>>{{"Y"}, {}, {}});
  set_mesh(std::nullopt);
}
