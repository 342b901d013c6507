#include "gpu/gpu_catalogue.hpp"

#include <array>
#include <cctype>

namespace gputwin {
namespace {

// gpu-domain.md 4.1 (NVIDIA datasheets via stas00/ml-engineering); MI300X from AMD's datasheet.
constexpr std::array<GpuModel, 8> kModels{{
    {"a100-40gb", "NVIDIA A100 SXM 40 GB", 40, 1.555, 400, 312, 300},
    {"a100", "NVIDIA A100 SXM 80 GB", 80, 2.0, 400, 312, 300},
    {"h100", "NVIDIA H100 SXM 80 GB", 80, 3.35, 700, 989, 450},
    {"h200", "NVIDIA H200 SXM 141 GB", 141, 4.8, 700, 989, 450},
    {"b200", "NVIDIA B200 180 GB", 180, 8.0, 1000, 2250, 900},
    {"b300", "NVIDIA B300 288 GB", 288, 8.0, 1000, 2250, 900},
    {"gb200", "NVIDIA GB200 (NVL72) 186 GB", 186, 8.0, 1200, 2500, 900},
    {"mi300x", "AMD Instinct MI300X 192 GB", 192, 5.3, 750, 1307, 448},
}};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

std::span<const GpuModel> gpu_models() {
  return kModels;
}

std::optional<GpuModel> find_gpu_model(std::string_view name) {
  for (const auto& m : kModels) {
    if (iequals(m.name, name)) return m;
  }
  return std::nullopt;
}

std::string gpu_model_names() {
  std::string out;
  for (const auto& m : kModels) {
    if (!out.empty()) out += ", ";
    out += m.name;
  }
  return out;
}

}  // namespace gputwin
