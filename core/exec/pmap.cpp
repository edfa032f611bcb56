// pmap: JAX's axis-size and device checks, the program make_jaxpr shows per version, lockstep execution.
#include "exec/pmap.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "device/presets.h"
#include "exec/interpreter.h"
#include "exec/shard_map.h"
#include "ir/axis_env.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

constexpr const char* kInternalAxisName = "_internal_pmap_axis_name";

int64_t normalized_axis(int64_t axis, std::size_t rank, const std::string& what) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    throw value_error("pmap " + what + " specification " + std::to_string(axis) +
                      " is out of bounds for an array of rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

BufferPtr reshaped(const BufferPtr& buffer, Shape shape) {
  std::vector<std::byte> bytes(buffer->bytes().begin(), buffer->bytes().end());
  return std::make_shared<Buffer>(buffer->dtype(), std::move(shape), std::move(bytes));
}

std::vector<DimSlice> instance_index(std::size_t rank, std::size_t axis, int64_t instance) {
  std::vector<DimSlice> index(rank);
  index[axis] = DimSlice{false, instance, instance + 1, instance};
  return index;
}

Shape with_axis(Shape shape, std::optional<int64_t> axis, int64_t size) {
  if (axis) shape.insert(shape.begin() + *axis, size);
  return shape;
}

Mesh pmap_mesh(const std::vector<Device>& devices, const std::string& axis_name) {
  return Mesh(devices, {static_cast<int64_t>(devices.size())}, {axis_name}, {AxisType::kAuto});
}

PartitionSpec axis_spec(std::optional<int64_t> axis, const std::string& axis_name) {
  if (!axis) return PartitionSpec{};
  std::vector<SpecEntry> entries(static_cast<std::size_t>(*axis));
  entries.push_back(SpecEntry::of_axes({axis_name}));
  return PartitionSpec(std::move(entries));
}

// Every instance's arguments, runs the body in lockstep over a 1-D mesh, returns each instance's outputs.
std::vector<DeviceBuffers> run_instances(const Jaxpr& body, const std::vector<BufferPtr>& globals,
                                         const std::vector<std::optional<int64_t>>& in_axes, const Mesh& mesh,
                                         const std::string& axis_name, CommLog* log) {
  const int64_t n = mesh.size();
  std::vector<DeviceBuffers> locals;
  for (std::size_t a = 0; a < globals.size(); ++a) {
    const BufferPtr& global = globals[a];
    // Built by push_back: GCC 12 misreads vector::assign of shared_ptrs as a null dereference.
    DeviceBuffers per_device;
    if (!in_axes.at(a)) {
      for (int64_t i = 0; i < n; ++i) per_device.push_back(global);
    } else {
      const auto axis = static_cast<std::size_t>(*in_axes[a]);
      Shape local_shape = global->shape();
      local_shape.erase(local_shape.begin() + static_cast<std::ptrdiff_t>(axis));
      for (int64_t i = 0; i < n; ++i) {
        per_device.push_back(
            reshaped(slice_block(*global, instance_index(global->shape().size(), axis, i)), local_shape));
      }
    }
    locals.push_back(std::move(per_device));
  }
  const AxisEnvScope scope({{axis_name, n}});
  const CompiledProgramScope compiled;  // pmap compiles its function
  return evaluate_jaxpr_per_device(body, SpmdContext{&mesh, log}, locals);
}

BufferPtr stacked(const DeviceBuffers& instances, std::optional<int64_t> out_axis) {
  if (!out_axis) return instances.at(0);
  const BufferPtr& first = instances.at(0);
  const Shape global_shape = with_axis(first->shape(), out_axis, static_cast<int64_t>(instances.size()));
  auto global = std::make_shared<Buffer>(first->dtype(), global_shape);
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const BufferPtr block = reshaped(instances[i], with_axis(first->shape(), out_axis, 1));
    write_block(*global,
                instance_index(global_shape.size(), static_cast<std::size_t>(*out_axis), static_cast<int64_t>(i)),
                *block);
  }
  return global;
}

std::vector<std::optional<int64_t>> axes_param(const Params& params, const std::string& key) {
  std::vector<std::optional<int64_t>> axes;
  for (const ParamValue& item : param(params, key).as_items(key)) {
    axes.push_back(item.is_none() ? std::nullopt : std::optional<int64_t>(item.as_int(key)));
  }
  return axes;
}

