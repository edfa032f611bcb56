// The differential program fuzzer's generator and runner (see program_fuzz.h). Values stay exact: inputs are
// small integers or floats on a 1/16 grid, and an op is only generated when its result keeps every float
// exactly representable, so the partitioned and single-device runs must agree bit for bit whatever the
// order of their sums.
#include "core/exec/program_fuzz.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "api/lax.h"
#include "api/session.h"
#include "api/transforms.h"
#include "core/exec/conformance_programs.h"
#include "device/presets.h"
#include "ops/ops.h"

namespace shardscope::program_fuzz {
namespace {

using api::Value;
namespace lax = api::lax;
using Layout = std::vector<std::vector<std::string>>;  // mesh axes per dim

const JaxProfile& profile() { return api::session().profile; }

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(engine_() % static_cast<uint64_t>(n)); }
  bool chance(int64_t percent) { return below(100) < percent; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(below(static_cast<int64_t>(items.size())))];
  }

 private:
  std::mt19937_64 engine_;
};

enum class Kind { kUnary, kBinary, kReduce, kDot, kReshape, kTranspose, kSlice, kShardMap };

struct Op {
  Kind kind = Kind::kUnary;
  std::string name;  // the primitive, or the shard_map body's collective
  int a = 0;         // operand slots
  int b = -1;
  std::vector<int64_t> p1, p2, p3;  // axes, permutation, new shape, slice starts/limits/strides, dot dims
  std::vector<std::string> axes;    // shard_map: the mesh axes of the mapped dim
  int64_t dim = 0;                  // shard_map: the mapped dim
};

struct Input {
  Shape shape;
  DType dtype = DType::kFloat32;
  Layout layout;
};

// A value of the program: an argument or an op's result.
struct Slot {
  int input = -1;  // index into inputs, or -1 for an op result
  int op = -1;
};

struct Info {
  Shape shape;
  DType dtype = DType::kFloat32;
  double max_abs = 0;               // bound on |element|
  int frac_bits = 0;                // elements are multiples of 2^-frac_bits
  std::optional<Layout> predicted;  // the layout the sharding rules give, when they are unambiguous
};

struct Program {
  uint64_t seed = 0;
  Mesh mesh;
  std::vector<Input> inputs;
  std::vector<Op> ops;
  std::vector<Slot> slots;
  std::vector<Info> infos;   // per slot
  std::vector<int> outputs;  // slots
};

int64_t product(const Shape& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  return n;
}

bool exact(const Info& info) {
  if (info.dtype == DType::kInt32) return info.max_abs <= 1 << 30;
  return info.max_abs * std::ldexp(1.0, info.frac_bits) <= 1 << 22;  // float32 has a 24-bit significand
}

bool replicated(const Layout& layout) {
  return std::all_of(layout.begin(), layout.end(), [](const auto& axes) { return axes.empty(); });
}

// A random valid placement of the mesh's axes on `shape` (each axis on at most one dim, sizes divisible).
Layout random_layout(const Shape& shape, const Mesh& mesh, Random& random) {
  Layout layout(shape.size());
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    if (shape.empty() || random.chance(35)) continue;
    const auto d = static_cast<std::size_t>(random.below(static_cast<int64_t>(shape.size())));
    int64_t sharded = mesh.axis_sizes()[a];
    for (const std::string& other : layout[d]) sharded *= mesh.axis_size(other);
    if (shape[d] % sharded == 0) layout[d].push_back(mesh.axis_names()[a]);
  }
  return layout;
}

NamedSharding sharding_of(const Mesh& mesh, const Layout& layout) {
  std::vector<SpecEntry> entries;
  for (const auto& axes : layout) entries.push_back(SpecEntry::of_axes(axes));
  return make_named_sharding(mesh, PartitionSpec(entries), profile());
}

