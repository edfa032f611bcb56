// Every primitive under jit, with its inputs under every valid NamedSharding (sampled when there are too many)
// on meshes of 1, 2, 2x2, 2x4 and 8 CPU devices, against the single-device interpreter: exact for integers
// and bools, within float tolerance otherwise, and every device's shard holding its block of the reference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "core/exec/conformance_programs.h"
#include "device/presets.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "ir/primitive.h"
#include "ops/ops.h"

using namespace shardscope;
using namespace shardscope::conformance;

namespace {

const JaxProfile kProfile;

// Input sharding combinations tried per (sample, mesh) when the full product is larger: enough to hit
// every input sharded on every axis in a few mixes, small enough for ASan builds.
constexpr std::size_t kMaxCombinations = 64;

std::vector<Mesh> conformance_meshes() {
  const std::vector<Device> devices = make_device_preset("cpu:8").devices;
  const auto mesh = [&](std::vector<int64_t> shape, std::vector<std::string> names) {
    return make_mesh(shape, names, devices, kProfile, std::vector<AxisType>(shape.size(), AxisType::kAuto));
  };
  return {mesh({1}, {"x"}), mesh({2}, {"x"}), mesh({2, 2}, {"x", "y"}), mesh({2, 4}, {"x", "y"}), mesh({8}, {"x"})};
}

std::string mesh_label(const Mesh& mesh) {
  std::string label;
  for (std::size_t a = 0; a < mesh.axis_names().size(); ++a) {
    label += (a == 0 ? "" : "x") + std::to_string(mesh.axis_sizes()[a]);
  }
  return label;
}

using DimAxes = std::vector<std::vector<std::string>>;

// Every valid placement of the mesh axes on `shape`: each axis unused or on one dim, at any position of that
// dim's ordered tuple, each dim's size divisible by the product of its axes.
void enumerate_layouts(const Shape& shape, const Mesh& mesh, std::size_t axis, DimAxes& current,
                       std::vector<DimAxes>& out) {
  if (axis == mesh.axis_names().size()) {
    out.push_back(current);
    return;
  }
  enumerate_layouts(shape, mesh, axis + 1, current, out);
  const std::string& name = mesh.axis_names()[axis];
  for (std::size_t d = 0; d < shape.size(); ++d) {
    int64_t sharded = mesh.axis_sizes()[axis];
    for (const std::string& other : current[d]) sharded *= mesh.axis_size(other);
    if (shape[d] % sharded != 0) continue;
    for (std::size_t position = 0; position <= current[d].size(); ++position) {
      current[d].insert(current[d].begin() + static_cast<std::ptrdiff_t>(position), name);
      enumerate_layouts(shape, mesh, axis + 1, current, out);
      current[d].erase(current[d].begin() + static_cast<std::ptrdiff_t>(position));
    }
  }
}

std::vector<DimAxes> valid_layouts(const Shape& shape, const Mesh& mesh) {
  std::vector<DimAxes> out;
  DimAxes current(shape.size());
  enumerate_layouts(shape, mesh, 0, current, out);
  return out;
}

NamedSharding sharding_of(const Mesh& mesh, const DimAxes& layout) {
  std::vector<SpecEntry> entries;
  for (const auto& axes : layout) entries.push_back(SpecEntry::of_axes(axes));
  return make_named_sharding(mesh, PartitionSpec(entries), kProfile);
}

// Indices into each input's layout list: all of them when few, else the all-replicated one plus a
// deterministic sample.
std::vector<std::vector<std::size_t>> combinations(const std::vector<std::size_t>& counts, const std::string& seed) {
  std::size_t total = 1;
  for (const std::size_t c : counts) total *= c;
  std::vector<std::size_t> picks;
  if (total <= kMaxCombinations) {
    for (std::size_t i = 0; i < total; ++i) picks.push_back(i);
  } else {
    std::mt19937_64 rng(std::hash<std::string>{}(seed));
    std::set<std::size_t> chosen{0};
    while (chosen.size() < kMaxCombinations) chosen.insert(static_cast<std::size_t>(rng() % total));
    picks.assign(chosen.begin(), chosen.end());
  }
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t flat : picks) {
    std::vector<std::size_t> digits;
    for (const std::size_t c : counts) {
      digits.push_back(flat % c);
      flat /= c;
    }
    out.push_back(digits);
  }
  return out;
}

