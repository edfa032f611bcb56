// Random primitives in programs: JAX's shape rules and printed params, kernels against JAX's published values,
// and jitted programs whose sharded runs equal the single-device ones.
#include <doctest/doctest.h>

#include <cstring>
#include <set>

#include "base/error.h"
#include "device/presets.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "exec/shard_map.h"
#include "ir/jaxpr_printer.h"
#include "ops/ops.h"
#include "random/sharded_random.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh mesh_of(const std::vector<int64_t>& shape, const std::vector<std::string>& names) {
  return make_mesh(shape, names, make_device_preset("tpu-v3-8").devices, kProfile,
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

Sharding named(const Mesh& mesh, const std::string& spec) {
  return make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
}

Aval u32(Shape shape) { return Aval::of(std::move(shape), DType::kUInt32); }

Params bits_params(int64_t bit_width, const Shape& shape, std::optional<bool> partitionable = std::nullopt) {
  Params params{{"bit_width", bit_width}, {"shape", ParamValue::int_tuple(shape)}};
  if (partitionable) params.emplace_back("partitionable", *partitionable);
  return params;
}

Params split_params(const Shape& shape, std::optional<bool> partitionable = std::nullopt) {
  Params params{{"shape", ParamValue::int_tuple(shape)}};
  if (partitionable) params.emplace_back("partitionable", *partitionable);
  return params;
}

const Params kImpl{{"impl", ParamValue::Verbatim{"fry"}}};

Aval eval1(const std::string& name, std::vector<Aval> in, const Params& params = {}) {
  ensure_core_primitives();
  return find_primitive(name)->abstract_eval(in, params).at(0);
}

BufferPtr key_buffer(const random::Key& k) {
  return make_buffer(DType::kUInt32, {2}, std::vector<uint32_t>{k[0], k[1]});
}

template <class T>
std::vector<T> values(const BufferPtr& buffer) {
  const auto span = buffer->as<T>();
  return {span.begin(), span.end()};
}

bool same_bytes(const BufferPtr& a, const BufferPtr& b) {
  return a->nbytes() == b->nbytes() && std::memcmp(a->bytes().data(), b->bytes().data(), a->nbytes()) == 0;
}

}  // namespace

TEST_CASE("shape rules: keys are uint32 arrays ending in 2 and results add the requested dims") {
  CHECK(eval1("random_bits", {u32({2})}, bits_params(32, {3})) == u32({3}));
  CHECK(eval1("random_bits", {u32({4, 2})}, bits_params(8, {3, 5})) == Aval::of({4, 3, 5}, DType::kUInt8));
  CHECK(eval1("random_bits", {u32({2})}, bits_params(64, {})) == Aval::of({}, DType::kUInt64));
  CHECK(eval1("random_split", {u32({2})}, split_params({2})) == u32({2, 2}));
  CHECK(eval1("random_split", {u32({3, 2})}, split_params({4, 5})) == u32({3, 4, 5, 2}));
  CHECK(eval1("random_fold_in", {u32({2}), u32({})}) == u32({2}));
  CHECK(eval1("random_fold_in", {u32({3, 2}), u32({3})}) == u32({3, 2}));
  CHECK(eval1("random_seed", {Aval::of({}, DType::kInt32)}, kImpl) == u32({2}));
  CHECK(eval1("random_seed", {Aval::of({5}, DType::kInt64)}, kImpl) == u32({5, 2}));
  CHECK(eval1("random_wrap", {u32({2})}, kImpl) == u32({2}));
  CHECK(eval1("random_unwrap", {u32({2})}) == u32({2}));
  ensure_core_primitives();
  const auto outs =
      find_primitive("threefry2x32")->abstract_eval(std::vector{u32({}), u32({}), u32({6}), u32({6})}, {});
  CHECK(outs == std::vector<Aval>{u32({6}), u32({6})});
}

