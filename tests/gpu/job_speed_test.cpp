// Placement-aware step time (gpu-domain.md 4.6: step = compute + exposed_comm), worked by hand. H100 figures as
// in collectives_test.cpp: NVLink 450 x 0.8 = 360 GB/s per GPU, 8 x 47 = 376 GB/s of NICs per node.
#include "gpu/job_speed.hpp"

#include <gtest/gtest.h>

#include "gpu/perf_model_error.hpp"

namespace gputwin {
namespace {

NcclOptions hopper() {
  return nccl_options_for_nvlink(4);
}

// Four H100 nodes packed under one leaf (1 switch hop, 0.6 us) ...
CommPath packed() {
  return {.nodes = 4,
          .gpus_per_node = 8,
          .intra_node_gbps = 450,
          .inter_node_gbps = 376,
          .inter_latency_us = 0.6,
          .switch_hops = 1};
}
// ... and spread over leaves behind a 2:1 oversubscribed spine: half the NIC bandwidth, 3 hops (1.8 us).
CommPath spread() {
  return {.nodes = 4,
          .gpus_per_node = 8,
          .intra_node_gbps = 450,
          .inter_node_gbps = 188,
          .inter_latency_us = 1.8,
          .switch_hops = 3};
}

TEST(JobSpeed, DataParallelPackedVersusSpreadOverOversubscribedSpine) {
  // 7B parameters, bf16 gradients: one 14e9-byte all-reduce per step (bucket_mib 0), compute 0.5 s, no overlap.
  const DataParallelProfile dp{.parameters_billion = 7, .compute_s = 0.5, .overlap = 0, .bucket_mib = 0};
  // Packed: ring/Simple (beats tree 165.6 and NVLS-Tree 156.7 GB/s) at 360 x 32/62 = 185.81 GB/s:
  //   transfer 14e9 x 62 / (32 x 360e3) = 75347.222 us,
  //   latency (8.4 + 54 x 3.4 + 8 x (14 + 2 x 0.6)) x 1.4 = 313.6 x 1.4 = 439.04 us  -> 75786.262 us.
  const double comm_packed = (75347.2222222 + 439.04) * 1e-6;
  // Spread: 188 x 32/62 = 97.03 GB/s: transfer 14e9 x 62 / (32 x 188e3) = 144281.915 us,
  //   latency (8.4 + 183.6 + 8 x (14 + 2 x 1.8)) x 1.4 = 332.8 x 1.4 = 465.92 us  -> 144747.835 us.
  const double comm_spread = (144281.9148936 + 465.92) * 1e-6;
  const StepBreakdown bp = step_breakdown(dp, packed(), hopper());
  EXPECT_NEAR(bp.dp_s, comm_packed, 1e-9);
  EXPECT_NEAR(bp.step_s, 0.5 + comm_packed, 1e-9);                            // 0.5757863 s
  EXPECT_NEAR(step_time_s(dp, spread(), hopper()), 0.5 + comm_spread, 1e-9);  // 0.6447478 s
  // Speed factor step(packed) / step(spread) = 0.5757863 / 0.6447478 = 0.89304: the spread job runs ~12%
  // longer than its packed trace time (run_s / 0.893).
  EXPECT_NEAR(speed_factor(dp, spread(), packed(), hopper()), (0.5 + comm_packed) / (0.5 + comm_spread), 1e-12);
  EXPECT_NEAR(speed_factor(dp, spread(), packed(), hopper()), 0.89304, 1e-5);
  EXPECT_DOUBLE_EQ(speed_factor(dp, packed(), packed(), hopper()), 1.0);
  // Half the communication hidden behind compute: 0.5 + comm/2 each -> 0.537893 / 0.572374 = 0.93976.
  DataParallelProfile half = dp;
  half.overlap = 0.5;
  EXPECT_NEAR(speed_factor(half, spread(), packed(), hopper()), (0.5 + comm_packed / 2) / (0.5 + comm_spread / 2),
              1e-12);
  EXPECT_NEAR(speed_factor(half, spread(), packed(), hopper()), 0.93976, 1e-5);
  // Overlap never hides more than the compute: with compute 0.01 s only 0.01 s of the 0.0758 s is hidden.
  DataParallelProfile tiny = half;
  tiny.compute_s = 0.01;
  EXPECT_NEAR(step_time_s(tiny, packed(), hopper()), comm_packed, 1e-9);
}

TEST(JobSpeed, DataParallelBucketsAndSharding) {
  const DataParallelProfile dp{.parameters_billion = 1, .compute_s = 0.2, .bucket_mib = 25};
  // 2e9 bytes in 25 MiB buckets: 76 full buckets (76 x 26214400 = 1992294400) and a 7705600-byte rest.
  const double full = nccl_collective(Collective::kAllReduce, 26214400, packed(), hopper()).time_s;
  const double rest = nccl_collective(Collective::kAllReduce, 7705600, packed(), hopper()).time_s;
  EXPECT_NEAR(step_breakdown(dp, packed(), hopper()).dp_s, 76 * full + rest, 1e-12);
  // ZeRO-3 / FSDP: reduce-scatter + two all-gathers of the same bytes.
  DataParallelProfile z3 = dp;
  z3.bucket_mib = 0;
  z3.sharding = Sharding::kZero3;
  const double rs = nccl_collective(Collective::kReduceScatter, 2e9, packed(), hopper()).time_s;
  const double ag = nccl_collective(Collective::kAllGather, 2e9, packed(), hopper()).time_s;
  EXPECT_NEAR(step_breakdown(z3, packed(), hopper()).dp_s, rs + 2 * ag, 1e-12);
}

TEST(JobSpeed, GroupPathsOfAHybridLayout) {
  // 4 nodes x 8 GPUs, ranks node-major. TP of 8 (stride 1): one node on NVLink.
  const CommPath tp = group_path(packed(), 1, 8);
  EXPECT_EQ(tp.nodes, 1U);
  EXPECT_EQ(tp.gpus_per_node, 8U);
  // DP of 2 with stride tp x pp = 16: one rank on each of 2 nodes; the node's 8 DP groups share its NICs:
  // 376 / 8 = 47 GB/s each (one NIC, rail-aligned).
  const CommPath dp = group_path(packed(), 16, 2);
  EXPECT_EQ(dp.nodes, 2U);
  EXPECT_EQ(dp.gpus_per_node, 1U);
  EXPECT_DOUBLE_EQ(dp.inter_node_gbps, 47);
  // DP of 16 with stride 2 (tp 2): 4 ranks per node on 4 nodes, 2 groups per node: 376 x 4/8 = 188 GB/s.
  const CommPath dp16 = group_path(packed(), 2, 16);
  EXPECT_EQ(dp16.nodes, 4U);
  EXPECT_EQ(dp16.gpus_per_node, 4U);
  EXPECT_DOUBLE_EQ(dp16.inter_node_gbps, 188);
  // In an NVL72 rack (18 trays of 4 GPUs) a TP group of 8 spans 2 trays of the same NVLink domain.
  const CommPath rack{
      .nodes = 18, .gpus_per_node = 4, .intra_node_gbps = 900, .inter_node_gbps = 188, .scale_up_domain_nodes = 18};
  const CommPath tp8 = group_path(rack, 1, 8);
  EXPECT_EQ(tp8.nodes, 2U);
  EXPECT_EQ(tp8.scale_up_domain_nodes, 2U);
}

TEST(JobSpeed, HybridWithTensorParallelInsideNvlink) {
  // tp 8, pp 2, dp 2 on 4 x 8 H100; 32 layers, h 4096, s 4096, b 1, bf16: one activation is
  // 1 x 4096 x 4096 x 2 = 33554432 B; 8 micro-batches -> 8 + 2 - 1 = 9 pipeline slots; 8B parameters.
  const HybridProfile h{.tp = 8,
                        .pp = 2,
                        .dp = 2,
                        .compute_s = 2.0,
                        .micro_batches = 8,
                        .layers = 32,
                        .hidden_size = 4096,
                        .sequence_length = 4096,
                        .micro_batch_size = 1,
                        .parameters_billion = 8,
                        .bucket_mib = 0};
  const StepBreakdown b = step_breakdown(h, packed(), hopper());
  // TP: one node, NVLS all-reduce of 32 MiB: 23 + 33554432 / (360 x 5/6 = 300 GB/s x 1000) = 134.848 us;
  // 9 slots x 16 layers per stage x 4 all-reduces = 576 calls -> 77672.51 us.
  EXPECT_NEAR(b.tp_s, 576 * (23 + 33554432 / 300000.0) * 1e-6, 1e-9);
  EXPECT_NEAR(b.tp_s, 0.07767251, 1e-8);
  // PP: stages 8 ranks apart sit on different nodes; all 8 GPUs of a node send at once through its NICs:
  // 376 / 8 = 47 GB/s each; latency 8.4 + 14 + 2 x 0.6 = 23.6 us; 33554432 / 47000 = 713.924 us;
  // 9 slots x 2 directions x 737.524 us = 13275.4 us.
  EXPECT_NEAR(b.pp_s, 18 * (23.6 + 33554432 / 47000.0) * 1e-6, 1e-9);
  // DP: 8e9 / (8 x 2) x 2 B = 1e9 bytes over 2 ranks, one per node at 47 GB/s (group_path above).
  EXPECT_NEAR(b.dp_s, nccl_collective(Collective::kAllReduce, 1e9, group_path(packed(), 16, 2), hopper()).time_s,
              1e-12);
  EXPECT_NEAR(b.step_s, 2.0 + b.tp_s + b.pp_s + b.dp_s, 1e-12);
  // The same job on 8 nodes of 4 GPUs (4 NICs, 188 GB/s): each TP group straddles two nodes. NCCL's best
  // there is NVLS-Tree at min(360, 188) x 5/6 = 156.67 GB/s, latency 23 + 2 x log2(2) x (14 + 2 x 0.6) =
  // 53.4 us: 53.4 + 33554432 / 156666.7 = 267.58 us per call, 1.98x the in-node 134.85 us.
  CommPath narrow = packed();
  narrow.nodes = 8;
  narrow.gpus_per_node = 4;
  narrow.inter_node_gbps = 188;
  const StepBreakdown n = step_breakdown(h, narrow, hopper());
  EXPECT_NEAR(n.tp_s, 576 * (53.4 + 33554432 / (188 * 5 / 6.0 * 1000)) * 1e-6, 1e-9);
  EXPECT_GT(n.tp_s, 1.9 * b.tp_s);
  EXPECT_LT(speed_factor(h, narrow, packed(), hopper()), 1.0);
  // Activation bytes given directly override the shape.
  HybridProfile direct = h;
  direct.hidden_size = 0;
  direct.activation_bytes = 33554432;
  EXPECT_NEAR(step_time_s(direct, packed(), hopper()), b.step_s, 1e-12);
}

TEST(JobSpeed, MeasuredProfileScalesItsExposedShare) {
  // 10 s steps measured packed, 20% exposed communication. Elsewhere: 8 s + 2 s x t(spread) / t(packed), with t
  // the all-reduce of 64 MiB over the 32 GPUs.
  const MeasuredProfile m{.step_s = 10, .exposed_comm_fraction = 0.2, .reference = packed()};
  const double t_ref = nccl_collective(Collective::kAllReduce, 64.0 * 1024 * 1024, packed(), hopper()).time_s;
  const double t_act = nccl_collective(Collective::kAllReduce, 64.0 * 1024 * 1024, spread(), hopper()).time_s;
  EXPECT_GT(t_act, t_ref);
  EXPECT_NEAR(step_time_s(m, spread(), hopper()), 8 + 2 * t_act / t_ref, 1e-9);
  EXPECT_NEAR(step_time_s(m, packed(), hopper()), 10, 1e-9);  // the reference reproduces the measurement
  EXPECT_NEAR(speed_factor(m, spread(), packed(), hopper()), 10 / (8 + 2 * t_act / t_ref), 1e-12);
  // No exposed communication: placement does not matter.
  const MeasuredProfile compute_bound{.step_s = 10, .exposed_comm_fraction = 0, .reference = packed()};
  EXPECT_DOUBLE_EQ(speed_factor(compute_bound, spread(), packed(), hopper()), 1.0);
}

TEST(JobSpeed, BadProfilesAreTypedErrorsNamingTheField) {
  auto field_of = [](const JobProfile& p, const CommPath& path) -> std::string {
    try {
      step_time_s(p, path);
    } catch (const PerfModelError& e) {
      return e.field();
    }
    return "";
  };
  EXPECT_EQ(field_of(DataParallelProfile{.parameters_billion = 1, .overlap = 1.5}, packed()), "data_parallel.overlap");
  EXPECT_EQ(field_of(DataParallelProfile{.parameters_billion = -1}, packed()), "data_parallel.parameters_billion");
  // 4 x 4 x 4 = 64 GPUs on a 32-GPU placement.
  EXPECT_EQ(field_of(HybridProfile{.tp = 4, .pp = 4, .dp = 4, .layers = 8, .activation_bytes = 1}, packed()), "hybrid");
  // TP without an activation size.
  EXPECT_EQ(field_of(HybridProfile{.tp = 8, .pp = 1, .dp = 4, .layers = 8}, packed()), "hybrid.activation_bytes");
  MeasuredProfile zero_step;
  zero_step.step_s = 0;
  EXPECT_EQ(field_of(zero_step, packed()), "measured.step_s");
  EXPECT_EQ(
      field_of(
          MeasuredProfile{.step_s = 1, .exposed_comm_fraction = 0.5, .reference = {.nodes = 1, .gpus_per_node = 1}},
          packed()),
      "measured.reference");
  EXPECT_THROW(validate_profile(DataParallelProfile{.compute_s = -1}), PerfModelError);
  EXPECT_NO_THROW(validate_profile(DataParallelProfile{.parameters_billion = 7, .compute_s = 1}));
}

}  // namespace
}  // namespace gputwin
