// jit, make_jaxpr, vmap, grad, jvp, shard_map and pmap on flat Python functions (pytrees are flattened in Python).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <algorithm>

#include "api/program_log.h"
#include "api/session.h"
#include "api/transforms.h"
#include "base/error.h"
#include "cost/compiled_cost.h"
#include "exec/layout_assignment.h"
#include "exec/lowering.h"
#include "explicit/mesh_context.h"
#include "explicit/sharding_rules.h"
#include "ir/jaxpr_printer.h"
#include "python/bindings.h"
#include "python/convert.h"
#include "python/lowered_objects.h"
#include "sharding/sharding.h"

namespace shardscope::python {
namespace {

// A Python function on a list of values returning a list of values, as core sees it.
api::Function wrap(const py::function& flat_fun) {
  return [flat_fun](const std::vector<api::Value>& args) {
    const py::gil_scoped_acquire gil;
    const ActiveTraceScope active(api::current_trace());
    py::object result = flat_fun(from_values(args));
    return to_values(result);
  };
}

std::vector<std::optional<Sharding>> optional_shardings(const py::object& shardings, const char* what) {
  std::vector<std::optional<Sharding>> out;
  if (shardings.is_none()) return out;
  for (const py::handle item : shardings) {
    if (item.is_none()) {
      out.emplace_back(std::nullopt);
    } else if (py::isinstance<NamedSharding>(item)) {
      out.emplace_back(item.cast<NamedSharding>());
    } else if (py::isinstance<SingleDeviceSharding>(item)) {
      out.emplace_back(item.cast<SingleDeviceSharding>());
    } else {
      // What JAX's prepare_axis_resources says (jit.py checks first; this guards direct callers).
      throw type_error(std::string(what) +
                       " leaf specifications are expected to be PartitionSpec instances or None, "
                       "but got " +
                       py::str(item).cast<std::string>());
    }
  }
  return out;
}

// Python values jit accepts as array arguments: arrays, numbers, numeric numpy data, __jax_array__ objects.
bool valid_jit_leaf(const py::handle& leaf) {
  if (py::isinstance<PyValue>(leaf) || py::isinstance<py::bool_>(leaf) || py::isinstance<py::int_>(leaf) ||
      py::isinstance<py::float_>(leaf)) {
    return true;
  }
  if (py::hasattr(leaf, "__jax_array__")) return true;
  const py::object numpy = py::module_::import("numpy");
  if (!py::isinstance(leaf, numpy.attr("ndarray")) && !py::isinstance(leaf, numpy.attr("generic"))) return false;
  const std::string kind = leaf.attr("dtype").attr("kind").cast<std::string>();
  return kind == "b" || kind == "i" || kind == "u" || kind == "f";
}

// What a jit cache entry is specific to besides its arguments: the session and mesh context tracing saw.
struct TraceContext {
  JaxVersion version;
  bool x64 = false;
  std::optional<bool> threefry_partitionable;
  std::string device_preset;
  Device default_device;
  std::optional<Mesh> concrete_mesh;
  std::optional<AbstractMesh> abstract_mesh;

  static TraceContext current() {
    const api::SessionConfig& session = api::session();
    const MeshContext& meshes = mesh_context();
    return {session.profile.version(), session.enable_x64,    session.threefry_partitionable,
            session.device_preset,     api::default_device(), meshes.concrete,
            meshes.abstract_mesh};
  }
  [[nodiscard]] bool matches_current() const {
    const api::SessionConfig& session = api::session();
    const MeshContext& meshes = mesh_context();
    if (version != session.profile.version() || x64 != session.enable_x64 ||
        threefry_partitionable != session.threefry_partitionable || device_preset != session.device_preset ||
        !(default_device == api::default_device()) || concrete_mesh != meshes.concrete ||
        abstract_mesh.has_value() != meshes.abstract_mesh.has_value()) {
      return false;
    }
    return !abstract_mesh || same_abstract_mesh(*abstract_mesh, *meshes.abstract_mesh);
  }
};

// One argument's part of a jit cache key: its type (shape, dtype, weak type) and where it lives.
struct LeafSignature {
  Aval aval;
  std::optional<Sharding> sharding;  // absent for Python scalars
  bool operator==(const LeafSignature&) const = default;
};

std::vector<LeafSignature> signature_of(const std::vector<api::Value>& values) {
  std::vector<LeafSignature> out;
  out.reserve(values.size());
  for (const api::Value& value : values) {
    out.push_back(
        {value.aval(), value.is_concrete() ? std::optional<Sharding>(value.array().sharding()) : std::nullopt});
  }
  return out;
}

// A traced jit program as Python holds it.
struct PyJitProgram {
  api::JitProgram program;
};

// The cache of one jax.jit object: entries keyed by a Python key (tree structure and static arguments),
// the arguments' signatures and the trace context. Calls inside a trace are never served from it.
class JitCache {
 public:
  static constexpr std::size_t kCapacity = 64;

