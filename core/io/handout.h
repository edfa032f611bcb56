// Handouts: a lesson and what its cells printed as one self-contained HTML page that opens offline.
#pragma once

#include <string>
#include <vector>

namespace shardscope {

struct HandoutOutput {
  enum class Kind {
    kText,   // printed text and shown values, in a <pre>
    kError,  // a traceback, in a <pre> marked as an error
    kHtml,   // trusted HTML: JAX's coloured grid as a notebook shows it (rich's <pre> of spans)
    kSvg,    // an <svg> diagram of the same grid
  };
  Kind kind = Kind::kText;
  std::string content;
};

struct HandoutCell {
  bool markdown = false;
  std::string source;  // markdown (already uncommented) or Python
  std::vector<HandoutOutput> outputs;
};

// The page: a <title>, inline CSS (no scripts, fonts or links to fetch), each markdown cell rendered, each
// code cell with its outputs. SVGs are inlined without their XML declaration.
[[nodiscard]] std::string render_handout(const std::string& title, const std::vector<HandoutCell>& cells);

}  // namespace shardscope