TEST_CASE("shape rules raise JAX's errors") {
  CHECK_THROWS_WITH(
      eval1("random_wrap", {u32({3})}, kImpl),
      doctest::Contains("JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); "
                        "got shape=(3,)"));
  CHECK_THROWS_WITH(eval1("random_wrap", {u32({})}, kImpl),
                    "JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim=0");
  CHECK_THROWS_WITH(eval1("random_wrap", {Aval::of({2}, DType::kInt32)}, kImpl),
                    "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype=int32");
  CHECK_THROWS_WITH(eval1("random_bits", {u32({2})}, bits_params(12, {3})), "data type 'uint12' not understood");
  CHECK_THROWS_WITH(eval1("threefry2x32", {u32({}), u32({}), Aval::of({3}, DType::kFloat32), u32({3})}),
                    doctest::Contains("Arguments to threefry2x32 must have uint32 type, got"));
}

TEST_CASE("make_jaxpr text: JAX's params, keys shown as their uint32 data") {
  ensure_core_primitives();
  JaxprBuilder b;
  const Var key = b.arg(u32({2}));
  const Atom wrapped = b.bind1("random_wrap", {key}, kImpl);
  const Atom pair = b.bind1("random_split", {wrapped}, split_params({2}, false));
  const Atom folded = b.bind1("random_fold_in", {wrapped, Literal{int64_t{3}, u32({})}});
  const Atom bits = b.bind1("random_bits", {folded}, bits_params(32, {3}, true));
  const Atom data = b.bind1("random_unwrap", {pair});
  const JaxprPtr jaxpr = b.build({bits, data});
  CHECK(print_jaxpr(*jaxpr, kProfile) ==
        "{ lambda ; a:u32[2]. let\n"
        "    b:u32[2] = random_wrap[impl=fry] a\n"
        "    c:u32[2,2] = random_split[shape=(2,)] b\n"
        "    d:u32[2] = random_fold_in b 3:u32[]\n"
        "    e:u32[3] = random_bits[bit_width=32 shape=(3,)] d\n"
        "    f:u32[2,2] = random_unwrap c\n"
        "  in (e, f) }");
}

TEST_CASE("single-device kernels reproduce JAX's published values") {
  ensure_core_primitives();
  const auto run = [](const std::string& name, std::vector<BufferPtr> in, std::vector<Aval> avals,
                      const Params& params) { return find_primitive(name)->impl(in, avals, params); };
  const BufferPtr k0 = key_buffer({0, 0});
  // Random123 known-answer vector, key = counter = 0.
  const BufferPtr zero = make_buffer(DType::kUInt32, {1}, std::vector<uint32_t>{0});
  const BufferPtr scalar0 = make_buffer(DType::kUInt32, {}, std::vector<uint32_t>{0});
  const auto kat = run("threefry2x32", {scalar0, scalar0, zero, zero}, {u32({}), u32({}), u32({1}), u32({1})}, {});
  CHECK(values<uint32_t>(kat[0]) == std::vector<uint32_t>{0x6B200159u});
  CHECK(values<uint32_t>(kat[1]) == std::vector<uint32_t>{0x99BA4EFEu});
  // tests/random_test.py::testPRNGValues: legacy split(PRNGKey(0), 4) and fold_in(PRNGKey(0), 4).
  CHECK(values<uint32_t>(run("random_split", {k0}, {u32({2})}, split_params({4}, false))[0]) ==
        std::vector<uint32_t>{2285895361u, 1501764800u, 1518642379u, 4090693311u, 433833334u, 4221794875u, 839183663u,
                              3740430601u});
  const BufferPtr four = make_buffer(DType::kUInt32, {}, std::vector<uint32_t>{4});
  CHECK(values<uint32_t>(run("random_fold_in", {k0, four}, {u32({2}), u32({})}, {})[0]) ==
        std::vector<uint32_t>{2285895361u, 433833334u});
  // testRngRandomBits: legacy bits(PRNGKey(1701), (3,)) at 32 and 16 bits.
  const BufferPtr k1701 = key_buffer({0, 1701});
  CHECK(values<uint32_t>(run("random_bits", {k1701}, {u32({2})}, bits_params(32, {3}, false))[0]) ==
        std::vector<uint32_t>{56197195u, 4200222568u, 961309823u});
  CHECK(values<uint16_t>(run("random_bits", {k1701}, {u32({2})}, bits_params(16, {3}, false))[0]) ==
        std::vector<uint16_t>{41682, 1300, 55017});
  // Partitionable split(key(0))[1] = [928981903, 3453687069] (the reference's scratch implementation).
  CHECK(values<uint32_t>(run("random_split", {k0}, {u32({2})}, split_params({2}))[0])[2] == 928981903u);
  // test_prng_seeds_and_keys: key(-1) is [0, 4294967295] from an int32 seed, all ones from an int64 one.
  const BufferPtr minus_one32 = make_buffer(DType::kInt32, {}, std::vector<int32_t>{-1});
  CHECK(values<uint32_t>(run("random_seed", {minus_one32}, {Aval::of({}, DType::kInt32)}, kImpl)[0]) ==
        std::vector<uint32_t>{0u, 4294967295u});
  const BufferPtr seed64 = make_buffer(DType::kInt64, {}, std::vector<int64_t>{-2147483748LL});
  CHECK(values<uint32_t>(run("random_seed", {seed64}, {Aval::of({}, DType::kInt64)}, kImpl)[0]) ==
        std::vector<uint32_t>{4294967295u, 2147483548u});
}

