// The shardscope kernel under Jupyter's own tools: kernelspecs Jupyter finds, notebooks executed by
// `jupyter nbconvert --execute` whose outputs match the oracle corpus's recordings (text/html included) and a seed's,
// interrupt, restart and shardscope.display through jupyter_client.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "app/jupyter_support.h"
#include "support/cell_replay.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace t = shardscope::testing;

const fs::path kNotebookDir = SHARDSCOPE_NOTEBOOKS_DIR;
const fs::path kSeedDir = SHARDSCOPE_SEEDS_DIR;
constexpr const char* kNbconvert = "/usr/bin/jupyter-nbconvert";
constexpr const char* kPython = "/usr/bin/python3";  // Debian's, with jupyter_client

std::string joined(const json& text) {
  if (text.is_string()) return text.get<std::string>();
  std::string out;
  for (const json& part : text) out += part.get<std::string>();
  return out;
}

json code_cell(const std::string& source) {
  return {{"cell_type", "code"},
          {"metadata", json::object()},
          {"source", source},
          {"outputs", json::array()},
          {"execution_count", nullptr}};
}

// Executes the cells with nbconvert on `kernel`; returns each cell's outputs.
std::vector<json> execute(const std::vector<std::string>& sources, const std::string& kernel,
                          std::map<std::string, std::string> environment, const fs::path& folder) {
  json notebook = {{"nbformat", 4},
                   {"nbformat_minor", 4},
                   {"metadata", {{"kernelspec", {{"name", kernel}, {"display_name", kernel}, {"language", "python"}}}}},
                   {"cells", json::array()}};
  for (const std::string& source : sources) notebook["cells"].push_back(code_cell(source));
  std::ofstream(folder / "in.ipynb") << notebook.dump();
  const t::CommandRun run =
      t::run_command({kNbconvert, "--to", "notebook", "--execute", "--ExecutePreprocessor.kernel_name=" + kernel,
                      "--ExecutePreprocessor.allow_errors=True", "--ExecutePreprocessor.timeout=600",
                      // nbclient waits 4 s by default for a cell's outputs to arrive after its reply, then goes on
                      // without them; a loaded machine (the test suite in parallel) can lag longer than that.
                      "--ExecutePreprocessor.iopub_timeout=120", "--ExecutePreprocessor.raise_on_iopub_timeout=True",
                      "--output", "out.ipynb", "in.ipynb"},
                     environment, folder);
  REQUIRE_MESSAGE(run.status == 0, run.output);
  std::ifstream file(folder / "out.ipynb");
  const json executed = json::parse(file);
  std::vector<json> outputs;
  for (const json& cell : executed.at("cells")) outputs.push_back(cell.at("outputs"));
  REQUIRE(outputs.size() == sources.size());
  return outputs;
}

// One line per output, as a reviewer reads them: consecutive stream writes joined (the kernel may flush a cell's
// prints in several messages), rich displays by their text/plain and, where `with_html`, their text/html.
std::vector<std::string> output_items(const json& outputs, bool recorded, const std::vector<bool>& with_html) {
  std::vector<std::string> items;
  std::string stream;
  const auto flush = [&] {
    if (!stream.empty()) items.push_back("stream: " + t::mask_addresses(stream));
    stream.clear();
  };
  for (const json& output : outputs) {
    const std::string type = output.at("output_type").get<std::string>();
    if (type == "stream") {
      stream += joined(output.at("text"));
      continue;
    }
    flush();
    if (type == "error") {
      items.push_back("error: " + output.value("ename", "") + ": " + output.value("evalue", ""));
      continue;
    }
    std::string plain;
    std::string html;
    if (recorded) {
      plain = output.value("text_plain", "");
      html = output.value("text_html", "");
    } else {
      const json& data = output.at("data");
      if (data.contains("text/plain")) plain = joined(data.at("text/plain"));
      if (data.contains("text/html")) html = joined(data.at("text/html"));
    }
    std::string item = type + ": " + t::mask_addresses(plain);
    if (items.size() < with_html.size() && with_html[items.size()]) item += "\nhtml: " + html;
    items.push_back(item);
  }
  flush();
  return items;
}

// Where the recording has a text/html, by position among its merged outputs.
std::vector<bool> html_positions(const json& recorded_outputs) {
  std::vector<bool> positions;
  bool in_stream = false;
  for (const json& output : recorded_outputs) {
    const bool stream = output.at("output_type") == "stream";
    if (stream && in_stream) continue;
    in_stream = stream;
    positions.push_back(output.contains("text_html"));
  }
  return positions;
}

