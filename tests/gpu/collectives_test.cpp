// NCCL's cost model and the textbook alpha-beta formulas, worked by hand. Constants: gpu-domain.md 4.4
// (NVIDIA/nccl src/graph/tuning.cc). H100 inputs: NVLink 450 GB/s per direction (gpu-domain.md 4.1) at the
// default efficiency 0.8 -> 360 GB/s; NDR NIC 47 GB/s through NCCL (4.2), 8 per node -> 376 GB/s.
#include "gpu/collectives.hpp"

#include <gtest/gtest.h>

#include "gpu/gpu_catalogue.hpp"
#include "gpu/perf_model_error.hpp"

namespace gputwin {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

CommPath h100_node() {
  return {.nodes = 1, .gpus_per_node = 8, .intra_node_gbps = 450};
}

CommPath h100_nodes(std::uint32_t nodes, double latency_us = 1.8) {
  return {.nodes = nodes,
          .gpus_per_node = 8,
          .intra_node_gbps = 450,
          .inter_node_gbps = 8 * 47.0,
          .inter_latency_us = latency_us,
          .switch_hops = 3};
}

NcclOptions hopper() {
  return nccl_options_for_nvlink(find_gpu_model("h100")->nvlink_generation);
}

TEST(AlphaBeta, TextbookFormulasByHand) {
  // 8 ranks, 1 GiB, 370 GB/s: beta = 1/370e9 s/B, alpha = 5 us.
  const AlphaBeta ab{.alpha_s = 5e-6, .beta_s_per_byte = 1 / 370e9};
  const double n = kGiB;
  // Ring all-reduce: 2*7*5us + 2*7/8 * 1073741824 / 370e9 = 70us + 1879048192/370e9 = 70us + 5.0785086 ms.
  EXPECT_NEAR(ring_allreduce_s(ab, 8, n), 70e-6 + 5.0785086e-3, 1e-9);
  // With alpha = 0 it is the ideal all-reduce of nccl-tests' PERFORMANCE.md: (S/B) * 2(n-1)/n.
  EXPECT_NEAR(ring_allreduce_s({.beta_s_per_byte = 1 / 370e9}, 8, n), 5.0785086e-3, 1e-9);
  // Rabenseifner: 2*log2(8)*5us = 30us + the same 5.0785086 ms.
  EXPECT_NEAR(rabenseifner_allreduce_s(ab, 8, n), 30e-6 + 5.0785086e-3, 1e-9);
  // Recursive doubling: 3 * (5us + 1073741824/370e9 = 2.9020049 ms) = 8.7210146 ms.
  EXPECT_NEAR(recursive_doubling_allreduce_s(ab, 8, n), 3 * (5e-6 + 2.9020049e-3), 1e-9);
  // Ring all-gather: 7*5us + 7/8 * 2.9020049 ms = 35us + 2.5392543 ms.
  EXPECT_NEAR(ring_allgather_s(ab, 8, n), 35e-6 + 2.5392543e-3, 1e-9);
  // Binomial broadcast: ceil(log2 8) = 3 rounds of (alpha + n beta) = 8.7210146 ms.
  EXPECT_NEAR(binomial_broadcast_s(ab, 8, n), 3 * (5e-6 + 2.9020049e-3), 1e-9);
  // Scatter + all-gather broadcast: (3 + 7) * 5us + 2*7/8 * 2.9020049 ms = 50us + 5.0785086 ms.
  EXPECT_NEAR(scatter_allgather_broadcast_s(ab, 8, n), 50e-6 + 5.0785086e-3, 1e-9);
  // Pairwise all-to-all: 7 * 5us + 7/8 * 2.9020049 ms.
  EXPECT_NEAR(pairwise_alltoall_s(ab, 8, n), 35e-6 + 2.5392543e-3, 1e-9);
  // One rank communicates nothing.
  EXPECT_EQ(ring_allreduce_s(ab, 1, n), 0);
  // gamma adds (p-1)/p n gamma: 7/8 * 1 GiB * 1e-12 s/B = 0.93952 ms.
  const AlphaBeta with_gamma{.alpha_s = 0, .beta_s_per_byte = 0, .gamma_s_per_byte = 1e-12};
  EXPECT_NEAR(ring_allreduce_s(with_gamma, 8, n), 0.875 * n * 1e-12, 1e-12);
}

TEST(AlphaBeta, OfAPathUsesItsSlowestTier) {
  // One node: alpha = NVLink Simple ring step 3.4 us, beta = 1 / (450 * 0.8 = 360 GB/s).
  const AlphaBeta one = alpha_beta_of(h100_node());
  EXPECT_NEAR(one.alpha_s, 3.4e-6, 1e-12);
  EXPECT_NEAR(one.beta_s_per_byte, 1 / 360e9, 1e-20);
  // Four nodes behind a 2:1 spine (188 GB/s per node): alpha = 14 + 1.8 us, beta = 1 / min(360, 188).
  CommPath spread = h100_nodes(4);
  spread.inter_node_gbps = 188;
  const AlphaBeta four = alpha_beta_of(spread);
  EXPECT_NEAR(four.alpha_s, 15.8e-6, 1e-12);
  EXPECT_NEAR(four.beta_s_per_byte, 1 / 188e9, 1e-20);
  // The collective picks the cheaper textbook algorithm: for 32 ranks and 1 KiB, Rabenseifner's 2 log2(32) = 10
  // alphas beat the ring's 62.
  EXPECT_NEAR(alpha_beta_time_s(Collective::kAllReduce, 1024, spread), rabenseifner_allreduce_s(four, 32, 1024), 1e-15);
  EXPECT_LT(rabenseifner_allreduce_s(four, 32, 1024), ring_allreduce_s(four, 32, 1024));
}

TEST(NcclModel, RingAllReduceOnOneH100NodeByHand) {
  // Ring/Simple, 8 ranks, 1 GiB. Bandwidth: busBw 360 x nRanks/nsteps = 360 x 8/14 = 205.714 GB/s.
  // Latency: baseLat 8.4 + nsteps (2*7 = 14) x NVLink ring Simple 3.4 = 56.0 us.
  // Time: 56.0 + 1073741824 / (1000 x 205.714) = 56.0 + 5219.578 = 5275.578 us.
  const auto c = nccl_cost(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, kGiB, h100_node());
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->bandwidth_gbps, 360.0 * 8 / 14, 1e-9);
  EXPECT_NEAR(c->latency_us, 56.0, 1e-9);
  EXPECT_NEAR(c->time_s, 5275.578e-6, 1e-9);
  // nccl-tests would print algbw = 1 GiB / 5.275578 ms = 203.53 GB/s and busbw x 2*7/8 = 356.18 GB/s.
  EXPECT_NEAR(algbw_gbps(kGiB, c->time_s), 203.53, 0.01);
  EXPECT_NEAR(busbw_gbps(Collective::kAllReduce, kGiB, c->time_s, 8), 356.18, 0.01);
}

