// GPU telemetry formulas, GPU binding within a node, per-GPU samples and cluster series, worked by hand on
// tests/results/data/gpu_metrics.json (one 8 x H100 node, fcfs):
//   job 1: 2 GPUs [0, 100)    job 2: 4 GPUs [0, 200)    job 3: 2 GPUs [0, 300)
//   job 4: 3 GPUs, submitted 150, starts 200 when job 2 frees its GPUs, ends 300
//   job 5: 3 GPUs, submitted and started 250, ends 300
// Binding (sockets: GPUs 0-3 and 4-7, first socket with room for the whole request):
//   job 1 -> 0-1 (socket 0); job 2 -> 4-7 (socket 0 has only 2 left); job 3 -> 2-3;
//   job 4 at 200: socket 0 free {0,1}, socket 1 free {4..7} -> 4-6;
//   job 5 at 250: socket 0 free {0,1}, socket 1 free {7}: no socket holds 3 -> lowest free 0,1,7 (split).
// Power without a profile: a job computes all the time, 60 + (700 - 60) x 0.9 = 636 W per GPU; idle 60 W.
#include "results/gpu_metrics.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>

#include "model/errors.hpp"
#include "results/results_store.hpp"
#include "sim/runner.hpp"

namespace gputwin {
namespace {

const GpuModel& h100() {
  static const GpuModel model = *find_gpu_model("h100");
  return model;
}

TEST(GpuTelemetry, PowerTemperatureAndMemoryWorkedByHand) {
  const TelemetryAssumptions a;
  // 60 + 640 x (0.8 x 0.9 + 0.2 x 0.3) = 60 + 640 x 0.78 = 559.2 W.
  const GpuLoad load{0.8, 0};
  EXPECT_DOUBLE_EQ(gpu_power_w(h100(), a, &load), 559.2);
  EXPECT_DOUBLE_EQ(gpu_power_w(h100(), a, nullptr), 60.0);
  // Steady temperature: 32 + 40 x (559.2 - 60) / 640 = 32 + 31.2 = 63.2 C.
  EXPECT_DOUBLE_EQ(steady_temp_c(h100(), a, 559.2), 63.2);
  EXPECT_DOUBLE_EQ(steady_temp_c(h100(), a, 700), 72.0);
  // From 32 C toward 68 C for one time constant: 68 - 36 / e = 54.7563...
  EXPECT_NEAR(relax_temp_c(32, 68, 60, 60), 68 - 36 / std::exp(1.0), 1e-12);
  // 80 GiB x 1024 x 0.85 = 69632 MiB.
  EXPECT_DOUBLE_EQ(fb_used_mib(h100(), a, true), 69632.0);
  EXPECT_DOUBLE_EQ(fb_used_mib(h100(), a, false), 0.0);
}

TEST(GpuTelemetry, NvlinkBytesPerStepWorkedByHand) {
  // DDP, 7B bf16 gradients (14e9 B), 16 GPUs on 2 nodes: each rank moves 2 x 15/16 of the buffer, 7/8 of the
  // ring's hops are NVLink: 14e9 x 1.875 x 0.875 = 22.96875e9 B.
  DataParallelProfile dp;
  dp.parameters_billion = 7;
  dp.compute_s = 1;
  EXPECT_DOUBLE_EQ(nvlink_bytes_per_step(dp, 16, 8), 22.96875e9);
  // One node: every hop is NVLink: 14e9 x 2 x 7/8 = 24.5e9. ZeRO-3 moves 1.5x that.
  EXPECT_DOUBLE_EQ(nvlink_bytes_per_step(dp, 8, 8), 24.5e9);
  dp.sharding = Sharding::kZero3;
  EXPECT_DOUBLE_EQ(nvlink_bytes_per_step(dp, 8, 8), 36.75e9);
  // One GPU per node: no NVLink traffic.
  EXPECT_DOUBLE_EQ(nvlink_bytes_per_step(dp, 4, 1), 0.0);
  // Hybrid TP=8 inside a node, 2 nodes of DP: TP all-reduces 4 x (32 layers / 1 stage) x 1 micro-batch of an
  // activation of 1 x 4096 x 8192 x 2 B = 67108864 B, each 2 x 7/8 of it: 4 x 32 x 67108864 x 1.75 = 15032385536 B;
  // the DP ranks sit on different nodes, so DP adds no NVLink bytes.
  HybridProfile h;
  h.tp = 8;
  h.dp = 2;
  h.layers = 32;
  h.hidden_size = 8192;
  h.sequence_length = 4096;
  h.parameters_billion = 70;
  h.compute_s = 1;
  EXPECT_DOUBLE_EQ(nvlink_bytes_per_step(h, 16, 8), 15032385536.0);
}

TEST(GpuTelemetry, CrossLeafBytesPerStepWorkedByHand) {
  // DDP 7B bf16 (14e9 B) on 32 GPUs over 2 leaves: 2 crossings x 2 x 31/32 x 14e9 = 54.25e9 B; within a leaf: 0.
  DataParallelProfile dp;
  dp.parameters_billion = 7;
  dp.compute_s = 1;
  EXPECT_DOUBLE_EQ(cross_leaf_bytes_per_step(dp, 32, 2), 54.25e9);
  EXPECT_DOUBLE_EQ(cross_leaf_bytes_per_step(dp, 32, 1), 0.0);
  // Hybrid TP=8 x DP=2, 70B bf16: 8 DP rings of 2 ranks, each with the stage's 140e9 / 8 B, crossing 2 leaves:
  // 140e9 x (2 x 1/2) x 2 = 280e9 B.
  HybridProfile h;
  h.tp = 8;
  h.dp = 2;
  h.parameters_billion = 70;
  h.compute_s = 1;
  EXPECT_DOUBLE_EQ(cross_leaf_bytes_per_step(h, 16, 2), 280e9);
}

TEST(GpuMetrics, SampleStepKeepsTheBudget) {
  MetricsConfig c;
  c.interval_s = 30;
  c.max_gpu_samples = 1000;
  // 300 s on 8 GPUs at 30 s: 11 x 8 = 88 samples, within the budget.
  EXPECT_DOUBLE_EQ(gpu_sample_step_s(c, 300, 8), 30.0);
  // A day on 256 GPUs: 2881 x 256 = 737536 samples -> 738 x the interval.
  EXPECT_DOUBLE_EQ(gpu_sample_step_s(c, 86400, 256), 30.0 * 738);
}

class GpuMetricsRun : public ::testing::Test {
 protected:
  void SetUp() override {
    outcome_ = run_scenario(load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/tests/results/data/gpu_metrics.json"),
                            RunOptions{});
    input_ = metrics_input(outcome_);
  }
  std::vector<ClusterSample> build(std::vector<GpuSample>* gpus, MetricsTotals& totals,
                                   std::span<const XidEvent> xids = {}) {
    const GpuBinding binding(*outcome_.state, input_.horizon);
    return build_metrics(
        *outcome_.state, binding, input_.horizon, input_.config, input_.load, xids, input_.node_conditions,
        [&](const GpuSample& s) {
          if (gpus != nullptr) gpus->push_back(s);
        },
        totals);
  }
  RunOutcome outcome_;
  MetricsInput input_;
};

TEST_F(GpuMetricsRun, BindingFollowsSocketsAndCountsSplitJobs) {
  const ClusterState& state = *outcome_.state;
  ASSERT_EQ(to_seconds(input_.horizon), 300);
  const GpuBinding binding(state, input_.horizon);
  EXPECT_EQ(binding.mask(0, 0), 0b00000011u);  // job 1
  EXPECT_EQ(binding.mask(1, 0), 0b11110000u);  // job 2
  EXPECT_EQ(binding.mask(2, 0), 0b00001100u);  // job 3
  EXPECT_EQ(binding.mask(3, 0), 0b01110000u);  // job 4
  EXPECT_EQ(binding.mask(4, 0), 0b10000011u);  // job 5, split across sockets
  EXPECT_EQ(binding.socket_split_jobs(), 1u);
  EXPECT_EQ(GpuBinding::sockets(8), 2u);
  EXPECT_EQ(GpuBinding::sockets(4), 2u);
  EXPECT_EQ(GpuBinding::sockets(2), 1u);
}

TEST_F(GpuMetricsRun, GpuSamplesWorkedByHand) {
  std::vector<GpuSample> gpus;
  MetricsTotals totals;
  build(&gpus, totals);
  EXPECT_DOUBLE_EQ(totals.gpu_step_s, 50.0);
  ASSERT_EQ(gpus.size(), 8u * 7u);  // samples at 0, 50, ..., 300 for each of 8 GPUs
  // GPU 0 (gpus[0..6]): job 1 on [0, 100), idle, job 5 on [250, 300).
  const auto at = [&](int gpu, int k) { return gpus[static_cast<std::size_t>(gpu * 7 + k)]; };
  EXPECT_EQ(at(0, 0).job_id, 1u);
  EXPECT_DOUBLE_EQ(at(0, 2).util_pct, 97.0);  // (50, 100]: job 1 ran all of it, though at 100 it has ended
  EXPECT_DOUBLE_EQ(at(0, 1).util_pct, 97.0);
  EXPECT_DOUBLE_EQ(at(0, 1).power_w, 636.0);
  EXPECT_DOUBLE_EQ(at(0, 1).fb_used_mib, 69632.0);
  EXPECT_EQ(at(0, 2).job_id, 1u);  // the job that held it during (50, 100]
  EXPECT_DOUBLE_EQ(at(0, 2).fb_used_mib, 0.0);
  EXPECT_DOUBLE_EQ(at(0, 5).power_w, 60.0);   // (200, 250] idle
  EXPECT_DOUBLE_EQ(at(0, 6).power_w, 636.0);  // (250, 300] job 5
  // Energy of GPU 0 over the run: 150 s x 636 W + 150 s x 60 W = 104400 J = 104400000 mJ.
  EXPECT_DOUBLE_EQ(at(0, 6).energy_mj, 104400000.0);
  // Temperature after 100 s at 636 W from idle: steady 68 C, 68 - 36 e^(-100/60).
  EXPECT_NEAR(at(0, 2).temp_c, 68 - 36 * std::exp(-100.0 / 60), 1e-9);
  // GPU 4: job 2 to 200, job 4 from 200: busy all of (150, 200] and (200, 250].
  EXPECT_EQ(at(4, 4).job_id, 2u);  // (150, 200]: job 2
  EXPECT_EQ(at(4, 5).job_id, 4u);  // (200, 250]: job 4
  EXPECT_DOUBLE_EQ(at(4, 4).util_pct, 97.0);
  EXPECT_DOUBLE_EQ(at(4, 5).util_pct, 97.0);
  // GPU 7: job 2 to 200, idle (200, 250], job 5 on (250, 300].
  EXPECT_DOUBLE_EQ(at(7, 5).util_pct, 0.0);
  EXPECT_EQ(at(7, 6).job_id, 5u);  // (250, 300]: job 5, though at 300 it has ended
  EXPECT_EQ(at(7, 5).job_id, 0u);  // (200, 250]: idle
  EXPECT_DOUBLE_EQ(at(7, 6).util_pct, 97.0);
  // The per-GPU energies add up to the cluster's exact energy.
  double sum_mj = 0;
  for (int g = 0; g < 8; ++g) sum_mj += at(g, 6).energy_mj;
  EXPECT_NEAR(sum_mj / 3.6e9, totals.gpu_energy_kwh, 1e-12);
}

TEST_F(GpuMetricsRun, ClusterSeriesAndTotalsWorkedByHand) {
  MetricsTotals totals;
  const std::vector<ClusterSample> c = build(nullptr, totals);
  ASSERT_EQ(c.size(), 7u);
  // At 0: jobs 1-3 run on 8 GPUs and 8 CPUs of 64: MIXED; 3 x ... power 8 x 636 = 5088 W.
  EXPECT_EQ(c[0].jobs_running, 3u);
  EXPECT_EQ(c[0].nodes_mixed, 1u);
  EXPECT_EQ(c[0].gpus_alloc, 8u);
  EXPECT_DOUBLE_EQ(c[0].gpu_power_w, 5088.0);
  // At 150: job 4 is pending (submitted at 150, starts at 200); jobs 2 and 3 run on 6 GPUs, 2 free, both on a
  // partly used node: fragmented. Power 6 x 636 + 2 x 60 = 3936 W.
  EXPECT_EQ(c[3].jobs_pending, 1u);
  EXPECT_EQ(c[3].jobs_running, 2u);
  EXPECT_EQ(c[3].gpus_free, 2u);
  EXPECT_EQ(c[3].gpus_free_fragmented, 2u);
  EXPECT_DOUBLE_EQ(c[3].gpu_power_w, 3936.0);
  // At 300 everything has ended: IDLE, 8 x 60 W.
  EXPECT_EQ(c[6].nodes_idle, 1u);
  EXPECT_EQ(c[6].jobs_running, 0u);
  EXPECT_DOUBLE_EQ(c[6].gpu_power_w, 480.0);
  // Energy: busy GPU-seconds 2x100 + 4x200 + 2x300 + 3x100 + 3x50 = 2050 at 636 W, the other 350 at 60 W:
  // 1303800 + 21000 = 1324800 J = 0.368 kWh; mean power 1324800 / 300 = 4416 W.
  EXPECT_DOUBLE_EQ(c[6].gpu_energy_j, 1324800.0);
  EXPECT_NEAR(totals.gpu_energy_kwh, 0.368, 1e-12);
  EXPECT_NEAR(totals.gpu_power_mean_w, 4416.0, 1e-9);
  // Free GPUs exist only on [100, 250), always on the partly used node: mean fragmentation 1.
  EXPECT_DOUBLE_EQ(totals.fragmentation_mean, 1.0);
  EXPECT_EQ(totals.socket_split_jobs, 1u);
}

TEST_F(GpuMetricsRun, XidGaugeHoldsTheLastXidOfItsGpu) {
  const std::vector<XidEvent> xids = {
      {from_seconds(120), 0, 3, 79}, {from_seconds(220), 0, 3, 48}, {from_seconds(230), 0, 5, 94}};
  std::vector<GpuSample> gpus;
  MetricsTotals totals;
  build(&gpus, totals, xids);
  const auto at = [&](int gpu, int k) { return gpus[static_cast<std::size_t>(gpu * 7 + k)]; };
  EXPECT_EQ(at(3, 2).xid, 0u);   // t = 100
  EXPECT_EQ(at(3, 3).xid, 79u);  // t = 150
  EXPECT_EQ(at(3, 5).xid, 48u);  // t = 250
  EXPECT_EQ(at(5, 5).xid, 94u);
  EXPECT_EQ(at(4, 5).xid, 0u);
}

TEST_F(GpuMetricsRun, ResultsStoreWritesTheMetricsTables) {
  const auto dir = std::filesystem::path(GPUTWIN_BINARY_DIR) / "gpu-metrics-test";
  std::filesystem::remove_all(dir);
  write_results(dir, run_info(outcome_), *outcome_.state, outcome_.summary, *outcome_.recorder, &input_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir / "results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const auto scalar = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  };
  EXPECT_EQ(scalar("SELECT count(*) FROM gpu_metrics"), "56");
  EXPECT_EQ(scalar("SELECT count(*) FROM cluster_metrics"), "7");
  EXPECT_EQ(scalar("SELECT gpus FROM job_gpus WHERE job_id = 5"), "0-1,7");
  EXPECT_EQ(scalar("SELECT value FROM summary WHERE key = 'gpu_energy_kwh'"), "0.368");
  EXPECT_EQ(scalar("SELECT value FROM summary WHERE key = 'socket_split_jobs'"), "1.0");
  EXPECT_EQ(scalar("SELECT value FROM metrics_info WHERE key = 'epoch_unix_s'"), "1704067200.0");
  sqlite3_close(db);
}

TEST_F(GpuMetricsRun, SameRunGivesBitIdenticalSamples) {
  std::vector<GpuSample> first, second;
  MetricsTotals t1, t2;
  const std::vector<ClusterSample> c1 = build(&first, t1);
  SetUp();  // a fresh run of the same scenario
  const std::vector<ClusterSample> c2 = build(&second, t2);
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].power_w, second[i].power_w);
    EXPECT_EQ(first[i].temp_c, second[i].temp_c);
    EXPECT_EQ(first[i].energy_mj, second[i].energy_mj);
    EXPECT_EQ(first[i].job_id, second[i].job_id);
  }
  ASSERT_EQ(c1.size(), c2.size());
  for (std::size_t i = 0; i < c1.size(); ++i) EXPECT_EQ(c1[i].gpu_energy_j, c2[i].gpu_energy_j);
  EXPECT_EQ(t1.fragmentation_mean, t2.fragmentation_mean);
}