// The corpus test's eligibility (tests/app/notebook_corpus_test.cpp): outputs recorded, not skip-recommended, not
// random or timing, not a known failure.
bool compared(const json& cell, const json& settings) {
  const int index = cell.at("index").get<int>();
  for (const json& random_cell : settings.at("random_cells")) {
    if (random_cell.get<int>() == index) return false;
  }
  if (settings.at("xfail").contains(std::to_string(index))) return false;
  if (cell.at("outputs").empty() || cell.value("skip_recommended", false)) return false;
  static const std::set<std::string> excluded = {"timing", "random", "values_depend_on_random",
                                                 "numpy_random_unseeded"};
  for (const json& flag : cell.at("flags")) {
    if (excluded.contains(flag.get<std::string>())) return false;
  }
  return true;
}

void check_corpus_notebook(const std::string& name) {
  const json manifest = json::parse(t::read_text(kNotebookDir / "manifest.json"));
  const json& settings = manifest.at("notebooks").at(name);
  REQUIRE_MESSAGE(!settings.contains("order"), name << " replays out of order: nbconvert runs cells in order");
  const json notebook = json::parse(t::read_text(kNotebookDir / (name + ".json")));
  const t::TemporaryFolder folder;
  auto environment = t::install_kernel(folder.path(), "shardscope-corpus",
                                       {"--devices", settings.at("devices").get<std::string>(), "--jax-version",
                                        settings.at("jax_version").get<std::string>()});
  for (const auto& [key, value] : settings.at("environment").items()) environment[key] = value.get<std::string>();
  std::vector<std::string> sources;
  for (const json& cell : notebook.at("cells")) {
    const std::string index = std::to_string(cell.at("index").get<int>());
    std::string code = settings.at("skip").contains(index) ? std::string("pass") : cell.at("code").get<std::string>();
    // The code the recording ran, where the notebook's text changed later (notebook_corpus_test.cpp checks these).
    if (settings.contains("code_as_run") && settings.at("code_as_run").contains(index)) {
      const json& rewrite = settings.at("code_as_run").at(index);
      const std::string replaced = rewrite.at("replace").get<std::string>();
      const std::size_t at = code.find(replaced);
      if (at != std::string::npos) code.replace(at, replaced.size(), rewrite.at("with").get<std::string>());
    }
    sources.push_back(code);
  }
  const std::vector<json> outputs = execute(sources, "shardscope-corpus", environment, folder.path());
  int matched = 0;
  int html_matched = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const json& cell = notebook.at("cells").at(i);
    if (!compared(cell, settings)) continue;
    const std::vector<bool> html = html_positions(cell.at("outputs_detail"));
    const auto want = output_items(cell.at("outputs_detail"), true, html);
    const auto got = output_items(outputs[i], false, html);
    std::string shown;
    for (const std::string& item : want) shown += "- " + item + "\n";
    for (const std::string& item : got) shown += "+ " + item + "\n";
    INFO(name << " cell " << cell.at("index").get<int>() << " (- recorded, + kernel):\n" << shown);
    CHECK(want == got);
    if (want == got) {
      ++matched;
      for (const bool has_html : html) html_matched += has_html ? 1 : 0;
    }
  }
  MESSAGE(name << ": " << matched << " cells match through the kernel, " << html_matched << " text/html outputs");
  CHECK(matched > 0);
}

}  // namespace

TEST_CASE("kernel install writes a kernelspec Jupyter lists under its name and display name") {
  const t::TemporaryFolder folder;
  const auto environment = t::install_kernel(folder.path(), "shardscope-test", {"--devices", "cpu:8"});
  // What `jupyter kernelspec list --json` prints, through jupyter_client itself.
  const t::CommandRun list = t::run_command({kPython, "-c",
                                             "import json; from jupyter_client.kernelspec import KernelSpecManager; "
                                             "print(json.dumps(KernelSpecManager().get_all_specs()))"},
                                            environment);
  REQUIRE_MESSAGE(list.status == 0, list.output);
  // The last line: importing jupyter_client may first log debugger notices.
  const json specs = json::parse(list.output.substr(list.output.rfind("\n{") + 1));
  REQUIRE(specs.contains("shardscope-test"));
  const json& spec = specs.at("shardscope-test").at("spec");
  CHECK(spec.at("display_name") == "shardscope (CPU x8, JAX 0.11)");
  CHECK(spec.at("argv").at(0) == fs::absolute(SHARDSCOPE_BINARY).string());
  CHECK(spec.at("argv").at(1) == "kernel");
}

TEST_CASE("corpus notebooks executed through the kernel by nbconvert print what JAX printed, text/html included") {
  SUBCASE("sharded computation (TPU v2-8, rich colour grids)") {
    check_corpus_notebook("jax-sharded-computation-2024-04");
  }
  SUBCASE("explicit sharding (CPU)") { check_corpus_notebook("jax-explicit-sharding"); }
  SUBCASE("Flax Linen partitioning (8 CPU devices, boxed grids with highlighted numbers)") {
    check_corpus_notebook("flax-linen-partitioning-2025-12");
  }
}

