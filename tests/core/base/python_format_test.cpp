// Python-style reprs used by every printed object.
#include "base/python_format.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "base/text_parse.h"

using namespace shardscope;

TEST_CASE("string reprs pick quotes like Python") {
  CHECK(python_string_repr("x") == "'x'");
  CHECK(python_string_repr("it's") == "\"it's\"");
  CHECK(python_string_repr("a'b\"c") == "'a\\'b\"c'");
}

TEST_CASE("tuples keep the one-element comma") {
  CHECK(python_int_tuple({}) == "()");
  CHECK(python_int_tuple({5}) == "(5,)");
  CHECK(python_int_tuple({2, 4}) == "(2, 4)");
  CHECK(python_list({"a", "b"}) == "[a, b]");
}

TEST_CASE("IPython breaks long lists one item per line") {
  CHECK(ipython_pretty_list({"CpuDevice(id=0)", "CpuDevice(id=1)"}) == "[CpuDevice(id=0), CpuDevice(id=1)]");
  std::vector<std::string> many(6, "CpuDevice(id=10)");
  const std::string pretty = ipython_pretty_list(many);
  CHECK(pretty.starts_with("[CpuDevice(id=10),\n CpuDevice(id=10),\n"));
  CHECK(pretty.ends_with("CpuDevice(id=10)]"));
}

TEST_CASE("command-line lists and axis sizes parse, and bad ones name the value") {
  CHECK(parse_int_list("8,8", "--shape") == std::vector<int64_t>{8, 8});
  CHECK(parse_int_list("(5,)", "--shape") == std::vector<int64_t>{5});
  CHECK(parse_int_list("4x2", "--shape") == std::vector<int64_t>{4, 2});
  CHECK(parse_int_list("", "--shape").empty());
  CHECK_THROWS_WITH_AS((void)parse_int_list("8,a", "--shape"), doctest::Contains("Invalid --shape '8,a'"), Error);
  const auto axes = parse_axis_sizes("x=2, y=4", "--mesh");
  REQUIRE(axes.size() == 2);
  CHECK(axes[1] == std::pair<std::string, int64_t>{"y", 4});
  CHECK_THROWS_WITH_AS((void)parse_axis_sizes("x=0", "--mesh"),
                       doctest::Contains("axis 'x' needs a positive integer size"), Error);
  CHECK_THROWS_WITH_AS((void)parse_axis_sizes("x2", "--mesh"), doctest::Contains("'x2'"), Error);
  CHECK(parse_number("1.5", "--scale") == doctest::Approx(1.5));
  CHECK_THROWS_AS((void)parse_number("big", "--scale"), Error);
}
