// The command line end to end: every oracle case through `shardscope viz`, devices, errors, scenes.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/python_format.h"
#include "support/oracle_cases.h"

using namespace shardscope;

namespace {

// A scratch folder of this process's own: two test runs on one machine (a CI run beside a README check) must not
// remove each other's files.
std::filesystem::path unique_temp_dir(const std::string& stem) {
  return std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()));
}

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

CliResult run_cli(const std::vector<std::string>& args, const std::string& working_dir = "") {
  const std::filesystem::path err_path =
      std::filesystem::temp_directory_path() / ("shardscope_cli_err_" + std::to_string(::getpid()));
  std::string command = working_dir.empty() ? "" : "cd " + shell_quote(working_dir) + " && ";
  command += shell_quote(SHARDSCOPE_BINARY);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " 2>" + shell_quote(err_path.string());
  CliResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_file(err_path);
  std::stringstream err;
  err << err_file.rdbuf();
  result.err = err.str();
  std::filesystem::remove(err_path);
  return result;
}

std::string preset_for(const nlohmann::json& test_case) {
  const std::vector<int64_t> ids = shardscope::testing::flat_device_ids(test_case["mesh"]["device_ids"]);
  const int64_t highest = *std::max_element(ids.begin(), ids.end());
  if (test_case["platform"] == "CPU") return "cpu:" + std::to_string(highest + 1);
  return highest < 8 ? "tpu-v3-8" : "tpu-v5e-16";
}

std::vector<std::string> viz_args(const nlohmann::json& test_case) {
  std::vector<std::string> args = {"viz", "--devices", preset_for(test_case)};
  std::string shape;
  for (const auto& size : test_case["array_shape"])
    shape += (shape.empty() ? "" : ",") + std::to_string(size.get<int64_t>());
  args.insert(args.end(), {"--shape", shape});
  const auto& mesh = test_case["mesh"];
  const std::vector<int64_t> ids = shardscope::testing::flat_device_ids(mesh["device_ids"]);
  if (test_case["spec"].is_null()) {
    args.insert(args.end(), {"--single-device", std::to_string(ids[0])});
  } else {
    std::string axes;
    for (std::size_t i = 0; i < mesh["axis_names"].size(); ++i) {
      axes += (i == 0 ? "" : ",") + mesh["axis_names"][i].get<std::string>() + "=" +
              std::to_string(mesh["shape"][i].get<int64_t>());
    }
    std::string id_list;
    for (const int64_t id : ids) id_list += (id_list.empty() ? "" : ",") + std::to_string(id);
    args.insert(args.end(),
                {"--mesh", axes, "--device-ids", id_list, "--spec", shardscope::testing::case_spec_text(test_case)});
  }
  const auto& options = test_case["options"];
  if (options.contains("scale")) args.insert(args.end(), {"--scale", std::to_string(options["scale"].get<double>())});
  if (test_case["render_mode"] == "color") args.push_back("--color");
  return args;
}

}  // namespace

TEST_CASE("shardscope viz reproduces all 47 oracle cases on stdout, nothing else") {
  for (const auto& test_case : shardscope::testing::visualize_cases_document()["cases"]) {
    CAPTURE(test_case["id"].get<std::string>());
    const std::vector<std::string> args = viz_args(test_case);
    CAPTURE(join(args, " "));
    const CliResult result = run_cli(args);
    CHECK(result.status == 0);
    CHECK(result.err.empty());
    const bool color = test_case["render_mode"] == "color";
    CHECK(result.out == test_case[color ? "expected_ansi" : "expected"].get<std::string>());
    if (test_case["render_mode"] == "no_color_highlight") {
      std::vector<std::string> highlighted = args;
      highlighted.push_back("--highlight");
      CHECK(run_cli(highlighted).out == test_case["expected_ansi"].get<std::string>());
    }
  }
}

