// Pixels out of OpenGL: window screenshots and the canvas rendered offscreen at any scale, as PNG files.
#pragma once

#include <string>

namespace shardscope::ui {

class Explorer;

// Reads the back buffer (call after rendering, before swapping) and writes it as a PNG.
[[nodiscard]] bool write_screenshot_png(const std::string& path, int width, int height);

// Renders what the canvas shows (grid or device view) into an offscreen framebuffer at `scale` content
// pixels per unit, on the theme's canvas background, and writes a PNG. Needs a current GL context and an
// initialized ImGui renderer. False (with a message in the explorer's status line) on failure.
bool export_canvas_png(Explorer& explorer, const std::string& path, float scale);

}  // namespace shardscope::ui
