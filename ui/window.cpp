// The window: GLFW + OpenGL 3.3 core + Dear ImGui 1.86, fonts with box drawing, the frame loop.
#include "ui/window.h"

#include <GL/gl.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "ui/driver.h"
#include "ui/explorer.h"
#include "ui/gl_capture.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

constexpr const char* kSansFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
constexpr const char* kMonoFont = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
constexpr const char* kBoldFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
constexpr const char* kItalicFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Oblique.ttf";

std::atomic<bool> g_interrupt_requested{false};

extern "C" void on_sigint(int) { g_interrupt_requested = true; }

void glfw_error(int code, const char* description) {
  std::cerr << "shardscope gui: GLFW error " << code << ": " << description << "\n";
}

// Latin-1, general punctuation (em dash), arrows, box drawing and block elements: the glyphs JAX's text
// pictures and tracebacks use.
const ImWchar* glyph_ranges() {
  static ImVector<ImWchar> ranges;
  if (ranges.empty()) {
    static const ImWchar extra[] = {0x0100, 0x017F, 0x2000, 0x206F, 0x2190, 0x21FF, 0x2200, 0x22FF,
                                    0x2500, 0x257F, 0x2580, 0x259F, 0x25A0, 0x25FF, 0};
    ImFontGlyphRangesBuilder builder;
    builder.AddRanges(ImGui::GetIO().Fonts->GetGlyphRangesDefault());
    builder.AddRanges(extra);
    builder.BuildRanges(&ranges);
  }
  return ranges.Data;
}

// Prose: Latin, Greek (math), punctuation, arrows and math operators; no box drawing, to keep the large
// presentation faces' atlas small.
const ImWchar* prose_glyph_ranges() {
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x0100, 0x017F, 0x0370, 0x03FF, 0x2000, 0x206F,
                                   0x2190, 0x21FF, 0x2200, 0x22FF, 0x2300, 0x23FF, 0};
  return ranges;
}

ImFont* add_font(const char* path, float size, ImFont* fallback) {
  ImFont* font = ImGui::GetIO().Fonts->AddFontFromFileTTF(path, size, nullptr, prose_glyph_ranges());
  return font != nullptr ? font : fallback;
}

// Body, bold, italic, mono and a heading half as large again, for lesson prose at `size` pixels.
TextFonts load_text_fonts(float size, ImFont* fallback) {
  TextFonts fonts;
  fonts.body = add_font(kSansFont, size, fallback);
  fonts.bold = add_font(kBoldFont, size, fonts.body);
  fonts.italic = add_font(kItalicFont, size, fonts.body);
  fonts.mono = add_font(kMonoFont, size * 0.92f, fonts.body);
  fonts.heading = add_font(kBoldFont, size * 1.45f, fonts.bold);
  return fonts;
}

Fonts load_fonts(float size) {
  ImGuiIO& io = ImGui::GetIO();
  Fonts fonts;
  fonts.ui = io.Fonts->AddFontFromFileTTF(kSansFont, size, nullptr, glyph_ranges());
  fonts.mono = io.Fonts->AddFontFromFileTTF(kMonoFont, size - 1, nullptr, glyph_ranges());
  fonts.small = io.Fonts->AddFontFromFileTTF(kSansFont, size - 3, nullptr, glyph_ranges());
  // A missing font file gives nullptr: fall back to ImGui's built-in font rather than fail.
  if (fonts.ui == nullptr) fonts.ui = io.Fonts->AddFontDefault();
  if (fonts.mono == nullptr) fonts.mono = fonts.ui;
  if (fonts.small == nullptr) fonts.small = fonts.ui;
  fonts.prose = load_text_fonts(size, fonts.ui);
  fonts.prose.mono = fonts.mono;
  fonts.present = load_text_fonts(size * 2.0f, fonts.ui);
  io.FontDefault = fonts.ui;
  io.Fonts->Build();
  return fonts;
}

double seconds_now() {
  using clock = std::chrono::steady_clock;
  static const clock::time_point start = clock::now();
  return std::chrono::duration<double>(clock::now() - start).count();
}

}  // namespace

bool display_available() {
  const char* x11 = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((x11 == nullptr || *x11 == '\0') && (wayland == nullptr || *wayland == '\0')) return false;
  if (glfwInit() == GLFW_FALSE) return false;
  glfwTerminate();
  return true;
}

