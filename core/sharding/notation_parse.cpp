// Parsers of jax.typeof's, the scaling book's and Shardy's notations back to a PartitionSpec, and the checks every
// notation shares (HloSharding's parser is in notation_parse_hlo.cpp).
#include "sharding/notation_parse.h"

#include <algorithm>
#include <set>

#include "base/dtype.h"
#include "base/text_parse.h"
#include "sharding/notation_reader.h"

namespace shardscope {
namespace notation_detail {

std::string axes_list_text(const Mesh& mesh) {
  std::vector<std::string> axes;
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    axes.push_back(python_string_repr(mesh.axis_names()[a]) + "=" + std::to_string(mesh.axis_sizes()[a]));
  }
  return "(" + join(axes, ", ") + ")";
}

namespace {
std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}
}  // namespace

// The mesh axis `name` names: itself, or the one axis equal to it ignoring case (the book writes X for 'x').
std::optional<std::string> resolve_axis(const Mesh& mesh, const std::string& name, bool any_case) {
  if (mesh.axis_index(name)) return name;
  if (!any_case) return std::nullopt;
  std::optional<std::string> found;
  for (const std::string& axis : mesh.axis_names()) {
    if (lower(axis) != lower(name)) continue;
    if (found) return std::nullopt;  // 'x' and 'X' both: only the exact name says which
    found = axis;
  }
  return found;
}

std::string axis_or_fail(const Reader& reader, const Mesh& mesh, const std::string& name, bool any_case) {
  if (auto axis = resolve_axis(mesh, name, any_case)) return *axis;
  reader.fail("unknown mesh axis " + python_string_repr(name) + "; the mesh's axes are " + axes_list_text(mesh));
}

// Per-dim axes (nullopt: an open dim, P.UNCONSTRAINED) into a spec after the checks every notation shares.
PartitionSpec finish(const Reader& reader, const std::vector<std::optional<std::vector<std::string>>>& dims,
                     const std::vector<std::string>& unreduced, std::size_t rank) {
  if (dims.size() != rank) {
    reader.fail(std::to_string(dims.size()) + (dims.size() == 1 ? " dim" : " dims") + " for an array of rank " +
                std::to_string(rank));
  }
  std::set<std::string> seen;
  std::vector<SpecEntry> entries;
  for (const auto& dim : dims) {
    if (!dim) {
      entries.push_back(SpecEntry::unconstrained());
      continue;
    }
    for (const std::string& axis : *dim) {
      if (!seen.insert(axis).second) reader.fail("mesh axis " + python_string_repr(axis) + " is used twice");
    }
    entries.push_back(SpecEntry::of_axes(*dim));
  }
  for (const std::string& axis : unreduced) {
    if (!seen.insert(axis).second) reader.fail("mesh axis " + python_string_repr(axis) + " is used twice");
  }
  PartitionSpec spec(std::move(entries));
  if (!unreduced.empty()) spec.set_unreduced(unreduced);
  return spec;
}

std::vector<std::optional<std::vector<std::string>>> closed(std::vector<std::vector<std::string>> dims) {
  return {std::make_move_iterator(dims.begin()), std::make_move_iterator(dims.end())};
}

}  // namespace notation_detail

namespace {

using notation_detail::axis_or_fail;
using notation_detail::closed;
using notation_detail::finish;
using notation_detail::Reader;
using notation_detail::resolve_axis;

// ---- jax.typeof ----

std::vector<std::string> typeof_axes(Reader& reader, const Mesh& mesh) {
  std::vector<std::string> axes;
  if (reader.eat("(")) {
    do {
      axes.push_back(axis_or_fail(reader, mesh, reader.word("a mesh axis"), false));
    } while (reader.eat(","));
    reader.expect(")");
  } else {
    axes.push_back(axis_or_fail(reader, mesh, reader.word("a mesh axis"), false));
  }
  return axes;
}

}  // namespace