ParamValue axes_tuple(const std::vector<std::optional<int64_t>>& axes) {
  std::vector<ParamValue> items;
  for (const auto& axis : axes) items.push_back(axis ? ParamValue(*axis) : ParamValue(ParamValue::None{}));
  return ParamValue::tuple(std::move(items));
}

const Jaxpr& call_jaxpr(const Params& params) {
  const auto* ref = param(params, "call_jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("xla_pmap equation without a call_jaxpr");
  return **ref;
}

// Old pmap printed an anonymous axis as its object, `<axis 0x...>`; the address is made up but stable.
std::string anonymous_axis_text() {
  static int64_t counter = 0;
  char text[40];
  std::snprintf(text, sizeof text, "<axis 0x7f3a%08llx>",
                static_cast<unsigned long long>(0x9cbe96c0 + 0x40 * counter++));
  return text;
}

std::vector<Atom> bind_old_pmap(JaxprBuilder& builder, const JaxprPtr& body, std::span<const Atom> args,
                                const PmapSpec& spec, int64_t n, const JaxProfile& profile) {
  std::vector<ParamValue> donated;
  std::vector<ParamValue> no_shapes;
  for (std::size_t i = 0; i < args.size(); ++i) {
    donated.emplace_back(i < spec.donated_invars.size() && spec.donated_invars[i]);
    no_shapes.emplace_back(ParamValue::None{});
  }
  Params params = {
      {"axis_name", spec.axis_name ? ParamValue(*spec.axis_name) : ParamValue::Verbatim{anonymous_axis_text()}},
      {"axis_size", n},
      {"backend", ParamValue::None{}},
      {"call_jaxpr", ParamValue::JaxprRef(body)},
      {"devices", ParamValue::None{}},
      {"donated_invars", ParamValue::tuple(donated)},
      {"global_axis_size", ParamValue::None{}},
      {"in_axes", axes_tuple(spec.in_axes)},
      {"name", spec.function_name},
      {"out_axes", axes_tuple(spec.out_axes)}};
  if (profile.has(JaxFeature::kXlaPmapGlobalArgShapes) && !profile.has(JaxFeature::kXlaPmapNoGlobalArgShapes)) {
    params.emplace_back("global_arg_shapes", ParamValue::tuple(no_shapes));
  }
  if (profile.has(JaxFeature::kXlaPmapExplicitGlobalAxisSize))
    params.emplace_back("is_explicit_global_axis_size", false);
  return builder.bind("xla_pmap", std::vector<Atom>(args.begin(), args.end()), std::move(params));
}

std::vector<Atom> bind_new_pmap(JaxprBuilder& builder, const JaxprPtr& body, std::span<const Atom> args,
                                const PmapSpec& spec, const std::vector<Device>& devices) {
  const std::string axis_name = pmap_axis_name(spec);
  ShardMapSpec shard_spec;
  shard_spec.mesh = pmap_mesh(devices, axis_name);
  shard_spec.check_vma = false;
  shard_spec.function_name = "_fun";
  const auto mesh_size = static_cast<int64_t>(devices.size());
  JaxprBuilder fun;
  std::vector<Atom> fun_args;
  std::vector<Atom> squeezed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    shard_spec.in_specs.push_back(axis_spec(spec.in_axes[i], axis_name));
    Aval local = atom_aval(args[i]);
    if (spec.in_axes[i]) local.shape[static_cast<std::size_t>(*spec.in_axes[i])] /= mesh_size;
    const Var arg = fun.arg(local);
    fun_args.emplace_back(arg);
    if (!spec.in_axes[i]) {
      squeezed.emplace_back(arg);
      continue;
    }
    squeezed.push_back(fun.bind1("squeeze", {arg}, {{"dimensions", ParamValue::int_tuple({*spec.in_axes[i]})}}));
  }
  std::vector<Atom> outs = inline_jaxpr(fun, *body, squeezed);
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const std::optional<int64_t> axis = o < spec.out_axes.size() ? spec.out_axes[o] : std::optional<int64_t>(0);
    shard_spec.out_specs.push_back(axis_spec(axis, axis_name));
    if (!axis) continue;
    const Aval& aval = atom_aval(outs[o]);
    std::vector<int64_t> kept;
    for (int64_t d = 0; d <= static_cast<int64_t>(aval.rank()); ++d) {
      if (d != *axis) kept.push_back(d);
    }
    outs[o] = fun.bind1("broadcast_in_dim", {outs[o]},
                        {{"broadcast_dimensions", ParamValue::int_tuple(kept)},
                         {"shape", ParamValue::int_tuple(with_axis(aval.shape, axis, 1))},
                         {"sharding", ParamValue::None{}}});
  }
  const JaxprPtr fun_jaxpr = fun.build(outs);
  JaxprBuilder jitted;
  std::vector<Atom> jit_args;
  for (const Atom& arg : args) jit_args.emplace_back(jitted.arg(atom_aval(arg)));
  const std::vector<Atom> mapped = bind_shard_map(jitted, fun_jaxpr, jit_args, shard_spec);
  return builder.bind("jit", std::vector<Atom>(args.begin(), args.end()),
                      {{"jaxpr", ParamValue::JaxprRef(jitted.build(mapped))}, {"name", "_fun"}});
}

}  // namespace

