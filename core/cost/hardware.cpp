// Public spec numbers per device kind. Each row divides per-chip figures by the JAX devices per chip.
//
// Sources (per chip unless stated):
// * TPU v3, v4, v5p, v5e, v6e: "How to Scale Your Model" (jax-ml/scaling-book), tpus.md spec table:
//   bf16 FLOP/s, HBM bandwidth and ICI bandwidth per link (bidirectional); about 1 us per ICI hop
//   (sharding.md, "A note on ICI latency").
// * TPU v2: Jouppi et al., "A Domain-Specific Supercomputer for Training Deep Neural Networks"
//   (CACM 2020): 46 TFLOP/s bf16, 700 GB/s HBM, ICI links of 496 Gbit/s each way.
// * H100 SXM / A100 SXM 80GB: scaling-book gpus.md (bf16 dense, HBM, NVLink 450 / 300 GB/s egress) and
//   NVIDIA's data sheets for TF32 dense (495 / 156 TFLOP/s) and FP32 (67 / 19.5 TFLOP/s).
// * V100 SXM2: NVIDIA V100 data sheet: 15.7 TFLOP/s FP32 (no TF32), 900 GB/s HBM2, NVLink 2.0
//   300 GB/s total (150 GB/s each way).
// * CPU: one simulated device is one core of the machine the simulator was tuned on
//   (reference/performance_anchors.md: ~100 GFLOP/s GEMM, ~22 GB/s per core; copies between devices
//   go through shared memory at about the same rate).
// TPUs run f32 dots as one bf16 pass at default precision, so their matmul rate is the bf16 peak; no
// public figure exists for TPU vector units, so their elementwise rate is also the bf16 peak (such ops
// are bandwidth-bound at these rates anyway). Transcendentals are priced at a quarter of the vector
// rate: shardscope's assumption, not a published figure.
#include "cost/hardware.h"

#include "base/error.h"

namespace shardscope {
namespace {

HardwareSpec tpu(std::string name, std::string kind, double chip_flops, double hbm, double ici_bidi,
                 double devices_per_chip, std::string source) {
  HardwareSpec spec;
  spec.name = std::move(name);
  spec.device_kind = std::move(kind);
  spec.matmul_flops = chip_flops / devices_per_chip;
  spec.vector_flops = spec.matmul_flops;
  spec.transcendentals_per_second = spec.vector_flops / 4;
  spec.memory_bandwidth = hbm / devices_per_chip;
  spec.link_bandwidth = ici_bidi / devices_per_chip;
  spec.link_latency = 1e-6;
  spec.multi_axis_links = true;
  spec.source = std::move(source);
  return spec;
}

HardwareSpec gpu(std::string name, std::string kind, double tensor_flops, double fp32_flops, double hbm,
                 double nvlink_egress, std::string source) {
  HardwareSpec spec;
  spec.name = std::move(name);
  spec.device_kind = std::move(kind);
  spec.matmul_flops = tensor_flops;
  spec.vector_flops = fp32_flops;
  spec.transcendentals_per_second = fp32_flops / 4;
  spec.memory_bandwidth = hbm;
  spec.link_bandwidth = nvlink_egress;
  spec.link_latency = 5e-6;  // order of an NCCL ring step inside one node (assumption)
  spec.multi_axis_links = false;
  spec.source = std::move(source);
  return spec;
}

std::vector<HardwareSpec> build_table() {
  const std::string book = "scaling-book tpus.md";
  std::vector<HardwareSpec> rows;
  // v2/v3 expose each of a chip's two TensorCores as a JAX device.
  rows.push_back(tpu("TPU v2", "TPU v2", 46e12, 700e9, 2 * 62e9, 2, "Jouppi et al. 2020 (CACM)"));
  rows.push_back(tpu("TPU v3", "TPU v3", 1.4e14, 9.0e11, 2e11, 2, book));
  rows.push_back(tpu("TPU v4", "TPU v4", 2.75e14, 1.2e12, 9e10, 1, book));
  rows.push_back(tpu("TPU v5p", "TPU v5", 4.59e14, 2.8e12, 1.8e11, 1, book));
  rows.push_back(tpu("TPU v5e", "TPU v5 lite", 1.97e14, 8.2e11, 9e10, 1, book));
  rows.push_back(tpu("TPU v6e", "TPU v6 lite", 9.2e14, 1.6e12, 1.8e11, 1, book));
  rows.push_back(gpu("H100", "NVIDIA H100 80GB HBM3", 4.95e14, 6.7e13, 3.35e12, 4.5e11,
                     "scaling-book gpus.md; NVIDIA H100 data sheet"));
  rows.push_back(gpu("A100", "NVIDIA A100-SXM4-80GB", 1.56e14, 1.95e13, 2.0e12, 3.0e11,
                     "scaling-book gpus.md; NVIDIA A100 data sheet"));
  rows.push_back(gpu("V100", "Tesla V100-SXM2-16GB", 1.57e13, 1.57e13, 9.0e11, 1.5e11, "NVIDIA V100 data sheet"));
  HardwareSpec cpu;
  cpu.name = "CPU core";
  cpu.device_kind = "cpu";
  cpu.matmul_flops = 1.0e11;
  cpu.vector_flops = 1.0e11;
  cpu.transcendentals_per_second = cpu.vector_flops / 4;
  cpu.memory_bandwidth = 2.2e10;
  cpu.link_bandwidth = 2.2e10;
  cpu.link_latency = 1e-6;
  cpu.source = "reference/performance_anchors.md";
  rows.push_back(cpu);
  return rows;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

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
