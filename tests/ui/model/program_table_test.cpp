// The program view's tables: value names as the lowered text prints them, layouts as specs, collectives' columns.
#include "ui/model/program_table.h"

#include <doctest/doctest.h>

#include "tests/ui/model/fixtures.h"
#include "trace/builder.h"

namespace shardscope::ui {
namespace {

const JaxProfile kProfile{};

}  // namespace

TEST_CASE("bytes read as B, KiB and MiB, per device as one number or a range") {
  CHECK(bytes_text(96) == "96 B");
  CHECK(bytes_text(1023) == "1023 B");
  CHECK(bytes_text(1536) == "1.5 KiB");
  CHECK(bytes_text(2 * 1024 * 1024) == "2.0 MiB");
  CHECK(bytes_text(int64_t{3} << 40) == "3.0 TiB");
  CHECK(per_device_bytes_text({}) == "-");
  CHECK(per_device_bytes_text({64, 64, 64}) == "64 B");
  CHECK(per_device_bytes_text({96, 0, 48}) == "0 B - 96 B");
}

TEST_CASE("each value of a partitioned program shows its layout as a spec and its shard type") {
  const Mesh mesh = testing::mesh_2x4();
  JaxprBuilder b;
  const Var a = b.arg(Aval::of({8, 16}, DType::kFloat32));
  const Var c = b.arg(Aval::of({6}, DType::kInt32));
  const Atom sum = b.bind1("add", {a, a});
  const Atom sine = b.bind1("sin", {sum}, {{"accuracy", ParamValue::None{}}});
  const JaxprPtr program = b.build({sine, c});
  LayoutMap layouts;
  layouts[a.id] = {{{"x"}, {"y"}}, true, "argument 0", {}};
  layouts[c.id] = {{{"y"}}, true, "with_sharding_constraint", {}};
  layouts[std::get<Var>(sum).id] = {{{"x", "y"}, {}}, false, "add from operand 0", {}};
  // sin's result has no layout: the partitioner left it replicated.
  const std::vector<ValueRow> rows = program_value_rows(*program, layouts, mesh, kProfile);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "%arg0");
  CHECK(rows[0].op == "argument");
  CHECK(rows[0].type == "f32[8,16]");
  CHECK(rows[0].spec == "P('x', 'y')");
  CHECK(rows[0].local_type == "f32[4,4]");  // 8/2, 16/4
  CHECK(rows[1].name == "%arg1");
  CHECK(rows[1].spec == "P('y',)");
  CHECK(rows[1].local_type == "i32[2]");  // 6 over 4 devices: shards of ceil(6/4) = 2, the last one padded
  CHECK(rows[2].name == "%0");
  CHECK(rows[2].op == "add");
  CHECK(rows[2].spec == "P(('x', 'y'), None)");
  CHECK(rows[2].local_type == "f32[1,16]");  // 8 over 2*4 devices
  CHECK(rows[3].name == "%1");
  CHECK(rows[3].op == "sin");
  CHECK(rows[3].spec == "P(None, None)");
  CHECK(rows[3].local_type == "f32[8,16]");
}

TEST_CASE("shard_map arguments show the global type their in_spec assembles from the body's local type") {
  const Mesh mesh = testing::mesh_2x4();
  const ValueRow row = shard_map_value_row("in[0]", "argument", Aval::of({4, 4}, DType::kFloat32),
                                           parse_partition_spec("P('x', 'y')"), mesh, kProfile);
  CHECK(row.type == "f32[8,16]");
  CHECK(row.local_type == "f32[4,4]");
  CHECK(row.spec == "P('x', 'y')");
  const ValueRow out = shard_map_value_row("out[0]", "result", Aval::of({4, 1}, DType::kFloat32),
                                           parse_partition_spec("P('x', None)"), mesh, kProfile);
  CHECK(out.type == "f32[8,1]");
}

TEST_CASE("collective rows name the kind, axes, device groups and bytes each device sends and receives") {
  CollectiveRecord gather;
  gather.kind = CollectiveKind::kAllGather;
  gather.axes = {"x"};
  gather.groups = {{0, 4}, {1, 5}};
  gather.device_ids = {0, 1, 4, 5};
  gather.bytes_sent = {512, 512, 512, 512};
  gather.bytes_received = {1536, 1536, 1536, 1536};
  gather.origin = "reshard";
  CollectiveRecord permute;
  permute.kind = CollectiveKind::kCollectivePermute;
  permute.axes = {"x", "y"};
  permute.groups = {{0, 1, 2, 3, 6, 7, 4, 5}};
  permute.bytes_sent = {96, 0};
  permute.bytes_received = {0, 96};
  const std::vector<CollectiveRow> rows = collective_rows({gather, permute});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].kind == "all-gather");
  CHECK(rows[0].axes == "('x',)");
  CHECK(rows[0].groups == "{0,4} {1,5}");
  CHECK(rows[0].sent == "512 B");
  CHECK(rows[0].received == "1.5 KiB");
  CHECK(rows[0].origin == "reshard");
  CHECK(rows[1].kind == "collective-permute");
  CHECK(rows[1].axes == "('x', 'y')");
  CHECK(rows[1].groups == "{0,1,2,3,6,7,4,5}");
  CHECK(rows[1].sent == "0 B - 96 B");
  // As text: columns padded to their widest cell plus two spaces; the last column is not padded.
  CHECK(collective_table_text({rows[0]}) ==
        "collective  axes    device groups  sent/device  received/device  origin\n"
        "all-gather  ('x',)  {0,4} {1,5}    512 B        1.5 KiB          reshard\n");
}

}  // namespace shardscope::ui
