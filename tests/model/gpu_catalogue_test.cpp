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

TEST(GpuCatalogue, NodeTypesNameCataloguedGpusAndTheirFabric) {
  for (const NodeType& t : node_types()) {
    EXPECT_TRUE(find_gpu_model(t.gpu).has_value()) << t.name;
    EXPECT_GT(t.gpus, 0U) << t.name;
    EXPECT_EQ(t.scale_up_domain_gpus % t.gpus, 0U) << t.name;  // a domain holds whole nodes
  }
  const auto hgx = default_node_type("H100");
  ASSERT_TRUE(hgx.has_value());
  EXPECT_EQ(hgx->name, "hgx-h100");
  EXPECT_EQ(hgx->nics, 8U);               // 8x ConnectX-7 400G (gpu-domain.md 4.1)
  EXPECT_EQ(hgx->nic_effective_gbps, 47);  // 46-48 GB/s per NDR NIC through NCCL (4.2)
  const auto tray = find_node_type("gb200-tray");
  ASSERT_TRUE(tray.has_value());
  EXPECT_EQ(tray->gpus, 4U);                   // 18 trays x 4 GPUs = 72
  EXPECT_EQ(tray->scale_up_domain_gpus, 72U);  // one NVL72 rack
  EXPECT_EQ(find_gpu_model("h100")->nvlink_generation, 4U);
  EXPECT_FALSE(find_node_type("hgx-h1000").has_value());
  EXPECT_NE(node_type_names().find("gb200-tray"), std::string::npos);
}

}  // namespace
}  // namespace gputwin