TEST(NcclModel, NvlsWinsLargeMessagesOnOneH100NodeAndRingLlSmallOnes) {
  // NVLS/Simple: 360 x 5/6 = 300 GB/s, latency = NVLink NVLS 23 us: 23 + 1073741824 / 300000 = 3602.14 us,
  // faster than the ring's 5275.58 us.
  const CollectiveCost big = nccl_collective(Collective::kAllReduce, kGiB, h100_node(), hopper());
  EXPECT_EQ(big.algorithm, Algorithm::kNvls);
  EXPECT_EQ(big.protocol, Protocol::kSimple);
  EXPECT_NEAR(big.time_s, (23 + kGiB / 300000) * 1e-6, 1e-12);
  // 4 KiB: ring/LL has busBw min(llMaxBw 87.7, 360/4 = 90) = 87.7 -> x 8/14 = 50.114 GB/s and latency
  // 6.6 + 14 x 0.6 = 15.0 us: 15.0 + 4096/50114 = 15.08 us, well under NVLS's 23 us.
  const CollectiveCost small = nccl_collective(Collective::kAllReduce, 4096, h100_node(), hopper());
  EXPECT_EQ(small.algorithm, Algorithm::kRing);
  EXPECT_EQ(small.protocol, Protocol::kLL);
  EXPECT_NEAR(small.latency_us, 15.0, 1e-9);
  EXPECT_NEAR(small.time_s, (15.0 + 4096 / (87.7 * 8 / 14 * 1000)) * 1e-6, 1e-12);
  // Without NVLink SHARP (A100, NVLink 3) NCCL cannot pick NVLS.
  const NcclOptions ampere = nccl_options_for_nvlink(find_gpu_model("a100")->nvlink_generation);
  EXPECT_FALSE(ampere.nvls);
  EXPECT_EQ(nccl_collective(Collective::kAllReduce, kGiB, h100_node(), ampere).algorithm, Algorithm::kRing);
}