PartitionSpec parse_typeof_notation(std::string_view text, const Mesh& mesh, const Shape& shape) {
  Reader reader("jax.typeof", text);
  if (reader.at_end()) reader.fail("the text is empty");
  const bool wrapped = reader.eat("ShapedArray(");
  (void)reader.eat("~");  // a weak type
  const std::string dtype = reader.word("a dtype");
  if (!parse_dtype(dtype)) reader.fail("unknown dtype " + python_string_repr(dtype));
  if (reader.eat("<")) {
    (void)reader.word("a memory space");
    reader.expect(">");
  }
  reader.expect("[");
  Shape dims;
  std::vector<std::vector<std::string>> dim_axes;
  if (!reader.eat("]")) {
    do {
      dims.push_back(reader.integer("dimension size"));
      dim_axes.emplace_back();
      if (reader.eat("@")) dim_axes.back() = typeof_axes(reader, mesh);
    } while (reader.eat(","));
    reader.expect("]");
  }
  std::vector<std::string> unreduced;
  if (reader.eat("{")) {
    do {
      if (reader.eat("U:")) {
        unreduced = typeof_axes(reader, mesh);
      } else if (reader.eat("V:")) {
        (void)typeof_axes(reader, mesh);  // varying manual axes say nothing about the layout
      } else {
        reader.fail_here("expected 'U:' or 'V:'");
      }
    } while (reader.eat(","));
    reader.expect("}");
  }
  if (wrapped) {
    if (reader.eat(",")) {
      reader.expect("weak_type");
      reader.expect("=");
      (void)reader.word("True or False");
    }
    reader.expect(")");
  }
  reader.expect_end();
  if (dims != shape) {
    reader.fail("the shape " + python_int_tuple(dims) + " is not the array's shape " + python_int_tuple(shape));
  }
  return finish(reader, closed(std::move(dim_axes)), unreduced, shape.size());
}

namespace {

// ---- the scaling book ----

// The axes one subscript names: "X", "{data}", "{XY}" (one-letter axes run together), "{data,model}".
std::vector<std::string> book_subscript(Reader& reader, const Mesh& mesh) {
  std::string body;
  if (reader.eat("{")) {
    body = reader.until('}');
  } else {
    body = reader.word("a subscript", false);
  }
  std::vector<std::string> axes;
  if (body.find(',') != std::string::npos) {
    for (std::string part : split(body, ',')) axes.push_back(axis_or_fail(reader, mesh, trim(part), true));
    return axes;
  }
  const std::string name = trim(body);
  if (name.empty()) reader.fail("an empty subscript");
  if (auto axis = resolve_axis(mesh, name, true)) return {*axis};
  for (const char letter : name) axes.push_back(axis_or_fail(reader, mesh, std::string(1, letter), true));
  return axes;
}

}  // namespace

PartitionSpec parse_book_notation(std::string_view text, const Mesh& mesh, std::size_t rank) {
  Reader reader("scaling-book notation", text);
  if (reader.at_end()) reader.fail("the text is empty");
  (void)reader.word("the array's name");
  reader.expect("[");
  std::vector<std::vector<std::string>> dims;
  if (!reader.eat("]")) {
    do {
      (void)reader.word("a dimension's name", false);
      dims.emplace_back();
      if (reader.eat("_")) dims.back() = book_subscript(reader, mesh);
    } while (reader.eat(","));
    reader.expect("]");
  }
  std::vector<std::string> unreduced;
  if (reader.eat("{")) {
    reader.expect("U_");
    unreduced = book_subscript(reader, mesh);
    reader.expect("}");
  }
  reader.expect_end();
  return finish(reader, closed(std::move(dims)), unreduced, rank);
}