// Small values every sample's kernel accepts: floats in (0.1, 0.9) (logs, roots, inverse trig), integers
// in [1, 4] (no division by zero, in-range indices after clipping), bools both ways.
BufferPtr input_buffer(const Aval& aval, std::mt19937& rng) {
  auto buffer = std::make_shared<Buffer>(aval.dtype, aval.shape);
  std::uniform_real_distribution<double> real(0.1, 0.9);
  std::uniform_int_distribution<int> integer(1, 4);
  for (std::size_t i = 0; i < static_cast<std::size_t>(buffer->size()); ++i) {
    switch (aval.dtype) {
      case DType::kFloat32: buffer->as_mutable<float>()[i] = static_cast<float>(real(rng)); break;
      case DType::kInt32: buffer->as_mutable<int32_t>()[i] = integer(rng); break;
      case DType::kUInt32: buffer->as_mutable<uint32_t>()[i] = static_cast<uint32_t>(integer(rng)); break;
      case DType::kBool: buffer->as_mutable<uint8_t>()[i] = static_cast<uint8_t>(integer(rng) % 2); break;
      default: FAIL("no input generator for this dtype");
    }
  }
  return buffer;
}

bool elements_match(const Buffer& got, int64_t g, const Buffer& want, int64_t w) {
  if (is_floating(want.dtype())) {
    const double a = got.element_as_double(g);
    const double b = want.element_as_double(w);
    if (a == b || (std::isnan(a) && std::isnan(b))) return true;
    return std::abs(a - b) <= 1e-5 * (1 + std::abs(b));
  }
  // Integers and bools bit for bit (64-bit values do not survive a round trip through double).
  const std::size_t width = want.nbytes() / static_cast<std::size_t>(std::max<int64_t>(want.size(), 1));
  return std::memcmp(got.bytes().data() + static_cast<std::size_t>(g) * width,
                     want.bytes().data() + static_cast<std::size_t>(w) * width, width) == 0;
}

std::string shape_text(const Shape& shape) {
  std::string text = "(";
  for (const int64_t d : shape) text += std::to_string(d) + ",";
  return text + ")";
}

// Empty when `array` equals `want` as a whole and every shard holds exactly its block of `want`.
std::string compare_output(const Array& array, const Buffer& want) {
  if (array.shape() != want.shape() || array.dtype() != want.dtype()) {
    return "aval " + shape_text(array.shape()) + " vs reference " + shape_text(want.shape());
  }
  const BufferPtr whole = array.gather();
  for (int64_t i = 0; i < want.size(); ++i) {
    if (!elements_match(*whole, i, want, i)) return "gathered element " + std::to_string(i) + " differs";
  }
  std::set<int64_t> devices;
  for (const Array::Shard& shard : array.shards()) {
    if (!devices.insert(shard.device.id).second) return "device " + std::to_string(shard.device.id) + " twice";
  }
  const std::string misplaced = misplaced_shard(array, [&](const Buffer& got, int64_t local, int64_t global) {
    return elements_match(got, local, want, global);
  });
  if (!misplaced.empty()) return misplaced;
  if (devices.size() != sharding_devices(array.sharding()).size()) return "shards do not cover the devices";
  return {};
}

struct Outcome {
  std::size_t runs = 0;
  std::vector<std::string> failures;
};

