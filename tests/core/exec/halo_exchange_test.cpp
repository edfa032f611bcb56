// halo_exchanges() for slices and pads of a sharded dim: the collectives, and the bytes each device sends and
// receives, that real JAX 0.11.2 (XLA) inserts for them (tests/data/real_jax probes p08_uneven, p11, p13).
#include "exec/halo_exchange.h"

#include <doctest/doctest.h>

#include "device/presets.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh mesh_of(std::vector<int64_t> shape, std::vector<std::string> names) {
  return make_mesh(shape, names, make_device_preset("cpu:8").devices, kProfile,
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

// x[start:limit:stride] along dim 0 of an f32 operand of `shape` (other dims whole).
JaxprPtr slice_rows(const Shape& shape, int64_t start, int64_t limit, int64_t stride = 1) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of(shape, DType::kFloat32));
  std::vector<int64_t> starts(shape.size(), 0);
  std::vector<int64_t> limits(shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  starts[0] = start;
  limits[0] = limit;
  strides[0] = stride;
  return b.build({b.bind1("slice", {x},
                          {{"start_indices", ParamValue::int_tuple(starts)},
                           {"limit_indices", ParamValue::int_tuple(limits)},
                           {"strides", ParamValue::int_tuple(strides)}})});
}

// An edge pad of dim 0 by (low, high) of an f32 operand of `shape`.
JaxprPtr pad_rows(const Shape& shape, int64_t low, int64_t high) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of(shape, DType::kFloat32));
  const Var zero = b.arg(Aval::of({}, DType::kFloat32));
  std::vector<ParamValue> config{ParamValue::int_tuple({low, high, 0})};
  for (std::size_t d = 1; d < shape.size(); ++d) config.push_back(ParamValue::int_tuple({0, 0, 0}));
  return b.build({b.bind1("pad", {x, zero}, {{"padding_config", ParamValue::tuple(config)}})});
}

// One expected collective: its kind and the bytes per device (mesh order) it sends and receives.
struct Expected {
  CollectiveKind kind = CollectiveKind::kCollectivePermute;
  std::vector<int64_t> sent;
  std::vector<int64_t> received;
};

void check_exchanges(const std::vector<HaloExchange>& got, const std::vector<Expected>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("collective " << i);
    CHECK(collective_name(got[i].kind) == collective_name(want[i].kind));
    CHECK(got[i].bytes_sent == want[i].sent);
    CHECK(got[i].bytes_received == want[i].received);
  }
}

constexpr CollectiveKind kPermute = CollectiveKind::kCollectivePermute;
constexpr CollectiveKind kAllReduce = CollectiveKind::kAllReduce;
constexpr CollectiveKind kAllGather = CollectiveKind::kAllGather;

}  // namespace

// a: f32[8,8] over ('data'=4, 'model'=2) as P('data', 'model'): blocks of 2 rows x 4 columns (16 bytes a row);
// devices 2k and 2k+1 hold 'data' block k. The sliced results drop the row sharding (P(None, 'model')).
TEST_CASE("a slice that drops a sharded dim exchanges halos only among the shards holding data, then replicates") {
  const Mesh mesh = mesh_of({4, 2}, {"data", "model"});
  const Layout held{{"data"}, {"model"}};
  const Layout whole_rows{{}, {"model"}};
  const auto exchanges = [&](const JaxprPtr& program) {
    return halo_exchanges(program->eqns.at(0), 0, held, whole_rows, whole_rows, mesh);
  };
  SUBCASE("last1 a[7:]: one row from the last block to the first; a one-row result is broadcast by an all-reduce") {
    // Only the first and last blocks take part (those between hold nothing read), so one permute, not three.
    check_exchanges(exchanges(slice_rows({8, 8}, 7, 8)),
                    {{kPermute, {0, 0, 0, 0, 0, 0, 16, 16}, {16, 16, 0, 0, 0, 0, 0, 0}},
                     // 2 (n - 1) / n of the whole (1, 4) result: 2 * 3 * 16 / 4.
                     {kAllReduce, std::vector<int64_t>(8, 24), std::vector<int64_t>(8, 24)}});
  }
  SUBCASE("mid2 a[3:5]: the three blocks up to row 5 exchange whole blocks to the left once; two rows all-reduce") {
    check_exchanges(exchanges(slice_rows({8, 8}, 3, 5)),
                    {{kPermute, {0, 0, 32, 32, 32, 32, 0, 0}, {32, 32, 32, 32, 0, 0, 0, 0}},
                     {kAllReduce, std::vector<int64_t>(8, 48), std::vector<int64_t>(8, 48)}});
  }
  SUBCASE("stride4 a[::4]: each block's window lies far from it (compact exchange): only row 4 travels, once") {
    check_exchanges(exchanges(slice_rows({8, 8}, 0, 8, 4)),
                    {{kPermute, {0, 0, 0, 0, 16, 16, 0, 0}, {0, 0, 16, 16, 0, 0, 0, 0}},
                     {kAllReduce, std::vector<int64_t>(8, 48), std::vector<int64_t>(8, 48)}});
  }
  SUBCASE("first1 a[:1]: all useful data is in the first block: nothing moves before the all-reduce") {
    check_exchanges(exchanges(slice_rows({8, 8}, 0, 1)),
                    {{kAllReduce, std::vector<int64_t>(8, 24), std::vector<int64_t>(8, 24)}});
  }
  SUBCASE("first7 a[:7]: every read is local; seven rows are longer than half the blocks: all-gather") {
    // Blocks of ceil(7 / 4) = 2 rows, each sent to the three others.
    check_exchanges(exchanges(slice_rows({8, 8}, 0, 7)),
                    {{kAllGather, std::vector<int64_t>(8, 96), std::vector<int64_t>(8, 96)}});
  }
  SUBCASE("pad_rows jnp.pad(a, ((1, 1), (0, 0))): a right halo of one block-width, then an all-gather") {
    // Blocks of ceil(10 / 4) = 3 rows: each reads the next block's two rows; the gather sends 3 * 3 rows.
    check_exchanges(halo_exchanges(pad_rows({8, 8}, 1, 1)->eqns.at(0), 0, held, whole_rows, whole_rows, mesh),
                    {{kPermute, {0, 0, 32, 32, 32, 32, 32, 32}, {32, 32, 32, 32, 32, 32, 0, 0}},
                     {kAllGather, std::vector<int64_t>(8, 144), std::vector<int64_t>(8, 144)}});
  }
}