TEST(NcclModel, TreeForSmallMultiNodeMessagesRingForLargeOnes) {
  // 32 nodes x 8, 64 KiB. Ring/LL latency: 6.6 + (510 - 64) x max(0.6, net overhead 1.0) + 64 x (2.7 + 1.8)
  // = 6.6 + 446 + 288 = 740.6 us. Tree/LL: 6.8 + 2 x (7 x 0.6 + log2(32) = 5 x (5.0 + 1.8)) = 83.2 us, with
  // bandwidth min(360 x 0.92 / 3.8, llMaxBw 20.4) x 0.5 = 10.2 GB/s: 83.2 + 65536/10200 = 89.625 us.
  const CommPath big = h100_nodes(32);
  const auto ring_ll = nccl_cost(Collective::kAllReduce, Algorithm::kRing, Protocol::kLL, 65536, big);
  ASSERT_TRUE(ring_ll.has_value());
  EXPECT_NEAR(ring_ll->latency_us, 740.6, 1e-9);
  const CollectiveCost small = nccl_collective(Collective::kAllReduce, 65536, big, hopper());
  EXPECT_EQ(small.algorithm, Algorithm::kTree);
  EXPECT_EQ(small.protocol, Protocol::kLL);
  EXPECT_NEAR(small.time_s, (83.2 + 65536 / 10200.0) * 1e-6, 1e-12);
  // 4 nodes, 1 GiB: ring/Simple at 360 x 32/62 = 185.8 GB/s beats tree (360 x 0.92 x 0.5 = 165.6) and
  // NVLS-Tree (min(360, 376/2) x 5/6 = 156.7).
  const CollectiveCost large = nccl_collective(Collective::kAllReduce, kGiB, h100_nodes(4), hopper());
  EXPECT_EQ(large.algorithm, Algorithm::kRing);
  EXPECT_EQ(large.protocol, Protocol::kSimple);
  EXPECT_NEAR(large.bandwidth_gbps, 360.0 * 32 / 62, 1e-9);
  // Its latency carries the ring plateau: (8.4 + (62 - 8) x 3.4 + 8 x (14 + 2 x 1.8)) x 1.4
  // = (8.4 + 183.6 + 140.8) x 1.4 = 465.92 us.
  EXPECT_NEAR(large.latency_us, 465.92, 1e-9);
}

TEST(NcclModel, OtherCollectivesByHand) {
  const CommPath node = h100_node();
  // All-gather ring/Simple of 1 GiB gathered: busBw 360 x 8/7 = 411.43 GB/s algbw, latency 8.4 + 7 x 3.4 = 32.2 us.
  const auto ag = nccl_cost(Collective::kAllGather, Algorithm::kRing, Protocol::kSimple, kGiB, node);
  ASSERT_TRUE(ag.has_value());
  EXPECT_NEAR(ag->latency_us, 32.2, 1e-9);
  EXPECT_NEAR(ag->bandwidth_gbps, 360.0 * 8 / 7, 1e-9);
  // ... so nccl-tests' busbw is ~360 ("non-all-reduce collectives ~370", gpu-domain.md 4.5), and the ring
  // beats NVLS (300 GB/s algbw) for all-gather.
  const CollectiveCost best_ag = nccl_collective(Collective::kAllGather, kGiB, node, hopper());
  EXPECT_EQ(best_ag.algorithm, Algorithm::kRing);
  EXPECT_NEAR(busbw_gbps(Collective::kAllGather, kGiB, best_ag.time_s, 8), 360, 360 * 0.02);  // 355.6
  // Broadcast ring/Simple: nsteps = nRanks = 8 hops of the Tree's Simple NVLink latency 28 us: 8.4 + 224 = 232.4.
  const auto bc = nccl_cost(Collective::kBroadcast, Algorithm::kRing, Protocol::kSimple, kGiB, node);
  ASSERT_TRUE(bc.has_value());
  EXPECT_NEAR(bc->latency_us, 232.4, 1e-9);
  EXPECT_NEAR(bc->bandwidth_gbps, 360.0, 1e-9);  // ratio nRanks / nsteps = 1
  // Tree is all-reduce only; NVLS-Tree needs several nodes; NVLS needs opts.nvls.
  EXPECT_FALSE(nccl_cost(Collective::kAllGather, Algorithm::kTree, Protocol::kSimple, kGiB, node).has_value());
  EXPECT_FALSE(nccl_cost(Collective::kAllReduce, Algorithm::kNvlsTree, Protocol::kSimple, kGiB, node, hopper()));
  EXPECT_FALSE(nccl_cost(Collective::kAllReduce, Algorithm::kNvls, Protocol::kSimple, kGiB, node).has_value());
  EXPECT_FALSE(nccl_cost(Collective::kAllReduce, Algorithm::kNvls, Protocol::kLL, kGiB, node, hopper()));
  // All-to-all, 2 nodes x 8, 1 GiB per rank: each rank sends 7/16 GiB over NVLink (at 360 GB/s: 1304.9 us) and
  // each node 8 x 8/16 GiB = 4 GiB over its NICs (at 376 GB/s: 11422.8 us); latency one Simple network ring
  // step 8.4 + 14 + 2 x 1.8 = 26.0 us.
  const CollectiveCost a2a = nccl_collective(Collective::kAllToAll, kGiB, h100_nodes(2));
  EXPECT_EQ(a2a.algorithm, Algorithm::kPointToPoint);
  EXPECT_NEAR(a2a.latency_us, 26.0, 1e-9);
  EXPECT_NEAR(a2a.time_s, (26.0 + 4 * kGiB / 376000) * 1e-6, 1e-12);
  // A single rank costs nothing.
  EXPECT_EQ(nccl_collective(Collective::kAllReduce, kGiB, {.nodes = 1, .gpus_per_node = 1}).time_s, 0);
}