  // (out_tree, outputs) for a hit, None for a miss. Arrays are compared and passed by reference to their
  // Python objects, so a hit copies each argument once (into the program's input list).
  py::object call(const py::object& key, const py::list& leaves) {
    if (api::current_trace() != nullptr) return py::none();
    const std::size_t count = leaves.size();
    std::vector<const api::Value*> values(count, nullptr);
    std::vector<api::Value> converted;  // leaves that are not jax arrays (numbers, numpy data)
    converted.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      const py::handle leaf = leaves[i];
      if (py::isinstance<PyValue>(leaf)) {
        values[i] = &leaf.cast<const PyValue&>().operand();
      } else {
        if (!valid_jit_leaf(leaf)) return py::none();
        values[i] = &converted.emplace_back(to_value(leaf));
      }
      if (values[i]->is_traced()) return py::none();
    }
    const Py_hash_t hash = py::hash(key);
    // By index, re-reading entries_ after the key comparison: __eq__ may run Python code, which may let
    // another thread call this function and change the entries.
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      if (entries_[e].hash != hash || entries_[e].signature.size() != count || !entries_[e].context.matches_current()) {
        continue;
      }
      const py::object stored_key = entries_[e].key;
      if (!key.equal(stored_key) || e >= entries_.size() || !entries_[e].key.is(stored_key)) continue;
      Entry& entry = entries_[e];
      bool same = true;
      for (std::size_t i = 0; i < count && same; ++i) {
        const LeafSignature& expected = entry.signature[i];
        const api::Value& value = *values[i];
        same = expected.aval == value.aval() && expected.sharding.has_value() == value.is_concrete() &&
               (!expected.sharding || *expected.sharding == value.array().sharding());
      }
      if (!same) continue;
      entry.last_use = ++clock_;
      const std::shared_ptr<PyJitProgram> program = entry.program;
      const py::object out_tree = entry.out_tree;
      std::vector<Array> arrays;
      arrays.reserve(count);
      for (const api::Value* value : values) {
        arrays.push_back(value->is_concrete() ? value->array() : api::argument_array(*value));
      }
      return py::make_tuple(out_tree, from_values(api::run_jit_program_on_arrays(program->program, std::move(arrays))));
    }
    return py::none();
  }

  // Remembers a program traced for `leaves` (nothing when it cannot be reused: traced inside another trace,
  // or closed over values of a trace).
  void insert(const py::object& key, const py::list& leaves, const std::shared_ptr<PyJitProgram>& program,
              const py::object& out_tree) {
    if (api::current_trace() != nullptr) return;
    const std::vector<api::Value> values = to_values(leaves);
    for (const api::Value& value : values) {
      if (value.is_traced()) return;
    }
    for (const api::Value& value : program->program.captured) {
      if (value.is_traced()) return;
    }
    if (entries_.size() >= kCapacity) {
      auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                     [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
      entries_.erase(oldest);
    }
    entries_.push_back(
        {key, py::hash(key), signature_of(values), TraceContext::current(), program, out_tree, ++clock_});
  }

  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    py::object key;
    Py_hash_t hash;
    std::vector<LeafSignature> signature;
    TraceContext context;
    std::shared_ptr<PyJitProgram> program;
    py::object out_tree;
    uint64_t last_use;
  };
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
};

std::vector<std::optional<int64_t>> optional_axes(const py::object& axes) {
  std::vector<std::optional<int64_t>> out;
  for (const py::handle item : axes) {
    out.push_back(item.is_none() ? std::nullopt : std::optional<int64_t>(item.cast<int64_t>()));
  }
  return out;
}

py::object sharding_object(const Sharding& sharding) {
  return std::visit([](const auto& s) { return py::cast(s); }, sharding);
}

py::list sharding_list(const std::vector<Sharding>& shardings) {
  py::list out;
  for (const Sharding& sharding : shardings) out.append(sharding_object(sharding));
  return out;
}