TEST_CASE("batched keys: bits and split per key equal each key's own stream") {
  ensure_core_primitives();
  const std::vector<random::Key> keys = random::split(random::key(11), 3);
  std::vector<uint32_t> words;
  for (const random::Key& k : keys) words.insert(words.end(), k.begin(), k.end());
  const BufferPtr batch = make_buffer(DType::kUInt32, {3, 2}, words);
  for (const bool partitionable : {false, true}) {
    const random::ThreefryMode mode =
        partitionable ? random::ThreefryMode::kPartitionable : random::ThreefryMode::kOriginal;
    const std::vector<BufferPtr> in{batch};
    const std::vector<Aval> avals{u32({3, 2})};
    const BufferPtr bits = find_primitive("random_bits")->impl(in, avals, bits_params(32, {5}, partitionable))[0];
    std::vector<uint32_t> expected;
    for (const random::Key& k : keys) {
      const std::vector<uint32_t> one = random::random_bits<uint32_t>(k, Shape{5}, {mode, std::nullopt});
      expected.insert(expected.end(), one.begin(), one.end());
    }
    CHECK(values<uint32_t>(bits) == expected);
  }
}

namespace {

// f(key) = uniform-like floats from 32 random bits, plus the keys of a split: the programs jit partitions.
JaxprPtr sampling_program(const Shape& shape, bool partitionable) {
  JaxprBuilder b;
  const Var key = b.arg(u32({2}));
  const Atom wrapped = b.bind1("random_wrap", {key}, kImpl);
  const Atom bits = b.bind1("random_bits", {wrapped}, bits_params(32, shape, partitionable));
  const Atom shifted = b.bind1("shift_right_logical", {bits, Literal{int64_t{8}, u32({})}});
  const Atom floats = b.bind1("convert_element_type", {shifted},
                              {{"new_dtype", DType::kFloat32}, {"weak_type", false}, {"sharding", ParamValue::None{}}});
  const Atom scaled = b.bind1("mul", {floats, Literal{1.0 / 16777216.0, Aval::of({}, DType::kFloat32)}});
  const Atom keys = b.bind1("random_split", {wrapped}, split_params({shape[0]}, partitionable));
  const Atom key_data = b.bind1("random_unwrap", {keys});
  const Atom raw = b.bind1("random_bits", {wrapped}, bits_params(8, shape, partitionable));
  return b.build({scaled, key_data, raw});
}

}  // namespace

