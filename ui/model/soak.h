// The window soak: a seeded generator of random user actions, resident-memory samples and their growth.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace shardscope::ui {

enum class SoakActionKind {
  kClick,          // press and release at a point of the window
  kDrag,           // press, move, release
  kWheel,          // wheel notches at a point
  kType,           // a printable character into whatever has focus
  kKey,            // Enter, Backspace, Tab, an arrow or Escape
  kRunCell,        // a console cell, valid or failing
  kApplySpec,      // a spec, valid or invalid, applied to an array
  kSwitchDevices,  // a device preset (restarts the namespace)
  kSelect,         // a variable selected
  kToggleView,     // Grid <-> Devices
  kProgramView,    // the Program tab's view
};
inline constexpr int kSoakActionKinds = 11;
[[nodiscard]] const char* soak_action_name(SoakActionKind kind);
[[nodiscard]] bool soak_action_is_input(SoakActionKind kind);

enum class SoakKey { kEnter, kBackspace, kTab, kLeft, kRight, kUp, kDown, kEscape };
inline constexpr int kSoakKeys = 8;

struct SoakAction {
  SoakActionKind kind = SoakActionKind::kClick;
  // Points as fractions of the window (0,0 top left .. 1,1 bottom right); (x1, y1) ends a drag.
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float wheel = 0;
  int button = 0;  // 0 left, 1 right
  char character = 'a';
  SoakKey key = SoakKey::kEnter;
  std::size_t index = 0;  // into soak_cells / soak_specs / soak_presets / soak_names, or the program view
  bool operator==(const SoakAction&) const = default;
};

struct SoakCell {
  std::string source;
  bool fails = false;  // raises (syntax error, NameError, bad PartitionSpec, wrong shape)
};
[[nodiscard]] const std::vector<SoakCell>& soak_cells();
[[nodiscard]] const std::vector<std::string>& soak_specs();    // spec texts, some invalid
[[nodiscard]] const std::vector<std::string>& soak_presets();  // small device presets
[[nodiscard]] const std::vector<std::string>& soak_names();    // variables to select and respec

// Reproducible: the same seed gives the same actions and the same frame gaps.
class SoakGenerator {
 public:
  explicit SoakGenerator(std::uint64_t seed) : rng_(seed) {}
  [[nodiscard]] SoakAction next();
  // Frames to wait before the next action (0: the next frame).
  [[nodiscard]] int frames_until_next();

 private:
  float unit();
  std::size_t below(std::size_t n);
  std::mt19937_64 rng_;
};

// VmRSS in kB from the text of /proc/self/status; nullopt when absent.
[[nodiscard]] std::optional<long> parse_vm_rss_kb(const std::string& status_text);
[[nodiscard]] std::optional<long> current_rss_kb();

// Growth after warm-up: the level at the end of warm-up (the last warm-up sample) against the peak after it.
struct SoakGrowth {
  long warmup_kb = 0;
  long end_kb = 0;
  long peak_after_warmup_kb = 0;
  double percent = 0;
};
// nullopt when there is no sample after warm-up.
[[nodiscard]] std::optional<SoakGrowth> soak_growth(const std::vector<long>& samples, std::size_t warmup_samples);

}  // namespace shardscope::ui
