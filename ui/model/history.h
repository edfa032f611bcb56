// Console history: entries, Up/Down navigation with the unfinished input kept, and its file.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::ui {

class History {
 public:
  explicit History(std::size_t capacity = 1000) : capacity_(capacity) {}

  // Blank entries and repeats of the newest entry are not added; the oldest fall off past capacity.
  void add(const std::string& entry);
  [[nodiscard]] const std::vector<std::string>& entries() const { return entries_; }

  // Up: the next older entry (the first step remembers `current_input`); nullopt at the oldest.
  [[nodiscard]] std::optional<std::string> older(const std::string& current_input);
  // Down: the next newer entry, then the remembered input; nullopt when not navigating.
  [[nodiscard]] std::optional<std::string> newer();
  void stop_navigating() { position_.reset(); }

  // One JSON string per line, so multi-line cells survive. A missing file is an empty history;
  // unreadable lines are skipped.
  void load(const std::string& path);
  // Written beside the file and renamed over it: a crash never leaves half a history. False on failure.
  [[nodiscard]] bool save(const std::string& path) const;

 private:
  std::size_t capacity_;
  std::vector<std::string> entries_;
  std::optional<std::size_t> position_;  // index into entries_ while navigating
  std::string draft_;
};

// Replaces `path` with `content` atomically (temporary file + rename). False on failure.
[[nodiscard]] bool write_file_atomically(const std::string& path, const std::string& content);

}  // namespace shardscope::ui
