#include "gpu/gpu_catalogue.hpp"

#include <array>
#include <cctype>

namespace gputwin {
namespace {

// gpu-domain.md 4.1 (NVIDIA datasheets via stas00/ml-engineering); MI300X from AMD's datasheet. Idle power:
// Acme (NSDI'24) saw idle GPUs draw about 60 W [S]; the same figure is used for every model.
constexpr std::array<GpuModel, 8> kModels{{
    {"a100-40gb", "NVIDIA A100 SXM 40 GB", 40, 1.555, 400, 312, 300, 3, 60},
    {"a100", "NVIDIA A100 SXM 80 GB", 80, 2.0, 400, 312, 300, 3, 60},
    {"h100", "NVIDIA H100 SXM 80 GB", 80, 3.35, 700, 989, 450, 4, 60},
    {"h200", "NVIDIA H200 SXM 141 GB", 141, 4.8, 700, 989, 450, 4, 60},
    {"b200", "NVIDIA B200 180 GB", 180, 8.0, 1000, 2250, 900, 5, 60},
    {"b300", "NVIDIA B300 288 GB", 288, 8.0, 1000, 2250, 900, 5, 60},
    {"gb200", "NVIDIA GB200 (NVL72) 186 GB", 186, 8.0, 1200, 2500, 900, 5, 60},
    {"mi300x", "AMD Instinct MI300X 192 GB", 192, 5.3, 750, 1307, 448, 0, 60},
}};

// Node types. GPUs, NICs and NVLink domains: gpu-domain.md 4.1-4.2 [V]. CPU cores and memory are the DGX
// (or, for MI300X, typical OEM) configurations from the vendors' datasheets, not in the reference [U]: DGX A100
// 2x64 cores / 2 TB, DGX H100/H200 2x56 / 2 TB, DGX B200 2x56 / 2 TB, DGX B300 2x64 / 2 TB, a GB200 compute
// tray 2 Grace x 72 cores / 960 GB LPDDR5X, an 8x MI300X server 2x96 cores / 2 TB. NCCL's per-NIC figure:
// 47 GB/s for NDR 400G (46-48, nccl-tests#290), 24 GB/s for HDR 200G (192 GB/s over 8 NICs, nccl#1576),
// 94 GB/s assumed for XDR 800G (twice NDR) [D].
constexpr std::array<NodeType, 8> kNodeTypes{{
    {"hgx-a100-40gb", "NVIDIA DGX/HGX A100 40 GB, 8 GPUs", "a100-40gb", 8, 128, 1024, 8, 200, 24, 8},
    {"hgx-a100", "NVIDIA DGX/HGX A100 80 GB, 8 GPUs", "a100", 8, 128, 2048, 8, 200, 24, 8},
    {"hgx-h100", "NVIDIA DGX/HGX H100, 8 GPUs", "h100", 8, 112, 2048, 8, 400, 47, 8},
    {"hgx-h200", "NVIDIA DGX/HGX H200, 8 GPUs", "h200", 8, 112, 2048, 8, 400, 47, 8},
    {"hgx-b200", "NVIDIA DGX/HGX B200, 8 GPUs", "b200", 8, 112, 2048, 8, 400, 47, 8},
    {"hgx-b300", "NVIDIA DGX B300, 8 GPUs", "b300", 8, 128, 2048, 8, 800, 94, 8},
    {"gb200-tray", "NVIDIA GB200 NVL72 compute tray, 4 GPUs", "gb200", 4, 144, 960, 4, 400, 47, 72},
    {"mi300x-8", "AMD Instinct MI300X platform, 8 GPUs", "mi300x", 8, 192, 2048, 8, 400, 47, 8},
}};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

template <typename T, std::size_t N>
std::optional<T> find_named(const std::array<T, N>& table, std::string_view name) {
  for (const T& entry : table) {
    if (iequals(entry.name, name)) return entry;
  }
  return std::nullopt;
}

template <typename T, std::size_t N>
std::string joined_names(const std::array<T, N>& table) {
  std::string out;
  for (const T& entry : table) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

}  // namespace

std::span<const GpuModel> gpu_models() {
  return kModels;
}

std::optional<GpuModel> find_gpu_model(std::string_view name) {
  return find_named(kModels, name);
}

std::string gpu_model_names() {
  return joined_names(kModels);
}

std::span<const NodeType> node_types() {
  return kNodeTypes;
}

std::optional<NodeType> find_node_type(std::string_view name) {
  return find_named(kNodeTypes, name);
}

std::optional<NodeType> default_node_type(std::string_view gpu) {
  for (const NodeType& t : kNodeTypes) {
    if (iequals(t.gpu, gpu)) return t;
  }
  return std::nullopt;
}

std::string node_type_names() {
  return joined_names(kNodeTypes);
}

}  // namespace gputwin
