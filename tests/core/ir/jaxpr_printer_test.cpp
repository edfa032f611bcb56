// make_jaxpr text: JAX's layout (width 80, groups), variable naming and nesting, per version profile.
#include "ir/jaxpr_printer.h"

#include <doctest/doctest.h>

#include "ir/pretty.h"
#include "ir/primitive.h"
#include "ops/ops.h"

using namespace shardscope;

namespace {

// Printer-only primitives: these tests build equations by hand, so only the name matters.
const Primitive* prim(const std::string& name) {
  if (const Primitive* existing = find_primitive(name)) return existing;
  Primitive p;
  p.name = name;
  if (name == "jit") {
    // jit prints name= first, then the rest sorted (JAX's pp rule for jit).
    p.printed_params = [](const Eqn& eqn, const JaxProfile&) {
      Params params = eqn.params;
      std::sort(params.begin(), params.end(), [](const auto& x, const auto& y) {
        const bool x_is_name = x.first == "name";
        const bool y_is_name = y.first == "name";
        if (x_is_name != y_is_name) return x_is_name;
        return x.first < y.first;
      });
      return params;
    };
  }
  return &register_primitive(std::move(p));
}

Aval f32(Shape shape) { return Aval::of(std::move(shape), DType::kFloat32); }

ParamValue dims(const std::vector<std::vector<int64_t>>& groups, bool lists) {
  std::vector<ParamValue> items;
  for (const auto& g : groups)
    items.push_back(lists ? ParamValue::list({g.begin(), g.end()}) : ParamValue::int_tuple(g));
  return ParamValue::tuple(items);
}

ParamValue old_dimension_numbers(std::vector<int64_t> contract, std::vector<int64_t> batch) {
  return ParamValue::tuple({dims({contract, contract}, false), dims({batch, batch}, false)});
}

Eqn dot_general_old(const Var& a, const Var& b, const Var& out, std::vector<int64_t> contract,
                    std::vector<int64_t> batch) {
  return Eqn{prim("dot_general"),
             {{"dimension_numbers", old_dimension_numbers(std::move(contract), std::move(batch))},
              {"precision", ParamValue::None{}},
              {"preferred_element_type", ParamValue::None{}}},
             {a, b},
             {out},
             nullptr};
}

}  // namespace

TEST_CASE("the layout engine breaks only groups that do not fit") {
  using namespace pp;
  const Doc doc =
      group(nest(2, concat({text("["), brk(""), join(brk(), {text("a=1"), text("b=2")})})) + brk("") + text("]"));
  CHECK(format(doc, 80) == "[a=1 b=2]");
  CHECK(format(doc, 6) == "[\n  a=1\n  b=2\n]");
}

