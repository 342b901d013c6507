// GPU catalogue: the accelerator models a scenario's `gpu_type` may name, with the figures later models use
// (GPU-hours per type, power and energy). Figures and sources: shared/reference/gpu-domain.md section 4.1.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gputwin {

/// One accelerator model.
struct GpuModel {
  std::string_view name;             ///< Scenario name, lower case, as in Slurm's Gres=gpu:<type> (e.g. "h100").
  std::string_view description;      ///< Full product name.
  double memory_gb;                  ///< HBM capacity per GPU.
  double memory_bandwidth_tbps;      ///< HBM bandwidth per GPU, TB/s.
  double power_w;                    ///< Board power (TDP/TGP) per GPU.
  double bf16_dense_tflops;          ///< Dense BF16 peak.
  double nvlink_gbps_per_direction;  ///< Scale-up bandwidth per GPU and direction, GB/s.
};

/// All catalogued models, in a fixed order.
std::span<const GpuModel> gpu_models();

/// The model named `name` (case-insensitive), if catalogued.
std::optional<GpuModel> find_gpu_model(std::string_view name);

/// Comma-separated list of catalogued names, for error messages.
std::string gpu_model_names();

}  // namespace gputwin
