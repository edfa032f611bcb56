// explain --compare: another argument layout re-runs propagation (collectives appear or vanish), another preset
// re-prices the same plan on its devices, and the comparison names quantities, deltas, differing collectives and
// the winner.
#include "cost/explain_compare.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.h"
#include "core/cost/cost_test_programs.h"
#include "cost/program_cost.h"
#include "sharding/partition_spec.h"
#include "trace/builder.h"

using namespace shardscope;
using cost_test::arg;
using cost_test::int_list;
using cost_test::kProfile;
using cost_test::matmul_program;

namespace {

Mesh v5e_mesh() { return cost_test::mesh_2x4("tpu-v5e-8"); }

int count_kind(const ProgramExplanation& e, const std::string& kind) {
  return static_cast<int>(
      std::count_if(e.rows.begin(), e.rows.end(), [&](const ExplainRow& r) { return r.kind == kind; }));
}

}  // namespace

TEST_CASE("NAME=SPEC parses, names resolve by name or index, and mistakes are named") {
  const ArgumentSpec spec = parse_argument_spec(" w = P('y', None)");
  CHECK(spec.argument == "w");
  CHECK(spec.spec.repr(kProfile) == "P('y', None)");
  CHECK_THROWS_AS((void)parse_argument_spec("P('y')"), Error);
  CHECK(argument_position("w", 2, {"x", "w"}) == 1);
  CHECK(argument_position("args[1]", 2, {}) == 1);
  CHECK(argument_position("0", 2, {}) == 0);
  CHECK_THROWS_WITH_AS((void)argument_position("v", 2, {"x"}),
                       "the program has no argument 'v' (its arguments: x, args[1])", Error);
}

TEST_CASE("another layout for one argument re-runs propagation: the all-reduce disappears and the verdict says why") {
  // Base: w sharded over 'y' on its contracting dim, so every device holds a partial product: an all-reduce over
  // 'y'. Other: w replicated and x sharded over 'x' only: no collective at all.
  const Mesh mesh = v5e_mesh();
  const JaxprPtr program =
      matmul_program(Aval::of({8, 4096}, DType::kFloat32), Aval::of({4096, 4096}, DType::kFloat32));
  std::vector<ShapeDtypeStruct> args{arg({8, 4096}, mesh, "P('x', 'y')"), arg({4096, 4096}, mesh, "P('y', None)")};
  LoweringOptions options;
  options.arg_names = {"x", "w"};
  ExplainComparison c;
  c.base = explain_compiled(Lowered(program, args, options, kProfile).compile(), "matmul");
  apply_argument_specs(args, options, {parse_argument_spec("w=P()"), parse_argument_spec("x=P('x', None)")}, kProfile);
  CHECK(std::get<NamedSharding>(*args[1].sharding).spec.repr(kProfile) == "P()");
  c.other = explain_compiled(Lowered(program, args, options, kProfile).compile(), "matmul");
  c.base_label = "as run";
  c.other_label = "w=P()";
  CHECK(count_kind(c.base, "all-reduce") == 1);
  CHECK(count_kind(c.other, "all-reduce") == 0);

  const std::vector<CollectiveDifference> differences = collective_differences(c);
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].kind == "all-reduce");
  CHECK(differences[0].axes == "y");
  CHECK(differences[0].base_count == 1);
  CHECK(differences[0].other_count == 0);

  const std::vector<ComparedQuantity> q = compared_quantities(c);
  const auto communication =
      std::find_if(q.begin(), q.end(), [](const ComparedQuantity& x) { return x.quantity == "communication"; });
  REQUIRE(communication != q.end());
  CHECK(communication->other == "0");
  CHECK(communication->delta.rfind("-", 0) == 0);
  CHECK(communication->delta.find("(-100%)") != std::string::npos);
  // Replicating w costs memory: 4x the weight bytes per device.
  CHECK(c.other.peak_memory_bytes > c.base.peak_memory_bytes);

  const std::string verdict = comparison_verdict(c);
  INFO(verdict);
  // Each device then reads the whole 64 MiB weight instead of a quarter: HBM traffic outweighs the all-reduce.
  CHECK(verdict.rfind("as run wins: ", 0) == 0);
  CHECK(verdict.find("mainly memory traffic") != std::string::npos);

  const std::string csv = render_comparisons({c}, ExplainFormat::kCsv);
  CHECK(csv.rfind("program,quantity,base,other,delta\nmatmul,hardware,8 x TPU v5e,8 x TPU v5e,same\n", 0) == 0);
  CHECK(csv.find("matmul,\"collective all-reduce over 'y' for dot_general") != std::string::npos);
  CHECK(csv.find("matmul,verdict,,,") != std::string::npos);
  const std::string text = render_comparisons({c}, ExplainFormat::kText);
  CHECK(text.find("program matmul: as run vs w=P()\n") != std::string::npos);
  CHECK(text.find("collectives that differ:") != std::string::npos);
  CHECK(render_comparisons({c}, ExplainFormat::kMarkdown).find("| serial step | ") != std::string::npos);
}

TEST_CASE("another preset re-prices the same plan on its devices: same collectives, other figures") {
  const Mesh mesh = v5e_mesh();
  const JaxprPtr program =
      matmul_program(Aval::of({8, 4096}, DType::kFloat32), Aval::of({4096, 4096}, DType::kFloat32));
  const Compiled compiled =
      Lowered(program, {arg({8, 4096}, mesh, "P('x', 'y')"), arg({4096, 4096}, mesh, "P('y', None)")}, {}, kProfile)
          .compile();
  ExplainComparison c;
  c.base = explain_compiled(compiled, "matmul");
  const Mesh on_v5p = mesh_on_preset(mesh, make_device_preset("tpu-v5p-16"), kProfile);
  CHECK(on_v5p.axis_names() == mesh.axis_names());
  c.other = explain_compiled(with_mesh(compiled, on_v5p, kProfile), "matmul");
  CHECK(c.base.hardware.name == "TPU v5e");
  CHECK(c.other.hardware.name == "TPU v5p");
  CHECK(count_kind(c.other, "all-reduce") == 1);
  // The plan is the same: bytes match row for row; the times follow the new figures.
  REQUIRE(c.base.rows.size() == c.other.rows.size());
  for (std::size_t r = 0; r < c.base.rows.size(); ++r) {
    CHECK(c.base.rows[r].bytes_per_device == c.other.rows[r].bytes_per_device);
  }
  CHECK(c.other.compute_seconds + c.other.memory_seconds < c.base.compute_seconds + c.base.memory_seconds);
  c.base_label = "tpu-v5e-8";
  c.other_label = "tpu-v5p-16";
  CHECK(comparison_verdict(c).rfind("tpu-v5p-16 wins: ", 0) == 0);
  CHECK_THROWS_AS((void)mesh_on_preset(mesh, make_device_preset("tpu-v5e-4"), kProfile), Error);
}
