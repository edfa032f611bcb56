// Reading each notation back: every layout on 1-, 2- and 3-axis meshes formatted by sharding/notation.h (and
// jax.typeof's printer) parses to the spec it came from; malformed and mismatched texts fail naming what is wrong.
#include "sharding/notation_parse.h"

#include <doctest/doctest.h>

#include <functional>

#include "base/error.h"
#include "device/presets.h"
#include "explicit/sharding_rules.h"
#include "ir/aval.h"
#include "sharding/notation.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh cpu_mesh(std::vector<int64_t> shape, std::vector<std::string> names) {
  const std::size_t rank = shape.size();
  return make_mesh(shape, names, make_device_preset("cpu:8").devices, kProfile,
                   std::vector<AxisType>(rank, AxisType::kAuto));
}

using DimAxes = std::vector<std::vector<std::string>>;

// Every way to give `rank` dims ordered, disjoint lists of the mesh's axes (each axis used at most once).
std::vector<DimAxes> all_layouts(const Mesh& mesh, std::size_t rank) {
  std::vector<DimAxes> out;
  DimAxes dims(rank);
  std::vector<bool> used(mesh.axis_names().size(), false);
  std::function<void(std::size_t)> fill = [&](std::size_t d) {
    if (d == rank) {
      out.push_back(dims);
      return;
    }
    fill(d + 1);  // this dim takes no more axes
    for (std::size_t a = 0; a < used.size(); ++a) {
      if (used[a]) continue;
      used[a] = true;
      dims[d].push_back(mesh.axis_names()[a]);
      fill(d);
      dims[d].pop_back();
      used[a] = false;
    }
  };
  fill(0);
  return out;
}

DimAxes dims_of(const PartitionSpec& spec, std::size_t rank) { return spec_dim_axes(spec, rank); }

PartitionSpec spec_of(const DimAxes& dims) {
  std::vector<SpecEntry> entries;
  for (const auto& axes : dims) entries.push_back(SpecEntry::of_axes(axes));
  return PartitionSpec(std::move(entries));
}

// The layout without size-1 axes: HLO's device assignment cannot tell whether they are named.
DimAxes without_unit_axes(const Mesh& mesh, DimAxes dims) {
  for (auto& axes : dims) std::erase_if(axes, [&](const std::string& a) { return mesh.axis_size(a) == 1; });
  return dims;
}

