// NCCL's cost model against the measured nccl-tests all-reduce busbw of gpu-domain.md 4.5 (large messages).
//
// Inputs, the same rule for every row (no per-row constants):
// - intra_node_gbps: the catalogue's NVLink bandwidth per GPU and direction (H100/H200 450, A100 300), at the
//   model's single NVLink efficiency 0.8 ("450 line rate less ~20% protocol overhead", nccl-tests#212).
// - inter_node_gbps: NICs x line rate / 8 x 0.94 per node: NCCL moves 46-48 GB/s of an NDR NIC's 50
//   (nccl-tests#290, 4.2), i.e. 47 GB/s for NDR 400G and 23.5 GB/s for HDR 200G.
// - inter_latency_us: 0.6 us per switch hop (the HDR end-to-end figure of 4.2; none is published for NDR):
//   1 hop for 2 nodes under one leaf, 3 (leaf-spine-leaf) beyond.
// - NVLS when the GPU has NVLink 4+ (H100/H200), unless the row is measured without it.
// - Message size: as measured where the source gives it (8 GB in nccl-tests#347, 2 GB in nccl#1218, 512 MB in
//   nccl-tests#283), 8 GiB otherwise.
//
// Tolerance: +-15% of the measured value. Two rows are known misses with an explained wider bound (see below
// and README.md "Collective model validation"); they are not tuned away.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>

#include "gpu/collectives.hpp"
#include "gpu/gpu_catalogue.hpp"

