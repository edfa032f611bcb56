// Parsers of the sharding notations back to a PartitionSpec; the HLO form by search over the mesh's axes.
#include "sharding/notation_parse.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <set>

#include "base/dtype.h"
#include "base/error.h"
#include "base/text_parse.h"
#include "sharding/notation.h"

namespace shardscope {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A cursor over one notation's text that fails with a message naming the notation, the text and the column.
class Reader {
 public:
  Reader(std::string_view notation, std::string_view text) : notation_(notation), text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    constexpr std::size_t kShown = 120;  // explicit device lists can be long; the start says which text it was
    const std::string shown = text_.size() > kShown ? std::string(text_.substr(0, kShown)) + "..." : std::string(text_);
    throw value_error(std::string(notation_) + " " + python_string_repr(shown) + ": " + what);
  }
  [[noreturn]] void fail_here(const std::string& what) const { fail(what + " at column " + std::to_string(pos_ + 1)); }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
  }
  [[nodiscard]] bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  [[nodiscard]] char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!eat(token)) {
      if (at_end()) fail("expected '" + std::string(token) + "' but the text ended");
      fail_here("expected '" + std::string(token) + "'");
    }
  }
  void expect_end() {
    if (!at_end()) fail_here("unexpected '" + std::string(text_.substr(pos_)) + "'");
  }
  // Letters, digits and underscores (`allow_underscore` false stops at '_', as in the book's I_X).
  std::string word(std::string_view what, bool allow_underscore = true) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_]) && (allow_underscore || text_[pos_] != '_')) ++pos_;
    if (pos_ == start) fail_here("expected " + std::string(what));
    return std::string(text_.substr(start, pos_ - start));
  }
  // A non-negative integer that fits an int64.
  int64_t integer(std::string_view what) {
    skip_space();
    const std::size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        fail("the " + std::string(what) + " " + std::string(text_.substr(start, pos_ - start + 1)) +
             "... is too large");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) fail_here("expected " + std::string(what));
    return value;
  }
  std::vector<int64_t> integer_list(std::string_view open, std::string_view close, std::string_view what) {
    expect(open);
    std::vector<int64_t> values;
    if (eat(close)) return values;
    do {
      values.push_back(integer(what));
    } while (eat(","));
    expect(close);
    return values;
  }
  std::string quoted() {
    expect("\"");
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') ++pos_;
    if (pos_ >= text_.size()) fail("unterminated string starting at column " + std::to_string(start));
    const std::string out(text_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }
  // Everything up to (not including) `stop`, consumed with it.
  std::string until(char stop) {
    const std::size_t start = pos_;
    const std::size_t end = text_.find(stop, pos_);
    if (end == std::string_view::npos)
      fail("'" + std::string(1, stop) + "' missing after column " + std::to_string(start));
    pos_ = end + 1;
    return std::string(text_.substr(start, end - start));
  }

 private:
  std::string_view notation_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string axes_list_text(const Mesh& mesh) {
  std::vector<std::string> axes;
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    axes.push_back(python_string_repr(mesh.axis_names()[a]) + "=" + std::to_string(mesh.axis_sizes()[a]));
  }
  return "(" + join(axes, ", ") + ")";
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

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

namespace {

// ---- HloSharding ----

// A tile assignment: tiles per dim (the replicated group last when `replicate`), and each tile's devices.
struct TileAssignment {
  std::vector<int64_t> tiles;
  std::vector<std::vector<int64_t>> groups;  // row-major over the array dims' tiles; each group sorted
};

// The devices of `order`-permuted iota over `reshape`, row-major: XLA's IotaTileAssignment.
std::vector<int64_t> iota_devices(const std::vector<int64_t>& reshape, const std::vector<int64_t>& perm,
                                  int64_t count) {
  std::vector<int64_t> strides(reshape.size(), 1);
  for (std::size_t a = reshape.size(); a-- > 1;) strides[a - 1] = strides[a] * reshape[a];
  std::vector<int64_t> counter(perm.size(), 0);
  std::vector<int64_t> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int64_t n = 0; n < count; ++n) {
    int64_t flat = 0;
    for (std::size_t k = 0; k < perm.size(); ++k) flat += counter[k] * strides[static_cast<std::size_t>(perm[k])];
    out.push_back(flat);
    for (std::size_t k = perm.size(); k-- > 0;) {
      if (++counter[k] < reshape[static_cast<std::size_t>(perm[k])]) break;
      counter[k] = 0;
    }
  }
  return out;
}

// Reads an HloSharding over `device_count` devices into its tiles over `rank` dims and their device groups.
TileAssignment read_hlo(Reader& reader, int64_t device_count, std::size_t rank) {
  (void)reader.eat("sharding=");
  reader.expect("{");
  TileAssignment out;
  if (reader.eat("replicated")) {
    reader.expect("}");
    reader.expect_end();
    out.tiles.assign(rank, 1);
    out.groups.emplace_back();
    for (int64_t d = 0; d < device_count; ++d) out.groups.back().push_back(d);
    return out;
  }
  if (reader.eat("maximal")) {
    if (device_count != 1)
      reader.fail("a maximal sharding puts the whole array on one device, which no spec over a mesh of " +
                  std::to_string(device_count) + " devices does");
    reader.expect("device");
    reader.expect("=");
    (void)reader.integer("device");
    reader.expect("}");
    reader.expect_end();
    out.tiles.assign(rank, 1);
    out.groups = {{0}};
    return out;
  }
  if (reader.eat("manual")) reader.fail("a manual sharding has no layout over the mesh");
  reader.expect("devices=");
  const std::vector<int64_t> tiles = reader.integer_list("[", "]", "tile count");
  if (tiles.empty()) reader.fail("no tile dims");
  int64_t total = 1;
  for (const int64_t t : tiles) {
    if (t < 1) reader.fail("a tile count of 0");
    if (t > device_count || total * t > device_count) {
      reader.fail("the tiles need more devices than the mesh's " + std::to_string(device_count));
    }
    total *= t;
  }
  std::vector<int64_t> devices;
  if (reader.eat("<=")) {
    const std::vector<int64_t> reshape = reader.integer_list("[", "]", "iota dim");
    int64_t iota_total = 1;
    for (const int64_t r : reshape) {
      if (r < 1 || r > device_count || iota_total * r > device_count) {
        reader.fail("the iota's dims do not multiply to the mesh's " + std::to_string(device_count) + " devices");
      }
      iota_total *= r;
    }
    std::vector<int64_t> perm(reshape.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    if (reader.eat("T")) {
      perm = reader.integer_list("(", ")", "transpose dim");
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (sorted.size() != reshape.size() || sorted[i] != static_cast<int64_t>(i)) {
          reader.fail("the transpose is not a permutation of the iota's " + std::to_string(reshape.size()) + " dims");
        }
      }
    }
    if (iota_total != total) {
      reader.fail("the iota has " + std::to_string(iota_total) + " devices but the tiles need " +
                  std::to_string(total));
    }
    devices = iota_devices(reshape, perm, total);
  } else {
    std::set<int64_t> seen;
    do {
      const int64_t device = reader.integer("device number");
      if (device >= device_count) {
        reader.fail("device " + std::to_string(device) + " is not in the mesh's " + std::to_string(device_count) +
                    " devices");
      }
      if (!seen.insert(device).second) reader.fail("device " + std::to_string(device) + " appears twice");
      devices.push_back(device);
    } while (reader.eat(","));
    if (static_cast<int64_t>(devices.size()) != total) {
      reader.fail(std::to_string(devices.size()) + " devices listed but the tiles need " + std::to_string(total));
    }
  }
  bool replicate = false;
  if (reader.eat("last_tile_dim_replicate")) {
    replicate = true;
  } else if (reader.eat("last_tile_dims")) {
    reader.expect("=");
    reader.expect("{");
    if (!reader.eat("replicated")) reader.fail_here("only last_tile_dims={replicated} has a layout over the mesh");
    reader.expect("}");
    replicate = true;
  }
  reader.expect("}");
  reader.expect_end();
  if (total != device_count) {
    reader.fail("the tiles cover " + std::to_string(total) + " devices but the mesh has " +
                std::to_string(device_count));
  }
  const std::size_t dims = tiles.size() - (replicate ? 1 : 0);
  if (dims != rank) {
    reader.fail(std::to_string(dims) + (dims == 1 ? " tiled dim" : " tiled dims") + " for an array of rank " +
                std::to_string(rank));
  }
  const int64_t group = replicate ? tiles.back() : 1;
  out.tiles.assign(tiles.begin(), tiles.begin() + static_cast<std::ptrdiff_t>(dims));
  for (std::size_t start = 0; start < devices.size(); start += static_cast<std::size_t>(group)) {
    std::vector<int64_t> members(devices.begin() + static_cast<std::ptrdiff_t>(start),
                                 devices.begin() + static_cast<std::ptrdiff_t>(start) + group);
    std::sort(members.begin(), members.end());
    out.groups.push_back(std::move(members));
  }
  return out;
}

// The tile assignment of a candidate layout, read back from the formatter's explicit form.
TileAssignment candidate_assignment(const Mesh& mesh, const std::vector<std::vector<std::string>>& dims) {
  const std::string text = hlo_sharding_notation(mesh, dims, false);
  Reader reader("HloSharding", text);
  return read_hlo(reader, mesh.size(), dims.size());
}

}  // namespace