Mesh random_mesh(Random& random) {
  static const std::vector<std::vector<int64_t>> shapes = {{1},    {2},    {1, 2}, {2, 1}, {4},
                                                           {2, 2}, {1, 4}, {8},    {2, 4}, {4, 2}};
  const std::vector<int64_t>& shape = random.pick(shapes);
  std::vector<std::string> names =
      shape.size() == 1 ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "y"};
  return make_mesh(shape, names, api::session().devices, profile(),
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

int add_input(Program& program, Shape shape, DType dtype, Random& random) {
  Input input{shape, dtype, random_layout(shape, program.mesh, random)};
  program.inputs.push_back(input);
  program.slots.push_back({static_cast<int>(program.inputs.size()) - 1, -1});
  program.infos.push_back(
      {shape, dtype, 8.0 / (dtype == DType::kInt32 ? 1 : 16), dtype == DType::kInt32 ? 0 : 4, input.layout});
  return static_cast<int>(program.slots.size()) - 1;
}

Shape random_shape(Random& random) {
  Shape shape(static_cast<std::size_t>(1 + random.below(3)));
  for (int64_t& d : shape) d = std::vector<int64_t>{1, 2, 4, 8}[static_cast<std::size_t>(random.below(4))];
  return shape;
}

// Fills `op` and the result's info for one random op on slot `a`; false when the op does not fit.
bool generate_op(Program& program, Random& random, int a, Op& op, Info& out) {
  const Info x = program.infos[static_cast<std::size_t>(a)];
  const auto rank = static_cast<int64_t>(x.shape.size());
  op.a = a;
  out = x;
  out.predicted.reset();
  switch (static_cast<Kind>(random.below(8))) {
    case Kind::kUnary:
      op.kind = Kind::kUnary;
      op.name = random.chance(50) ? "neg" : "abs";
      out.predicted = x.predicted;
      return true;
    case Kind::kBinary: {
      op.kind = Kind::kBinary;
      op.name = random.pick(std::vector<std::string>{"add", "sub", "mul", "max", "min"});
      std::vector<int> same;
      for (std::size_t s = 0; s < program.infos.size(); ++s) {
        if (program.infos[s].shape == x.shape && program.infos[s].dtype == x.dtype) same.push_back(static_cast<int>(s));
      }
      op.b = random.chance(30) ? add_input(program, x.shape, x.dtype, random) : random.pick(same);
      const Info& y = program.infos[static_cast<std::size_t>(op.b)];
      out.frac_bits = op.name == "mul" ? x.frac_bits + y.frac_bits : std::max(x.frac_bits, y.frac_bits);
      out.max_abs = op.name == "mul"                         ? x.max_abs * y.max_abs
                    : (op.name == "add" || op.name == "sub") ? x.max_abs + y.max_abs
                                                             : std::max(x.max_abs, y.max_abs);
      if (x.predicted && y.predicted) {
        if (*x.predicted == *y.predicted || replicated(*y.predicted))
          out.predicted = x.predicted;
        else if (replicated(*x.predicted))
          out.predicted = y.predicted;
      }
      return exact(out);
    }
    case Kind::kReduce: {
      op.kind = Kind::kReduce;
      op.name = random.chance(60) ? "reduce_sum" : "reduce_max";
      int64_t reduced = 1;
      out.shape.clear();
      Layout kept;
      for (int64_t d = 0; d < rank; ++d) {
        if (random.chance(50)) {
          op.p1.push_back(d);
          reduced *= x.shape[static_cast<std::size_t>(d)];
        } else {
          out.shape.push_back(x.shape[static_cast<std::size_t>(d)]);
          if (x.predicted) kept.push_back((*x.predicted)[static_cast<std::size_t>(d)]);
        }
      }
      if (op.p1.empty() || out.shape.empty()) return false;  // keep rank >= 1 for later ops
      if (op.name == "reduce_sum") out.max_abs *= static_cast<double>(reduced);
      if (x.predicted) out.predicted = kept;
      return exact(out);
    }
    case Kind::kDot: {
      op.kind = Kind::kDot;
      op.name = "dot_general";
      const int64_t c = random.below(rank);
      const int64_t k = x.shape[static_cast<std::size_t>(c)];
      const int64_t n = std::vector<int64_t>{1, 2, 4, 8}[static_cast<std::size_t>(random.below(4))];
      const bool batched = rank >= 2 && random.chance(40);
      int64_t batch = batched ? random.below(rank) : -1;
      if (batch == c) return false;
      Shape rhs = batched ? Shape{x.shape[static_cast<std::size_t>(batch)], k, n} : Shape{k, n};
      op.b = add_input(program, rhs, x.dtype, random);
      op.p1 = {c};
      op.p2 = {batched ? 1 : 0};
      if (batched) op.p3 = {batch};
      out.shape.clear();
      if (batched) out.shape.push_back(x.shape[static_cast<std::size_t>(batch)]);
      for (int64_t d = 0; d < rank; ++d) {
        if (d != c && d != batch) out.shape.push_back(x.shape[static_cast<std::size_t>(d)]);
      }
      out.shape.push_back(n);
      const Info& y = program.infos[static_cast<std::size_t>(op.b)];
      out.max_abs = x.max_abs * y.max_abs * static_cast<double>(k);
      out.frac_bits = x.frac_bits + y.frac_bits;
      return exact(out);
    }
    case Kind::kReshape: {
      op.kind = Kind::kReshape;
      op.name = "reshape";
      const int64_t choice = random.below(3);
      if (choice == 0) {
        op.p1 = {product(x.shape)};  // flatten
      } else if (choice == 1 && rank >= 2) {
        const int64_t d = random.below(rank - 1);  // merge d and d + 1
        for (int64_t i = 0; i < rank; ++i) {
          if (i == d + 1) continue;
          op.p1.push_back(i == d ? x.shape[static_cast<std::size_t>(d)] * x.shape[static_cast<std::size_t>(d + 1)]
                                 : x.shape[static_cast<std::size_t>(i)]);
        }
      } else {
        const int64_t d = random.below(rank);  // split d in two
        const int64_t size = x.shape[static_cast<std::size_t>(d)];
        if (size % 2 != 0 || rank >= 4) return false;
        for (int64_t i = 0; i < rank; ++i) {
          if (i == d) {
            op.p1.push_back(2);
            op.p1.push_back(size / 2);
          } else {
            op.p1.push_back(x.shape[static_cast<std::size_t>(i)]);
          }
        }
      }
      out.shape = op.p1;
      return true;
    }
    case Kind::kTranspose: {
      op.kind = Kind::kTranspose;
      op.name = "transpose";
      op.p1.resize(static_cast<std::size_t>(rank));
      for (int64_t d = 0; d < rank; ++d) op.p1[static_cast<std::size_t>(d)] = d;
      for (int64_t d = rank - 1; d > 0; --d) {
        std::swap(op.p1[static_cast<std::size_t>(d)], op.p1[static_cast<std::size_t>(random.below(d + 1))]);
      }
      Layout permuted;
      for (std::size_t d = 0; d < op.p1.size(); ++d) {
        out.shape[d] = x.shape[static_cast<std::size_t>(op.p1[d])];
        if (x.predicted) permuted.push_back((*x.predicted)[static_cast<std::size_t>(op.p1[d])]);
      }
      if (x.predicted) out.predicted = permuted;
      return true;
    }
    case Kind::kSlice: {
      op.kind = Kind::kSlice;
      op.name = "slice";
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t size = x.shape[static_cast<std::size_t>(d)];
        const int64_t start = random.below(size);
        const int64_t limit = start + 1 + random.below(size - start);
        const int64_t stride = 1 + random.below(2);
        op.p1.push_back(start);
        op.p2.push_back(limit);
        op.p3.push_back(stride);
        out.shape[static_cast<std::size_t>(d)] = (limit - start + stride - 1) / stride;
      }
      return true;
    }
    case Kind::kShardMap: {
      op.kind = Kind::kShardMap;
      const std::vector<std::string>& names = program.mesh.axis_names();
      op.axes = random.chance(30) ? names : std::vector<std::string>{random.pick(names)};
      int64_t n = 1;
      for (const std::string& axis : op.axes) n *= program.mesh.axis_size(axis);
      op.dim = random.below(rank);
      if (x.shape[static_cast<std::size_t>(op.dim)] % n != 0) return false;
      op.name = random.pick(std::vector<std::string>{"psum", "pmax", "all_gather", "ppermute", "double"});
      Layout in_layout(static_cast<std::size_t>(rank));
      in_layout[static_cast<std::size_t>(op.dim)] = op.axes;
      if (op.name == "psum" || op.name == "pmax") out.shape[static_cast<std::size_t>(op.dim)] /= n;
      if (op.name == "psum") out.max_abs *= static_cast<double>(n);
      if (op.name == "double") out.max_abs *= 2;
      const bool invariant = op.name == "psum" || op.name == "pmax" || op.name == "all_gather";
      out.predicted = invariant ? Layout(static_cast<std::size_t>(rank)) : in_layout;
      return exact(out);
    }
  }
  return false;
}