// An argument of jit(f).lower(...): an array or number (its type and placement), or a ShapeDtypeStruct.
ShapeDtypeStruct lowering_arg(const py::handle& leaf) {
  ShapeDtypeStruct arg;
  if (!valid_jit_leaf(leaf) && py::hasattr(leaf, "shape") && py::hasattr(leaf, "dtype")) {
    arg.shape = leaf.attr("shape").cast<std::vector<int64_t>>();
    arg.dtype = dtype_from_python(leaf.attr("dtype"));
    arg.weak_type = py::hasattr(leaf, "weak_type") && leaf.attr("weak_type").cast<bool>();
    if (py::hasattr(leaf, "sharding")) {
      const py::object sharding = leaf.attr("sharding");
      if (py::isinstance<NamedSharding>(sharding)) arg.sharding = sharding.cast<NamedSharding>();
      if (py::isinstance<SingleDeviceSharding>(sharding)) arg.sharding = sharding.cast<SingleDeviceSharding>();
    }
    return arg;
  }
  const api::Value value = to_value(leaf);
  const Aval aval = api::argument_aval(value);
  arg.shape = aval.shape;
  arg.dtype = aval.dtype;
  arg.weak_type = aval.weak_type;
  if (value.is_concrete()) arg.sharding = value.array().sharding();
  return arg;
}

// An argument's type as tracing sees it: an array or ShapeDtypeStruct on a mesh with Explicit axes carries its
// sharding in its type (float32[8@x,8]), as it does when the jitted function is called, so lower() raises the
// same sharding-rule errors the call does.
Aval typed_aval(const ShapeDtypeStruct& arg) {
  const Aval aval = arg.aval();
  const auto* named = arg.sharding ? std::get_if<NamedSharding>(&*arg.sharding) : nullptr;
  if (named == nullptr) return aval;
  const auto& types = named->mesh.axis_types();
  if (std::find(types.begin(), types.end(), AxisType::kExplicit) == types.end()) return aval;
  // As for a placed array, the trace remembers the mesh its type names (values made beside it are typed with it).
  remember_typed_mesh(named->mesh);
  return placed_array_aval(aval, *named, api::session().profile);
}

// jit(f).lower(*args), .compile() and the analyses, thinly over core's Lowered and Compiled.
// Avals of trace arguments: arrays and numbers as they are, shape/dtype descriptions (ShapeDtypeStruct) as typed.
std::vector<Aval> typed_avals(const py::list& leaves) {
  std::vector<Aval> avals;
  for (const py::handle leaf : leaves) {
    if (!valid_jit_leaf(leaf) && py::hasattr(leaf, "shape") && py::hasattr(leaf, "dtype")) {
      avals.push_back(typed_aval(lowering_arg(leaf)));
    } else {
      avals.push_back(api::argument_aval(to_value(leaf)));
    }
  }
  return avals;
}