TEST(NcclModel, ForcedAlgorithmAndNvlinkDomainSpanningNodes) {
  NcclOptions ring = hopper();
  ring.algorithm = Algorithm::kRing;
  EXPECT_EQ(nccl_collective(Collective::kAllReduce, kGiB, h100_node(), ring).algorithm, Algorithm::kRing);
  // NCCL_ALGO=TREE for all-gather leaves nothing: NCCL falls back to the ring.
  NcclOptions tree = hopper();
  tree.algorithm = Algorithm::kTree;
  EXPECT_EQ(nccl_collective(Collective::kAllGather, kGiB, h100_node(), tree).algorithm, Algorithm::kRing);
  // 18 GB200 trays (4 GPUs each) in one NVL72 domain are one NCCL node (MNNVL): no network in the path, so
  // the 72-rank ring runs on NVLink (900 x 0.8 = 720 GB/s) even with inter_node_gbps 0.
  const CommPath nvl72{.nodes = 18, .gpus_per_node = 4, .intra_node_gbps = 900, .scale_up_domain_nodes = 18};
  const auto c = nccl_cost(Collective::kAllReduce, Algorithm::kRing, Protocol::kSimple, kGiB, nvl72);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(c->bandwidth_gbps, 720.0 * 72 / 142, 1e-9);
  EXPECT_NEAR(c->latency_us, 8.4 + 142 * 3.4, 1e-9);
}

TEST(NcclModel, BusBandwidthFactorsOfNcclTests) {
  // doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n, broadcast 1.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1.0);
  // algbw 1 GB / 10 ms = 100 GB/s; busbw 175 GB/s on 8 ranks.
  EXPECT_DOUBLE_EQ(algbw_gbps(1e9, 0.01), 100);
  EXPECT_DOUBLE_EQ(busbw_gbps(Collective::kAllReduce, 1e9, 0.01, 8), 175);
  EXPECT_EQ(to_string(Algorithm::kNvlsTree), "nvls_tree");
  EXPECT_EQ(to_string(Protocol::kLL128), "ll128");
  EXPECT_EQ(to_string(Collective::kReduceScatter), "reduce_scatter");
}

TEST(NcclModel, PathsItCannotCostAreTypedErrors) {
  CommPath no_net = h100_nodes(2);
  no_net.inter_node_gbps = 0;
  try {
    nccl_collective(Collective::kAllReduce, kGiB, no_net);
    FAIL() << "expected PerfModelError";
  } catch (const PerfModelError& e) {
    EXPECT_EQ(e.field(), "path.inter_node_gbps");
  }
  CommPath no_nvlink = h100_node();
  no_nvlink.intra_node_gbps = 0;
  EXPECT_THROW(nccl_collective(Collective::kAllReduce, kGiB, no_nvlink), PerfModelError);
  EXPECT_THROW(nccl_collective(Collective::kAllReduce, -1, h100_node()), PerfModelError);
  EXPECT_THROW(nccl_collective(Collective::kAllReduce, kGiB, {.nodes = 0}), PerfModelError);
  NcclOptions bad = hopper();
  bad.nvlink_efficiency = 1.5;
  EXPECT_THROW(nccl_collective(Collective::kAllReduce, kGiB, h100_node(), bad), PerfModelError);
}

}  // namespace
}  // namespace gputwin