Program generate(uint64_t seed) {
  Random random(seed);
  Program program;
  program.seed = seed;
  program.mesh = random_mesh(random);
  const DType dtype = random.chance(50) ? DType::kInt32 : DType::kFloat32;
  const int64_t first_inputs = 1 + random.below(2);
  for (int64_t i = 0; i < first_inputs; ++i) (void)add_input(program, random_shape(random), dtype, random);
  const int64_t length = 1 + random.below(6);
  for (int64_t attempt = 0; static_cast<int64_t>(program.ops.size()) < length && attempt < 100; ++attempt) {
    const int a = static_cast<int>(random.below(static_cast<int64_t>(program.slots.size())));
    const std::size_t slots_before = program.slots.size();
    const std::size_t inputs_before = program.inputs.size();
    Op op;
    Info info;
    if (!generate_op(program, random, a, op, info)) {
      program.slots.resize(slots_before);  // drop an operand made for the rejected op
      program.infos.resize(slots_before);
      program.inputs.resize(inputs_before);
      continue;
    }
    program.ops.push_back(op);
    program.slots.push_back({-1, static_cast<int>(program.ops.size()) - 1});
    program.infos.push_back(info);
  }
  for (std::size_t s = program.slots.size(); s-- > 0 && program.outputs.size() < 2;) {
    if (program.slots[s].op >= 0) program.outputs.push_back(static_cast<int>(s));
  }
  // Propagation runs both ways: a value another op also consumes may take that op's preferred layout, so
  // the rules' answer is only certain along chains where each intermediate value has a single consumer.
  std::vector<int> uses(program.slots.size(), 0);
  for (const Op& op : program.ops) {
    ++uses[static_cast<std::size_t>(op.a)];
    if (op.b >= 0) ++uses[static_cast<std::size_t>(op.b)];
  }
  const auto certain = [&](int slot) {
    const auto s = static_cast<std::size_t>(slot);
    return program.infos[s].predicted && (program.slots[s].input >= 0 || uses[s] == 1);
  };
  for (std::size_t s = 0; s < program.slots.size(); ++s) {
    if (program.slots[s].op < 0) continue;
    const Op& op = program.ops[static_cast<std::size_t>(program.slots[s].op)];
    if (op.kind == Kind::kShardMap) continue;  // the out_specs fix the result whatever the operand's layout
    if (!certain(op.a) || (op.b >= 0 && !certain(op.b))) program.infos[s].predicted.reset();
  }
  for (const int output : program.outputs) {
    if (uses[static_cast<std::size_t>(output)] != 0) program.infos[static_cast<std::size_t>(output)].predicted.reset();
  }
  return program;
}

