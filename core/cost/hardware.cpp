// Public spec numbers per device kind. Each row divides per-chip figures by the JAX devices per chip; every
// group of figures names its source in the row itself (HardwareSpec's *_source fields).
//
// TPUs run f32 dots as one bf16 pass at default precision, so their matmul rate is the bf16 peak; no public
// figure exists for TPU vector units, so their elementwise rate is also the bf16 peak (such ops are
// bandwidth-bound at these rates anyway). Transcendentals are priced at a quarter of the vector rate:
// shardscope's assumption, not a published figure.
#include "cost/hardware.h"

#include "base/error.h"

namespace shardscope {
namespace {

const char* const kBookChips = "scaling-book tpus.md, chip table (bf16 FLOP/s, HBM capacity and bandwidth)";
const char* const kBookIci =
    "scaling-book tpus.md, interconnect table (ICI per link, one-way and bidirectional); "
    "sharding.md, 'A note on ICI latency' (about 1 us per hop); tpus.md on wraparound links";
const char* const kBookHost =
    "scaling-book tpus.md: PCIe about 1.5e10 B/s per chip (v6e 3.2e10, v4 1.6e10), "
    "DCN about 2.5e10 B/s per host";

struct TpuFigures {
  const char* name;
  const char* kind;
  double chip_flops;
  double hbm_bandwidth;
  double hbm_capacity;
  double ici_one_way;
  int links;
  int wrap_multiple;
  int wrap_full_dim;
  double pcie;
  int chips_per_host;
  double devices_per_chip;
  const char* compute_source;
};

HardwareSpec tpu(const TpuFigures& f) {
  HardwareSpec spec;
  spec.name = f.name;
  spec.device_kind = f.kind;
  spec.matmul_flops = f.chip_flops / f.devices_per_chip;
  spec.vector_flops = spec.matmul_flops;
  spec.transcendentals_per_second = spec.vector_flops / 4;
  spec.memory_bandwidth = f.hbm_bandwidth / f.devices_per_chip;
  spec.memory_capacity = f.hbm_capacity / f.devices_per_chip;
  spec.link_one_way = f.ici_one_way / f.devices_per_chip;
  spec.link_bandwidth = 2 * spec.link_one_way;
  spec.link_latency = 1e-6;
  spec.links_per_chip = f.links;
  spec.multi_axis_links = true;
  spec.wrap_multiple = f.wrap_multiple;
  spec.wrap_full_dim = f.wrap_full_dim;
  spec.host_link_bandwidth = f.pcie / f.devices_per_chip;
  spec.dcn_bandwidth = 2.5e10 / (f.chips_per_host * f.devices_per_chip);
  spec.compute_source = f.compute_source;
  spec.memory_source = f.compute_source;
  spec.interconnect_source = kBookIci;
  spec.host_source = kBookHost;
  return spec;
}

struct GpuFigures {
  const char* name;
  const char* kind;
  double tensor_flops;  // dense, at JAX's default f32 matmul precision (TF32 where the GPU has it)
  double fp32_flops;
  double hbm_bandwidth;
  double hbm_capacity;
  double nvlink_total;  // both directions, all links
  int nvlinks;
  double pcie;
  double network;  // per GPU, between nodes
  const char* source;
};

HardwareSpec gpu(const GpuFigures& f) {
  HardwareSpec spec;
  spec.name = f.name;
  spec.device_kind = f.kind;
  spec.matmul_flops = f.tensor_flops;
  spec.vector_flops = f.fp32_flops;
  spec.transcendentals_per_second = f.fp32_flops / 4;
  spec.memory_bandwidth = f.hbm_bandwidth;
  spec.memory_capacity = f.hbm_capacity;
  // Through the NVSwitch every GPU sends its whole egress to the ring's next GPU: a ring with wraparound.
  spec.link_bandwidth = f.nvlink_total / 2;
  spec.link_one_way = f.nvlink_total / 2;
  spec.link_latency = 5e-6;  // order of an NCCL ring step inside one node (shardscope's assumption)
  spec.links_per_chip = f.nvlinks;
  spec.multi_axis_links = false;
  spec.host_link_bandwidth = f.pcie;
  spec.dcn_bandwidth = f.network;
  spec.compute_source = f.source;
  spec.memory_source = f.source;
  spec.interconnect_source = f.source;
  spec.host_source = f.source;
  return spec;
}

std::vector<HardwareSpec> build_table() {
  std::vector<HardwareSpec> rows;
  // v2/v3 expose each of a chip's two TensorCores as a JAX device; v2 and v3 pods wrap at their full size.
  rows.push_back(tpu({"TPU v2", "TPU v2", 46e12, 700e9, 16e9, 62e9, 4, 0, 16, 1.5e10, 4, 2,
                      "Jouppi et al., 'A Domain-Specific Supercomputer for Training Deep Neural Networks' "
                      "(CACM 2020): 46 TFLOP/s bf16, 16 GiB HBM at 700 GB/s, ICI 496 Gbit/s each way"}));
  rows.push_back(tpu({"TPU v3", "TPU v3", 1.4e14, 9.0e11, 32e9, 1e11, 4, 0, 32, 1.5e10, 4, 2, kBookChips}));
  rows.push_back(tpu({"TPU v4", "TPU v4", 2.75e14, 1.2e12, 32e9, 4.5e10, 6, 4, 0, 1.6e10, 4, 1, kBookChips}));
  rows.push_back(tpu({"TPU v5p", "TPU v5", 4.59e14, 2.8e12, 96e9, 9e10, 6, 4, 0, 1.5e10, 4, 1, kBookChips}));
  rows.push_back(tpu({"TPU v5e", "TPU v5 lite", 1.97e14, 8.1e11, 16e9, 4.5e10, 4, 0, 16, 1.5e10, 8, 1, kBookChips}));
  rows.push_back(tpu({"TPU v6e", "TPU v6 lite", 9.2e14, 1.6e12, 32e9, 9e10, 4, 0, 16, 3.2e10, 8, 1, kBookChips}));
  // GPUs: SXM boards, NVLink 4 (H100/H200) and 3 (A100), 2 (V100); one NIC per GPU between nodes.
  rows.push_back(gpu({"H100", "NVIDIA H100 80GB HBM3", 4.95e14, 6.7e13, 3.35e12, 80e9, 9e11, 18, 6.4e10, 5e10,
                      "NVIDIA H100 SXM data sheet (TF32 dense 495 TFLOP/s, FP32 67 TFLOP/s, 80 GB HBM3 at 3.35 TB/s, "
                      "NVLink 900 GB/s, PCIe Gen5 x16); scaling-book gpus.md (NVLink 450 GB/s egress, 400 Gb/s "
                      "InfiniBand per GPU)"}));
  rows.push_back(gpu({"H200", "NVIDIA H200", 4.95e14, 6.7e13, 4.8e12, 141e9, 9e11, 18, 6.4e10, 5e10,
                      "NVIDIA H200 SXM data sheet (TF32 dense 495 TFLOP/s, FP32 67 TFLOP/s, 141 GB HBM3e at "
                      "4.8 TB/s, NVLink 900 GB/s, PCIe Gen5 x16); 400 Gb/s InfiniBand per GPU"}));
  rows.push_back(gpu({"A100", "NVIDIA A100-SXM4-80GB", 1.56e14, 1.95e13, 2.0e12, 80e9, 6e11, 12, 3.2e10, 2.5e10,
                      "NVIDIA A100 data sheet (TF32 dense 156 TFLOP/s, FP32 19.5 TFLOP/s, 80 GB at 2.0 TB/s, NVLink "
                      "600 GB/s, PCIe Gen4 x16); 200 Gb/s InfiniBand per GPU"}));
  rows.push_back(gpu({"V100", "Tesla V100-SXM2-16GB", 1.57e13, 1.57e13, 9.0e11, 16e9, 3e11, 6, 1.6e10, 1.25e10,
                      "NVIDIA V100 data sheet (FP32 15.7 TFLOP/s, no TF32, 16 GB HBM2 at 900 GB/s, NVLink 2.0 "
                      "300 GB/s, PCIe Gen3 x16); 100 Gb/s InfiniBand per GPU"}));
  // CPU: one simulated device is one core of the machine the simulator was tuned on; devices share the host's
  // memory, so there is no interconnect: copies go through memory at about the same rate.
  HardwareSpec cpu;
  cpu.name = "CPU core";
  cpu.device_kind = "cpu";
  cpu.matmul_flops = 1.0e11;
  cpu.vector_flops = 1.0e11;
  cpu.transcendentals_per_second = cpu.vector_flops / 4;
  cpu.memory_bandwidth = 2.2e10;
  cpu.link_bandwidth = 2.2e10;
  cpu.link_one_way = 2.2e10;
  cpu.link_latency = 1e-6;
  cpu.host_link_bandwidth = 2.2e10;
  cpu.dcn_bandwidth = 2.2e10;
  cpu.compute_source = "reference/performance_anchors.md (about 100 GFLOP/s GEMM per core)";
  cpu.memory_source = "reference/performance_anchors.md (about 22 GB/s per core)";
  cpu.interconnect_source = "no interconnect: devices share host memory";
  cpu.host_source = cpu.interconnect_source;
  rows.push_back(cpu);
  for (HardwareSpec& row : rows) {
    row.source = row.compute_source;
    for (const std::string* part : {&row.memory_source, &row.interconnect_source, &row.host_source}) {
      if (row.source.find(*part) == std::string::npos) row.source += "; " + *part;
    }
  }
  return rows;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

bool HardwareSpec::wraps(int size) const {
  if (wrap_multiple > 0) return size >= wrap_multiple && size % wrap_multiple == 0;
  return wrap_full_dim > 0 && size == wrap_full_dim;
}

const std::vector<HardwareSpec>& hardware_table() {
  static const std::vector<HardwareSpec> table = build_table();
  return table;
}

const HardwareSpec& hardware_for_kind(const std::string& device_kind) {
  for (const HardwareSpec& spec : hardware_table()) {
    if (spec.device_kind == device_kind) return spec;
  }
  // GPU kinds carry memory and board variants ("NVIDIA H100 PCIe", "Tesla V100-PCIE-32GB"): match the model.
  for (const HardwareSpec& spec : hardware_table()) {
    const std::string model = spec.name;
    if (device_kind.find(model) != std::string::npos && !starts_with(spec.device_kind, "TPU")) return spec;
  }
  if (starts_with(device_kind, "TPU v5p")) return hardware_for_kind("TPU v5");
  if (starts_with(device_kind, "TPU v5e")) return hardware_for_kind("TPU v5 lite");
  if (starts_with(device_kind, "TPU v6")) return hardware_for_kind("TPU v6 lite");
  if (starts_with(device_kind, "TPU v4")) return hardware_for_kind("TPU v4");
  throw value_error("no hardware figures for device kind '" + device_kind + "'");
}

const HardwareSpec& hardware_for(const Device& device) {
  if (device.platform == Platform::kCpu) return hardware_for_kind("cpu");
  return hardware_for_kind(device.device_kind);
}

}  // namespace shardscope