int run_window(Session& session, const WindowOptions& options) {
  glfwSetErrorCallback(glfw_error);
  if (glfwInit() == GLFW_FALSE) return kWindowUnavailable;
  Explorer explorer(session, options.config_dir, options.scenes_dir);
  const bool headless = options.headless();
  explorer.persist = !headless || options.persist;
  explorer.present = options.present;
  explorer.export_caption = options.caption;
  // --light is for this run: the saved theme changes only when chosen in the View menu.
  const bool saved_dark_theme = explorer.settings.dark_theme;
  if (options.light_theme) explorer.settings.dark_theme = false;
  if (options.dark_theme) explorer.settings.dark_theme = true;
  const Palette saved_palette = explorer.settings.palette;
  if (options.palette) explorer.settings.palette = parse_palette(*options.palette);
  const int width = options.width > 0 ? options.width : explorer.settings.window_width;
  const int height = options.height > 0 ? options.height : explorer.settings.window_height;

  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  // Hidden windows still render on Mesa; the back buffer is read before swapping.
  if (headless) glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(width, height, "shardscope", nullptr, nullptr);
  if (window == nullptr) {
    glfwTerminate();
    return kWindowUnavailable;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; our own settings file keeps what matters
  float scale_x = 1.0f;
  float scale_y = 1.0f;
  glfwGetWindowContentScale(window, &scale_x, &scale_y);
  // HiDPI: the monitor's content scale, unless the user asked for another (X11 often reports 1 on 4K screens).
  explorer.ui_scale = options.ui_scale ? *options.ui_scale : std::max(1.0f, scale_y);
  explorer.fonts = load_fonts(explorer.settings.font_size * explorer.ui_scale);
  apply_theme(explorer.settings.dark_theme, explorer.ui_scale);
  if (!ImGui_ImplGlfw_InitForOpenGL(window, true) || !ImGui_ImplOpenGL3_Init("#version 330 core")) {
    std::cerr << "shardscope gui: could not initialize the ImGui backends\n";
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return kWindowUnavailable;
  }

  // Ctrl+C in the terminal stops the running cell, or closes the window when none runs.
  g_interrupt_requested = false;
  const auto previous_handler = std::signal(SIGINT, on_sigint);

  Driver driver(explorer, options);
  int status = 0;
  while (glfwWindowShouldClose(window) == GLFW_FALSE && !explorer.quit_requested) {
    const double frame_start = seconds_now();
    if (headless) {
      glfwPollEvents();
    } else {
      // No vsync under Xvfb or llvmpipe: wait for events instead of spinning, faster while a cell runs.
      glfwWaitEventsTimeout(explorer.idle() ? 1.0 / 20.0 : 1.0 / 60.0);
    }
    if (g_interrupt_requested.exchange(false)) {
      if (explorer.idle()) break;
      explorer.interrupt();
    }
    explorer.poll();
    driver.before_frame(seconds_now());
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    driver.soak_frame(seconds_now(), io.DisplaySize.x, io.DisplaySize.y);
    if (const auto pointer = driver.scripted_pointer()) {
      io.MousePos = ImVec2(pointer->x, pointer->y);
      io.MouseWheel = pointer->wheel;
    }
    ImGui::NewFrame();
    explorer.draw(io.DisplaySize.x, io.DisplaySize.y);
    if ((explorer.quit_requested || glfwWindowShouldClose(window) == GLFW_TRUE) && driver.cancel_quit()) {
      explorer.quit_requested = false;
      glfwSetWindowShouldClose(window, GLFW_FALSE);
    }
    ImGui::Render();
    int framebuffer_width = 0;
    int framebuffer_height = 0;
    glfwGetFramebufferSize(window, &framebuffer_width, &framebuffer_height);
    glViewport(0, 0, framebuffer_width, framebuffer_height);
    const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(background.x, background.y, background.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (explorer.png_request) {
      (void)export_canvas_png(explorer, *explorer.png_request, explorer.png_scale);
      explorer.png_request.reset();
      glViewport(0, 0, framebuffer_width, framebuffer_height);
    }
    if (headless) {
      if (const std::optional<int> done = driver.after_render(seconds_now(), framebuffer_width, framebuffer_height)) {
        status = *done;
        break;
      }
      // Leave the cores to the Python worker: about 60 frames a second is plenty.
      const double spent = seconds_now() - frame_start;
      if (spent < 1.0 / 60.0) std::this_thread::sleep_for(std::chrono::duration<double>(1.0 / 60.0 - spent));
    }
    glfwSwapBuffers(window);
  }

  std::signal(SIGINT, previous_handler);
  if (!headless) {
    int w = 0;
    int h = 0;
    glfwGetWindowSize(window, &w, &h);
    if (w > 0 && h > 0) {
      explorer.settings.window_width = w;
      explorer.settings.window_height = h;
    }
  }
  if (!explorer.idle()) explorer.interrupt();
  if ((options.light_theme || options.dark_theme) && !explorer.theme_chosen) {
    explorer.settings.dark_theme = saved_dark_theme;
  }
  if (options.palette && !explorer.palette_chosen) explorer.settings.palette = saved_palette;
  explorer.save_settings_and_history();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}

}  // namespace shardscope::ui