PartitionSpec parse_hlo_sharding(std::string_view text, const Mesh& mesh, std::size_t rank) {
  Reader reader("HloSharding", text);
  if (reader.at_end()) reader.fail("the text is empty");
  const TileAssignment wanted = read_hlo(reader, mesh.size(), rank);
  // Each dim takes, in order, distinct mesh axes whose sizes multiply to its tile count. Size-1 axes change no
  // device's place, so they stay out of the spec.
  std::vector<std::string> axes;
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    if (mesh.axis_sizes()[a] > 1) axes.push_back(mesh.axis_names()[a]);
  }
  std::vector<std::vector<std::string>> dims(rank);
  std::vector<bool> used(axes.size(), false);
  std::optional<std::vector<std::vector<std::string>>> found;
  std::function<void(std::size_t, int64_t)> place = [&](std::size_t d, int64_t left) {
    if (found) return;
    if (d == rank) {
      if (candidate_assignment(mesh, dims).groups == wanted.groups) found = dims;
      return;
    }
    if (left == 1) {
      place(d + 1, d + 1 < rank ? wanted.tiles[d + 1] : 1);
      return;
    }
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const int64_t size = mesh.axis_size(axes[a]);
      if (used[a] || left % size != 0) continue;
      used[a] = true;
      dims[d].push_back(axes[a]);
      place(d, left / size);
      dims[d].pop_back();
      used[a] = false;
    }
  };
  place(0, rank > 0 ? wanted.tiles[0] : 1);
  if (!found) {
    reader.fail("no PartitionSpec over the mesh's axes " + axes_list_text(mesh) +
                " puts the same devices on each tile");
  }
  return finish(reader, closed(*found), {}, rank);
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
