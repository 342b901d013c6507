#include "gpu/gpu_catalogue.hpp"

#include <gtest/gtest.h>

namespace gputwin {
namespace {

TEST(GpuCatalogue, KnowsTheCommonTrainingGpus) {
  for (const char* name : {"a100", "a100-40gb", "h100", "h200", "b200", "gb200", "mi300x"}) {
    EXPECT_TRUE(find_gpu_model(name).has_value()) << name;
  }
  const auto h100 = find_gpu_model("H100");  // case-insensitive, as users write it
  ASSERT_TRUE(h100.has_value());
  EXPECT_EQ(h100->memory_gb, 80);           // gpu-domain.md 4.1: 80 GB HBM3
  EXPECT_EQ(h100->power_w, 700);            // 700 W
  EXPECT_EQ(h100->bf16_dense_tflops, 989);  // bf16 989 TFLOPS dense
  EXPECT_FALSE(find_gpu_model("h1000").has_value());
  EXPECT_NE(gpu_model_names().find("h200"), std::string::npos);
}

}  // namespace
}  // namespace gputwin