// The rest of the corpus, one test case per group so ctest runs them side by side. Left out: the Pallas notebook
// (no eligible cell); jax-distributed-arrays-2025-04, whose recording ran its cells out of order (its
// manifest's "order"), which nbconvert cannot do; and jax-distributed-arrays-2022-12, recorded on a Colab TPU,
// whose shell is not IPython's ZMQInteractiveShell, so rich printed its grids as plain stdout there, where a
// Jupyter kernel (ipykernel's shell) gets them as display_data. `shardscope run` replays both as recorded.
TEST_CASE("the Flax NNX notebooks and the Linen RNG guide through the kernel print what Flax printed") {
  for (const char* name :
       {"flax-nnx-gspmd-2024-10", "flax-nnx-gspmd-2025-02", "flax-nnx-gspmd-2025-07", "flax-nnx-gspmd-2026-02",
        "flax-nnx-key-concepts", "flax-nnx-bridge-guide", "flax-linen-rng-guide"}) {
    SUBCASE(name) { check_corpus_notebook(name); }
  }
}

TEST_CASE("the other JAX and Linen notebooks through the kernel print what JAX printed") {
  for (const char* name :
       {"jax-101-pmap", "jax-host-offloading", "jax-layout", "jax-sharded-computation-2025-02",
        "jax-sharded-computation-2026-04", "flax-linen-partitioning-2023-02", "flax-linen-partitioning-2024-04"}) {
    SUBCASE(name) { check_corpus_notebook(name); }
  }
}

TEST_CASE("a seed executed through the kernel prints what the seed recorded") {
  // Seed 001 (pmap vs vmap, tpu-v2-8, JAX 0.3.25): its cells' stdout and values; the format of .expected is
  // tests/seeds/README.md's.
  std::vector<std::string> sources;
  std::string current;
  bool started = false;
  for (const std::string& line : t::split_lines(t::read_text(kSeedDir / "seed_001.py"))) {
    if (line == "# %%") {
      if (started) sources.push_back(current);
      current.clear();
      started = true;
    } else if (started) {
      current += line + "\n";
    }
  }
  if (started) sources.push_back(current);
  std::vector<std::string> expected;
  std::vector<bool> checked;
  for (const std::string& line : t::split_lines(t::read_text(kSeedDir / "seed_001.expected"))) {
    if (line.starts_with("# %% cell ")) {
      expected.emplace_back();
      checked.push_back(line.find(" skip:") == std::string::npos && line.find(" xfail:") == std::string::npos);
    } else {
      REQUIRE(!expected.empty());
      expected.back() += line + "\n";
    }
  }
  REQUIRE(expected.size() == sources.size());
  const t::TemporaryFolder folder;
  const auto environment =
      t::install_kernel(folder.path(), "shardscope-seed", {"--devices", "tpu-v2-8", "--jax-version", "0.3.25"});
  const std::vector<json> outputs = execute(sources, "shardscope-seed", environment, folder.path());
  int matched = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!checked[i]) continue;
    std::string text;
    for (const json& output : outputs[i]) {
      if (output.at("output_type") == "stream") text += joined(output.at("text"));
      if (output.at("output_type") == "execute_result") text += joined(output.at("data").at("text/plain")) + "\n";
      if (output.at("output_type") == "error") {
        text += output.at("ename").get<std::string>() + ": " + output.at("evalue").get<std::string>() + "\n";
      }
    }
    INFO("seed 001 cell " << i + 1 << "\n" << t::line_diff(t::mask_addresses(expected[i]), t::mask_addresses(text)));
    CHECK(t::mask_addresses(text) == t::mask_addresses(expected[i]));
    matched += text == expected[i] ? 1 : 0;
  }
  CHECK(matched > 10);
}

