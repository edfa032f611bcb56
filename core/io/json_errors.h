// The text of an nlohmann::json error without its "[json.exception.parse_error.101] " tag, for users' messages.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace shardscope {

[[nodiscard]] inline std::string json_error_text(const nlohmann::json::exception& error) {
  std::string text = error.what();
  if (text.starts_with("[json.exception.")) {
    const std::size_t end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  return text;
}

}  // namespace shardscope