namespace {

// ---- Shardy ----

// {"x", "y"} or {"x", ?} or {?}: the axes, and whether the dim is open.
std::pair<std::vector<std::string>, bool> shardy_axes(Reader& reader, const Mesh& mesh) {
  reader.expect("{");
  std::vector<std::string> axes;
  bool open = false;
  if (!reader.eat("}")) {
    do {
      if (reader.eat("?")) {
        open = true;
        break;
      }
      const std::string name = reader.quoted();
      if (reader.peek() == ':')
        reader.fail("sub-axes such as " + python_string_repr(name + ":(...)") + " are not supported");
      axes.push_back(axis_or_fail(reader, mesh, name, false));
    } while (reader.eat(","));
    reader.expect("}");
  }
  if (reader.eat("p")) (void)reader.integer("priority");  // a propagation priority: no bearing on the layout
  return {axes, open};
}

}  // namespace

PartitionSpec parse_shardy_notation(std::string_view text, const Mesh& mesh, std::size_t rank) {
  Reader reader("Shardy sharding", text);
  if (reader.at_end()) reader.fail("the text is empty");
  (void)reader.eat("#sdy.sharding");
  reader.expect("<");
  reader.expect("@");
  (void)reader.word("the mesh's name");
  reader.expect(",");
  reader.expect("[");
  std::vector<std::optional<std::vector<std::string>>> dims;
  if (!reader.eat("]")) {
    do {
      auto [axes, open] = shardy_axes(reader, mesh);
      if (open && axes.empty()) {
        dims.emplace_back(std::nullopt);
      } else {
        dims.emplace_back(std::move(axes));  // an open dim with axes: those axes, more may be added by propagation
      }
    } while (reader.eat(","));
    reader.expect("]");
  }
  std::vector<std::string> unreduced;
  std::vector<std::string> replicated;
  while (reader.eat(",")) {
    const std::string key = reader.word("replicated= or unreduced=");
    if (key != "replicated" && key != "unreduced") reader.fail("unknown field " + python_string_repr(key));
    reader.expect("=");
    auto [axes, open] = shardy_axes(reader, mesh);
    if (open) reader.fail("'?' in " + key + "=");
    (key == "replicated" ? replicated : unreduced) = std::move(axes);
  }
  reader.expect(">");
  reader.expect_end();
  PartitionSpec spec = finish(reader, dims, unreduced, rank);
  for (const std::string& axis : replicated) {
    for (const auto& dim : dims) {
      if (dim && std::find(dim->begin(), dim->end(), axis) != dim->end()) {
        reader.fail("mesh axis " + python_string_repr(axis) + " is both sharding a dim and replicated");
      }
    }
  }
  return spec;
}

std::string_view notation_kind_name(NotationKind kind) {
  switch (kind) {
    case NotationKind::kSpec: return "spec";
    case NotationKind::kTypeof: return "typeof";
    case NotationKind::kBook: return "book";
    case NotationKind::kShardy: return "shardy";
    case NotationKind::kHlo: return "hlo";
  }
  return "";
}

std::string_view notation_kind_title(NotationKind kind) {
  switch (kind) {
    case NotationKind::kSpec: return "JAX spec";
    case NotationKind::kTypeof: return "jax.typeof";
    case NotationKind::kBook: return "scaling book";
    case NotationKind::kShardy: return "Shardy";
    case NotationKind::kHlo: return "HloSharding";
  }
  return "";
}

std::optional<NotationKind> parse_notation_kind(std::string_view name) {
  for (const NotationKind kind : kNotationKinds) {
    if (notation_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

PartitionSpec parse_notation(NotationKind kind, std::string_view text, const Mesh& mesh, const Shape& shape) {
  switch (kind) {
    case NotationKind::kSpec: return parse_partition_spec(text);
    case NotationKind::kTypeof: return parse_typeof_notation(text, mesh, shape);
    case NotationKind::kBook: return parse_book_notation(text, mesh, shape.size());
    case NotationKind::kShardy: return parse_shardy_notation(text, mesh, shape.size());
    case NotationKind::kHlo: return parse_hlo_sharding(text, mesh, shape.size());
  }
  return {};
}

}  // namespace shardscope
