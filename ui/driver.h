// The headless driver: runs the window's own actions in order (scene, select, apply specs, exports,
// screenshot) so scripts and tests see exactly what a person clicking would.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "ui/model/soak.h"
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
  // While soaking, between the backend's NewFrame and ImGui::NewFrame: queues random input events and runs
  // random explorer actions in a window of this size.
  void soak_frame(double now, float width, float height);
  // While soaking, a quit or close asked for by random input is cancelled (and counted): returns true then.
  [[nodiscard]] bool cancel_quit();

 private:
  enum class Step { kStart, kWaitCells, kApply, kSoak, kSettle, kDone };
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
  // The soak (--soak): actions by kind, RSS samples once a second, cells it ran.
  SoakGenerator soak_generator_;
  double soak_started_ = 0;
  double next_rss_sample_ = 0;
  int soak_wait_frames_ = 0;
  bool soak_done_ = false;
  std::array<int, kSoakActionKinds> soak_actions_{};
  int soak_skipped_busy_ = 0;
  int quits_cancelled_ = 0;
  std::vector<long> rss_kb_;
  std::vector<std::uint64_t> soak_cell_ids_;
  // ImGui 1.86 reads input as per-frame state, so a click or key press is spread over the next frames.
  struct InputFrame {
    float x = 0;
    float y = 0;
    int button_down = -1;
    float wheel = 0;
    int key_down = -1;  // ImGuiKey_*
    unsigned character = 0;
  };
  std::deque<InputFrame> input_frames_;
  float pointer_x_ = 0;
  float pointer_y_ = 0;
};

}  // namespace shardscope::ui
