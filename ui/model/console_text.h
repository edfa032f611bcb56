// Console text helpers: when Enter should continue a cell, and the word Tab completes.
#pragma once

#include <string>
#include <vector>

namespace shardscope::ui {

// True when `source` cannot run yet the way Python's console sees it: an open bracket or string, a
// trailing backslash, or a last line ending in ':' (a block header).
[[nodiscard]] bool needs_more_input(const std::string& source);

// The indentation a new line after `source` gets: the last line's, plus four after a block header.
[[nodiscard]] std::string continuation_indent(const std::string& source);

// The dotted name ending at `cursor` ("jnp.ara" in "y = jnp.ara"); empty when none.
[[nodiscard]] std::string completion_stem(const std::string& text, std::size_t cursor);

// The longest common prefix of `candidates` (empty for none).
[[nodiscard]] std::string common_prefix(const std::vector<std::string>& candidates);

}  // namespace shardscope::ui