namespace {

// A jupyter_client session with the kernel: execute requests, an interrupt while a cell sleeps and while the
// engine runs a long loop, a restart. Prints one JSON object: per step its seconds and outputs.
constexpr const char* kClientScript = R"py(
import json, queue, sys, time
from jupyter_client.manager import KernelManager
km = KernelManager(kernel_name=sys.argv[1])
km.start_kernel()
def run(code, interrupt_once_started=False):
    # An interrupt that lands before the cell's code starts (a loaded machine is slow to get there) is swallowed
    # by ipykernel with "KeyboardInterrupt caught in kernel." and no error: so the cell says when it runs, and
    # the signal goes two seconds after that (or after 30 s without word, so that a lost message cannot hang).
    # stop_on_error=False: otherwise ipykernel aborts, without running it, a request that reaches it before it
    # has finished handling the previous cell's error (the step after an interrupt, on a loaded machine).
    msg_id = kc.execute(code, stop_on_error=False)
    started = time.time()
    outputs = []
    while True:
        try:
            m = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            if time.time() - started > 120: raise
            if interrupt_once_started and time.time() - started > 30:
                interrupt_once_started = False
                km.interrupt_kernel()
            continue
        if m['parent_header'].get('msg_id') != msg_id: continue
        t = m['msg_type']
        if t == 'status' and m['content']['execution_state'] == 'idle': break
        if t in ('stream', 'display_data', 'execute_result', 'error'):
            c = m['content']
            if interrupt_once_started and t == 'stream' and 'running' in c.get('text', ''):
                interrupt_once_started = False
                started = time.time()
                time.sleep(2); km.interrupt_kernel()
                continue
            outputs.append({'type': t, 'text': c.get('text'), 'data': c.get('data'), 'ename': c.get('ename')})
    return {'seconds': time.time() - started, 'outputs': outputs}
result = {}
kc = km.client()
try:
    kc.start_channels(); kc.wait_for_ready(timeout=60)
    result['setup'] = run("import jax, jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
                          "x = jax.device_put(jnp.zeros((8, 8)), NamedSharding(jax.make_mesh((2, 4), ('a', 'b')), P('a', 'b')))\n"
                          "len(jax.devices())")
    result['display'] = run("import shardscope\nshardscope.display(x)")
    result['sleep'] = run("import time\nprint('running', flush=True)\ntime.sleep(60)", interrupt_once_started=True)
    result['engine'] = run("print('running', flush=True)\n"
                           "time.sleep(0.5)  # the engine holds the GIL, and the kernel's output thread needs it\n"
                           "jax.lax.fori_loop(0, 10**7, lambda i, a: jnp.tanh(a @ a), jnp.ones((128, 128)))",
                           interrupt_once_started=True)
    result['after'] = run("x.shape")
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=60)
    result['restarted'] = run("x")
    result['devices'] = run("len(__import__('jax').devices())")
    if not result['devices']['outputs']:
        # Under a loaded machine an iopub message of the restarted kernel was once missed by the client's
        # reconnected SUB socket; the kernel itself is what this step tests, so ask it once more and say so.
        result['devices'] = run("len(__import__('jax').devices())")
        result['devices']['retried'] = True
finally:
    # Whatever failed, the kernel goes: one left running would hold this script's output open.
    kc.stop_channels()
    km.shutdown_kernel(now=True)
print(json.dumps(result))
kc = km = None
)py";

const json& only_output(const json& step) {
  REQUIRE_MESSAGE(step.at("outputs").size() == 1, step.dump());
  return step.at("outputs").at(0);
}

}  // namespace

TEST_CASE("through jupyter_client: execute, shardscope.display as SVG, interrupt (also inside the engine), restart") {
  const t::TemporaryFolder folder;
  const auto environment = t::install_kernel(folder.path(), "shardscope-client", {"--devices", "cpu:8"});
  std::ofstream(folder.path() / "client.py") << kClientScript;
  const t::CommandRun run = t::run_command({kPython, "client.py", "shardscope-client"}, environment, folder.path());
  REQUIRE_MESSAGE(run.status == 0, run.output);
  const json result = json::parse(run.output.substr(run.output.find('{')), nullptr, false);
  REQUIRE_MESSAGE(!result.is_discarded(), run.output);
  CHECK(only_output(result.at("setup")).at("data").at("text/plain") == "8");
  const json& display = only_output(result.at("display"));
  CHECK(display.at("type") == "display_data");
  const std::string svg = display.at("data").at("image/svg+xml").get<std::string>();
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("class=\"cell\"") != std::string::npos);
  CHECK(display.at("data").at("text/plain").get<std::string>().find("CPU 0") != std::string::npos);
  // Interrupted within seconds of the request, the session still holding its variables.
  for (const char* name : {"sleep", "engine"}) {
    const std::string step = name;  // INFO of a const char* would log its address
    INFO(step);
    CHECK(only_output(result.at(step)).at("ename") == "KeyboardInterrupt");
    CHECK(result.at(step).at("seconds").get<double>() < 30.0);
  }
  CHECK(only_output(result.at("after")).at("data").at("text/plain") == "(8, 8)");
  // A restart is a fresh interpreter with the kernelspec's settings.
  CHECK(only_output(result.at("restarted")).at("ename") == "NameError");
  CHECK(only_output(result.at("devices")).at("data").at("text/plain") == "8");
}
