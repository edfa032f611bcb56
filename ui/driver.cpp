// Headless driver steps and the frame statistics the responsiveness test reads.
#include "ui/driver.h"

#include <imgui.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/python_format.h"
#include "ui/explorer.h"
#include "ui/gl_capture.h"
#include "ui/model/collective_animation.h"
#include "ui/model/device_view.h"
#include "ui/model/param_tree.h"
#include "ui/model/program_table.h"

namespace shardscope::ui {
namespace {

constexpr int kSettleFrames = 4;  // frames drawn after the last change, so the layout has settled

// The animated collective's step on the device view, from the geometry the canvas draws it with; empty when the
// program has no such collective.
std::string animation_svg(const Explorer& explorer) {
  const CollectiveAnimationState& a = explorer.animation;
  if (!explorer.snapshot || !explorer.snapshot->program || !a.record ||
      *a.record >= explorer.snapshot->program->collectives.size()) {
    return "";
  }
  const std::vector<Device>& devices = explorer.snapshot->devices;
  const CollectiveRecord& record = explorer.snapshot->program->collectives[*a.record];
  const DeviceViewLayout layout = layout_devices(devices);
  const CollectiveFrame frame = collective_frame(layout, record_animations(record, devices), a.step);
  return collective_frame_svg(
      layout, record, frame, a.clock,
      explorer.canvas.layout ? device_colors(*explorer.canvas.layout) : std::map<int64_t, Rgb>{});
}

}  // namespace

Driver::Driver(Explorer& explorer, const WindowOptions& options)
    : explorer_(explorer), options_(options), wheel_left_(options.wheel), soak_generator_(options.soak_seed) {}

std::optional<Driver::Pointer> Driver::scripted_pointer() {
  if (!options_.canvas_mouse || (step_ != Step::kSettle && step_ != Step::kDone)) return std::nullopt;
  const Rect& canvas = explorer_.canvas_screen_rect;
  Pointer pointer;
  pointer.x = static_cast<float>(canvas.x0 + options_.canvas_mouse->first * canvas.width());
  pointer.y = static_cast<float>(canvas.y0 + options_.canvas_mouse->second * canvas.height());
  if (wheel_left_ != 0) {
    pointer.wheel = wheel_left_ > 0 ? 1.0f : -1.0f;
    wheel_left_ += wheel_left_ > 0 ? -1 : 1;
  }
  return pointer;
}

void Driver::before_frame(double now) {
  if (last_frame_ >= 0) {
    all_frame_times_.push_back(now - last_frame_);
    if (!explorer_.idle()) busy_frame_times_.push_back(now - last_frame_);
  }
  last_frame_ = now;
  switch (step_) {
    case Step::kStart:
      if (options_.scene) {
        explorer_.open_scene(*options_.scene);
        if (!explorer_.scene.error.empty()) {
          std::cerr << "shardscope gui: " << explorer_.scene.error << "\n";
          ++failures_;
        }
        if (options_.run_all) explorer_.run_scene_cells(false);
        for (int i = 0; i < options_.lesson_steps; ++i) explorer_.lesson_next();
      }
      for (const std::string& cell : options_.console_cells) explorer_.run(cell, false);  // as Enter does
      cells_started_ = now;
      step_ = Step::kWaitCells;
      break;
    case Step::kWaitCells:
      if (options_.interrupt_after && !interrupted_at_ && now - cells_started_ >= *options_.interrupt_after &&
          !explorer_.idle()) {
        explorer_.interrupt();  // what the Stop button does
        interrupted_at_ = now;
      }
      if (!explorer_.idle()) break;
      cells_finished_ = now;
      if (options_.select) explorer_.select(*options_.select);
      explorer_.canvas.device_view = options_.device_view;
      if (options_.editor_tab) explorer_.requested_editor_tab = *options_.editor_tab;
      if (options_.program_view) explorer_.program_mode = *options_.program_view;
      if (options_.why_value) select_why_value(*options_.why_value);
      if (options_.timeline_overlapped) explorer_.timeline_overlapped = true;
      if (options_.animate_collective) {
        explorer_.animation.record = static_cast<std::size_t>(options_.animate_collective->first);
        explorer_.animation.step = options_.animate_collective->second;
        explorer_.animation.playing = false;
        explorer_.animation.clock = 0.5;  // chunks half way along their links
        explorer_.canvas.device_view = true;
      }
      step_ = Step::kApply;
      break;
    case Step::kApply:
      if (!explorer_.idle()) break;
      if (options_.switch_devices && !switched_devices_) {
        switched_devices_ = true;
        const std::string error = explorer_.switch_devices(*options_.switch_devices);
        std::cout << "switch-devices " << *options_.switch_devices << ": " << (error.empty() ? "ok" : error) << "\n";
        break;
      }
      if (options_.rerun_lesson && !reran_lesson_) {
        reran_lesson_ = true;
        const std::string error = explorer_.rerun_lesson(*options_.rerun_lesson);
        std::cout << "rerun-on " << *options_.rerun_lesson << ": " << (error.empty() ? "ok" : error) << "\n";
        break;
      }
      if (next_spec_ < options_.apply_specs.size()) {
        const auto& [name, text] = options_.apply_specs[next_spec_++];
        if (explorer_.apply_spec_text(name, text)) {
          std::cout << "apply-spec " << name << " " << text << ": " << explorer_.spec.status << "\n";
        } else {
          std::cout << "apply-spec " << name << " " << text << ": " << explorer_.spec.check.error_type << ": "
                    << explorer_.spec.check.error << "\n";
        }
        break;
      }
      if (next_notation_ < options_.edit_notations.size()) {
        const auto& [name, kind, text] = options_.edit_notations[next_notation_++];
        // The kind was checked when the options were read.
        if (explorer_.apply_notation(name, parse_notation_kind(kind).value_or(NotationKind::kSpec), text)) {
          std::cout << "edit-notation " << name << " " << kind << " " << text << ": " << explorer_.spec.status << "\n";
        } else {
          std::cout << "edit-notation " << name << " " << kind << " " << text << ": " << explorer_.status_line << "\n";
        }
        break;
      }
      step_ = options_.soak_seconds && !soak_done_ ? Step::kSoak : Step::kSettle;
      soak_started_ = now;
      next_rss_sample_ = now;
      break;
    case Step::kSoak:
      if (now - soak_started_ < *options_.soak_seconds) break;
      if (!explorer_.idle()) {
        explorer_.interrupt();
        break;
      }
      soak_done_ = true;
      step_ = Step::kSettle;
      // The scene again on a fresh namespace, then the selection and views asked for: the window recovered.
      if (options_.scene && options_.run_all) {
        explorer_.run_scene_cells(true);
        cells_started_ = now;
        step_ = Step::kWaitCells;
      }
      break;
    case Step::kSettle:
    case Step::kDone: break;
  }
}

std::optional<int> Driver::after_render(double now, int framebuffer_width, int framebuffer_height) {
  if (step_ == Step::kWaitCells || step_ == Step::kApply) {
    if (now - cells_started_ > options_.timeout_seconds) {
      std::cerr << "shardscope gui: timed out after " << options_.timeout_seconds << " s\n";
      explorer_.interrupt();
      write_stats(now);
      return 4;
    }
    return std::nullopt;
  }
  if (step_ != Step::kSettle || ++settle_frames_ < kSettleFrames + std::abs(options_.wheel)) return std::nullopt;
  step_ = Step::kDone;
  if (options_.export_svg) {
    std::ofstream file(*options_.export_svg, std::ios::binary);
    file << explorer_.canvas_svg();
    if (!file || explorer_.canvas_svg().empty()) {
      std::cerr << "shardscope gui: could not export the SVG to " << *options_.export_svg << "\n";
      ++failures_;
    }
  }
  if (options_.export_animation_svg) {
    const std::string svg = animation_svg(explorer_);
    std::ofstream file(*options_.export_animation_svg, std::ios::binary);
    file << svg;
    if (!file || svg.empty()) {
      std::cerr << "shardscope gui: no collective " << (explorer_.animation.record ? *explorer_.animation.record : 0)
                << " to export to " << *options_.export_animation_svg << "\n";
      ++failures_;
    }
  }
  if (options_.export_png && !export_canvas_png(explorer_, *options_.export_png, options_.png_scale)) {
    std::cerr << "shardscope gui: " << explorer_.status_line << "\n";
    ++failures_;
  }
  if (options_.screenshot && !write_screenshot_png(*options_.screenshot, framebuffer_width, framebuffer_height)) {
    std::cerr << "shardscope gui: could not write " << *options_.screenshot << "\n";
    ++failures_;
  }
  write_stats(now);
  return failures_ == 0 ? 0 : 1;
}

void Driver::select_why_value(const std::string& name) {
  const ProgramInfo* program =
      explorer_.snapshot && explorer_.snapshot->program ? &*explorer_.snapshot->program : nullptr;
  std::vector<std::string> names;
  if (program != nullptr) {
    for (std::size_t r = 0; r < program->values.size(); ++r) {
      if (program->values[r].name == name) {
        explorer_.why.value_row = static_cast<int>(r);
        return;
      }
      names.push_back(program->values[r].name);
    }
  }
  std::cerr << "shardscope gui: --why-value: the last program has no value '" << name << "'"
            << (names.empty() ? std::string(" (no jit program ran)") : " (its values: " + join(names, ", ") + ")")
            << "\n";
  ++failures_;
}

void Driver::write_stats(double now) const {
  if (!options_.stats) return;
  nlohmann::json stats;
  const auto summarize = [](const std::vector<double>& gaps) {
    nlohmann::json out;
    out["frames"] = gaps.size();
    out["max_gap_ms"] = gaps.empty() ? 0.0 : *std::max_element(gaps.begin(), gaps.end()) * 1000;
    double total = 0;
    for (const double gap : gaps) total += gap;
    out["mean_gap_ms"] = gaps.empty() ? 0.0 : total / static_cast<double>(gaps.size()) * 1000;
    return out;
  };
  stats["while_busy"] = summarize(busy_frame_times_);
  stats["all"] = summarize(all_frame_times_);
  stats["cells_seconds"] = (cells_finished_ ? *cells_finished_ : now) - cells_started_;
  stats["interrupted_after"] = interrupted_at_ ? nlohmann::json(*interrupted_at_ - cells_started_) : nlohmann::json();
  nlohmann::json cells = nlohmann::json::array();
  for (const ConsoleEntry& entry : explorer_.console) {
    nlohmann::json cell;
    cell["source"] = entry.source;
    cell["from_gui"] = entry.from_gui;
    const char* names[] = {"ok", "error", "interrupted", "exit"};
    cell["status"] = entry.result ? names[static_cast<int>(entry.result->status)] : "pending";
    std::string output;
    if (entry.result) {
      for (const OutputSegment& part : entry.result->output) output += part.text;
    }
    cell["output"] = output;
    cells.push_back(cell);
  }
  stats["cells"] = cells;
  stats["history"] = explorer_.history.entries();
  stats["selected"] = explorer_.selected;
  stats["device_preset"] = explorer_.snapshot ? explorer_.snapshot->device_preset : "";
  stats["device_count"] = explorer_.snapshot ? explorer_.snapshot->devices.size() : 0;
  if (explorer_.snapshot && explorer_.snapshot->program) {
    const ProgramInfo& program = *explorer_.snapshot->program;
    nlohmann::json collectives = nlohmann::json::array();
    for (const CollectiveRecord& record : program.collectives) collectives.push_back(record.summary());
    stats["program"] = {
        {"name", program.name},
        {"kind", program.kind},
        {"text", program.text},
        {"lowered", program.lowered},
        {"values", value_table_text(program.values)},
        {"collective_table", collective_table_text(collective_rows(program.collectives))},
        {"explain", program.explain},
        {"compiled_summary", program.compiled_summary},
        {"collectives", collectives},
        {"why", explorer_.why.shown},
        {"why_rect", {explorer_.why.drawn.x0, explorer_.why.drawn.y0, explorer_.why.drawn.x1, explorer_.why.drawn.y1}}};
  }
  const TimelineViewLayout& drawn = explorer_.timeline_drawn;
  if (!drawn.lanes.empty()) {
    const auto box = [](const Rect& r) { return nlohmann::json{r.x0, r.y0, r.x1, r.y1}; };
    nlohmann::json lanes = nlohmann::json::array();
    for (const TimelineLane& lane : drawn.lanes) {
      lanes.push_back(
          {{"label", lane.label}, {"compute", box(lane.compute)}, {"communication", box(lane.communication)}});
    }
    nlohmann::json segments = nlohmann::json::array();
    for (const TimelineSegment& segment : drawn.segments) {
      segments.push_back({{"lane", segment.lane},
                          {"row", segment.interval.row},
                          {"label", segment.interval.label},
                          {"category", segment.interval.category},
                          {"start_s", segment.interval.start},
                          {"seconds", segment.interval.seconds},
                          {"bytes_per_device", segment.bytes_per_device},
                          {"rect", box(segment.rect)}});
    }
    stats["timeline"] = {{"schedule", drawn.timeline.schedule == Schedule::kSerial ? "serial" : "overlapped"},
                         {"total_s", drawn.timeline.total_seconds},
                         {"px_per_s", drawn.pixels_per_second},
                         {"lanes", lanes},
                         {"segments", segments}};
  }
  nlohmann::json trees = nlohmann::json::array();
  if (explorer_.snapshot) {
    for (const TreeInfo& tree : explorer_.snapshot->trees) {
      // The tree as the Variables panel shows it, one indented line per row.
      std::vector<std::string> lines;
      for (const TreeRow& row : tree_rows(tree)) {
        std::string line = std::string(static_cast<std::size_t>(row.depth) * 2, ' ') + row.label;
        if (row.is_leaf) {
          const VariableInfo& leaf = tree.leaves[row.leaf];
          line += "  " + leaf.type_text + "  " + leaf.sharding_text;
          if (!leaf.annotation.empty()) line += "  " + leaf.annotation;
        }
        lines.push_back(line + "  " + per_device_bytes_text(row.bytes_per_device));
      }
      nlohmann::json leaves = nlohmann::json::array();
      for (const VariableInfo& leaf : tree.leaves) leaves.push_back(leaf.name);
      trees.push_back({{"name", tree.name},
                       {"type", tree.type_name},
                       {"bytes_per_device", per_device_bytes_text(tree_bytes_per_device(tree))},
                       {"rows", lines},
                       {"leaves", leaves}});
    }
  }
  stats["trees"] = trees;
  if (options_.soak_seconds) {
    nlohmann::json actions;
    for (int k = 0; k < kSoakActionKinds; ++k)
      actions[soak_action_name(static_cast<SoakActionKind>(k))] = soak_actions_[static_cast<std::size_t>(k)];
    const std::set<std::uint64_t> ids(soak_cell_ids_.begin(), soak_cell_ids_.end());
    int run = 0;
    int failed = 0;
    for (const ConsoleEntry& entry : explorer_.console) {
      if (!ids.contains(entry.id) || !entry.result) continue;
      ++run;
      if (entry.result->status == CellRecord::Status::kError) ++failed;
    }
    stats["soak"] = {{"seconds", *options_.soak_seconds},
                     {"seed", options_.soak_seed},
                     {"actions", actions},
                     {"skipped_busy", soak_skipped_busy_},
                     {"rss_kb", rss_kb_},
                     {"quits_cancelled", quits_cancelled_},
                     {"cells_run", run},
                     {"cells_failed", failed}};
  }
  const auto rect_json = [](const Rect& r) { return nlohmann::json{r.x0, r.y0, r.x1, r.y1}; };
  stats["present"] = explorer_.present;
  stats["present_rect"] = rect_json(explorer_.present_rect);
  stats["lesson"] = {{"title", explorer_.lesson.lesson.title},
                     {"steps", explorer_.lesson.lesson.steps.size()},
                     {"step", explorer_.lesson.cursor.current()},
                     {"ran", explorer_.lesson.cursor.ran()},
                     {"heading_rect", rect_json(explorer_.lesson_heading_rect)}};
  nlohmann::json notations = nlohmann::json::array();
  for (const NotationRow& row : explorer_.notations.rows) {
    notations.push_back({{"kind", notation_kind_name(row.kind)}, {"text", row.text}, {"error", row.error}});
  }
  stats["notations"] = notations;
  stats["canvas_caption"] = explorer_.canvas.caption;
  stats["canvas_error"] = explorer_.canvas.error;
  stats["hover"] = explorer_.hover_text;
  stats["canvas_zoom"] = explorer_.canvas.view ? explorer_.canvas.view->zoom : 0.0;
  nlohmann::json labels = nlohmann::json::array();
  for (const CanvasLabel& label : explorer_.canvas.labels) {
    labels.push_back({{"text", label.text}, {"rect", {label.rect.x0, label.rect.y0, label.rect.x1, label.rect.y1}}});
  }
  stats["canvas_labels"] = labels;
  stats["palette"] = palette_name(explorer_.settings.palette);
  stats["canvas_rect"] = {explorer_.canvas_screen_rect.x0, explorer_.canvas_screen_rect.y0,
                          explorer_.canvas_screen_rect.x1, explorer_.canvas_screen_rect.y1};
  std::ofstream(*options_.stats) << stats.dump(2) << "\n";
}

bool Driver::cancel_quit() {
  if (step_ != Step::kSoak) return false;
  ++quits_cancelled_;
  return true;
}

void Driver::soak_frame(double now, float width, float height) {
  if (step_ != Step::kSoak) return;
  if (now >= next_rss_sample_) {
    if (const std::optional<long> kb = current_rss_kb()) rss_kb_.push_back(*kb);
    next_rss_sample_ += 1.0;
  }
  ImGuiIO& io = ImGui::GetIO();
  // Keys pressed last frame are released now.
  for (int k = 0; k < kSoakKeys; ++k) {
    constexpr ImGuiKey kKeys[kSoakKeys] = {ImGuiKey_Enter,     ImGuiKey_Backspace,  ImGuiKey_Tab,
                                           ImGuiKey_LeftArrow, ImGuiKey_RightArrow, ImGuiKey_UpArrow,
                                           ImGuiKey_DownArrow, ImGuiKey_Escape};
    const int index = io.KeyMap[kKeys[k]];
    if (index >= 0 && index < 512) io.KeysDown[index] = false;
  }
  if (input_frames_.empty() && soak_wait_frames_ > 0) {
    --soak_wait_frames_;
  } else if (input_frames_.empty()) {
    soak_wait_frames_ = soak_generator_.frames_until_next();
    const SoakAction action = soak_generator_.next();
    // Explorer actions wait for the running cell, as a person's would; the input goes on regardless.
    if (!soak_action_is_input(action.kind) && !explorer_.idle()) {
      ++soak_skipped_busy_;
    } else {
      ++soak_actions_[static_cast<std::size_t>(action.kind)];
      const float x0 = action.x0 * width;
      const float y0 = action.y0 * height;
      const float x1 = action.x1 * width;
      const float y1 = action.y1 * height;
      switch (action.kind) {
        case SoakActionKind::kClick:
          input_frames_.push_back({x0, y0, action.button, 0, -1, 0});
          input_frames_.push_back({x0, y0, -1, 0, -1, 0});
          break;
        case SoakActionKind::kDrag:
          input_frames_.push_back({x0, y0, action.button, 0, -1, 0});
          input_frames_.push_back({(x0 + x1) / 2, (y0 + y1) / 2, action.button, 0, -1, 0});
          input_frames_.push_back({x1, y1, action.button, 0, -1, 0});
          input_frames_.push_back({x1, y1, -1, 0, -1, 0});
          break;
        case SoakActionKind::kWheel: input_frames_.push_back({x0, y0, -1, action.wheel, -1, 0}); break;
        case SoakActionKind::kType:
          input_frames_.push_back({pointer_x_, pointer_y_, -1, 0, -1, static_cast<unsigned>(action.character)});
          break;
        case SoakActionKind::kKey: {
          constexpr ImGuiKey kKeys[kSoakKeys] = {ImGuiKey_Enter,     ImGuiKey_Backspace,  ImGuiKey_Tab,
                                                 ImGuiKey_LeftArrow, ImGuiKey_RightArrow, ImGuiKey_UpArrow,
                                                 ImGuiKey_DownArrow, ImGuiKey_Escape};
          input_frames_.push_back({pointer_x_, pointer_y_, -1, 0, kKeys[static_cast<int>(action.key)], 0});
          break;
        }
        case SoakActionKind::kRunCell:
          soak_cell_ids_.push_back(explorer_.run(soak_cells()[action.index].source, false));
          break;
        case SoakActionKind::kApplySpec:
          (void)explorer_.apply_spec_text(soak_names()[action.index % 64], soak_specs()[action.index / 64]);
          break;
        case SoakActionKind::kSwitchDevices: (void)explorer_.switch_devices(soak_presets()[action.index]); break;
        case SoakActionKind::kSelect: explorer_.select(soak_names()[action.index]); break;
        case SoakActionKind::kToggleView: explorer_.canvas.device_view = !explorer_.canvas.device_view; break;
        case SoakActionKind::kProgramView: explorer_.program_mode = static_cast<int>(action.index); break;
      }
    }
  }
  InputFrame frame{pointer_x_, pointer_y_, -1, 0, -1, 0};
  if (!input_frames_.empty()) {
    frame = input_frames_.front();
    input_frames_.pop_front();
  }
  pointer_x_ = frame.x;
  pointer_y_ = frame.y;
  io.MousePos = ImVec2(frame.x, frame.y);
  for (int b = 0; b < 2; ++b) io.MouseDown[b] = frame.button_down == b;
  io.MouseWheel = frame.wheel;
  if (frame.key_down >= 0) {
    const int index = io.KeyMap[frame.key_down];
    if (index >= 0 && index < 512) io.KeysDown[index] = true;
  }
  if (frame.character != 0) io.AddInputCharacter(frame.character);
}

}  // namespace shardscope::ui