TEST_CASE("seed 001: pmap of vdot in the xla_pmap era") {
  const JaxProfile profile(JaxVersion{0, 3, 4});
  const Var a = new_var(f32({8, 1250000, 3}));
  const Var b = new_var(f32({8, 1250000, 3}));
  const Var c = new_var(f32({8}));
  auto inner = std::make_shared<Jaxpr>();
  const Var d = new_var(f32({1250000, 3}));
  const Var e = new_var(f32({1250000, 3}));
  const Var f = new_var(f32({3750000}));
  const Var g = new_var(f32({3750000}));
  const Var h = new_var(f32({}));
  inner->invars = {d, e};
  const Params reshape = {{"dimensions", ParamValue::None{}}, {"new_sizes", ParamValue::int_tuple({3750000})}};
  inner->eqns = {Eqn{prim("reshape"), reshape, {d}, {f}, nullptr}, Eqn{prim("reshape"), reshape, {e}, {g}, nullptr},
                 dot_general_old(f, g, h, {0}, {})};
  inner->outvars = {h};
  Jaxpr outer;
  outer.invars = {a, b};
  outer.eqns = {Eqn{prim("xla_pmap"),
                    {{"axis_name", ParamValue::Verbatim{"<axis 0x78999cbe96c0>"}},
                     {"axis_size", 8},
                     {"backend", ParamValue::None{}},
                     {"call_jaxpr", JaxprPtr(inner)},
                     {"devices", ParamValue::None{}},
                     {"donated_invars", ParamValue::tuple({false, false})},
                     {"global_arg_shapes", ParamValue::tuple({ParamValue::None{}, ParamValue::None{}})},
                     {"global_axis_size", ParamValue::None{}},
                     {"in_axes", ParamValue::int_tuple({0, 0})},
                     {"name", "dot"},
                     {"out_axes", ParamValue::int_tuple({0})}},
                    {a, b},
                    {c},
                    nullptr}};
  outer.outvars = {c};
  CHECK(print_jaxpr(outer, profile) ==
        "{ lambda ; a:f32[8,1250000,3] b:f32[8,1250000,3]. let\n"
        "    c:f32[8] = xla_pmap[\n"
        "      axis_name=<axis 0x78999cbe96c0>\n"
        "      axis_size=8\n"
        "      backend=None\n"
        "      call_jaxpr={ lambda ; d:f32[1250000,3] e:f32[1250000,3]. let\n"
        "          f:f32[3750000] = reshape[dimensions=None new_sizes=(3750000,)] d\n"
        "          g:f32[3750000] = reshape[dimensions=None new_sizes=(3750000,)] e\n"
        "          h:f32[] = dot_general[\n"
        "            dimension_numbers=(((0,), (0,)), ((), ()))\n"
        "            precision=None\n"
        "            preferred_element_type=None\n"
        "          ] f g\n"
        "        in (h,) }\n"
        "      devices=None\n"
        "      donated_invars=(False, False)\n"
        "      global_arg_shapes=(None, None)\n"
        "      global_axis_size=None\n"
        "      in_axes=(0, 0)\n"
        "      name=dot\n"
        "      out_axes=(0,)\n"
        "    ] a b\n"
        "  in (c,) }");
}

TEST_CASE("seed 001: jit of vmap(vdot) as xla_call") {
  ensure_core_primitives();
  const JaxProfile profile(JaxVersion{0, 3, 4});
  const Var a = new_var(f32({8, 3}));
  const Var b = new_var(f32({8, 3}));
  const Var c = new_var(f32({8}));
  auto inner = std::make_shared<Jaxpr>();
  const Var d = new_var(f32({8, 3}));
  const Var e = new_var(f32({8, 3}));
  const Var f = new_var(f32({8}));
  inner->invars = {d, e};
  inner->eqns = {dot_general_old(d, e, f, {1}, {0})};
  inner->outvars = {f};
  Jaxpr outer;
  outer.invars = {a, b};
  outer.eqns = {Eqn{prim("jit"), {{"jaxpr", JaxprPtr(inner)}, {"name", "dot"}}, {a, b}, {c}, nullptr}};
  outer.outvars = {c};
  CHECK(print_jaxpr(outer, profile) ==
        "{ lambda ; a:f32[8,3] b:f32[8,3]. let\n"
        "    c:f32[8] = xla_call[\n"
        "      call_jaxpr={ lambda ; d:f32[8,3] e:f32[8,3]. let\n"
        "          f:f32[8] = dot_general[\n"
        "            dimension_numbers=(((1,), (1,)), ((0,), (0,)))\n"
        "            precision=None\n"
        "            preferred_element_type=None\n"
        "          ] d e\n"
        "        in (f,) }\n"
        "      name=dot\n"
        "    ] a b\n"
        "  in (c,) }");
}