TEST_CASE("jitted random programs give the same values sharded and unsharded, each device computing its block") {
  ensure_core_primitives();
  const Shape shape{8, 16};
  const random::Key k = random::key(42);
  const struct {
    std::vector<int64_t> mesh_shape;
    std::vector<std::string> names;
    std::string out_spec;
    std::string keys_spec;
  } cases[] = {{{2}, {"x"}, "P('x')", "P('x')"},
               {{2, 2}, {"x", "y"}, "P('x', 'y')", "P('y')"},
               {{2, 4}, {"x", "y"}, "P('x', 'y')", "P('y', 'x')"},
               {{2, 4}, {"x", "y"}, "P(None, ('x', 'y'))", "P(('x', 'y'))"},
               {{8}, {"x"}, "P('x')", "P('x')"}};
  for (const auto& c : cases) {
    const Mesh mesh = mesh_of(c.mesh_shape, c.names);
    CAPTURE(c.out_spec);
    for (const bool partitionable : {false, true}) {
      CAPTURE(partitionable);
      const JaxprPtr program = sampling_program(shape, partitionable);
      const std::vector<BufferPtr> reference = evaluate_jaxpr(*program, {key_buffer(k)});
      const Array key = random::key_array(k, named(mesh, "P()"), kProfile);
      JitOptions options;
      options.out_shardings = {named(mesh, c.out_spec), named(mesh, c.keys_spec), named(mesh, c.out_spec)};
      const JitRun run = run_jit(*program, {key}, options, kProfile);
      REQUIRE(run.outputs.size() == 3);
      for (std::size_t o = 0; o < 3; ++o) {
        CHECK(same_bytes(run.outputs[o].gather(), reference[o]));
        const Shape local = shard_shape(run.outputs[o].sharding(), run.outputs[o].shape(), kProfile);
        for (const Array::Shard& shard : run.outputs[o].shards()) CHECK(shard.data->shape() == local);
      }
      // The key is replicated and every device generates its own block: nothing moves.
      CHECK(run.log.empty());
      // And the values are the host sampler's, block by block.
      const random::ThreefryMode mode =
          partitionable ? random::ThreefryMode::kPartitionable : random::ThreefryMode::kOriginal;
      CHECK(values<uint8_t>(run.outputs[2].gather()) == random::random_bits<uint8_t>(k, shape, {mode, std::nullopt}));
    }
  }
}

TEST_CASE("inside shard_map each device draws the body's local shape from its own key") {
  ensure_core_primitives();
  const Mesh mesh = mesh_of({4}, {"x"});
  // Keys split outside, sharded one per device; the body draws bits of its local shape from its key.
  const std::vector<random::Key> keys = random::split(random::key(9), 4);
  std::vector<uint32_t> words;
  for (const random::Key& k : keys) words.insert(words.end(), k.begin(), k.end());
  const Array key_arg = Array::from_host(make_buffer(DType::kUInt32, {4, 2}, words), named(mesh, "P('x')"), kProfile);
  ShardMapSpec spec;
  spec.mesh = mesh;
  spec.in_specs = {parse_partition_spec("P('x')")};
  spec.out_specs = {parse_partition_spec("P('x')")};
  spec.check_vma = false;
  JaxprBuilder b;
  const Var local_keys = b.arg(u32({1, 2}));
  const Atom bits = b.bind1("random_bits", {local_keys}, bits_params(32, {3}));
  const JaxprPtr body = b.build({bits});
  const std::vector<Array> out = run_shard_map(*body, spec, {key_arg}, kProfile, nullptr);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == Shape{4, 3});
  std::vector<uint32_t> expected;
  for (const random::Key& k : keys) {
    const std::vector<uint32_t> one = random::random_bits<uint32_t>(k, Shape{3});
    expected.insert(expected.end(), one.begin(), one.end());
  }
  CHECK(values<uint32_t>(out[0].gather()) == expected);
}

