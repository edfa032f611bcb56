// Shared by the libFuzzer harnesses: what counts as a handled input, and a tiny "key value" line reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/error.h"

namespace shardscope::fuzz {

// A shardscope::Error is the engine's answer to bad input (it becomes JAX's exception in Python). Anything
// else escaping (std::out_of_range, nlohmann's errors, std::length_error, bad_alloc) is a raw internal error
// the user would see, so it is left to propagate and libFuzzer reports it as a crash.
template <typename F>
void expect_handled(F&& body) {
  try {
    body();
  } catch (const Error&) {
  }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// "key value" per line; a later line wins. Lets the structured harnesses keep readable seed files.
inline std::map<std::string, std::string> key_values(std::string_view text) {
  std::map<std::string, std::string> fields;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) fields[std::string(line.substr(0, space))] = line.substr(space + 1);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return fields;
}

}  // namespace shardscope::fuzz