void check_sample(const Sample& sample, const Mesh& mesh, Outcome& outcome) {
  const JaxprPtr jaxpr = trace_sample(sample, mesh);
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(sample.label)));
  std::vector<BufferPtr> host;
  for (const Aval& aval : sample.inputs) host.push_back(input_buffer(aval, rng));
  const std::vector<BufferPtr> reference = evaluate_jaxpr(*jaxpr, host);
  std::vector<std::vector<DimAxes>> layouts;
  std::vector<std::size_t> counts;
  for (const Aval& aval : sample.inputs) {
    layouts.push_back(valid_layouts(aval.shape, mesh));
    counts.push_back(layouts.back().size());
  }
  for (const auto& combination : combinations(counts, sample.label + mesh_label(mesh))) {
    std::string where = sample.label + " on mesh " + mesh_label(mesh) + " with";
    std::vector<Array> args;
    for (std::size_t i = 0; i < host.size(); ++i) {
      const DimAxes& layout = layouts[i][combination[i]];
      where += " " + sharding_of(mesh, layout).spec.repr(kProfile);
      args.push_back(Array::from_host(host[i], sharding_of(mesh, layout), kProfile));
    }
    ++outcome.runs;
    try {
      const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
      if (run.outputs.size() != reference.size()) {
        outcome.failures.push_back(where + ": wrong number of outputs");
        continue;
      }
      for (std::size_t o = 0; o < reference.size(); ++o) {
        const std::string problem = compare_output(run.outputs[o], *reference[o]);
        if (!problem.empty()) outcome.failures.push_back(where + ": output " + std::to_string(o) + ": " + problem);
      }
    } catch (const std::exception& error) {
      outcome.failures.push_back(where + ": threw " + error.what());
    }
  }
}

void check_family(Family family) {
  const std::vector<Mesh> meshes = conformance_meshes();
  Outcome outcome;
  std::size_t samples = 0;
  for (const Sample& sample : conformance_samples()) {
    if (sample.family != family) continue;
    ++samples;
    for (const Mesh& mesh : meshes) check_sample(sample, mesh, outcome);
  }
  CHECK(samples > 0);
  CHECK(outcome.runs >= samples * meshes.size());
  std::ostringstream report;
  for (std::size_t i = 0; i < outcome.failures.size() && i < 40; ++i) report << outcome.failures[i] << "\n";
  INFO(outcome.failures.size() << " of " << outcome.runs << " runs failed:\n" << report.str());
  CHECK(outcome.failures.empty());
}

}  // namespace

TEST_CASE("every primitive outside shard_map has a conformance sample") {
  ensure_core_primitives();
  std::set<std::string> sampled;
  for (const Sample& sample : conformance_samples()) sampled.insert(sample.primitive);
  std::size_t skipped = 0;
  for (const Primitive* primitive : all_primitives()) {
    if (needs_named_axis_or_nested_map(primitive->name)) {
      ++skipped;
      continue;
    }
    CAPTURE(primitive->name);
    CHECK(sampled.count(primitive->name) == 1);
  }
  // The skip list is only the shard_map collectives (psum, psum_invariant, psum2, pmax, pmin, all_gather,
  // all_gather_invariant, reduce_scatter, ppermute, all_to_all, axis_index, debug effects run per device) and the
  // two nested mapped programs.
  CHECK(skipped <= 17);
  CHECK(sampled.size() > 100);
}

TEST_CASE("the enumeration yields every valid sharding of a shape") {
  const std::vector<Mesh> meshes = conformance_meshes();
  // (4, 8) on the 2x4 mesh, counted by hand: x unused (y: none, d0, d1) 3; x on d0 (y: none, d1) 2;
  // x on d1 (y: none, d0, before x on d1, after x on d1) 4.
  CHECK(valid_layouts({4, 8}, meshes[3]).size() == 9);
  CHECK(valid_layouts({}, meshes[3]).size() == 1);
  CHECK(valid_layouts({4, 1}, meshes[4]).size() == 1);  // 8 divides neither 4 nor 1
  CHECK(valid_layouts({8}, meshes[4]).size() == 2);
}

TEST_CASE("sharded elementwise primitives match the single-device reference") { check_family(Family::kElementwise); }
TEST_CASE("sharded layout primitives match the single-device reference") { check_family(Family::kLayout); }
TEST_CASE("sharded indexing primitives match the single-device reference") { check_family(Family::kIndexing); }
TEST_CASE("sharded reductions match the single-device reference") { check_family(Family::kReduction); }
TEST_CASE("sharded contractions match the single-device reference") { check_family(Family::kContraction); }
TEST_CASE("sharded programs and relayouts match the single-device reference") { check_family(Family::kProgram); }
TEST_CASE("sharded random primitives match the single-device reference") { check_family(Family::kRandom); }