TEST_CASE("jax 0.4.4 to 0.6: jit equations print as pjit, name first") {
  ensure_core_primitives();
  const Var a = new_var(f32({3}));
  const Var c = new_var(f32({3}));
  auto inner = std::make_shared<Jaxpr>();
  const Var x = new_var(f32({3}));
  const Var y = new_var(f32({3}));
  inner->invars = {x};
  inner->eqns = {Eqn{prim("sin"), {}, {x}, {y}, nullptr}};
  inner->outvars = {y};
  Jaxpr outer;
  outer.invars = {a};
  outer.eqns = {Eqn{prim("jit"), {{"jaxpr", JaxprPtr(inner)}, {"name", "f"}}, {a}, {c}, nullptr}};
  outer.outvars = {c};
  const std::string pjit_text = print_jaxpr(outer, JaxProfile(JaxVersion{0, 4, 20}));
  CHECK(pjit_text.find("= pjit[") != std::string::npos);
  CHECK(pjit_text.find("name=f") < pjit_text.find("jaxpr={"));
  CHECK(print_jaxpr(outer, JaxProfile(JaxVersion{0, 4, 3})).find("xla_call[") != std::string::npos);
  CHECK(print_jaxpr(outer, JaxProfile(JaxVersion{0, 7, 0})).find("= jit[") != std::string::npos);
}

TEST_CASE("newest JAX: jit's inner jaxpr reuses the outer names") {
  const JaxProfile profile;
  const Var a = new_var(f32({8, 3}));
  const Var b = new_var(f32({8, 3}));
  const Var c = new_var(f32({8}));
  auto inner = std::make_shared<Jaxpr>();
  const Var x = new_var(f32({8, 3}));
  const Var y = new_var(f32({8, 3}));
  const Var z = new_var(f32({8}));
  inner->invars = {x, y};
  inner->eqns = {Eqn{prim("dot_general"),
                     {{"dimension_numbers", ParamValue::tuple({dims({{1}, {1}}, true), dims({{0}, {0}}, true)})},
                      {"preferred_element_type", DType::kFloat32}},
                     {x, y},
                     {z},
                     nullptr}};
  inner->outvars = {z};
  Jaxpr outer;
  outer.invars = {a, b};
  outer.eqns = {Eqn{prim("jit"), {{"name", "dot"}, {"jaxpr", JaxprPtr(inner)}}, {a, b}, {c}, nullptr}};
  outer.outvars = {c};
  CHECK(print_jaxpr(outer, profile) ==
        "{ lambda ; a:f32[8,3] b:f32[8,3]. let\n"
        "    c:f32[8] = jit[\n"
        "      name=dot\n"
        "      jaxpr={ lambda ; a:f32[8,3] b:f32[8,3]. let\n"
        "          c:f32[8] = dot_general[\n"
        "            dimension_numbers=(([1], [1]), ([0], [0]))\n"
        "            preferred_element_type=float32\n"
        "          ] a b\n"
        "        in (c,) }\n"
        "    ] a b\n"
        "  in (c,) }");
}