void bind_lowering(py::module_& m) {
  m.def("jit_lower", [](const py::function& f, const py::list& leaves, const std::string& name,
                        const py::object& in_shardings, const py::object& out_shardings) {
    std::vector<ShapeDtypeStruct> args;
    std::vector<Aval> avals;
    for (const py::handle leaf : leaves) {
      args.push_back(lowering_arg(leaf));
      avals.push_back(typed_aval(args.back()));
    }
    const bool placed = std::any_of(args.begin(), args.end(), [](const ShapeDtypeStruct& a) {
      return a.sharding && std::holds_alternative<NamedSharding>(*a.sharding);
    });
    const MeshPlacedValuesScope on_mesh(placed && !tracing_mesh_placed_values());
    const api::Traced traced = api::trace_function(wrap(f), avals, name);
    LoweringOptions options;
    options.name = name;
    options.in_shardings.assign(traced.captured.size(), std::nullopt);
    for (const std::optional<Sharding>& s : optional_shardings(in_shardings, "in_shardings")) {
      options.in_shardings.push_back(s);
    }
    options.out_shardings = optional_shardings(out_shardings, "out_shardings");
    // Values the function closed over become leading arguments, as in the jit equation.
    std::vector<ShapeDtypeStruct> all_args;
    for (const api::Value& captured : traced.captured) {
      ShapeDtypeStruct arg;
      arg.shape = captured.aval().shape;
      arg.dtype = captured.aval().dtype;
      arg.weak_type = captured.aval().weak_type;
      if (captured.is_concrete()) arg.sharding = captured.array().sharding();
      all_args.push_back(std::move(arg));
    }
    all_args.insert(all_args.end(), args.begin(), args.end());
    std::vector<Array> captured;
    for (const api::Value& value : traced.captured) {
      if (value.is_traced()) throw not_implemented_error("lowering a function that closes over a tracer");
      captured.push_back(api::argument_array(value));
    }
    JaxprPtr program = api::consts_as_args(*traced.jaxpr);
    api::log_program(name, program, all_args, options, false);  // for `shardscope explain`, when it listens
    return PyLowered{Lowered(std::move(program), std::move(all_args), std::move(options), api::session().profile),
                     std::move(captured)};
  });
  py::class_<PyLowered>(m, "Lowered")
      .def("as_text", [](const PyLowered& l) { return l.lowered.as_text(); })
      .def("cost_analysis", [](const PyLowered& l) { return py::cast(lowered_cost_analysis(l.lowered)); })
      .def("compile", [](const PyLowered& l) {
        return PyCompiled{l.lowered.compile(), l.captured};
      });
  py::class_<PyCompiled>(m, "Compiled")
      .def("as_text", [](const PyCompiled& c) { return c.compiled.as_text(); })
      .def("cost_analysis", [](const PyCompiled& c) { return py::cast(compiled_cost_analysis(c.compiled)); })
      .def("memory_analysis",
           [](const PyCompiled& c) {
             const MemoryAnalysis stats = c.compiled.memory_analysis();
             py::dict out;
             out["generated_code_size_in_bytes"] = stats.generated_code_size_in_bytes;
             out["argument_size_in_bytes"] = stats.argument_size_in_bytes;
             out["output_size_in_bytes"] = stats.output_size_in_bytes;
             out["alias_size_in_bytes"] = stats.alias_size_in_bytes;
             out["temp_size_in_bytes"] = stats.temp_size_in_bytes;
             out["host_generated_code_size_in_bytes"] = stats.host_generated_code_size_in_bytes;
             out["host_argument_size_in_bytes"] = stats.host_argument_size_in_bytes;
             out["host_output_size_in_bytes"] = stats.host_output_size_in_bytes;
             out["host_alias_size_in_bytes"] = stats.host_alias_size_in_bytes;
             out["host_temp_size_in_bytes"] = stats.host_temp_size_in_bytes;
             return out;
           })
      .def_property_readonly("input_shardings",
                             [](const PyCompiled& c) {
                               const std::vector<Sharding>& all = c.compiled.input_shardings();
                               const auto skip = static_cast<std::ptrdiff_t>(std::min(c.captured.size(), all.size()));
                               return sharding_list(std::vector<Sharding>(all.begin() + skip, all.end()));
                             })
      .def_property_readonly("output_shardings",
                             [](const PyCompiled& c) { return sharding_list(c.compiled.output_shardings()); })
      .def("__call__", [](const PyCompiled& c, const py::list& leaves) {
        std::vector<Array> arrays = c.captured;
        for (const py::handle leaf : leaves) arrays.push_back(api::argument_array(to_value(leaf)));
        std::vector<api::Value> outputs;
        for (Array& array : c.compiled.call(arrays).outputs) outputs.push_back(api::Value::concrete(std::move(array)));
        return from_values(std::move(outputs));
      });
}

}  // namespace

