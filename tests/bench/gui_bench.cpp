// Frame time of the explorer window (Google Benchmark): a 256-device array at 1600x1000 on the software
// renderer. Run under Xvfb: xvfb-run -a -s "-screen 0 1920x1200x24" shardscope_gui_bench
#include <GL/gl.h>
#include <benchmark/benchmark.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cstdio>

#include "device/presets.h"
#include "ui/explorer.h"
#include "ui/panels/widgets.h"

namespace {

using namespace shardscope;

// A session with a fixed snapshot: the frame cost without Python.
class FixedSession final : public ui::Session {
 public:
  explicit FixedSession(std::shared_ptr<const ui::SessionSnapshot> snapshot) : snapshot_(std::move(snapshot)) {}
  std::uint64_t submit(const std::string&) override { return 0; }
  [[nodiscard]] std::optional<std::uint64_t> running() const override { return std::nullopt; }
  [[nodiscard]] std::size_t queued() const override { return 0; }
  void interrupt() override {}
  [[nodiscard]] std::vector<ui::CellRecord> take_finished() override { return {}; }
  [[nodiscard]] std::shared_ptr<const ui::SessionSnapshot> snapshot() const override { return snapshot_; }
  [[nodiscard]] std::vector<std::string> completions(const std::string&) override { return {}; }

 private:
  std::shared_ptr<const ui::SessionSnapshot> snapshot_;
};

std::shared_ptr<ui::SessionSnapshot> snapshot_256(const std::string& preset_name) {
  auto snapshot = std::make_shared<ui::SessionSnapshot>();
  snapshot->revision = 1;
  const DevicePreset preset = make_device_preset(preset_name);
  snapshot->device_preset = preset.name;
  snapshot->devices = preset.devices;
  const Mesh mesh = make_mesh({16, 16}, {"x", "y"}, preset.devices, snapshot->profile);
  const NamedSharding sharding = make_named_sharding(mesh, parse_partition_spec("P('x', 'y')"), snapshot->profile);
  ui::VariableInfo info;
  info.name = "w";
  info.aval = {{4096, 4096}, DType::kFloat32, false};
  info.sharding = sharding;
  info.type_text = "float32[4096,4096]";
  info.sharding_text = sharding_repr(sharding, snapshot->profile);
  info.bytes_per_device.assign(256, 4096 * 4096 * 4 / 256);
  snapshot->variables.push_back(info);
  snapshot->meshes.push_back({"mesh", mesh});
  return snapshot;
}

GLFWwindow* g_window = nullptr;

void render_frame(ui::Explorer& explorer) {
  glfwPollEvents();
  explorer.poll();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  explorer.draw(ImGui::GetIO().DisplaySize.x, ImGui::GetIO().DisplaySize.y);
  ImGui::Render();
  int width = 0;
  int height = 0;
  glfwGetFramebufferSize(g_window, &width, &height);
  glViewport(0, 0, width, height);
  const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(background.x, background.y, background.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  glFinish();  // the frame is done only when llvmpipe has drawn it
  glfwSwapBuffers(g_window);
}

void frame_benchmark(benchmark::State& state, const std::string& preset, bool device_view) {
  FixedSession session(snapshot_256(preset));
  ui::Explorer explorer(session, "/tmp/shardscope-gui-bench", "/nonexistent");
  ImGuiIO& io = ImGui::GetIO();
  static ui::Fonts fonts;
  if (fonts.ui == nullptr) {
    fonts.ui = io.Fonts->AddFontFromFileTTF("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 15.0f);
    fonts.mono = io.Fonts->AddFontFromFileTTF("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 14.0f);
    if (fonts.ui == nullptr) fonts.ui = io.Fonts->AddFontDefault();
    if (fonts.mono == nullptr) fonts.mono = fonts.ui;
    fonts.small = fonts.ui;
    io.Fonts->Build();
  }
  explorer.fonts = fonts;
  explorer.poll();
  explorer.select("w");
  explorer.canvas.device_view = device_view;
  for (int i = 0; i < 3; ++i) render_frame(explorer);  // font atlas upload, first layout
  for (auto _ : state) render_frame(explorer);
  state.counters["cells"] = static_cast<double>(explorer.canvas.geometry.cells.size());
}

void BM_FrameGrid256(benchmark::State& state) { frame_benchmark(state, "cpu:256", false); }
void BM_FrameGrid256Tpu(benchmark::State& state) { frame_benchmark(state, "tpu-v5e-256", false); }
void BM_FrameDevices256Tpu(benchmark::State& state) { frame_benchmark(state, "tpu-v5e-256", true); }
// The same window with nothing selected: what clearing and compositing 1600x1000 costs on its own.
void BM_FrameEmptyCanvas(benchmark::State& state) {
  FixedSession session(std::make_shared<ui::SessionSnapshot>());
  ui::Explorer explorer(session, "/tmp/shardscope-gui-bench", "/nonexistent");
  for (int i = 0; i < 3; ++i) render_frame(explorer);
  for (auto _ : state) render_frame(explorer);
}
BENCHMARK(BM_FrameEmptyCanvas)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
BENCHMARK(BM_FrameGrid256)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_FrameGrid256Tpu)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_FrameDevices256Tpu)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

int main(int argc, char** argv) {
  if (glfwInit() == GLFW_FALSE) {
    std::fprintf(stderr, "shardscope_gui_bench: no display; run under xvfb-run -a\n");
    return 2;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  g_window = glfwCreateWindow(1600, 1000, "shardscope bench", nullptr, nullptr);
  if (g_window == nullptr) return 2;
  glfwMakeContextCurrent(g_window);
  glfwSwapInterval(0);
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  shardscope::ui::apply_theme(true, 1.0f);
  ImGui_ImplGlfw_InitForOpenGL(g_window, false);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  std::printf("GL renderer: %s\n", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(g_window);
  glfwTerminate();
  return 0;
}