TEST_CASE("make_mesh order is the default, bare spec entries are accepted") {
  const CliResult result = run_cli({"viz", "--shape", "8192,8192", "--mesh", "a=4,b=2", "--spec", "'a', 'b'"});
  CHECK(result.status == 0);
  const auto& cases = shardscope::testing::visualize_cases_document()["cases"];
  const auto it =
      std::find_if(cases.begin(), cases.end(), [](const auto& c) { return c["id"] == "doc_tpu_v3_4x2_P_a_b"; });
  REQUIRE(it != cases.end());
  CHECK(result.out == (*it)["expected"].get<std::string>());
}

TEST_CASE("devices prints jax.devices() for the preset") {
  const CliResult tpu = run_cli({"devices"});
  CHECK(tpu.status == 0);
  CHECK(tpu.out.starts_with("[TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0),\n TpuDevice(id=1,"));
  CHECK(run_cli({"devices", "--devices", "cpu:2"}).out == "[CpuDevice(id=0), CpuDevice(id=1)]\n");
}

TEST_CASE("bad input exits non-zero with JAX's message or one naming the value") {
  const CliResult uneven = run_cli(
      {"viz", "--devices", "cpu:2", "--mesh", "x=2", "--axis-types", "auto", "--spec", "P('x')", "--shape", "5"});
  CHECK(uneven.status == 1);
  CHECK(uneven.out.empty());
  CHECK(uneven.err ==
        "IndivisibleError: NamedSharding(mesh=Mesh('x': 2, axis_types=(Auto,)), spec=P('x',), memory_kind=device) "
        "implies that array axis 0 is partitioned 2 times, but the dimension size is 5 (full shape: (5,), "
        "per-dimension tiling factors: (2,) should evenly divide the shape)\n");
  const CliResult rank3 = run_cli({"viz", "--shape", "2,2,2"});
  CHECK(rank3.status == 1);
  CHECK(rank3.err == "ValueError: `visualize_sharding` only works for shapes with 1 and 2 dimensions.\n");
  CHECK(run_cli({"viz", "--shape", "8", "--devices", "tpu-v7-8"}).err.find("'tpu-v7-8'") != std::string::npos);
  CHECK(run_cli({"viz", "--shape", "8", "--mesh", "x=8", "--spec", "P('x'"}).err.find("Malformed PartitionSpec") !=
        std::string::npos);
  CHECK(run_cli({"viz", "--shape", "8", "--mesh", "x=8", "--spec", "P('q')"}).err ==
        "ValueError: Resource axis: q of P('q',) is not found in mesh: ('x',).\n");
  const CliResult too_many = run_cli({"viz", "--shape", "8", "--mesh", "x=16"});
  CHECK(too_many.err == "ValueError: Number of devices 8 must be >= the product of mesh_shape (16,)\n");
  CHECK(run_cli({"viz", "--shape", "8", "--bogus"}).status == 2);
  CHECK(run_cli({"viz"}).status == 2);
  CHECK(run_cli({"frobnicate"}).status == 2);
}

