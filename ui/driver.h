// The headless driver: runs the window's own actions in order (scene, select, apply specs, exports,
// screenshot) so scripts and tests see exactly what a person clicking would.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ui/window.h"

namespace shardscope::ui {

class Explorer;

class Driver {
 public:
  Driver(Explorer& explorer, const WindowOptions& options);

  // Before drawing a frame: takes the next step once the previous one has finished.
  void before_frame(double now);
  // After rendering a frame, before swapping: writes files when due. Returns the exit status once done.
  [[nodiscard]] std::optional<int> after_render(double now, int framebuffer_width, int framebuffer_height);
  // After the backend read the real pointer: the scripted one (--mouse, --wheel) once the steps are done.
  struct Pointer {
    float x = 0;
    float y = 0;
    float wheel = 0;
  };
  [[nodiscard]] std::optional<Pointer> scripted_pointer();

 private:
  enum class Step { kStart, kWaitCells, kApply, kSettle, kDone };
  void write_stats(double now) const;
  // Selects a Values-view row for the Why panel by its name; an unknown name fails the run, naming the choices.
  void select_why_value(const std::string& name);

  Explorer& explorer_;
  const WindowOptions& options_;
  Step step_ = Step::kStart;
  double cells_started_ = 0;
  std::optional<double> interrupted_at_;
  std::optional<double> cells_finished_;
  std::size_t next_spec_ = 0;
  std::size_t next_notation_ = 0;
  bool switched_devices_ = false;
  bool reran_lesson_ = false;
  int settle_frames_ = 0;
  int wheel_left_ = 0;
  int failures_ = 0;
  std::vector<double> busy_frame_times_;
  std::vector<double> all_frame_times_;
  double last_frame_ = -1;
};

}  // namespace shardscope::ui
