// Console text with ANSI colour codes as the HTML that rich shows in Jupyter (its `text/html` output).
#pragma once

#include <string>
#include <string_view>

namespace shardscope {

// rich's Jupyter rendering of `ansi_text` (what its terminal rendering printed): each run of one style a
// <span> with rich's CSS (colour, background, bold, italic, underline) in its default terminal theme, runs of
// equal style merged, the whole in rich's <pre> block. SGR codes rich does not emit are ignored.
[[nodiscard]] std::string ansi_to_jupyter_html(std::string_view ansi_text);

}  // namespace shardscope
