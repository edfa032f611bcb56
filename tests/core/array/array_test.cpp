// Sharded arrays: device_put splits into per-device blocks, replicas share buffers, gather restores.
#include "array/array.h"

#include <doctest/doctest.h>

#include <numeric>

#include "base/error.h"
#include "device/presets.h"

using namespace shardscope;

namespace {
BufferPtr iota_f32(Shape shape) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  std::iota(values.begin(), values.end(), 0.0F);
  return make_buffer(DType::kFloat32, std::move(shape), values);
}
NamedSharding cpu8(const std::string& spec, std::vector<int64_t> mesh_shape = {2, 4}) {
  const Mesh mesh = make_mesh(mesh_shape, {"x", "y"}, make_device_preset("cpu:8").devices, JaxProfile());
  return make_named_sharding(mesh, parse_partition_spec(spec), JaxProfile());
}
std::vector<float> values_of(const Buffer& b) {
  const auto span = b.as<float>();
  return {span.begin(), span.end()};
}
}  // namespace

TEST_CASE("device_put gives each device its block, as in the seeds") {
  const Array array = Array::from_host(iota_f32({4, 8}), cpu8("P('x', 'y')"), JaxProfile());
  REQUIRE(array.shards().size() == 8);
  CHECK(array.shards()[0].data->shape() == Shape{2, 2});
  CHECK(values_of(*array.shards()[0].data) == std::vector<float>{0, 1, 8, 9});
  CHECK(values_of(*array.shards()[5].data) == std::vector<float>{18, 19, 26, 27});
  CHECK(array.distinct_buffer_count() == 8);
  CHECK(values_of(*array.gather()) == values_of(*iota_f32({4, 8})));
}

TEST_CASE("replicas share one immutable buffer") {
  const Array array = Array::from_host(iota_f32({4, 8}), cpu8("P('x')"), JaxProfile());
  CHECK(array.distinct_buffer_count() == 2);
  CHECK(array.shards()[0].data == array.shards()[3].data);
  CHECK(array.shards()[3].replica_id == 3);
  CHECK(array.bytes_per_device() == std::vector<int64_t>(8, 2 * 8 * 4));
  CHECK(array.nbytes() == 128);
  const Array replicated = Array::from_host(iota_f32({4, 8}), cpu8("P()"), JaxProfile());
  CHECK(replicated.distinct_buffer_count() == 1);
}

TEST_CASE("abstract arrays carry layout without values") {
  const Array big = Array::abstract({{1 << 20, 1 << 16}, DType::kBFloat16, false}, cpu8("P('x', 'y')"), JaxProfile());
  CHECK(big.is_abstract());
  CHECK(big.bytes_per_device()[0] == (int64_t{1} << 19) * (int64_t{1} << 14) * 2);
  CHECK_THROWS_AS((void)big.gather(), Error);
  CHECK(big.aval().str_short(true) == "bf16[1048576,65536]");
}

TEST_CASE("uneven device_put raises IndivisibleError") {
  CHECK_THROWS_WITH_AS((void)Array::from_host(iota_f32({5, 8}), cpu8("P('x')"), JaxProfile()),
                       doctest::Contains("implies that array axis 0 is partitioned 2 times"), Error);
}

TEST_CASE("blocks round-trip through slice and write for every rank") {
  for (const Shape& shape : {Shape{}, Shape{6}, Shape{3, 4}, Shape{2, 3, 4}}) {
    const BufferPtr source = iota_f32(shape);
    std::vector<DimSlice> index(shape.size());
    if (!shape.empty()) index.back() = DimSlice{false, 1, shape.back(), 1};
    const BufferPtr block = slice_block(*source, index);
    Buffer target(DType::kFloat32, shape);
    write_block(target, index, *block);
    for (int64_t i = 0; i < product(shape); ++i) {
      const bool inside = shape.empty() || i % shape.back() >= 1;
      CHECK(target.element_as_double(i) == (inside ? source->element_as_double(i) : 0.0));
    }
  }
}

TEST_CASE("half-precision elements decode") {
  const BufferPtr bf16 = make_buffer<uint16_t>(DType::kBFloat16, {2}, {0x3F80, 0xC000});
  CHECK(bf16->element_as_double(0) == 1.0);
  CHECK(bf16->element_as_double(1) == -2.0);
  const BufferPtr f16 = make_buffer<uint16_t>(DType::kFloat16, {2}, {0x3C00, 0x3555});
  CHECK(f16->element_as_double(0) == 1.0);
  CHECK(f16->element_as_double(1) == doctest::Approx(0.333251953125));
}