TEST_CASE("shard_map with psum in the newest JAX, vma in the inner types") {
  const JaxProfile profile;
  Aval sharded = f32({32});
  sharded.dim_axes = {{"x"}};
  const Var a = new_var(sharded);
  const Var b = new_var(f32({}));
  Aval local = f32({4});
  local.varying = {"x"};
  Aval partial = f32({});
  partial.varying = {"x"};
  const Var c = new_var(local);
  const Var d = new_var(partial);
  const Var e = new_var(f32({}));
  auto body = std::make_shared<Jaxpr>();
  body->invars = {c};
  body->eqns = {Eqn{prim("reduce_sum"),
                    {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}},
                    {c},
                    {d},
                    nullptr},
                Eqn{prim("psum_invariant"), {{"axes", ParamValue::name_tuple({"x"})}}, {d}, {e}, nullptr}};
  body->outvars = {e};
  Device cpu;
  std::vector<Device> devices;
  for (int i = 0; i < 8; ++i) {
    cpu.id = i;
    devices.push_back(cpu);
  }
  const Mesh mesh(devices, {8}, {"x"}, {AxisType::kExplicit});
  Jaxpr outer;
  outer.invars = {a};
  outer.eqns = {Eqn{prim("shard_map"),
                    {{"check_vma", true},
                     {"in_specs", ParamValue::tuple({parse_partition_spec("P('x')")})},
                     {"jaxpr", JaxprPtr(body)},
                     {"mesh", mesh},
                     {"newly_manual_axes", ParamValue::FrozenSet{{"x"}}},
                     {"out_specs", ParamValue::tuple({PartitionSpec()})}},
                    {a},
                    {b},
                    nullptr}};
  outer.outvars = {b};
  CHECK(print_jaxpr(outer, profile) ==
        "{ lambda ; a:f32[32@x]. let\n"
        "    b:f32[] = shard_map[\n"
        "      check_vma=True\n"
        "      in_specs=(P('x',),)\n"
        "      jaxpr={ lambda ; c:f32[4]{V:x}. let\n"
        "          d:f32[]{V:x} = reduce_sum[axes=(0,) out_sharding=None] c\n"
        "          e:f32[] = psum_invariant[axes=('x',)] d\n"
        "        in (e,) }\n"
        "      mesh=Mesh('x': 8, axis_types=(Explicit,))\n"
        "      newly_manual_axes=frozenset({'x'})\n"
        "      out_specs=(P(),)\n"
        "    ] a\n"
        "  in (b,) }");
}

TEST_CASE("flat jaxprs, typed literals and unused outputs") {
  const Var a = new_var(f32({1}));
  const Var b = new_var(f32({1}));
  const Var unused = new_var(f32({1}));
  Jaxpr jaxpr;
  jaxpr.invars = {a};
  const Literal two{2.0, Aval::of({}, DType::kFloat32, true)};
  jaxpr.eqns = {Eqn{prim("mul"), {}, {a, two}, {b}, nullptr}, Eqn{prim("sin"), {}, {a}, {unused}, nullptr}};
  jaxpr.outvars = {b};
  CHECK(print_jaxpr(jaxpr, JaxProfile()) ==
        "{ lambda ; a:f32[1]. let b:f32[1] = mul a 2.0:f32[]; _:f32[1] = sin a in (b,) }");
  CHECK(print_jaxpr(jaxpr, JaxProfile(JaxVersion{0, 6, 0})) ==
        "{ lambda ; a:f32[1]. let b:f32[1] = mul a 2.0; c:f32[1] = sin a in (b,) }");
  Jaxpr identity;
  identity.invars = {a, b};
  identity.outvars = {a};
  CHECK(print_jaxpr(identity, JaxProfile()) == "{ lambda ; a:f32[1] b:f32[1]. let  in (a,) }");
}

TEST_CASE("variable names continue past z") {
  Jaxpr jaxpr;
  for (int i = 0; i < 28; ++i) jaxpr.invars.push_back(new_var(Aval::of({}, DType::kInt32)));
  jaxpr.outvars = {jaxpr.invars.back()};
  const std::string text = print_jaxpr(jaxpr, JaxProfile());
  CHECK(text.find(" z:i32[]") != std::string::npos);
  CHECK(text.find(" ba:i32[]") != std::string::npos);
  CHECK(text.find("in (bb,) }") != std::string::npos);
}

TEST_CASE("an equation printed alone names its outputs first, then its inputs, and keeps its params") {
  const JaxProfile profile;
  const Var x = new_var(f32({3}));
  const Var y = new_var(f32({3}));
  const Var out = new_var(f32({3}));
  const Eqn mul{prim("mul"), {}, {x, y}, {out}, nullptr};
  CHECK(print_equation(mul, profile) == "a:f32[3] = mul b c");
  const Var scalar = new_var(Aval::of({}, DType::kFloat32));
  const Eqn reduce{prim("reduce_sum"),
                   {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}},
                   {out},
                   {scalar},
                   nullptr};
  CHECK(print_equation(reduce, profile) == "a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b");
}