TEST_CASE("block kernels compute exactly the requested block of the global result") {
  ensure_core_primitives();
  const random::Key k = random::key(5);
  const std::vector<BufferPtr> in{key_buffer(k)};
  const std::vector<Aval> avals{u32({2})};
  // Rows [2, 4) and columns [3, 6) of bits (4, 8), computed without the rest of the array.
  const std::vector<DimSlice> index{{false, 2, 4, 1}, {false, 3, 6, 1}};
  for (const bool partitionable : {false, true}) {
    const random::ThreefryMode mode =
        partitionable ? random::ThreefryMode::kPartitionable : random::ThreefryMode::kOriginal;
    const std::vector<uint64_t> whole = random::random_bits(k, 64, Shape{4, 8}, {mode, std::nullopt});
    const BufferPtr block =
        find_primitive("random_bits")->block_impl(in, avals, bits_params(64, {4, 8}, partitionable), index)[0];
    CHECK(block->shape() == Shape{2, 3});
    std::vector<uint64_t> expected;
    for (std::size_t r = 2; r < 4; ++r) {
      for (std::size_t c = 3; c < 6; ++c) expected.push_back(whole[r * 8 + c]);
    }
    CHECK(values<uint64_t>(block) == expected);
    // split (4,) keys: rows [1, 3), second word only.
    const std::vector<random::Key> keys = random::split(k, Shape{4}, mode);
    const std::vector<DimSlice> key_index{{false, 1, 3, 1}, {false, 1, 2, 1}};
    const BufferPtr words =
        find_primitive("random_split")->block_impl(in, avals, split_params({4}, partitionable), key_index)[0];
    CHECK(values<uint32_t>(words) == std::vector<uint32_t>{keys[1][1], keys[2][1]});
  }
}

TEST_CASE("propagation: a batch of sharded keys keeps its sharding through bits, split and fold_in") {
  ensure_core_primitives();
  const Mesh mesh = mesh_of({8}, {"x"});
  const std::vector<random::Key> keys = random::split(random::key(11), 8);
  std::vector<uint32_t> words;
  for (const random::Key& k : keys) words.insert(words.end(), k.begin(), k.end());
  const BufferPtr key_data = make_buffer(DType::kUInt32, {8, 2}, words);
  JaxprBuilder b;
  const Var batch = b.arg(u32({8, 2}));
  const Var data = b.arg(Aval::of({8}, DType::kUInt32));
  const Atom bits = b.bind1("random_bits", {batch}, bits_params(32, {5}));
  const Atom split = b.bind1("random_split", {batch}, split_params({3}));
  const Atom folded = b.bind1("random_fold_in", {batch, data});
  const JaxprPtr program = b.build({bits, split, folded});
  const BufferPtr data_buffer = make_buffer(DType::kUInt32, {8}, std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<BufferPtr> reference = evaluate_jaxpr(*program, {key_data, data_buffer});
  const Array key_arg = Array::from_host(key_data, named(mesh, "P('x')"), kProfile);
  const Array data_arg = Array::from_host(data_buffer, named(mesh, "P()"), kProfile);
  const JitRun run = run_jit(*program, {key_arg, data_arg}, JitOptions{}, kProfile);
  REQUIRE(run.outputs.size() == 3);
  // The key batch dim stays sharded in the results (it used to come out replicated); the generated dims are
  // left unsharded since nothing asks for them.
  const std::vector<Shape> local_shapes = {{1, 5}, {1, 3, 2}, {1, 2}};
  for (std::size_t o = 0; o < 3; ++o) {
    CAPTURE(o);
    CHECK(same_bytes(run.outputs[o].gather(), reference[o]));
    CHECK(shard_shape(run.outputs[o].sharding(), run.outputs[o].shape(), kProfile) == local_shapes[o]);
  }
  // Row k of the bits is key k's own stream (JAX's per-key semantics).
  const std::vector<uint32_t> all_bits = values<uint32_t>(run.outputs[0].gather());
  for (std::size_t k = 0; k < 8; ++k) {
    const std::vector<uint32_t> own = random::random_bits<uint32_t>(keys[k], Shape{5});
    CHECK(std::vector<uint32_t>(all_bits.begin() + static_cast<std::ptrdiff_t>(5 * k),
                                all_bits.begin() + static_cast<std::ptrdiff_t>(5 * k + 5)) == own);
  }
}