namespace gputwin {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kNicEfficiency = 47.0 / 50.0;  // NDR: 47 of 50 GB/s through NCCL (nccl-tests#290)
constexpr double kHopLatencyUs = 0.6;           // per switch hop (gpu-domain.md 4.2, HDR)

struct Row {
  std::string setup;      // gpu-domain.md 4.5 row
  std::string node_type;  // catalogue node type
  std::uint32_t nodes;
  std::uint32_t nics;               // NICs used per node
  bool nvls;                        // NVLS allowed
  std::optional<Algorithm> forced;  // NCCL_ALGO as measured
  double bytes;
  double measured_busbw;
  double low;   // accepted model/measured - 1, lower bound
  double high;  // upper bound
};

CommPath path_of(const Row& r) {
  const NodeType node = *find_node_type(r.node_type);
  const GpuModel gpu = *find_gpu_model(node.gpu);
  const std::uint32_t hops = r.nodes == 1 ? 0 : r.nodes == 2 ? 1 : 3;
  return {.nodes = r.nodes,
          .gpus_per_node = node.gpus,
          .intra_node_gbps = gpu.nvlink_gbps_per_direction,
          .inter_node_gbps = r.nics * node.nic_gbit / 8 * kNicEfficiency,
          .inter_latency_us = hops * kHopLatencyUs,
          .switch_hops = hops};
}

double model_busbw(const Row& r, CollectiveCost* chosen = nullptr) {
  const CommPath path = path_of(r);
  NcclOptions opts;
  opts.nvls = r.nvls;
  opts.algorithm = r.forced;
  const CollectiveCost c = nccl_collective(Collective::kAllReduce, r.bytes, path, opts);
  if (chosen) *chosen = c;
  return busbw_gbps(Collective::kAllReduce, r.bytes, c.time_s, path_ranks(path));
}

const Row kRows[] = {
    // nccl-tests#212/#347: NVLS is NCCL's default on one H100 node.
    {"8xH100, 1 node, NVLS", "hgx-h100", 1, 8, true, std::nullopt, 8 * kGiB, 480, -0.15, 0.15},
    {"8xH100, 1 node, ring", "hgx-h100", 1, 8, true, Algorithm::kRing, 8 * kGiB, 370, -0.15, 0.15},
    // nccl#1221, 8x400G RoCE.
    {"2x8 H100 RoCE, no NVLS", "hgx-h100", 2, 8, false, std::nullopt, 8 * kGiB, 330, -0.15, 0.15},
    // Known miss: NCCL's NVLS-Tree model runs 2 nodes at min(NVLink, NICs) x 5/6 = 300 GB/s algbw (busbw
    // ~560); measured is 430 (RoCE) and ~470 (IB, nccl#2409). Two-node tree figures exceed the NIC limit by
    // construction (nccl-tests#196), and NCCL's tuning model is a selector, not a predictor, there.
    {"2x8 H100 RoCE, NVLS", "hgx-h100", 2, 8, true, std::nullopt, 8 * kGiB, 430, -0.15, 0.35},
    {"4x8 H100 RoCE", "hgx-h100", 4, 8, true, std::nullopt, 8 * kGiB, 320, -0.15, 0.15},
    // nccl#1218: 256 H100, 2 GB messages.
    {"32x8 H100", "hgx-h100", 32, 8, true, std::nullopt, 2 * kGiB, 340, -0.15, 0.15},
    // Known miss: nccl-tests#283, 1,984 H200 at 512 MB: ~350 "typical, occasionally under 300". The model
    // picks Tree/LL128 (latency 175.7 us against a 3.4 ms transfer at 155 GB/s algbw) and lands at ~295: at
    // the source's own low end, 15.6% under the typical figure.
    {"248x8 H200, 512 MB", "hgx-h200", 248, 8, true, std::nullopt, 0.5 * kGiB, 350, -0.20, 0.15},
    // nccl#1576: DGX-A100, 8x HDR 200G IB, 192 GB/s.
    {"2x8 A100, 8x HDR", "hgx-a100", 2, 8, false, std::nullopt, 8 * kGiB, 192, -0.15, 0.15},
    // nccl#1368 / #1357: 2 nodes of 8 H100 with 4 of their 8 NICs, ring and tree forced.
    {"2x8 H100, 4 NICs, ring", "hgx-h100", 2, 4, true, Algorithm::kRing, 8 * kGiB, 190, -0.15, 0.15},
    {"2x8 H100, 4 NICs, tree", "hgx-h100", 2, 4, true, Algorithm::kTree, 8 * kGiB, 150, -0.15, 0.15},
};

class NcclTestsValidation : public ::testing::TestWithParam<Row> {};

TEST_P(NcclTestsValidation, BusbwWithinTheStatedBound) {
  const Row& r = GetParam();
  CollectiveCost c;
  const double model = model_busbw(r, &c);
  const double err = model / r.measured_busbw - 1;
  const double ab = busbw_gbps(Collective::kAllReduce, r.bytes,
                               alpha_beta_time_s(Collective::kAllReduce, r.bytes, path_of(r)), path_ranks(path_of(r)));
  std::printf("| %s | %.0f | %.0f (%s/%s) | %+.1f%% | %.0f |\n", r.setup.c_str(), r.measured_busbw, model,
              std::string(to_string(c.algorithm)).c_str(), std::string(to_string(c.protocol)).c_str(), 100 * err, ab);
  EXPECT_GE(err, r.low) << r.setup << ": model " << model << " GB/s vs measured " << r.measured_busbw;
  EXPECT_LE(err, r.high) << r.setup << ": model " << model << " GB/s vs measured " << r.measured_busbw;
}

INSTANTIATE_TEST_SUITE_P(GpuDomain45, NcclTestsValidation, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& info) { return "row" + std::to_string(info.index); });

TEST(NcclTestsValidation, AlgorithmsNcclIsKnownToPick) {
  CollectiveCost c;
  model_busbw(kRows[0], &c);  // one H100 node: NVLS (nccl-tests#212)
  EXPECT_EQ(c.algorithm, Algorithm::kNvls);
  model_busbw(kRows[3], &c);  // two H100 nodes with NVLS: NVLS-Tree (nccl#1221)
  EXPECT_EQ(c.algorithm, Algorithm::kNvlsTree);
  model_busbw(kRows[4], &c);  // 4+ nodes: NVLS "no longer helps" (nccl#1221): the ring wins
  EXPECT_EQ(c.algorithm, Algorithm::kRing);
}

}  // namespace
}  // namespace gputwin
