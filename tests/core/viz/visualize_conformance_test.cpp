// Conformance: every recorded visualize_sharding output of real JAX, byte for byte, and its errors.
#include <doctest/doctest.h>

#include <limits>
#include <utility>

#include "base/error.h"
#include "support/oracle_cases.h"
#include "viz/text_renderer.h"

using namespace shardscope;
using shardscope::testing::case_options;
using shardscope::testing::case_sharding;
using shardscope::testing::visualize_cases_document;

TEST_CASE("all 47 recorded visualize_sharding outputs reproduce byte for byte") {
  const auto& cases = visualize_cases_document()["cases"];
  REQUIRE(cases.size() == 47);
  const JaxProfile profile;
  for (const auto& test_case : cases) {
    const std::string id = test_case["id"];
    CAPTURE(id);
    const Sharding sharding = case_sharding(test_case, profile);
    const VizOptions options = case_options(test_case);
    const VizLayout layout = compute_layout(test_case["array_shape"].get<Shape>(), sharding, options, profile);
    const std::string mode = test_case["render_mode"];
    if (mode == "color") {
      CHECK(render_text(layout) == test_case["expected_ansi"].get<std::string>());
    } else {
      CHECK(render_text(layout) == test_case["expected"].get<std::string>());
      if (mode == "no_color_highlight") {
        CHECK(render_text(layout, TextRenderOptions{true}) == test_case["expected_ansi"].get<std::string>());
      }
    }
  }
}

TEST_CASE("colour cases also match once their escape codes are stripped") {
  const JaxProfile profile;
  for (const auto& test_case : visualize_cases_document()["cases"]) {
    if (test_case["render_mode"] != "color") continue;
    CAPTURE(test_case["id"].get<std::string>());
    const VizLayout layout = compute_layout(test_case["array_shape"].get<Shape>(), case_sharding(test_case, profile),
                                            case_options(test_case), profile);
    std::string stripped;
    const std::string ansi = render_text(layout);
    for (std::size_t i = 0; i < ansi.size(); ++i) {
      if (ansi[i] == '\x1b') {
        i = ansi.find('m', i);
        continue;
      }
      stripped += ansi[i];
    }
    CHECK(stripped == test_case["expected"].get<std::string>());
  }
}

TEST_CASE("shape errors raise JAX's ValueError before anything is drawn") {
  const JaxProfile profile;
  const auto& document = visualize_cases_document();
  const auto& first = document["cases"][0];
  for (const auto& error_case : document["error_cases"]) {
    if (!error_case.contains("array_shape") || !error_case.contains("message")) continue;
    CAPTURE(error_case["id"].get<std::string>());
    const Shape shape = error_case["array_shape"].get<Shape>();
    try {
      (void)compute_layout(shape, case_sharding(first, profile), VizOptions{}, profile);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.python_type() == "ValueError");
      CHECK(std::string(e.what()) == error_case["message"].get<std::string>());
    }
  }
}

TEST_CASE("scale and widths: JAX's errors for NaN and infinity, a ValueError past the drawable limits") {
  const JaxProfile profile;
  const auto& first = visualize_cases_document()["cases"][0];
  const auto error_of = [&](VizOptions options) -> std::pair<std::string, std::string> {
    try {
      (void)compute_layout({8, 8}, case_sharding(first, profile), options, profile);
    } catch (const Error& e) {
      return {e.python_type(), e.what()};
    }
    return {"", ""};
  };
  VizOptions options;
  options.scale = std::numeric_limits<double>::quiet_NaN();
  CHECK(error_of(options) == std::pair<std::string, std::string>{"ValueError", "cannot convert float NaN to integer"});
  options.scale = std::numeric_limits<double>::infinity();
  CHECK(error_of(options) ==
        std::pair<std::string, std::string>{"OverflowError", "cannot convert float infinity to integer"});
  options.scale = 1e9;
  CHECK(error_of(options).second.find("scale=1e+09") != std::string::npos);
  options = VizOptions{};
  options.max_width = kMaxVizWidth + 1;
  CHECK(error_of(options).second.find("max_width=10001 is out of range") != std::string::npos);
  options.max_width = 80;
  options.min_width = -1;
  CHECK(error_of(options).first == "ValueError");
  options.min_width = 9;
  options.scale = kMaxVizScale;
  CHECK(error_of(options).first.empty());
}

TEST_CASE("uneven shards raise IndivisibleError with the recorded message") {
  const JaxProfile profile;
  const auto& example = visualize_cases_document()["error_cases"][3]["example"];
  Device cpu0;
  Device cpu1;
  cpu1.id = 1;
  Mesh mesh({cpu0, cpu1}, {2}, {"x"}, {AxisType::kAuto});
  const Sharding sharding = make_named_sharding(mesh, PartitionSpec({SpecEntry::of_axes({"x"})}), profile);
  try {
    (void)compute_layout(example["array_shape"].get<Shape>(), sharding, VizOptions{}, profile);
    FAIL("expected IndivisibleError");
  } catch (const Error& e) {
    CHECK(e.python_type() == "IndivisibleError");
    CHECK(std::string(e.what()) == example["message"].get<std::string>());
  }
  // JAX 0.9.1 - 0.10.x prefixed the same text with "Sharding ".
  const JaxProfile older(JaxVersion{0, 10, 0});
  const Sharding older_sharding = make_named_sharding(mesh, PartitionSpec({SpecEntry::of_axes({"x"})}), older);
  CHECK_THROWS_WITH((void)compute_layout({5}, older_sharding, VizOptions{}, older),
                    doctest::Contains("Sharding NamedSharding(mesh=Mesh('x': 2, axis_types=(Auto,)), spec=P('x',)"));
}