void bind_transforms(py::module_& m) {
  // JAX's class (a TypeError) for a tracer used after its transformation finished; raised by convert.cpp.
  m.attr("UnexpectedTracerError") = py::reinterpret_steal<py::object>(
      PyErr_NewException("jax.errors.UnexpectedTracerError", PyExc_TypeError, nullptr));
  // core raises AxisError where JAX's canonicalize_axis raises ValueError; without this name it would
  // surface as a generic RuntimeError.
  m.attr("AxisError") = py::module_::import("builtins").attr("ValueError");
  m.def("make_jaxpr", [](const py::function& f, const py::list& args, const std::string& name) {
    return api::make_jaxpr_text(wrap(f), to_values(args), name);
  });
  // (handle, consts): the jaxpr and the values its constvars stand for.
  m.def("make_jaxpr_handle", [](const py::function& f, const py::list& args, const std::string& name) {
    api::Traced traced = api::make_jaxpr(wrap(f), to_values(args), name);
    return py::make_tuple(jaxpr_handle(traced.jaxpr), from_values(std::move(traced.captured)));
  });
  m.def("jit_call", [](const py::function& f, const py::list& args, const std::string& name,
                       const py::object& in_shardings, const py::object& out_shardings) {
    api::JitSpec spec{
        name, optional_shardings(in_shardings, "in_shardings"), optional_shardings(out_shardings, "out_shardings"), {}};
    return from_values(api::call_jit(wrap(f), to_values(args), spec));
  });
  py::class_<PyJitProgram, std::shared_ptr<PyJitProgram>>(m, "JitProgram")
      .def("__call__",
           [](const PyJitProgram& self, const py::list& args) {
             return from_values(api::run_jit_program(self.program, to_values(args)));
           })
      .def_property_readonly("num_outputs", [](const PyJitProgram& self) { return self.program.num_outputs; });
  m.def(
      "jit_trace",
      [](const py::function& f, const py::list& args, const std::string& name, const py::object& in_shardings,
         const py::object& out_shardings, const py::object& arg_names) {
        api::JitSpec spec{
            name, optional_shardings(in_shardings, "in_shardings"), optional_shardings(out_shardings, "out_shardings"),
            arg_names.is_none() ? std::vector<std::string>{} : arg_names.cast<std::vector<std::string>>()};
        return std::make_shared<PyJitProgram>(PyJitProgram{api::trace_jit(wrap(f), to_values(args), spec)});
      },
      py::arg("f"), py::arg("args"), py::arg("name"), py::arg("in_shardings"), py::arg("out_shardings"),
      py::arg("arg_names") = py::none());
  // The index of the first argument leaf jit cannot take as an array, -1 when all are fine.
  m.def("invalid_jit_leaf", [](const py::list& leaves) {
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      if (!valid_jit_leaf(leaves[i])) return static_cast<py::ssize_t>(i);
    }
    return py::ssize_t{-1};
  });
  // jax.eval_shape's trace: leaves are arrays, numbers or shape/dtype descriptions (ShapeDtypeStruct); the
  // outputs come back as (shape, dtype name, weak_type) without running anything, so any size works.
  m.def("eval_shape_trace", [](const py::function& f, const py::list& leaves, const std::string& name) {
    const api::Traced traced = api::trace_function(wrap(f), typed_avals(leaves), name);
    py::list out;
    for (const Atom& atom : traced.jaxpr->outvars) {
      const Aval& aval = atom_aval(atom);
      out.append(
          py::make_tuple(py::cast(aval.shape).cast<py::tuple>(), std::string(dtype_name(aval.dtype)), aval.weak_type));
    }
    return out;
  });
  // The jaxpr of a function of arrays or ShapeDtypeStructs (jit(f).trace's jaxpr; layout assignment reads it).
  m.def("typed_jaxpr_text", [](const py::function& f, const py::list& leaves, const std::string& name) {
    const api::Traced traced = api::trace_function(wrap(f), typed_avals(leaves), name);
    return print_jaxpr(*traced.jaxpr, api::session().profile);
  });
  // Layout.AUTO's choice per argument leaf (exec/layout_assignment): a major_to_minor tuple each.
  m.def("auto_layouts", [](const py::function& f, const py::list& leaves, const std::string& name) {
    const api::Traced traced = api::trace_function(wrap(f), typed_avals(leaves), name);
    py::list out;
    for (const std::vector<int64_t>& order : auto_parameter_layouts(*traced.jaxpr)) {
      out.append(py::cast(order).cast<py::tuple>());
    }
    return out;
  });
  bind_lowering(m);
  py::class_<JitCache>(m, "JitCache")
      .def(py::init<>())
      .def("call", &JitCache::call)
      .def("insert", &JitCache::insert)
      .def("clear", &JitCache::clear)
      .def("__len__", &JitCache::size);
  // out_axes: one entry per output leaf, or a callable giving them once the function has run (a prefix of the
  // output tree, which only the trace makes known).
  m.def("vmap_call", [](const py::function& f, const py::list& args, const py::object& in_axes,
                        const py::object& out_axes, std::optional<std::string> axis_name, const std::string& name) {
    if (PyCallable_Check(out_axes.ptr()) != 0) {
      const api::AxesAfterTrace after_trace = [&out_axes] { return optional_axes(out_axes()); };
      return from_values(api::call_vmap_out_axes_after_trace(wrap(f), to_values(args), optional_axes(in_axes),
                                                             after_trace, axis_name, name));
    }
    return from_values(
        api::call_vmap(wrap(f), to_values(args), optional_axes(in_axes), optional_axes(out_axes), axis_name, name));
  });
  m.def("grad_call", [](const py::function& f, const py::list& args, const std::vector<int64_t>& argnums, bool has_aux,
                        bool with_value, const std::string& name) {
    return from_values(api::call_grad(wrap(f), to_values(args), argnums, has_aux, with_value, name));
  });
  py::class_<api::VjpProgram>(m, "VjpProgram")
      .def("__call__",
           [](const api::VjpProgram& program, const py::list& residuals, const py::list& cotangents) {
             return from_values(api::apply_vjp(program, to_values(residuals), to_values(cotangents)));
           })
      .def_property_readonly(
          "output_types",
          [](const api::VjpProgram& program) {
            py::list types;
            for (const Aval& aval : program.output_types)
              types.append(py::make_tuple(py::tuple(py::cast(aval.shape)), std::string(dtype_name(aval.dtype))));
            return types;
          })
      .def_readonly("residual_primal", &api::VjpProgram::residual_primal)
      .def_readonly("output_zeros", &api::VjpProgram::output_zeros);
  m.def("vjp_call", [](const py::function& f, const py::list& primals, const std::string& name,
                       const py::function& differentiated_outputs, const std::vector<bool>& nonzero_tangents) {
    api::VjpResult result = api::call_vjp(
        wrap(f), to_values(primals), name,
        [differentiated_outputs] {
          const py::gil_scoped_acquire gil;
          return differentiated_outputs().cast<std::size_t>();
        },
        nonzero_tangents);
    return py::make_tuple(from_values(std::move(result.outputs)), std::move(result.program),
                          from_values(std::move(result.opaque_residuals)));
  });
  m.def("jvp_call",
        [](const py::function& f, const py::list& primals, const py::list& tangents, const std::string& name) {
          return from_values(api::call_jvp(wrap(f), to_values(primals), to_values(tangents), name));
        });
  m.def(
      "shard_map_call",
      // out_specs: one spec per output leaf, or a callable giving them once the body has run.
      [](const py::function& f, const py::list& args, const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
         const py::object& out_specs, bool check_vma, const std::string& name,
         const std::vector<std::tuple<std::string, std::string, std::string>>& arg_paths, bool mesh_from_context) {
        ShardMapSpec spec;
        spec.mesh = mesh;
        spec.mesh_from_context = mesh_from_context;
        spec.in_specs = in_specs;
        api::SpecsAfterTrace after_trace;
        if (PyCallable_Check(out_specs.ptr()) != 0) {
          after_trace = [&out_specs] { return out_specs().cast<std::vector<PartitionSpec>>(); };
        } else {
          spec.out_specs = out_specs.cast<std::vector<PartitionSpec>>();
        }
        spec.check_vma = check_vma;
        spec.function_name = name;
        for (const auto& [keypath, spec_keypath, note] : arg_paths)
          spec.arg_paths.push_back({keypath, note, spec_keypath});
        return from_values(api::call_shard_map(wrap(f), to_values(args), std::move(spec), after_trace));
      },
      py::arg("f"), py::arg("args"), py::arg("mesh"), py::arg("in_specs"), py::arg("out_specs"), py::arg("check_vma"),
      py::arg("name"), py::arg("arg_paths") = std::vector<std::tuple<std::string, std::string, std::string>>{},
      py::arg("mesh_from_context") = false);
  m.def("pmap_call", [](const py::function& f, const py::list& args, std::optional<std::string> axis_name,
                        const py::object& in_axes, const py::object& out_axes, std::optional<int64_t> axis_size,
                        const py::object& devices, const std::string& name) {
    PmapSpec spec;
    spec.function_name = name;
    spec.axis_name = std::move(axis_name);
    spec.in_axes = optional_axes(in_axes);
    // out_axes: one axis per output leaf, or a callable giving them once the body has run.
    api::AxesAfterTrace after_trace;
    if (PyCallable_Check(out_axes.ptr()) != 0) {
      after_trace = [&out_axes] { return optional_axes(out_axes()); };
    } else {
      spec.out_axes = optional_axes(out_axes);
    }
    spec.axis_size = axis_size;
    if (!devices.is_none()) {
      for (const py::handle device : devices) spec.devices.push_back(device.cast<Device>());
    }
    return from_values(api::call_pmap(wrap(f), to_values(args), std::move(spec), after_trace));
  });
}

}  // namespace shardscope::python
