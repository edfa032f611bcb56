// `_shardscope.random`: jax.random's keys and samplers over core/random on concrete keys, and random bits in traces.
#include <pybind11/stl.h>

#include "api/session.h"
#include "api/trace.h"
#include "base/error.h"
#include "python/bindings.h"
#include "python/convert.h"
#include "random/sharded_random.h"

namespace shardscope::python {
namespace {

const JaxProfile& profile() { return api::session().profile; }

// Samples land where uncommitted values do; a requested sharding is applied afterwards by the Python layer.
Sharding default_sharding() { return make_single_device_sharding(api::default_device(), profile()); }

// The profile's jax_threefry_partitionable default unless the user set the flag.
random::GenerationConfig generation_config() {
  random::GenerationConfig config = random::default_generation_config(profile());
  const std::optional<bool> flag = api::session().threefry_partitionable;
  if (flag) config.mode = *flag ? random::ThreefryMode::kPartitionable : random::ThreefryMode::kOriginal;
  return config;
}

// The key's array; keys traced inside jit/vmap have no sampler here yet.
Array key_arg(const py::handle& key, const std::string& name) {
  const api::Value value = to_value(key);
  if (!value.is_concrete()) {
    throw not_implemented_error("jax.random." + name +
                                " on a traced key (inside jit, vmap, grad or shard_map) is not supported by "
                                "shardscope yet");
  }
  return value.array();
}

// dtype=None means the sampler's default; explicit dtypes are canonicalized as JAX does without x64.
DType dtype_arg(const py::object& dtype, DType fallback) {
  const DType chosen = dtype.is_none() ? fallback : dtype_from_python(dtype);
  return canonicalize_dtype(chosen, api::session().enable_x64);
}

py::object wrap(Array array) { return py::cast(PyValue(api::Value::concrete(std::move(array)))); }

}  // namespace

void bind_random(py::module_& m) {
  // Inside a trace (jit, grad, vmap) samplers are built from this: a random_bits equation of the program, in the
  // session's threefry mode (a hidden param), which the partitioner runs block by block like JAX.
  m.def("traced_bits", [](const py::object& key, const Shape& shape, int64_t bit_width) {
    const bool partitionable = generation_config().mode == random::ThreefryMode::kPartitionable;
    return py::cast(PyValue(api::bind1(
        "random_bits", {to_value(key)},
        {{"bit_width", bit_width}, {"shape", ParamValue::int_tuple(shape)}, {"partitionable", partitionable}})));
  });
  m.def("PRNGKey", [](int64_t seed) {
    return wrap(random::prng_key(seed, default_sharding(), profile(), api::session().enable_x64));
  });
  m.def("split", [](const py::object& key, const Shape& shape) {
    return wrap(random::split(key_arg(key, "split"), shape, default_sharding(), profile(), generation_config()));
  });
  m.def("fold_in", [](const py::object& key, int64_t data) {
    // JAX converts `data` to uint32 with wrap-around.
    return wrap(random::fold_in(key_arg(key, "fold_in"), static_cast<uint32_t>(data), default_sharding(), profile()));
  });
  m.def("bits", [](const py::object& key, const Shape& shape, const py::object& dtype) {
    return wrap(random::bits(key_arg(key, "bits"), shape, dtype_arg(dtype, DType::kUInt32), default_sharding(),
                             profile(), generation_config()));
  });
  m.def("uniform",
        [](const py::object& key, const Shape& shape, const py::object& dtype, double minval, double maxval) {
          return wrap(random::uniform(key_arg(key, "uniform"), shape, dtype_arg(dtype, DType::kFloat64), minval, maxval,
                                      default_sharding(), profile(), generation_config()));
        });
  m.def("normal", [](const py::object& key, const Shape& shape, const py::object& dtype) {
    return wrap(random::normal(key_arg(key, "normal"), shape, dtype_arg(dtype, DType::kFloat64), default_sharding(),
                               profile(), generation_config()));
  });
  m.def("randint",
        [](const py::object& key, const Shape& shape, int64_t minval, int64_t maxval, const py::object& dtype) {
          return wrap(random::randint(key_arg(key, "randint"), shape, minval, maxval, dtype_arg(dtype, DType::kInt64),
                                      default_sharding(), profile(), generation_config()));
        });
  m.def("bernoulli", [](const py::object& key, double p, const Shape& shape, const std::string& mode) {
    if (mode != "low" && mode != "high") {
      throw value_error("got mode='" + mode + "', expected 'high' or 'low'");
    }
    const DType p_dtype = api::session().enable_x64 ? DType::kFloat64 : DType::kFloat32;
    return wrap(
        random::bernoulli(key_arg(key, "bernoulli"), p, shape, default_sharding(), profile(), generation_config(),
                          mode == "high" ? random::BernoulliMode::kHigh : random::BernoulliMode::kLow, p_dtype));
  });
}

}  // namespace shardscope::python
