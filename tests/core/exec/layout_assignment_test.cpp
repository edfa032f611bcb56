// The Layout.AUTO rule: a parameter only sliced down to one dimension gets that dimension most minor.
#include "exec/layout_assignment.h"

#include <doctest/doctest.h>

#include "api/lax.h"
#include "api/transforms.h"

namespace shardscope {
namespace {

using Layouts = std::vector<std::vector<int64_t>>;

Layouts layouts_of(const api::Function& fun, const std::vector<Aval>& avals) {
  return auto_parameter_layouts(*api::trace_function(fun, avals, "f").jaxpr);
}

}  // namespace

TEST_CASE("Layout.AUTO: a row read keeps row-major, a column read makes the column dimension minor") {
  const std::vector<Aval> two = {Aval::of({512, 1024}, DType::kFloat32), Aval::of({512, 1024}, DType::kFloat32)};
  // apply(x, y) = x[0, :], y[:, 0], the layout guide's example.
  const auto apply = [](const std::vector<api::Value>& args) {
    return std::vector<api::Value>{api::lax::slice(args[0], {0, 0}, {1, 1024}),
                                   api::lax::slice(args[1], {0, 0}, {512, 1})};
  };
  CHECK(layouts_of(apply, two) == Layouts{{0, 1}, {1, 0}});
  // Used twice, or by anything but a slice: the default.
  const auto twice = [](const std::vector<api::Value>& args) {
    return std::vector<api::Value>{api::lax::slice(args[0], {0, 0}, {512, 1}), api::lax::add(args[0], args[1])};
  };
  CHECK(layouts_of(twice, two) == Layouts{{0, 1}, {0, 1}});
  // A slice keeping two dimensions, or none, says nothing about which is minor.
  const auto block = [](const std::vector<api::Value>& args) {
    return std::vector<api::Value>{api::lax::slice(args[0], {0, 0}, {256, 512}),
                                   api::lax::slice(args[1], {3, 4}, {4, 5})};
  };
  CHECK(layouts_of(block, two) == Layouts{{0, 1}, {0, 1}});
  // Rank 3: the kept middle dimension goes last.
  const auto middle = [](const std::vector<api::Value>& args) {
    return std::vector<api::Value>{api::lax::slice(args[0], {0, 0, 0}, {1, 8, 1})};
  };
  CHECK(layouts_of(middle, {Aval::of({4, 8, 2}, DType::kFloat32)}) == Layouts{{0, 2, 1}});
}

}  // namespace shardscope
