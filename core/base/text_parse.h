// Parsers for the small textual forms the command line and scene files use (lists, axis sizes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope {

// "8,8" or "(8, 8)" or "8x8" -> {8, 8}; `what` names the value in errors ("--shape").
[[nodiscard]] std::vector<int64_t> parse_int_list(std::string_view text, std::string_view what);

// "x=2,y=4" -> {{"x", 2}, {"y", 4}}.
[[nodiscard]] std::vector<std::pair<std::string, int64_t>> parse_axis_sizes(std::string_view text,
                                                                            std::string_view what);

// "1.5" -> 1.5, throwing ValueError naming `what` otherwise.
[[nodiscard]] double parse_number(std::string_view text, std::string_view what);

[[nodiscard]] std::vector<std::string> split(std::string_view text, char separator);
[[nodiscard]] std::string trim(std::string_view text);

}  // namespace shardscope
