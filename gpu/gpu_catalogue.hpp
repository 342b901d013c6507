// GPU catalogue: the accelerator models a scenario's `gpu_type` may name and the node types built from them,
// with the figures the models use (GPU-hours per type, power and energy, NVLink and NIC bandwidth for the
// collective model). Figures and sources: shared/reference/gpu-domain.md section 4.1-4.2.
#pragma once

#include <cstdint>
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
  std::uint32_t nvlink_generation;   ///< NVLink generation (3, 4, 5); 0 for Infinity Fabric (AMD).
  double idle_power_w;               ///< Power drawn while idle (Acme: about 60 W for A100-class GPUs).
};

/// One node type: a server or compute tray as a Slurm node.
struct NodeType {
  std::string_view name;            ///< Scenario name ("hgx-h100", "gb200-tray", ...).
  std::string_view description;     ///< Product name.
  std::string_view gpu;             ///< GPU model name in the catalogue.
  std::uint32_t gpus;               ///< GPUs per node.
  std::uint32_t cpus;               ///< CPU cores per node.
  std::uint32_t memory_gb;          ///< System memory per node, GB.
  std::uint32_t nics;               ///< Scale-out NICs (compute fabric) per node.
  double nic_gbit;                  ///< Line rate per NIC, Gb/s (400 for NDR / ConnectX-7).
  double nic_effective_gbps;        ///< What NCCL gets from one NIC, GB/s (46-48 for NDR 400G, nccl-tests#290).
  std::uint32_t scale_up_domain_gpus;  ///< GPUs in one NVLink domain (8 for HGX, 72 for an NVL72 rack).
};

/// All catalogued models, in a fixed order.
std::span<const GpuModel> gpu_models();

/// The model named `name` (case-insensitive), if catalogued.
std::optional<GpuModel> find_gpu_model(std::string_view name);

/// Comma-separated list of catalogued names, for error messages.
std::string gpu_model_names();

/// All catalogued node types, in a fixed order.
std::span<const NodeType> node_types();

/// The node type named `name` (case-insensitive), if catalogued.
std::optional<NodeType> find_node_type(std::string_view name);

/// The usual node type for GPU model `gpu` (the HGX/DGX 8-GPU server, or the GB200 tray), if any.
std::optional<NodeType> default_node_type(std::string_view gpu);

/// Comma-separated list of catalogued node type names, for error messages.
std::string node_type_names();

}  // namespace gputwin
