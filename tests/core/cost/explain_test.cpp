// shardscope explain: rows follow the partition plan (collectives before the equation they serve, with the
// plan's reasons), bytes per device follow the ring accounting, totals add up, and the memory fit is judged.
#include "cost/explain.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.h"
#include "core/cost/cost_test_programs.h"
#include "device/presets.h"
#include "sharding/partition_spec.h"
#include "trace/builder.h"

using namespace shardscope;
using cost_test::arg;
using cost_test::int_list;
using cost_test::kProfile;
using cost_test::matmul_program;

namespace {

Mesh v5e_mesh() { return cost_test::mesh_2x4("tpu-v5e-8"); }

}  // namespace

TEST_CASE("a matmul contracting a sharded dim explains its all-reduce with bytes, reason and time") {
  // x: f32[8,16] on P('x', 'y'), w: f32[16,32] on P('y', None): each device multiplies a [4,4] block by a
  // [4,32] block and the partial [4,32] results (512 B) are all-reduced over 'y' (n = 4): 2 * 3/4 * 512 = 768 B.
  const Mesh mesh = v5e_mesh();
  const JaxprPtr program = matmul_program(Aval::of({8, 16}, DType::kFloat32), Aval::of({16, 32}, DType::kFloat32));
  const Lowered lowered(program, {arg({8, 16}, mesh, "P('x', 'y')"), arg({16, 32}, mesh, "P('y', None)")},
                        LoweringOptions{}, kProfile);
  const ProgramExplanation e = explain_compiled(lowered.compile(), "matmul");
  CHECK(e.hardware.name == "TPU v5e");
  CHECK(e.device_count == 8);
  const auto reduce =
      std::find_if(e.rows.begin(), e.rows.end(), [](const ExplainRow& r) { return r.kind == "all-reduce"; });
  REQUIRE(reduce != e.rows.end());
  CHECK(reduce->axes == "y");
  CHECK(reduce->bytes_per_device == 768);
  CHECK(reduce->op == "dot_general");
  CHECK(reduce->reason ==
        "dot_general contracts a dim sharded over 'y': each device holds a partial result, summed across the group");
  CHECK(reduce->groups.rfind("2 groups of 4: ", 0) == 0);
  CHECK(reduce->seconds > 0);
  const auto dot = std::find_if(e.rows.begin(), e.rows.end(),
                                [](const ExplainRow& r) { return r.op == "dot_general" && r.kind == "equation"; });
  REQUIRE(dot != e.rows.end());
  CHECK(dot->sharding == "P('x', None)");
  CHECK(dot->axes == "x");
  CHECK(dot->local_type == "f32[4,32]");
  CHECK(dot->flops == doctest::Approx(2.0 * 4 * 4 * 32));
  // Totals: equations and collectives one after another, and the overlap bound.
  double sum = 0;
  for (const ExplainRow& row : e.rows) sum += row.seconds;
  CHECK(e.serial_seconds == doctest::Approx(sum));
  CHECK(e.overlapped_seconds <= e.serial_seconds);
  CHECK(e.memory_fit() == "fits");

  const std::string csv = render_explanations({e}, ExplainFormat::kCsv);
  CHECK(csv.rfind("program,row,kind,op,axes,bytes_per_device,flops,est_time_s,bound,reason,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == static_cast<std::ptrdiff_t>(e.rows.size() + 1));
  CHECK(csv.find(",all-reduce,dot_general,y,768,") != std::string::npos);
  const std::string text = render_explanations({e}, ExplainFormat::kText);
  CHECK(text.rfind("# shardscope explain: estimates, not JAX output\nprogram matmul: 8 x TPU v5e, lowered only\n", 0) ==
        0);
  CHECK(text.find("memory per device: peak ") != std::string::npos);
  const std::string md = render_explanations({e}, ExplainFormat::kMarkdown);
  CHECK(md.find("| # | kind | op |") != std::string::npos);
}

TEST_CASE("a program whose arrays outgrow HBM does not fit, and formats are checked") {
  // Two replicated f32[65536,65536] operands are 17.2 GB each on every device: over a v5e's 16 GB.
  const Mesh mesh = v5e_mesh();
  const JaxprPtr program =
      matmul_program(Aval::of({65536, 65536}, DType::kFloat32), Aval::of({65536, 65536}, DType::kFloat32));
  const Lowered lowered(program, {arg({65536, 65536}, mesh, "P()"), arg({65536, 65536}, mesh, "P()")},
                        LoweringOptions{}, kProfile);
  const ProgramExplanation e = explain_compiled(lowered.compile(), "huge");
  CHECK(e.memory_fit() == "does not fit");
  CHECK(e.peak_memory_bytes > static_cast<int64_t>(16e9));
  CHECK(render_explanations({e}, ExplainFormat::kText).find("of 16 GB HBM: does not fit") != std::string::npos);
  // Priced on another device kind instead of the mesh's own.
  const ProgramExplanation on_v5p = explain_compiled(lowered.compile(), "huge", &hardware_for_kind("TPU v5"));
  CHECK(on_v5p.hardware.name == "TPU v5p");
  CHECK(on_v5p.memory_fit() == "fits");
  CHECK(parse_explain_format("md") == ExplainFormat::kMarkdown);
  CHECK_THROWS_AS((void)parse_explain_format("xlsx"), Error);
  CHECK(format_bytes(1.5e9) == "1.5 GB");
}
