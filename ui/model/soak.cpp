// The soak's action generator, cell list and resident-memory arithmetic.
#include "ui/model/soak.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace shardscope::ui {

const char* soak_action_name(SoakActionKind kind) {
  constexpr const char* kNames[kSoakActionKinds] = {"click",  "drag",        "wheel",       "type",
                                                    "key",    "run_cell",    "apply_spec",  "switch_devices",
                                                    "select", "toggle_view", "program_view"};
  return kNames[static_cast<int>(kind)];
}

bool soak_action_is_input(SoakActionKind kind) {
  return static_cast<int>(kind) <= static_cast<int>(SoakActionKind::kKey);
}

namespace {
constexpr const char* kPrelude =
    "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 4), ('x', 'y'))\n";
}  // namespace

const std::vector<SoakCell>& soak_cells() {
  // Each valid cell builds its own mesh: a device switch restarts the namespace.
  static const std::vector<SoakCell> cells = {
      {std::string(kPrelude) + "a = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P('x', 'y')))\n",
       false},
      {std::string(kPrelude) + "b = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', None)))\n"
                               "b = jax.device_put(b, NamedSharding(mesh, P(None, 'y')))\n",
       false},
      {std::string(kPrelude) + "@jax.jit\ndef total(v):\n    return v.sum()\n"
                               "s = total(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('x', 'y'))))\n",
       false},
      {std::string(kPrelude) + "@jax.jit\ndef layer(u, w):\n    return jnp.tanh(u @ w)\n"
                               "h = layer(jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', None))),\n"
                               "          jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P(None, 'y'))))\n",
       false},
      {"x = (\n", true},
      {"undefined_name + 1\n", true},
      {std::string(kPrelude) + "jax.device_put(jnp.ones(8), NamedSharding(mesh, P('q')))\n", true},
      {std::string(kPrelude) + "jnp.ones((3, 4)) @ jnp.ones((5, 2))\n", true},
  };
  return cells;
}

const std::vector<std::string>& soak_specs() {
  static const std::vector<std::string> specs = {"P('x', 'y')", "P(None, 'y')", "P('x', None)", "P()",
                                                 "P('q')",      "P('x', 'x')",  "P(",           "P('x', 'y', 'x')"};
  return specs;
}

const std::vector<std::string>& soak_presets() {
  static const std::vector<std::string> presets = {"cpu:8", "tpu-v3-8", "tpu-v5e-8", "gpu:8"};
  return presets;
}

const std::vector<std::string>& soak_names() {
  static const std::vector<std::string> names = {"x", "rows", "cols", "y", "a", "b", "h", "missing"};
  return names;
}

float SoakGenerator::unit() { return std::uniform_real_distribution<float>(0.0f, 1.0f)(rng_); }

std::size_t SoakGenerator::below(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

SoakAction SoakGenerator::next() {
  // Input events are most of what a person does; explorer actions are rarer and heavier.
  constexpr int kWeights[kSoakActionKinds] = {20, 8, 6, 14, 10, 3, 3, 1, 3, 2, 2};
  int total = 0;
  for (const int w : kWeights) total += w;
  int pick = static_cast<int>(below(static_cast<std::size_t>(total)));
  int kind = 0;
  while (pick >= kWeights[kind]) pick -= kWeights[kind++];
  SoakAction action;
  action.kind = static_cast<SoakActionKind>(kind);
  action.x0 = unit();
  action.y0 = unit();
  action.x1 = unit();
  action.y1 = unit();
  action.wheel = unit() < 0.5f ? -1.0f : 1.0f;
  action.button = unit() < 0.85f ? 0 : 1;
  action.character = static_cast<char>(' ' + below(95));  // printable ASCII
  action.key = static_cast<SoakKey>(below(kSoakKeys));
  switch (action.kind) {
    case SoakActionKind::kRunCell: action.index = below(soak_cells().size()); break;
    case SoakActionKind::kApplySpec: action.index = below(soak_specs().size()) * 64 + below(soak_names().size()); break;
    case SoakActionKind::kSwitchDevices: action.index = below(soak_presets().size()); break;
    case SoakActionKind::kSelect: action.index = below(soak_names().size()); break;
    case SoakActionKind::kProgramView: action.index = below(5); break;
    default: break;
  }
  return action;
}

int SoakGenerator::frames_until_next() { return static_cast<int>(below(3)); }

std::optional<long> parse_vm_rss_kb(const std::string& status_text) {
  std::istringstream lines(status_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("VmRSS:")) continue;
    std::istringstream fields(line.substr(6));
    long kb = 0;
    if (fields >> kb) return kb;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<long> current_rss_kb() {
  std::ifstream file("/proc/self/status");
  std::stringstream text;
  text << file.rdbuf();
  return parse_vm_rss_kb(text.str());
}

std::optional<SoakGrowth> soak_growth(const std::vector<long>& samples, std::size_t warmup_samples) {
  if (warmup_samples == 0 || samples.size() <= warmup_samples) return std::nullopt;
  SoakGrowth growth;
  growth.warmup_kb = samples[warmup_samples - 1];
  growth.end_kb = samples.back();
  growth.peak_after_warmup_kb =
      *std::max_element(samples.begin() + static_cast<std::ptrdiff_t>(warmup_samples), samples.end());
  growth.percent = growth.warmup_kb > 0 ? 100.0 * static_cast<double>(growth.peak_after_warmup_kb - growth.warmup_kb) /
                                              static_cast<double>(growth.warmup_kb)
                                        : 0.0;
  return growth;
}

}  // namespace shardscope::ui
