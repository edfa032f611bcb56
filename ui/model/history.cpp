// Console history and atomic file writes.
#include "ui/model/history.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace shardscope::ui {

void History::add(const std::string& entry) {
  position_.reset();
  if (entry.find_first_not_of(" \t\r\n") == std::string::npos) return;
  if (!entries_.empty() && entries_.back() == entry) return;
  entries_.push_back(entry);
  if (entries_.size() > capacity_) {
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(entries_.size() - capacity_));
  }
}

std::optional<std::string> History::older(const std::string& current_input) {
  if (entries_.empty()) return std::nullopt;
  if (!position_) {
    draft_ = current_input;
    position_ = entries_.size();
  }
  if (*position_ == 0) return std::nullopt;
  --*position_;
  return entries_[*position_];
}

std::optional<std::string> History::newer() {
  if (!position_) return std::nullopt;
  ++*position_;
  if (*position_ >= entries_.size()) {
    position_.reset();
    return draft_;
  }
  return entries_[*position_];
}

void History::load(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    const nlohmann::json value = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (value.is_string()) add(value.get<std::string>());
  }
  position_.reset();
}

bool History::save(const std::string& path) const {
  std::string content;
  for (const std::string& entry : entries_) content += nlohmann::json(entry).dump() + "\n";
  return write_file_atomically(path, content);
}

bool write_file_atomically(const std::string& path, const std::string& content) {
  std::error_code ignored;
  // A symlinked file keeps its link: the link's target is what gets replaced. A directory is never replaced.
  std::filesystem::path target(path);
  if (std::filesystem::is_symlink(target, ignored)) target = std::filesystem::weakly_canonical(target, ignored);
  if (std::filesystem::is_directory(target, ignored)) return false;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ignored);
  const std::string temporary = target.string() + "." + std::to_string(getpid()) + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return false;
    file << content;
    if (!file.flush()) return false;
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) std::filesystem::remove(temporary, ignored);
  return !error;
}

}  // namespace shardscope::ui