TEST(GpuMetricsScenario, MetricsKeysAreCheckedWithTheirPointer) {
  const std::string base = R"({"name": "m", "cluster": {"nodes": [{"count": 1, "cpus": 8, "gpus": 8}],
    "partitions": [{"name": "p", "nodes": "ALL", "default": true}]}, "workload": {"jobs": []},
    "scheduler": {"policy": "fcfs"}, "metrics": )";
  const Scenario ok = parse_scenario(base + R"({"interval_s": 15, "epoch": "2025-03-01T12:00:00Z"}})", "m.json", ".");
  EXPECT_DOUBLE_EQ(ok.metrics.interval_s, 15.0);
  EXPECT_EQ(ok.metrics.epoch_unix_s, 1740830400);  // date -u -d 2025-03-01T12:00:00Z +%s
  EXPECT_EQ(parse_scenario(base + R"({"epoch": "2024-02-29"}})", "m.json", ".").metrics.epoch_unix_s, 1709164800);
  const auto error = [&](const std::string& metrics) {
    try {
      parse_scenario(base + metrics + "}", "m.json", ".");
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(R"({"interval_s": 0})"),
            "m.json: /metrics/interval_s: expected a sample period of at least 1 second, in whole seconds");
  EXPECT_EQ(error(R"({"interval_s": 45.5})"),
            "m.json: /metrics/interval_s: expected a sample period of at least 1 second, in whole seconds");
  EXPECT_NE(error(R"({"epoch": "yesterday"})").find("m.json: /metrics/epoch: expected a UTC time"), std::string::npos);
  EXPECT_EQ(error(R"({"fb_used_fraction": 1.5})"), "m.json: /metrics/fb_used_fraction: expected a share in [0, 1]");
  EXPECT_NE(error(R"({"colour": 1})").find("m.json: /metrics/colour: unknown key"), std::string::npos);
}

}  // namespace
}  // namespace gputwin