std::string pmap_axis_name(const PmapSpec& spec) { return spec.axis_name.value_or(kInternalAxisName); }

int64_t pmap_axis_size(const PmapSpec& spec, std::span<const Aval> args) {
  if (spec.in_axes.size() != args.size()) {
    throw value_error("pmap in_axes has " + std::to_string(spec.in_axes.size()) + " entries for " +
                      std::to_string(args.size()) + " arguments");
  }
  std::optional<int64_t> size;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!spec.in_axes[i]) continue;
    const int64_t axis = normalized_axis(*spec.in_axes[i], args[i].rank(), "in_axes");
    const int64_t this_size = args[i].shape[static_cast<std::size_t>(axis)];
    if (size && *size != this_size) {
      throw value_error("pmap got inconsistent sizes for array axes to be mapped: " + std::to_string(*size) + " and " +
                        std::to_string(this_size) + " (axis " + std::to_string(axis) + " of argument " +
                        std::to_string(i) + " of type " + args[i].str_short(false) + ")");
    }
    size = this_size;
  }
  if (!size) throw value_error("pmap requires at least one argument with a mapped axis.");
  if (spec.axis_size && *spec.axis_size != *size) {
    throw value_error("Specified axis_size " + std::to_string(*spec.axis_size) + " doesn't match received axis_size " +
                      std::to_string(*size) + ".");
  }
  return *size;
}

Aval pmap_instance_aval(const Aval& arg, std::optional<int64_t> in_axis) {
  if (!in_axis) return arg;
  Aval instance = arg;
  const int64_t axis = normalized_axis(*in_axis, arg.rank(), "in_axes");
  instance.shape.erase(instance.shape.begin() + axis);
  if (!instance.dim_axes.empty()) instance.dim_axes.erase(instance.dim_axes.begin() + axis);
  return instance;
}

std::vector<Device> pmap_devices(const PmapSpec& spec, int64_t axis_size, const std::vector<Device>& available,
                                 const JaxProfile& profile) {
  if (!spec.devices.empty()) {
    if (static_cast<int64_t>(spec.devices.size()) != axis_size) {
      throw value_error(
          "Leading axis size of input to pmapped function must equal the number of local devices "
          "passed to pmap. Got axis_size=" +
          std::to_string(axis_size) + ", num_local_devices=" + std::to_string(spec.devices.size()) + ".");
    }
    return spec.devices;
  }
  const auto m = static_cast<int64_t>(available.size());
  if (axis_size <= m) return {available.begin(), available.begin() + axis_size};
  if (profile.has(JaxFeature::kPmapIsJitOfShardMap)) return available;  // the mesh silently takes every device
  std::string message = "compiling computation that requires " + std::to_string(axis_size) +
                        " logical devices, but only " + std::to_string(m) +
                        " XLA devices are available (num_replicas=" + std::to_string(axis_size);
  message += profile.has(JaxFeature::kPmapTooManyDevicesNoPartitions) ? ")" : ", num_partitions=1)";
  throw value_error(message);
}

std::vector<Atom> bind_pmap(JaxprBuilder& builder, const JaxprPtr& body, std::span<const Atom> args,
                            const PmapSpec& spec, const std::vector<Device>& available, const JaxProfile& profile) {
  std::vector<Aval> avals;
  for (const Atom& arg : args) avals.push_back(atom_aval(arg));
  const int64_t n = pmap_axis_size(spec, avals);
  if (!profile.has(JaxFeature::kPmapIsJitOfShardMap)) return bind_old_pmap(builder, body, args, spec, n, profile);
  return bind_new_pmap(builder, body, args, spec, pmap_devices(spec, n, available, profile));
}

