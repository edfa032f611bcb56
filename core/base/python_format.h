// Python-style formatting (reprs of strings, tuples, pretty-printed lists) shared by every repr.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

using Shape = std::vector<int64_t>;

// repr() of a Python str: single quotes unless the text holds a single quote and no double quote.
[[nodiscard]] std::string python_string_repr(std::string_view text);

// repr() of a tuple of ints: "()", "(5,)", "(2, 4)".
[[nodiscard]] std::string python_int_tuple(const std::vector<int64_t>& values);

// repr() of a tuple whose items are already rendered: "()", "(a,)", "(a, b)".
[[nodiscard]] std::string python_tuple(const std::vector<std::string>& rendered_items);

// repr() of a list whose items are already rendered: "[a, b]".
[[nodiscard]] std::string python_list(const std::vector<std::string>& rendered_items);

// What IPython's pretty printer shows for a list: one line when it fits in `width`
// columns, otherwise one item per line ("[a,\n b,\n c]").
[[nodiscard]] std::string ipython_pretty_list(const std::vector<std::string>& rendered_items, std::size_t width = 79);

[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view separator);

// The number of elements of a shape; ValueError naming the shape when it overflows int64 (base/checked_math.h).
[[nodiscard]] int64_t product(const std::vector<int64_t>& values);

}  // namespace shardscope