PartitionSpec spec_of(const Layout& layout) {
  std::vector<SpecEntry> entries;
  for (const auto& axes : layout) entries.push_back(SpecEntry::of_axes(axes));
  return PartitionSpec(entries);
}

// `x` with dim `d` split into (n, size / n): the blocks a shard_map over n devices hands out, as a new dim.
Value split_blocks(const Value& x, int64_t d, int64_t n) {
  Shape shape;
  for (int64_t i = 0; i < static_cast<int64_t>(x.aval().shape.size()); ++i) {
    const int64_t size = x.aval().shape[static_cast<std::size_t>(i)];
    if (i == d) {
      shape.push_back(n);
      shape.push_back(size / n);
    } else {
      shape.push_back(size);
    }
  }
  return lax::reshape(x, shape);
}

// A shard_map with one collective; `reference` computes the same global result with single-device ops.
Value shard_map_op(const Program& program, const Op& op, const Value& x, bool reference) {
  int64_t n = 1;
  for (const std::string& axis : op.axes) n *= program.mesh.axis_size(axis);
  const auto rank = static_cast<int64_t>(x.aval().shape.size());
  if (reference) {
    if (op.name == "psum") return lax::reduce("reduce_sum", split_blocks(x, op.dim, n), {op.dim});
    if (op.name == "pmax") return lax::reduce("reduce_max", split_blocks(x, op.dim, n), {op.dim});
    if (op.name == "double") return lax::add(x, x);
    if (op.name == "all_gather" || n == 1) return x;
    // ppermute to the next device: block j receives block j - 1.
    const Value blocks = split_blocks(x, op.dim, n);
    std::vector<int64_t> start(static_cast<std::size_t>(rank + 1), 0);
    std::vector<int64_t> limit = blocks.aval().shape;
    start[static_cast<std::size_t>(op.dim)] = n - 1;
    const Value last = lax::slice(blocks, start, limit);
    start[static_cast<std::size_t>(op.dim)] = 0;
    limit[static_cast<std::size_t>(op.dim)] = n - 1;
    const Value rest = lax::slice(blocks, start, limit);
    return lax::reshape(lax::concatenate({last, rest}, op.dim), x.aval().shape);
  }
  Layout in_layout(static_cast<std::size_t>(rank));
  in_layout[static_cast<std::size_t>(op.dim)] = op.axes;
  const bool invariant = op.name == "psum" || op.name == "pmax" || op.name == "all_gather";
  ShardMapSpec spec;
  spec.mesh = program.mesh;
  spec.in_specs = {spec_of(in_layout)};
  spec.out_specs = {invariant ? PartitionSpec() : spec_of(in_layout)};
  const api::Function body = [&](const std::vector<Value>& args) -> std::vector<Value> {
    const Value& local = args[0];
    if (op.name == "psum") return {lax::psum(local, op.axes)};
    if (op.name == "pmax") return {lax::pmax(local, op.axes)};
    if (op.name == "all_gather") return {lax::all_gather_invariant(local, op.axes, op.dim, true)};
    if (op.name == "double") return {lax::add(local, local)};
    std::vector<std::pair<int64_t, int64_t>> perm;
    for (int64_t i = 0; i < n; ++i) perm.emplace_back(i, (i + 1) % n);
    return {lax::ppermute(local, op.axes, perm)};
  };
  return api::call_shard_map(body, {x}, spec).at(0);
}