TEST_CASE("a slice that keeps the sharded dim exchanges halos as XLA's compact exchange pairs them") {
  const Mesh mesh = mesh_of({4, 2}, {"data", "model"});
  const Layout held{{"data"}, {"model"}};
  // first4 a[:4] stays P('data', 'model'): block k reads row k. XLA sends rows 0-1 of block 0 to block 1 and of
  // block 1 to block 2 in one permute (its slice covers both pieces), then row 1 of block 1 to block 3.
  check_exchanges(halo_exchanges(slice_rows({8, 8}, 0, 4)->eqns.at(0), 0, held, {{}, {"model"}}, held, mesh),
                  {{kPermute, {32, 32, 32, 32, 0, 0, 0, 0}, {0, 0, 32, 32, 32, 32, 0, 0}},
                   {kPermute, {0, 0, 16, 16, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 16, 16}}});
}

// v: f32[16] over 'x'=8 as P('x'): blocks of 2 elements (8 bytes). The source-target pairs and slice widths
// XLA printed for these (probe p13_slices).
TEST_CASE("the compact exchange takes one piece per source and target per permute, in the order pieces land") {
  const Mesh mesh = mesh_of({8}, {"x"});
  const Layout held{{"x"}};
  const Layout whole{{}};
  SUBCASE("v[12:16]: blocks 6 and 7 hold the data, blocks 0-3 read it: {6,0},{7,2} then {6,1},{7,3}") {
    check_exchanges(halo_exchanges(slice_rows({16}, 12, 16)->eqns.at(0), 0, held, whole, whole, mesh),
                    {{kPermute, {0, 0, 0, 0, 0, 0, 4, 4}, {4, 0, 4, 0, 0, 0, 0, 0}},
                     {kPermute, {0, 0, 0, 0, 0, 0, 4, 4}, {0, 4, 0, 4, 0, 0, 0, 0}},
                     {kAllReduce, std::vector<int64_t>(8, 28), std::vector<int64_t>(8, 28)}});
  }
  SUBCASE("jnp.pad(v, (1, 0)): {2,1},{3,2},{4,3},{5,4},{7,5} then {5,3},{6,4}, two elements each") {
    check_exchanges(halo_exchanges(pad_rows({16}, 1, 0)->eqns.at(0), 0, held, whole, whole, mesh),
                    {{kPermute, {0, 0, 8, 8, 8, 8, 0, 8}, {0, 8, 8, 8, 8, 8, 0, 0}},
                     {kPermute, {0, 0, 0, 0, 0, 8, 8, 0}, {0, 0, 0, 8, 8, 0, 0, 0}},
                     // Blocks of ceil(17 / 8) = 3 elements, each sent to the seven others.
                     {kAllGather, std::vector<int64_t>(8, 84), std::vector<int64_t>(8, 84)}});
  }
}
