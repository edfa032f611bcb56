// scan and while: loops whose bodies are nested programs, run one iteration at a time.
#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "exec/cancellation.h"
#include "exec/interpreter.h"
#include "ir/primitive.h"
#include "ops/control_flow.h"

namespace shardscope {

const JaxprPtr& nested_jaxpr(const Params& params, const std::string& key) {
  const auto* ref = param(params, key).get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("control-flow equation without a program in '" + key + "'");
  return *ref;
}

Params replace_param(Params params, const std::string& key, ParamValue value) {
  for (auto& [name, existing] : params) {
    if (name == key) {
      existing = std::move(value);
      return params;
    }
  }
  params.emplace_back(key, std::move(value));
  return params;
}

Aval unstacked_aval(const Aval& stacked) {
  Aval out = stacked;
  if (out.shape.empty()) throw value_error("scan got value with no leading axis to scan over");
  out.shape.erase(out.shape.begin());
  if (!out.dim_axes.empty()) out.dim_axes.erase(out.dim_axes.begin());
  return out;
}

Aval stacked_aval(const Aval& slice, int64_t length) {
  Aval out = slice;
  Shape shape{length};
  shape.insert(shape.end(), slice.shape.begin(), slice.shape.end());
  out.shape = std::move(shape);
  if (!out.dim_axes.empty()) out.dim_axes.insert(out.dim_axes.begin(), std::vector<std::string>{});
  return out;
}

std::vector<BufferPtr> run_nested(const Jaxpr& jaxpr, std::vector<BufferPtr> args) {
  const CompiledProgramScope compiled;  // JAX compiles a control-flow primitive even when it runs eagerly
  return evaluate_jaxpr(jaxpr, args);
}

BufferPtr leading_slice(const BufferPtr& stacked, int64_t index) {
  Shape shape = stacked->shape();
  const int64_t rows = shape.at(0);
  shape.erase(shape.begin());
  const int64_t row_elements = product(shape);
  if (index < 0 || index >= rows) throw value_error("scan slice index out of range");
  return Buffer::view_of(stacked, index * row_elements, std::move(shape));
}

BufferPtr stack_leading(const std::vector<BufferPtr>& slices, const Aval& slice_aval) {
  Shape shape{static_cast<int64_t>(slices.size())};
  shape.insert(shape.end(), slice_aval.shape.begin(), slice_aval.shape.end());
  auto out = std::make_shared<Buffer>(slice_aval.dtype, shape, Buffer::Uninitialized{});
  const std::size_t row_bytes = static_cast<std::size_t>(product(slice_aval.shape)) * dtype_size(slice_aval.dtype);
  auto bytes = out->mutable_bytes();
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (slices[i]->nbytes() != row_bytes) throw value_error("scan output slice has the wrong size");
    if (row_bytes != 0) std::memcpy(bytes.data() + i * row_bytes, slices[i]->bytes().data(), row_bytes);
  }
  return out;
}

int64_t scalar_int(const BufferPtr& buffer) {
  if (buffer->size() != 1) throw type_error("a loop predicate or branch index must be a scalar");
  return static_cast<int64_t>(buffer->element_as_double(0));
}

ScanLayout scan_layout(const Params& params) {
  ScanLayout layout;
  layout.num_consts = static_cast<std::size_t>(param(params, "num_consts").as_int("num_consts"));
  layout.num_carry = static_cast<std::size_t>(param(params, "num_carry").as_int("num_carry"));
  layout.length = param(params, "length").as_int("length");
  layout.reverse = param(params, "reverse").as_bool("reverse");
  layout.unroll = param(params, "unroll").as_int("unroll");
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  layout.num_xs = body.invars.size() - layout.num_consts - layout.num_carry;
  return layout;
}

Params scan_params(const JaxprPtr& body, const ScanLayout& layout) {
  return {{"jaxpr", ParamValue(body)},
          {"length", layout.length},
          {"reverse", layout.reverse},
          {"unroll", layout.unroll},
          {"num_consts", static_cast<int64_t>(layout.num_consts)},
          {"num_carry", static_cast<int64_t>(layout.num_carry)}};
}

WhileLayout while_layout(const Params& params) {
  return {static_cast<std::size_t>(param(params, "cond_nconsts").as_int("cond_nconsts")),
          static_cast<std::size_t>(param(params, "body_nconsts").as_int("body_nconsts"))};
}

Params while_params(const JaxprPtr& cond, const JaxprPtr& body, const WhileLayout& layout) {
  return {{"body_jaxpr", ParamValue(body)},
          {"body_nconsts", static_cast<int64_t>(layout.body_nconsts)},
          {"cond_jaxpr", ParamValue(cond)},
          {"cond_nconsts", static_cast<int64_t>(layout.cond_nconsts)}};
}