std::vector<Value> apply(const Program& program, const std::vector<Value>& args, bool reference) {
  std::vector<Value> values;
  for (const Slot& slot : program.slots) {
    if (slot.input >= 0) {
      values.push_back(args[static_cast<std::size_t>(slot.input)]);
      continue;
    }
    const Op& op = program.ops[static_cast<std::size_t>(slot.op)];
    const Value& x = values[static_cast<std::size_t>(op.a)];
    switch (op.kind) {
      case Kind::kUnary: values.push_back(lax::unary(op.name, x)); break;
      case Kind::kBinary: values.push_back(lax::binary(op.name, x, values[static_cast<std::size_t>(op.b)])); break;
      case Kind::kReduce: values.push_back(lax::reduce(op.name, x, op.p1)); break;
      case Kind::kDot: {
        lax::DotDimensionNumbers dims{op.p1, op.p2, op.p3,
                                      op.p3.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{0}};
        values.push_back(lax::dot_general(x, values[static_cast<std::size_t>(op.b)], dims));
        break;
      }
      case Kind::kReshape: values.push_back(lax::reshape(x, op.p1)); break;
      case Kind::kTranspose: values.push_back(lax::transpose(x, op.p1)); break;
      case Kind::kSlice: values.push_back(lax::slice(x, op.p1, op.p2, op.p3)); break;
      case Kind::kShardMap: values.push_back(shard_map_op(program, op, x, reference)); break;
    }
  }
  std::vector<Value> outputs;
  for (const int s : program.outputs) outputs.push_back(values[static_cast<std::size_t>(s)]);
  return outputs;
}

std::string join(const std::vector<int64_t>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(values[i]);
  return text;
}

std::string text_of(const Program& program) {
  std::ostringstream out;
  out << "seed " << program.seed << ", mesh";
  for (std::size_t a = 0; a < program.mesh.axis_names().size(); ++a) {
    out << " " << program.mesh.axis_names()[a] << "=" << program.mesh.axis_sizes()[a];
  }
  out << "\n";
  for (std::size_t s = 0; s < program.slots.size(); ++s) {
    const Slot& slot = program.slots[s];
    out << "  v" << s << " = ";
    if (slot.input >= 0) {
      const Input& input = program.inputs[static_cast<std::size_t>(slot.input)];
      out << "input " << dtype_name(input.dtype) << "[" << join(input.shape) << "] "
          << spec_of(input.layout).repr(profile()) << "\n";
      continue;
    }
    const Op& op = program.ops[static_cast<std::size_t>(slot.op)];
    out << (op.kind == Kind::kShardMap ? "shard_map " : "") << op.name;
    out << "(v" << op.a << (op.b >= 0 ? ", v" + std::to_string(op.b) : "") << ")";
    if (!op.p1.empty()) out << " [" << join(op.p1) << "]";
    if (!op.p2.empty()) out << " [" << join(op.p2) << "]";
    if (!op.p3.empty()) out << " [" << join(op.p3) << "]";
    if (op.kind == Kind::kShardMap) {
      out << " over";
      for (const std::string& axis : op.axes) out << " " << axis;
      out << " on dim " << op.dim;
    }
    out << "\n";
  }
  out << "  outputs:";
  for (const int s : program.outputs) out << " v" << s;
  return out.str();
}

