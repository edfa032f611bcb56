// Screenshots via glReadPixels and offscreen canvas renders through ImGui's own GL3 renderer.
#define GL_GLEXT_PROTOTYPES 1
#include "ui/gl_capture.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <vector>

#include "ui/explorer.h"
#include "ui/model/device_view.h"
#include "ui/panels/grid_draw.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

constexpr int kMaxSide = 8192;

bool write_rgba(const std::string& path, int width, int height, std::vector<unsigned char>& pixels) {
  stbi_flip_vertically_on_write(1);  // GL's origin is the bottom-left corner
  return stbi_write_png(path.c_str(), width, height, 4, pixels.data(), width * 4) != 0;
}

}  // namespace

bool write_screenshot_png(const std::string& path, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // The window has no alpha to speak of: make the PNG opaque.
  for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;
  return write_rgba(path, width, height, pixels);
}

bool export_canvas_png(Explorer& explorer, const std::string& path, float scale) {
  const CanvasModel& canvas = explorer.canvas;
  if (!canvas.layout) {
    explorer.status_line = "Nothing to export: no array on the canvas";
    return false;
  }
  const DeviceViewLayout devices = canvas.device_view ? layout_devices(explorer.snapshot->devices) : DeviceViewLayout{};
  const double content_width = canvas.device_view ? devices.width : canvas.geometry.width;
  const double content_height = canvas.device_view ? devices.height : canvas.geometry.height;
  const double margin = 16.0;
  // The caption line, as the SVG export draws it: one text line and half a gap above the picture.
  const bool caption = explorer.export_caption && !canvas.caption.empty();
  const double caption_height = caption ? 24.0 : 0.0;
  const int width = std::clamp(static_cast<int>((content_width + 2 * margin) * scale), 1, kMaxSide);
  const int height = std::clamp(static_cast<int>((content_height + caption_height + 2 * margin) * scale), 1, kMaxSide);

  ImDrawList list(ImGui::GetDrawListSharedData());
  list._ResetForNewFrame();
  list.PushTextureID(ImGui::GetIO().Fonts->TexID);
  list.PushClipRect(ImVec2(0, 0), ImVec2(static_cast<float>(width), static_cast<float>(height)));
  const Theme& theme = current_theme();
  // The window's background colour, as the canvas shows it.
  list.AddRectFilled(ImVec2(0, 0), ImVec2(static_cast<float>(width), static_cast<float>(height)),
                     ImGui::GetColorU32(ImGuiCol_WindowBg, 1.0f) | IM_COL32_A_MASK);
  if (caption) {
    list.AddText(explorer.fonts.mono, explorer.settings.font_size * scale,
                 ImVec2(static_cast<float>(margin * scale), static_cast<float>(margin * scale)), theme.text,
                 canvas.caption.c_str());
  }
  ViewTransform view;
  view.zoom = scale;
  view.pan_x = margin * scale;
  view.pan_y = (margin + caption_height) * scale;
  if (canvas.device_view) {
    DevicePaint paint;
    paint.font = explorer.fonts.mono;
    paint.font_size = explorer.settings.font_size * scale;
    paint.text = theme.text;
    paint.chip = theme.chip;
    paint.host = theme.muted_text;
    paint.idle_device = theme.idle_device;
    draw_device_view(&list, devices, device_colors(*canvas.layout), view, ImVec2(0, 0), paint);
  } else {
    GridPaint paint;
    paint.font = explorer.fonts.mono;
    paint.font_size = explorer.settings.font_size * scale;
    paint.border = theme.grid_border;
    paint.title = theme.text;
    draw_grid(&list, *canvas.layout, canvas.geometry, view, ImVec2(0, 0), paint);
  }
  list.PopClipRect();

  ImDrawList* lists[] = {&list};
  ImDrawData data;
  data.Valid = true;
  data.CmdLists = lists;
  data.CmdListsCount = 1;
  data.TotalVtxCount = list.VtxBuffer.Size;
  data.TotalIdxCount = list.IdxBuffer.Size;
  data.DisplayPos = ImVec2(0, 0);
  data.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  data.FramebufferScale = ImVec2(1, 1);

  GLint previous_framebuffer = 0;
  glGetIntegerv(GL_FRAMEBUFFER_BINDING, &previous_framebuffer);
  GLuint framebuffer = 0;
  GLuint color = 0;
  glGenFramebuffers(1, &framebuffer);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer);
  glGenRenderbuffers(1, &color);
  glBindRenderbuffer(GL_RENDERBUFFER, color);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color);
  bool ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  if (ok) {
    glViewport(0, 0, width, height);
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(&data);
    glFinish();
    std::vector<unsigned char> pixels(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;
    ok = write_rgba(path, width, height, pixels);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(previous_framebuffer));
  glDeleteRenderbuffers(1, &color);
  glDeleteFramebuffers(1, &framebuffer);
  explorer.status_line = ok ? "PNG written to " + path : "Could not write the PNG " + path;
  return ok;
}

}  // namespace shardscope::ui
