// Benchmarks of shard-grid layout and rendering (what `shardscope viz` spends its time on).
#include <benchmark/benchmark.h>

#include "device/presets.h"
#include "sharding/sharding_recipe.h"
#include "viz/text_renderer.h"

namespace {

using namespace shardscope;

void render(benchmark::State& state, const std::string& preset, std::vector<std::pair<std::string, int64_t>> mesh,
            const std::string& spec, const Shape& shape) {
  ShardingRecipe recipe;
  recipe.devices_preset = preset;
  recipe.mesh_axes = std::move(mesh);
  recipe.spec_text = spec;
  const JaxProfile profile;
  const ResolvedSharding resolved = resolve_sharding(recipe, profile);
  VizOptions options;
  options.use_color = true;
  for (auto _ : state) {
    const VizLayout layout = compute_layout(shape, resolved.sharding, options, profile);
    benchmark::DoNotOptimize(render_text(layout));
  }
}

void BM_VizTpuV3_4x2(benchmark::State& state) {
  render(state, "tpu-v3-8", {{"a", 4}, {"b", 2}}, "P('a', 'b')", {8192, 8192});
}
BENCHMARK(BM_VizTpuV3_4x2);

void BM_VizTpuV5e256_16x16(benchmark::State& state) {
  render(state, "tpu-v5e-256", {{"x", 16}, {"y", 16}}, "P('x', 'y')", {4096, 4096});
}
BENCHMARK(BM_VizTpuV5e256_16x16);

}  // namespace