PmapRun run_pmap(const Jaxpr& body, const std::vector<Array>& args, const PmapSpec& spec,
                 const std::vector<Device>& available, const JaxProfile& profile) {
  std::vector<Aval> avals;
  for (const Array& arg : args) avals.push_back(Aval::of(arg.shape(), arg.dtype(), arg.aval().weak_type));
  const int64_t n = pmap_axis_size(spec, avals);
  const std::vector<Device> devices = pmap_devices(spec, n, available, profile);
  const std::string axis_name = pmap_axis_name(spec);
  PmapRun run{{}, {}, pmap_mesh(devices, axis_name)};
  if (static_cast<int64_t>(devices.size()) < n) {
    // The new pmap's mesh holds every device: jit checks the arguments' divisibility, then each block has
    // more than one row and the body's squeeze of the mapped axis fails.
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!spec.in_axes[i]) continue;
      const NamedSharding sharding = make_named_sharding(run.mesh, axis_spec(spec.in_axes[i], axis_name), profile);
      check_argument_divisible("pjit arguments", "args[" + std::to_string(i) + "]", sharding, avals[i].shape, profile);
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!spec.in_axes[i]) continue;
      Shape block = avals[i].shape;
      block[static_cast<std::size_t>(*spec.in_axes[i])] /= static_cast<int64_t>(devices.size());
      throw value_error("cannot select an axis to squeeze out which has size not equal to one, got shape=" +
                        python_int_tuple(block) + " and dimensions=(" + std::to_string(*spec.in_axes[i]) + ",)");
    }
  }
  std::vector<std::optional<int64_t>> in_axes;
  std::vector<BufferPtr> globals;
  for (std::size_t i = 0; i < args.size(); ++i) {
    in_axes.push_back(spec.in_axes[i]
                          ? std::optional<int64_t>(normalized_axis(*spec.in_axes[i], avals[i].rank(), "in_axes"))
                          : std::nullopt);
    globals.push_back(args[i].gather());
  }
  const std::vector<DeviceBuffers> outs = run_instances(body, globals, in_axes, run.mesh, axis_name, &run.log);
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const std::optional<int64_t> axis = o < spec.out_axes.size() ? spec.out_axes[o] : std::optional<int64_t>(0);
    const BufferPtr global = stacked(outs[o], axis);
    const NamedSharding sharding = make_named_sharding(run.mesh, axis_spec(axis, axis_name), profile);
    run.outputs.push_back(Array::from_host(global, sharding, profile, atom_aval(body.outvars[o]).weak_type));
  }
  return run;
}

void register_pmap_primitive() {
  Primitive p;
  p.name = "xla_pmap";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    const Jaxpr& body = call_jaxpr(params);
    const std::vector<std::optional<int64_t>> out_axes = axes_param(params, "out_axes");
    const int64_t n = param(params, "axis_size").as_int("axis_size");
    std::vector<Aval> outs;
    for (std::size_t o = 0; o < body.outvars.size(); ++o) {
      Aval out = atom_aval(body.outvars[o]);
      out.shape = with_axis(out.shape, out_axes.at(o), n);
      out.varying.clear();
      outs.push_back(out);
    }
    return outs;
  };
  // On one device: the instances run over a stand-in mesh of n devices so their collectives still work.
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const int64_t n = param(params, "axis_size").as_int("axis_size");
    const ParamValue& name = param(params, "axis_name");
    const std::string axis_name = name.get_if<std::string>() ? *name.get_if<std::string>() : kInternalAxisName;
    const Mesh mesh = pmap_mesh(make_device_preset("cpu:" + std::to_string(n)).devices, axis_name);
    const std::vector<std::optional<int64_t>> out_axes = axes_param(params, "out_axes");
    const std::vector<DeviceBuffers> outs =
        run_instances(call_jaxpr(params), std::vector<BufferPtr>(in.begin(), in.end()), axes_param(params, "in_axes"),
                      mesh, axis_name, nullptr);
    std::vector<BufferPtr> results;
    for (std::size_t o = 0; o < outs.size(); ++o) results.push_back(stacked(outs[o], out_axes.at(o)));
    return results;
  };
  register_primitive(std::move(p));
}

}  // namespace shardscope