namespace {

// JAX 0.11 describes scan's operand and result groups as FlatTrees of Nones: ((consts), (carry), (xs)) and
// ((carry), (ys kept)), each kept y wrapped as RightsOnly(Right(None)).
std::string nones_tuple(std::size_t n, const std::string& item) {
  if (n == 0) return "()";
  std::string out = "(";
  for (std::size_t i = 0; i < n; ++i) out += (i == 0 ? "" : ", ") + item;
  return out + (n == 1 ? ",)" : ")");
}

Primitive scan_primitive() {
  Primitive p;
  p.name = "scan";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    const ScanLayout layout = scan_layout(params);
    const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
    if (in.size() != body.invars.size()) {
      throw value_error("scan number of arguments doesn't match the number of jaxpr arguments: " +
                        std::to_string(in.size()) + " vs " + std::to_string(body.invars.size()));
    }
    std::vector<Aval> out;
    for (std::size_t i = 0; i < body.outvars.size(); ++i) {
      const Aval& aval = atom_aval(body.outvars[i]);
      out.push_back(i < layout.num_carry ? aval : stacked_aval(aval, layout.length));
    }
    return out;
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const ScanLayout layout = scan_layout(params);
    const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
    std::vector<BufferPtr> carry(in.begin() + static_cast<std::ptrdiff_t>(layout.num_consts),
                                 in.begin() + static_cast<std::ptrdiff_t>(layout.num_consts + layout.num_carry));
    const std::size_t num_ys = body.outvars.size() - layout.num_carry;
    std::vector<std::vector<BufferPtr>> ys(num_ys, std::vector<BufferPtr>(static_cast<std::size_t>(layout.length)));
    for (int64_t step = 0; step < layout.length; ++step) {
      throw_if_cancelled();
      const int64_t i = layout.reverse ? layout.length - 1 - step : step;
      std::vector<BufferPtr> args(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(layout.num_consts));
      args.insert(args.end(), carry.begin(), carry.end());
      for (std::size_t x = 0; x < layout.num_xs; ++x) {
        args.push_back(leading_slice(in[layout.num_consts + layout.num_carry + x], i));
      }
      std::vector<BufferPtr> outs = run_nested(body, std::move(args));
      std::copy(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(layout.num_carry), carry.begin());
      for (std::size_t y = 0; y < num_ys; ++y) ys[y][static_cast<std::size_t>(i)] = outs[layout.num_carry + y];
    }
    std::vector<BufferPtr> results = carry;
    for (std::size_t y = 0; y < num_ys; ++y) {
      results.push_back(stack_leading(ys[y], atom_aval(body.outvars[layout.num_carry + y])));
    }
    return results;
  };
  p.printed_params = [](const Eqn& eqn, const JaxProfile&) {
    const ScanLayout layout = scan_layout(eqn.params);
    const std::size_t num_ys = nested_jaxpr(eqn.params, "jaxpr")->outvars.size() - layout.num_carry;
    const std::string ft_in = "(" + nones_tuple(layout.num_consts, "None") + ", " +
                              nones_tuple(layout.num_carry, "None") + ", " + nones_tuple(layout.num_xs, "None") + ")";
    const std::string ft_out =
        "(" + nones_tuple(layout.num_carry, "None") + ", " + nones_tuple(num_ys, "RightsOnly(Right(None))") + ")";
    return Params{{"ft_in", ParamValue::Verbatim{ft_in}},    {"ft_out", ParamValue::Verbatim{ft_out}},
                  {"jaxpr", param(eqn.params, "jaxpr")},     {"length", param(eqn.params, "length")},
                  {"reverse", param(eqn.params, "reverse")}, {"unroll", param(eqn.params, "unroll")}};
  };
  return p;
}

Primitive while_primitive() {
  Primitive p;
  p.name = "while";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    const WhileLayout layout = while_layout(params);
    const Jaxpr& body = *nested_jaxpr(params, "body_jaxpr");
    const Jaxpr& cond = *nested_jaxpr(params, "cond_jaxpr");
    const std::size_t carry = in.size() - layout.cond_nconsts - layout.body_nconsts;
    if (cond.invars.size() != layout.cond_nconsts + carry || body.invars.size() != layout.body_nconsts + carry) {
      throw type_error("while_loop programs do not match the operand count");
    }
    std::vector<Aval> out;
    for (const Atom& atom : body.outvars) out.push_back(atom_aval(atom));
    return out;
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const WhileLayout layout = while_layout(params);
    const Jaxpr& body = *nested_jaxpr(params, "body_jaxpr");
    const Jaxpr& cond = *nested_jaxpr(params, "cond_jaxpr");
    const auto cond_end = in.begin() + static_cast<std::ptrdiff_t>(layout.cond_nconsts);
    const auto body_end = cond_end + static_cast<std::ptrdiff_t>(layout.body_nconsts);
    std::vector<BufferPtr> carry(body_end, in.end());
    while (true) {
      throw_if_cancelled();
      std::vector<BufferPtr> cond_args(in.begin(), cond_end);
      cond_args.insert(cond_args.end(), carry.begin(), carry.end());
      if (scalar_int(run_nested(cond, std::move(cond_args)).at(0)) == 0) break;
      std::vector<BufferPtr> body_args(cond_end, body_end);
      body_args.insert(body_args.end(), carry.begin(), carry.end());
      carry = run_nested(body, std::move(body_args));
    }
    return carry;
  };
  return p;
}

}  // namespace

void add_per_device_control_flow(Primitive& primitive);  // control_flow_spmd.cpp

void register_loop_primitives() {
  Primitive scan = scan_primitive();
  add_per_device_control_flow(scan);
  register_primitive(std::move(scan));
  Primitive loop = while_primitive();
  add_per_device_control_flow(loop);
  register_primitive(std::move(loop));
}

}  // namespace shardscope