TEST_CASE("command-line values are finite and in range, or a usage error naming the flag and the value") {
  // Each of these hung, allocated gigabytes or printed a C++ library's message before (issue 17).
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--scale", "nan"}, "invalid --scale 'nan'"},
      {{"--scale", "inf"}, "invalid --scale 'inf'"},
      {{"--scale", "1e9"}, "invalid --scale '1e9'"},
      {{"--scale", "-1"}, "invalid --scale '-1'"},
      {{"--scale", "big"}, "invalid --scale 'big'"},
      {{"--max-width", "1e18"}, "invalid --max-width '1e18'"},
      {{"--min-width", "-5"}, "invalid --min-width '-5'"},
      {{"--min-width", "2.5"}, "invalid --min-width '2.5'"},
      {{"--mesh", "x=9223372036854775807,y=2"}, "invalid --mesh 'x=9223372036854775807,y=2'"},
      {{"--mesh", "x=4294967296,y=4294967296"}, "more elements than an int64 can count"},
      {{"--mesh", "x=99999999999999999999"}, "invalid --mesh 'x=99999999999999999999'"},
      {{"--device-ids", "0,-1"}, "invalid --device-ids '0,-1'"},
      {{"--single-device", "1e30"}, "invalid --single-device '1e30'"},
  };
  for (const auto& [extra, fragment] : cases) {
    std::vector<std::string> args = {"viz", "--shape", "8,8"};
    args.insert(args.end(), extra.begin(), extra.end());
    CAPTURE(fragment);
    const CliResult result = run_cli(args);
    CHECK(result.status == 2);
    CHECK(result.out.empty());
    CHECK(result.err.starts_with("shardscope: "));
    CHECK(result.err.find(fragment) != std::string::npos);
  }
  const CliResult shape = run_cli({"viz", "--shape", "4294967296,4294967296"});
  CHECK(shape.status == 2);
  CHECK(shape.err.find("invalid --shape '4294967296,4294967296'") != std::string::npos);
  // The window's numeric options are checked before any window opens (no display needed to see them refused).
  for (const std::vector<std::string>& gui : std::vector<std::vector<std::string>>{
           {"--png-scale", "inf"}, {"--timeout", "1e300"}, {"--interrupt-after", "nan"}, {"--size", "100000x100000"}}) {
    std::vector<std::string> args = {"gui"};
    args.insert(args.end(), gui.begin(), gui.end());
    const CliResult result = run_cli(args);
    CHECK(result.status == 2);
    CHECK(result.err.find(gui[1]) != std::string::npos);
  }
  // The bounds themselves are accepted.
  CHECK(run_cli({"viz", "--shape", "8", "--scale", "100", "--max-width", "10000", "--min-width", "0"}).status == 0);
}

TEST_CASE("beyond-JAX options are explicit and marked") {
  const CliResult rank3 = run_cli({"viz", "--devices", "cpu:8", "--mesh", "x=2,y=4", "--spec", "P('x', None, 'y')",
                                   "--shape", "4,3,8", "--small-multiples"});
  CHECK(rank3.status == 0);
  CHECK(rank3.out.starts_with("[0:2, :, :]\n┌"));
  CHECK(rank3.out.find("shardscope: rank-3 array") != std::string::npos);
  const CliResult uneven =
      run_cli({"viz", "--devices", "cpu:4", "--mesh", "x=4", "--spec", "P('x')", "--shape", "10", "--uneven"});
  CHECK(uneven.status == 0);
  CHECK(uneven.out.find("CPU 3*") != std::string::npos);
}

TEST_CASE("the default scene prints grids and writes one SVG per step") {
  const std::filesystem::path dir = unique_temp_dir("shardscope_scene_test");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const CliResult result = run_cli({"scene", "--out", (dir / "diagrams").string(), "--no-color"});
  CHECK(result.status == 0);
  CHECK(result.out.find("TpuDevice(id=7, process_index=0, coords=(1,1,0), core_on_chip=1)]") != std::string::npos);
  CHECK(result.out.find("│  TPU 0,1,2,3,4,5,6,7  │") != std::string::npos);
  std::size_t svgs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "diagrams")) {
    if (entry.path().extension() == ".svg" && std::filesystem::file_size(entry.path()) > 200) ++svgs;
  }
  CHECK(svgs == 8);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a broken scene step is reported and the rest still runs") {
  const std::filesystem::path dir = unique_temp_dir("shardscope_broken_scene");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "scene.json") << R"json({"devices": "cpu:4", "steps": [
    {"title": "bad", "mesh": "x=4", "spec": "P('y')", "shape": [8]},
    {"title": "good", "mesh": "x=4", "spec": "P('x')", "shape": [8]}]})json";
  const CliResult result =
      run_cli({"scene", "--scene", (dir / "scene.json").string(), "--out", (dir / "out").string(), "--no-color"});
  CHECK(result.status == 1);
  CHECK(result.out.find("ValueError: Resource axis: y of P('y',) is not found in mesh: ('x',).") != std::string::npos);
  CHECK(result.out.find("│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │") != std::string::npos);
  std::ofstream(dir / "broken.json") << "{not json";
  const CliResult broken =
      run_cli({"scene", "--scene", (dir / "broken.json").string(), "--out", (dir / "out").string()});
  CHECK(broken.status == 1);
  CHECK(broken.err.find("is not valid JSON") != std::string::npos);
  std::filesystem::remove_all(dir);
}