BufferPtr input_buffer(const Input& input, std::mt19937_64& engine) {
  auto buffer = std::make_shared<Buffer>(input.dtype, input.shape);
  for (std::size_t i = 0; i < static_cast<std::size_t>(buffer->size()); ++i) {
    const auto k = static_cast<int32_t>(engine() % 17) - 8;  // [-8, 8]
    if (input.dtype == DType::kInt32)
      buffer->as_mutable<int32_t>()[i] = k;
    else
      buffer->as_mutable<float>()[i] = static_cast<float>(k) / 16.0f;
  }
  return buffer;
}

// Empty when `array` equals `want` bit for bit as a whole and each shard holds its block of it.
std::string compare_output(const Array& array, const Buffer& want) {
  if (array.shape() != want.shape() || array.dtype() != want.dtype()) return "type differs from the reference";
  const std::size_t width = want.nbytes() / static_cast<std::size_t>(std::max<int64_t>(want.size(), 1));
  const auto same = [&](const Buffer& got, int64_t g, int64_t w) {
    // Floats by value (a sum's zero may come out -0 in one order and +0 in another), integers bit for bit.
    if (want.dtype() == DType::kFloat32) return got.element_as_double(g) == want.element_as_double(w);
    return std::memcmp(got.bytes().data() + static_cast<std::size_t>(g) * width,
                       want.bytes().data() + static_cast<std::size_t>(w) * width, width) == 0;
  };
  const BufferPtr whole = array.gather();
  for (int64_t i = 0; i < want.size(); ++i) {
    if (!same(*whole, i, i)) {
      return "element " + std::to_string(i) + " is " + std::to_string(whole->element_as_double(i)) + ", reference " +
             std::to_string(want.element_as_double(i));
    }
  }
  return conformance::misplaced_shard(array, same);
}

void check_program(const Program& program, Report& report) {
  std::mt19937_64 engine(program.seed ^ 0x9E3779B97F4A7C15ull);
  std::vector<Value> sharded;
  std::vector<Value> single;
  const Sharding on_first = make_single_device_sharding(api::session().devices.front(), profile());
  for (const Input& input : program.inputs) {
    const BufferPtr host = input_buffer(input, engine);
    sharded.push_back(Value::concrete(Array::from_host(host, sharding_of(program.mesh, input.layout), profile())));
    single.push_back(Value::concrete(Array::from_host(host, on_first, profile())));
  }
  const auto fail = [&](const std::string& what) { report.failures.push_back(what + "\n" + text_of(program)); };
  std::vector<Value> reference;
  try {
    reference = apply(program, single, true);
  } catch (const std::exception& error) {
    return fail(std::string("the single-device reference threw: ") + error.what());
  }
  std::vector<Value> results;
  try {
    results = api::call_jit([&](const std::vector<Value>& args) { return apply(program, args, false); }, sharded, {});
  } catch (const std::exception& error) {
    return fail(std::string("the partitioned program threw: ") + error.what());
  }
  for (std::size_t o = 0; o < results.size(); ++o) {
    const std::string problem = compare_output(results[o].array(), *reference[o].array().gather());
    if (!problem.empty()) fail("output " + std::to_string(o) + ": " + problem);
    const Info& info = program.infos[static_cast<std::size_t>(program.outputs[o])];
    if (!info.predicted) continue;
    ++report.sharding_checks;
    const NamedSharding predicted = sharding_of(program.mesh, *info.predicted);
    const Sharding& got = results[o].array().sharding();
    if (!is_equivalent_to(got, predicted, info.shape.size(), profile())) {
      fail("output " + std::to_string(o) + " has sharding " + sharding_repr(got, profile()) + ", the rules give " +
           sharding_repr(predicted, profile()));
    }
  }
}

}  // namespace

std::string describe_program(uint64_t seed) {
  ensure_core_primitives();
  return text_of(generate(seed));
}

Report run_programs(uint64_t seed, int64_t count) {
  ensure_core_primitives();
  api::session().profile = JaxProfile();
  api::set_device_preset("cpu:8");
  Report report;
  for (int64_t i = 0; i < count; ++i) {
    const Program program = generate(seed + static_cast<uint64_t>(i));
    ++report.programs;
    if (std::any_of(program.ops.begin(), program.ops.end(), [](const Op& op) { return op.kind == Kind::kShardMap; })) {
      ++report.shard_map_programs;
    }
    check_program(program, report);
  }
  return report;
}

}  // namespace shardscope::program_fuzz