std::string failure(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const Error& error) {
    CHECK(error.python_type() == "ValueError");
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("every layout round-trips through each notation on 1-, 2- and 3-axis meshes") {
  const std::vector<Mesh> meshes = {cpu_mesh({8}, {"x"}),
                                    cpu_mesh({2, 4}, {"x", "y"}),
                                    cpu_mesh({4, 2}, {"data", "model"}),
                                    cpu_mesh({2, 4}, {"x", "model"}),
                                    cpu_mesh({2, 2, 2}, {"x", "y", "z"}),
                                    cpu_mesh({1, 4, 2}, {"pod", "data", "model"})};
  const JaxProfile old_profile(JaxVersion{0, 4, 1});
  std::size_t checked = 0;
  for (const Mesh& mesh : meshes) {
    for (std::size_t rank = 1; rank <= 3; ++rank) {
      const Shape shape(rank, 8);
      for (const DimAxes& dims : all_layouts(mesh, rank)) {
        const PartitionSpec spec = spec_of(dims);
        INFO(spec.repr(kProfile), " on ", mesh.str(kProfile));
        CHECK(dims_of(parse_notation(NotationKind::kSpec, spec.repr(kProfile), mesh, shape), rank) == dims);
        CHECK(dims_of(parse_notation(NotationKind::kSpec, spec.repr(old_profile), mesh, shape), rank) == dims);
        Aval aval = Aval::of(shape, DType::kFloat32);
        aval.dim_axes = dims;
        CHECK(dims_of(parse_typeof_notation(typeof_str(aval, kProfile), mesh, shape), rank) == dims);
        CHECK(dims_of(parse_typeof_notation(typeof_str(aval, old_profile), mesh, shape), rank) == dims);
        CHECK(dims_of(parse_typeof_notation(aval.str_short(true), mesh, shape), rank) == dims);
        CHECK(dims_of(parse_book_notation(book_notation(dims), mesh, rank), rank) == dims);
        CHECK(dims_of(parse_shardy_notation(shardy_notation(dims), mesh, rank), rank) == dims);
        for (const bool iota : {true, false}) {
          const std::string hlo = hlo_sharding_notation(mesh, dims, iota);
          INFO(hlo);
          CHECK(dims_of(parse_hlo_sharding(hlo, mesh, rank), rank) == without_unit_axes(mesh, dims));
        }
        ++checked;
      }
    }
  }
  CHECK(checked > 400);
}

TEST_CASE("the scaling book's subscripts: one-letter axes, runs of letters, long names, any case") {
  const Mesh mesh = cpu_mesh({2, 2, 2}, {"x", "y", "z"});
  CHECK(dims_of(parse_book_notation("A[I_X, J_Y]", mesh, 2), 2) == DimAxes{{"x"}, {"y"}});
  CHECK(dims_of(parse_book_notation("A[I_{XY}, J]", mesh, 2), 2) == DimAxes{{"x", "y"}, {}});
  CHECK(dims_of(parse_book_notation("W[I_{z,x}, J_y]", mesh, 2), 2) == DimAxes{{"z", "x"}, {"y"}});
  CHECK(dims_of(parse_book_notation("In[B_ZY, D]", mesh, 2), 2) == DimAxes{{"z", "y"}, {}});
  const PartitionSpec unreduced = parse_book_notation("A[I_X, J]{U_Y}", mesh, 2);
  CHECK(unreduced.unreduced() == std::vector<std::string>{"y"});
  const Mesh named = cpu_mesh({4, 2}, {"data", "model"});
  CHECK(dims_of(parse_book_notation("A[I_{data}, J_{model}]", named, 2), 2) == DimAxes{{"data"}, {"model"}});
  CHECK(dims_of(parse_book_notation("A[I_{data,model}, J]", named, 2), 2) == DimAxes{{"data", "model"}, {}});
  CHECK(dims_of(parse_book_notation("A[I_DATA, J]", named, 2), 2) == DimAxes{{"data"}, {}});
}

TEST_CASE("Shardy's open dims, priorities and replicated axes") {
  const Mesh mesh = cpu_mesh({2, 4}, {"x", "y"});
  const PartitionSpec open = parse_shardy_notation("#sdy.sharding<@mesh, [{?}, {\"y\"}p1]>", mesh, 2);
  CHECK(open.entries()[0].kind == SpecEntry::Kind::kUnconstrained);
  CHECK(open.entries()[1].axes == std::vector<std::string>{"y"});
  CHECK(dims_of(parse_shardy_notation("<@m, [{\"x\", ?}, {}], replicated={\"y\"}>", mesh, 2), 2) == DimAxes{{"x"}, {}});
  CHECK(parse_shardy_notation("#sdy.sharding<@mesh, [{}, {}], unreduced={\"x\"}>", mesh, 2).unreduced() ==
        std::vector<std::string>{"x"});
}

TEST_CASE("HloSharding in forms XLA prints other than the formatter's: search finds the spec") {
  const Mesh mesh = cpu_mesh({2, 4}, {"x", "y"});
  // A non-canonical iota (an unmerged reshape) and the replicated group listed in another order.
  CHECK(dims_of(parse_hlo_sharding("{devices=[2,4]<=[2,4]}", mesh, 2), 2) == DimAxes{{"x"}, {"y"}});
  CHECK(dims_of(parse_hlo_sharding("{devices=[2,1,4]3,2,1,0,7,6,5,4 last_tile_dim_replicate}", mesh, 2), 2) ==
        DimAxes{{"x"}, {}});
  CHECK(dims_of(parse_hlo_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={replicated}}", mesh, 2), 2) ==
        DimAxes{{}, {"y"}});
  CHECK(dims_of(parse_hlo_sharding("{replicated}", mesh, 3), 3) == DimAxes{{}, {}, {}});
  CHECK(dims_of(parse_hlo_sharding("sharding={devices=[8,1]<=[8]}", mesh, 2), 2) == DimAxes{{"x", "y"}, {}});
}

TEST_CASE("the HloSharding search stays quick on a mesh of many axes") {
  const Mesh mesh =
      make_mesh({2, 2, 2, 2, 2, 2, 2, 2}, {"a", "b", "c", "d", "e", "f", "g", "h"},
                make_device_preset("cpu:256").devices, kProfile, std::vector<AxisType>(8, AxisType::kAuto));
  const DimAxes dims = {{"h", "c", "f"}, {"a", "g", "d", "b"}};
  for (const bool iota : {true, false}) {
    CHECK(dims_of(parse_hlo_sharding(hlo_sharding_notation(mesh, dims, iota), mesh, 2), 2) == dims);
  }
}

TEST_CASE("malformed and mismatched texts fail naming the notation, the text and the fault") {
  const Mesh mesh = cpu_mesh({2, 4}, {"x", "y"});
  const Shape shape = {8, 8};
  const auto fails = [&](NotationKind kind, const std::string& text) {
    return failure([&] { (void)parse_notation(kind, text, mesh, shape); });
  };
  CHECK(fails(NotationKind::kHlo, "") == "HloSharding '': the text is empty");
  CHECK(fails(NotationKind::kShardy, "   ") == "Shardy sharding '   ': the text is empty");
  CHECK(fails(NotationKind::kBook, "") == "scaling-book notation '': the text is empty");
  CHECK(fails(NotationKind::kTypeof, "") == "jax.typeof '': the text is empty");
  // Unbalanced braces and brackets.
  CHECK(fails(NotationKind::kShardy, "#sdy.sharding<@mesh, [{\"x\"}, {\"y\"]>") ==
        "Shardy sharding '#sdy.sharding<@mesh, [{\"x\"}, {\"y\"]>': expected '}' at column 34");
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]<=[8]") ==
        "HloSharding '{devices=[2,4]<=[8]': expected '}' but the text ended");
  CHECK(fails(NotationKind::kBook, "A[I_{X, J]") == "scaling-book notation 'A[I_{X, J]': '}' missing after column 5");
  CHECK(fails(NotationKind::kTypeof, "float32[8@x,8") == "jax.typeof 'float32[8@x,8': expected ']' but the text ended");
  // Unknown and repeated axes.
  CHECK(fails(NotationKind::kShardy, "#sdy.sharding<@mesh, [{\"w\"}, {}]>") ==
        "Shardy sharding '#sdy.sharding<@mesh, [{\"w\"}, {}]>': unknown mesh axis 'w'; the mesh's axes are "
        "('x'=2, 'y'=4)");
  CHECK(fails(NotationKind::kBook, "A[I_W, J]").find("unknown mesh axis 'W'") != std::string::npos);
  CHECK(fails(NotationKind::kTypeof, "float32[8@z,8]").find("unknown mesh axis 'z'") != std::string::npos);
  CHECK(fails(NotationKind::kBook, "A[I_X, J_X]") ==
        "scaling-book notation 'A[I_X, J_X]': mesh axis 'x' is used twice");
  // Wrong rank or shape.
  CHECK(fails(NotationKind::kShardy, "#sdy.sharding<@mesh, [{\"x\"}]>").ends_with(": 1 dim for an array of rank 2"));
  CHECK(fails(NotationKind::kBook, "A[I, J, K]").ends_with(": 3 dims for an array of rank 2"));
  CHECK(fails(NotationKind::kHlo, "{devices=[8]<=[8]}").ends_with(": 1 tiled dim for an array of rank 2"));
  CHECK(fails(NotationKind::kTypeof, "float32[8@x,4]").ends_with(": the shape (8, 4) is not the array's shape (8, 8)"));
  CHECK(fails(NotationKind::kTypeof, "floaty[8@x,8]").ends_with(": unknown dtype 'floaty'"));
  // Device counts and assignments the mesh cannot give.
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]<=[7]}").ends_with(": the iota has 7 devices but the tiles need 8"));
  CHECK(fails(NotationKind::kHlo, "{devices=[2,2]<=[4]}").ends_with(": the tiles cover 4 devices but the mesh has 8"));
  CHECK(
      fails(NotationKind::kHlo, "{devices=[4,4]<=[16]}").ends_with(": the tiles need more devices than the mesh's 8"));
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]0,1,2,3,4,5,6}").ends_with(": 7 devices listed but the tiles need 8"));
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]0,1,2,3,4,5,6,9}")
            .ends_with(": device 9 is not in the mesh's 8 devices"));
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]0,1,2,3,4,5,6,6}").ends_with(": device 6 appears twice"));
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]<=[2,4]T(0,0)}")
            .ends_with(": the transpose is not a permutation of the iota's 2 dims"));
  CHECK(fails(NotationKind::kHlo, "{devices=[2,4]1,0,2,3,4,5,6,7}")
            .ends_with(": no PartitionSpec over the mesh's axes ('x'=2, 'y'=4) puts the same devices on each tile"));
  CHECK(fails(NotationKind::kHlo, "{maximal device=0}").find("maximal") != std::string::npos);
  // Huge numbers stop at the digit that overflows.
  CHECK(fails(NotationKind::kHlo, "{devices=[99999999999999999999999,4]<=[8]}")
            .ends_with(": the tile count 9999999999999999999... is too large"));
  CHECK(fails(NotationKind::kTypeof, "float32[99999999999999999999,8]").find("is too large") != std::string::npos);
  // The spec row reads what the Spec editor reads.
  CHECK(fails(NotationKind::kSpec, "P('x'").starts_with("Malformed PartitionSpec"));
  CHECK(parse_notation_kind("hlo") == NotationKind::kHlo);
  CHECK(!parse_notation_kind("xla"));
}
