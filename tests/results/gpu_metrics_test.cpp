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
// The node lifecycle's runs (drain, DOWN, reboot, requeued runs) are worked by hand further down.
#include "results/gpu_metrics.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

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
                                   std::span<const XidEvent> xids = {}, ClusterRows rows = ClusterRows::kEveryStep) {
    const GpuBinding binding(*outcome_.state, input_.horizon);
    return build_metrics(
        *outcome_.state, binding, input_.horizon, input_.config, input_.load, xids, input_.node_conditions,
        [&](const GpuSample& s) {
          if (gpus != nullptr) gpus->push_back(s);
        },
        totals, rows);
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
  EXPECT_EQ(scalar("SELECT count(*) FROM cluster_metrics"), "6");  // 7 samples; nothing changes in (0, 50]
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

// ---- The node lifecycle in the metrics ---------------------------------------------------------------------------
// Two 8-GPU nodes n001-n002 (64 CPUs each), slurm policy, metrics every 30 s (the default), no epilog: job 1 (8 GPUs,
// 8 CPUs, 5,000 s) is submitted at 0 and starts at 3 on n001 (batch_sched_delay); job 2 (8 GPUs, 8 CPUs, `job2_s`)
// is submitted at 10 and starts at 11 on n002. `faults` is the /faults object. The schedules are those of
// tests/sim/node_lifecycle_test.cpp (derived there); node_events and the jobs table of these runs confirm them.
// Power: a busy GPU 636 W, an idle one 60 W, so 16 busy GPUs 10,176 W, 8 busy 5,568 W, none 960 W.
RunOutcome run_lifecycle(const std::string& faults, std::int64_t job2_s = 5000, bool node_history = true) {
  const std::string text =
      R"({"name": "metrics-lifecycle", "seed": 1,
          "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                      "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
          "workload": {"jobs": [
            {"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
            {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": )" +
      std::to_string(job2_s) + R"(, "time_limit": 600}]},
          "scheduler": {"policy": "slurm"}, "faults": )" +
      faults + "}";
  RunOptions options;
  options.node_history = node_history;
  return run_scenario(parse_scenario(text, "metrics-lifecycle.json", "."), options);
}

/// A run's metrics, built as the results store builds them.
struct LifecycleMetrics {
  std::vector<ClusterSample> cluster;
  std::vector<GpuSample> gpus;
  MetricsTotals totals;
  /// The cluster sample at `t` (a multiple of 30 s).
  [[nodiscard]] const ClusterSample& at(std::int64_t t) const {
    const ClusterSample& c = cluster.at(static_cast<std::size_t>(t / 30));
    EXPECT_EQ(c.time_s, t);
    return c;
  }
  /// The samples of one GPU, by time.
  [[nodiscard]] std::map<std::int64_t, GpuSample> gpu(NodeIndex node, std::uint32_t g) const {
    std::map<std::int64_t, GpuSample> out;
    for (const GpuSample& s : gpus) {
      if (s.node == node && s.gpu == g) out[s.time_s] = s;
    }
    return out;
  }
};

LifecycleMetrics lifecycle_metrics(const RunOutcome& o) {
  const MetricsInput input = metrics_input(o);
  const GpuBinding binding(*o.state, input.horizon);
  LifecycleMetrics m;
  m.cluster = build_metrics(
      *o.state, binding, input.horizon, input.config, input.load, input.xids, input.node_conditions,
      [&](const GpuSample& s) { m.gpus.push_back(s); }, m.totals, ClusterRows::kEveryStep);
  return m;
}

TEST(GpuMetricsLifecycle, Xid79CrashDrainRebootAndRequeueWorkedByHand) {
  // Xid 79 at 1,000 on n001: job 1's first run (3 to 1,000) crashes and is requeued at once (pending from 1,000);
  // n001 stays in service, idle, until the health check ending at 1,089 drains it (DRAINED) and reboots it
  // (REBOOTING from 1,089); it returns at 1,689, where job 1 starts again (ends 6,689). Job 2 runs 11 to 5,011.
  // The run stops at 6,780 (the scheduler's last timers): 227 samples, 0 to 6,780.
  const RunOutcome o = run_lifecycle(R"({"HealthCheckInterval": 120,
      "inject": [{"time": 1000, "node": "n001", "xid": 79, "gpu": 2}]})");
  ASSERT_EQ(o.state->past_runs().size(), 1u);
  const LifecycleMetrics m = lifecycle_metrics(o);
  ASSERT_EQ(m.cluster.size(), 227u);
  // 0: job 1 pending, both nodes idle.
  EXPECT_EQ(m.at(0).jobs_pending, 1u);
  EXPECT_EQ(m.at(0).nodes_idle, 2u);
  EXPECT_EQ(m.at(0).gpus_free, 16u);
  EXPECT_DOUBLE_EQ(m.at(0).gpu_power_w, 960.0);
  // 30 and 990: job 1's first run and job 2 hold all 16 GPUs and 16 CPUs.
  for (const std::int64_t t : {30, 990}) {
    const ClusterSample& c = m.at(t);
    EXPECT_EQ(c.jobs_running, 2u) << t;
    EXPECT_EQ(c.jobs_pending, 0u) << t;
    EXPECT_EQ(c.gpus_alloc, 16u) << t;
    EXPECT_EQ(c.cpus_alloc, 16u) << t;
    EXPECT_EQ(c.nodes_mixed, 2u) << t;
    EXPECT_EQ(c.gpus_free, 0u) << t;
    EXPECT_DOUBLE_EQ(c.gpu_power_w, 10176.0) << t;
  }
  // 1,020 and 1,080: job 1 pending again; n001 idle and in service (nobody has noticed the fault yet).
  for (const std::int64_t t : {1020, 1080}) {
    const ClusterSample& c = m.at(t);
    EXPECT_EQ(c.jobs_pending, 1u) << t;
    EXPECT_EQ(c.jobs_running, 1u) << t;
    EXPECT_EQ(c.gpus_alloc, 8u) << t;
    EXPECT_EQ(c.nodes_idle, 1u) << t;
    EXPECT_EQ(c.nodes_mixed, 1u) << t;
    EXPECT_EQ(c.nodes_down + c.nodes_drain, 0u) << t;
    EXPECT_EQ(c.gpus_free, 8u) << t;
    EXPECT_DOUBLE_EQ(c.gpu_power_w, 5568.0) << t;
  }
  // 1,110 to 1,680: n001 rebooting: DOWN for the metrics, its 8 idle GPUs not free.
  for (const std::int64_t t : {1110, 1680}) {
    const ClusterSample& c = m.at(t);
    EXPECT_EQ(c.nodes_down, 1u) << t;
    EXPECT_EQ(c.nodes_drain, 0u) << t;
    EXPECT_EQ(c.nodes_idle, 0u) << t;
    EXPECT_EQ(c.nodes_mixed, 1u) << t;
    EXPECT_EQ(c.gpus_free, 0u) << t;
    EXPECT_EQ(c.jobs_pending, 1u) << t;
  }
  // 1,710: n001 back, job 1 running there again.
  EXPECT_EQ(m.at(1710).nodes_down, 0u);
  EXPECT_EQ(m.at(1710).nodes_mixed, 2u);
  EXPECT_EQ(m.at(1710).jobs_running, 2u);
  EXPECT_EQ(m.at(1710).jobs_pending, 0u);
  EXPECT_EQ(m.at(1710).gpus_alloc, 16u);
  // 5,040: job 2 done; 6,690: both done.
  EXPECT_EQ(m.at(5040).nodes_idle, 1u);
  EXPECT_EQ(m.at(5040).gpus_free, 8u);
  EXPECT_EQ(m.at(6690).nodes_idle, 2u);
  EXPECT_EQ(m.at(6690).gpus_free, 16u);
  EXPECT_EQ(m.at(6690).jobs_running + m.at(6690).jobs_pending, 0u);
  // Energy, first run included: busy GPU-seconds 8 x 997 + 8 x 5,000 + 8 x 5,000 = 87,976 at 636 W, the other
  // 16 x 6,780 - 87,976 = 20,504 at 60 W: 55,952,736 + 1,230,240 = 57,182,976 J.
  EXPECT_NEAR(m.totals.gpu_energy_kwh, 57182976 / 3.6e6, 1e-9);
  // Per GPU: n001's GPUs have no sample while it reboots (1,110 to 1,680: 20 of 227), n002's have all.
  const auto g00 = m.gpu(0, 0);
  EXPECT_EQ(g00.size(), 207u);
  EXPECT_EQ(g00.count(1080), 1u);
  EXPECT_EQ(g00.count(1110), 0u);
  EXPECT_EQ(g00.count(1680), 0u);
  EXPECT_EQ(m.gpu(1, 0).size(), 227u);
  EXPECT_EQ(m.totals.gpu_samples, 8u * 207u + 8u * 227u);
  // GPU 0 of n001 at 990: job 1's first run; at 1,710: its second run since 1,689, 21 s of the period: 97 x 21 / 30
  // % busy. Energy to 1,710: 997 + 21 s at 636 W, 692 s at 60 W: 634,092 + 13,356 + 41,520 = 688,968 J.
  EXPECT_EQ(g00.at(990).job_id, 1u);
  EXPECT_DOUBLE_EQ(g00.at(990).util_pct, 97.0);
  EXPECT_EQ(g00.at(1710).job_id, 1u);
  EXPECT_NEAR(g00.at(1710).util_pct, 97.0 * 21 / 30, 1e-9);
  EXPECT_NEAR(g00.at(1710).energy_mj, 688968000.0, 1e-3);
  // The per-GPU energies still add up to the cluster's.
  double sum_mj = 0;
  for (NodeIndex n = 0; n < 2; ++n) {
    for (std::uint32_t g = 0; g < 8; ++g) sum_mj += m.gpu(n, g).at(6780).energy_mj;
  }
  EXPECT_NEAR(sum_mj / 3.6e9, m.totals.gpu_energy_kwh, 1e-9);

  // job_gpus: one row per run of job 1.
  const auto dir = std::filesystem::path(GPUTWIN_BINARY_DIR) / "gpu-metrics-lifecycle-test";
  std::filesystem::remove_all(dir);
  const MetricsInput input = metrics_input(o);
  write_results(dir, run_info(o), *o.state, o.summary, *o.recorder, &input, fault_log(o));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir / "results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT start_time, gpus FROM job_gpus WHERE job_id = 1 ORDER BY start_time", -1,
                               &st, nullptr),
            SQLITE_OK);
  std::vector<std::string> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rows.push_back(std::to_string(sqlite3_column_int64(st, 0)) + " " +
                   reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(rows, (std::vector<std::string>{"3 0-7", "1689 0-7"}));
}

TEST(GpuMetricsLifecycle, ConditionsNeedNoNodeHistory) {
  // --no-node-history keeps no node_events; the metrics take the node conditions from the world and are the same.
  const std::string faults = R"({"HealthCheckInterval": 120,
      "inject": [{"time": 1000, "node": "n001", "xid": 79, "gpu": 2}]})";
  const RunOutcome with = run_lifecycle(faults);
  const RunOutcome without = run_lifecycle(faults, 5000, false);
  EXPECT_TRUE(without.recorder->node_events().empty());
  const LifecycleMetrics a = lifecycle_metrics(with), b = lifecycle_metrics(without);
  ASSERT_EQ(a.cluster.size(), b.cluster.size());
  for (std::size_t k = 0; k < a.cluster.size(); ++k) {
    const ClusterSample &x = a.cluster[k], &y = b.cluster[k];
    EXPECT_EQ(std::tie(x.nodes_idle, x.nodes_mixed, x.nodes_alloc, x.nodes_down, x.nodes_drain, x.jobs_pending,
                       x.jobs_running, x.gpus_alloc, x.gpus_free),
              std::tie(y.nodes_idle, y.nodes_mixed, y.nodes_alloc, y.nodes_down, y.nodes_drain, y.jobs_pending,
                       y.jobs_running, y.gpus_alloc, y.gpus_free))
        << x.time_s;
    EXPECT_EQ(x.gpu_energy_j, y.gpu_energy_j) << x.time_s;
  }
  EXPECT_EQ(a.gpus.size(), b.gpus.size());
}

TEST(GpuMetricsLifecycle, DrainingNodeCountsAsDrainWithItsJobStillAllocated) {
  // A degraded GPU at 1,000 on n001 (job 1 keeps running); DCGM diag level 3 sees it at 4,500: DRAINING until job 1
  // ends at 5,003, DRAINED (GPU reset) until 5,303, then back. Job 2 runs 11 to 6,011; the run stops at 6,120.
  const RunOutcome o = run_lifecycle(R"({"active_checks": [{"checks": ["dcgm_diag_3"], "period": 3600}],
      "inject": [{"time": 1000, "node": "n001", "effect": "reset_gpu", "symptom": "degraded"}]})",
                                     6000);
  EXPECT_TRUE(o.state->past_runs().empty());
  const LifecycleMetrics m = lifecycle_metrics(o);
  ASSERT_EQ(m.cluster.size(), 205u);
  EXPECT_EQ(m.at(4470).nodes_mixed, 2u);
  EXPECT_EQ(m.at(4470).nodes_drain, 0u);
  // 4,500: DRAINING: drain, not mixed; its job's CPUs and GPUs are still allocated, none free anywhere.
  EXPECT_EQ(m.at(4500).nodes_drain, 1u);
  EXPECT_EQ(m.at(4500).nodes_mixed, 1u);
  EXPECT_EQ(m.at(4500).jobs_running, 2u);
  EXPECT_EQ(m.at(4500).gpus_alloc, 16u);
  EXPECT_EQ(m.at(4500).cpus_alloc, 16u);
  EXPECT_EQ(m.at(4500).gpus_free, 0u);
  EXPECT_DOUBLE_EQ(m.at(4500).gpu_power_w, 10176.0);
  // 5,010: DRAINED during the reset: still drain, its 8 idle GPUs not free.
  EXPECT_EQ(m.at(5010).nodes_drain, 1u);
  EXPECT_EQ(m.at(5010).nodes_idle, 0u);
  EXPECT_EQ(m.at(5010).jobs_running, 1u);
  EXPECT_EQ(m.at(5010).gpus_alloc, 8u);
  EXPECT_EQ(m.at(5010).gpus_free, 0u);
  EXPECT_DOUBLE_EQ(m.at(5010).gpu_power_w, 5568.0);
  // 5,310: back in service, idle.
  EXPECT_EQ(m.at(5310).nodes_drain, 0u);
  EXPECT_EQ(m.at(5310).nodes_idle, 1u);
  EXPECT_EQ(m.at(5310).gpus_free, 8u);
  EXPECT_EQ(m.at(6030).nodes_idle, 2u);
  // A drained node's exporter still answers: every sample is there, idle after job 1.
  const auto g00 = m.gpu(0, 0);
  EXPECT_EQ(g00.size(), 205u);
  EXPECT_EQ(g00.at(5040).job_id, 0u);
  EXPECT_DOUBLE_EQ(g00.at(5040).power_w, 60.0);
}

TEST(GpuMetricsLifecycle, DeadHostIsDownAndItsNodeFailRunCounts) {
  // n001's host dies at 2,000; SlurmdTimeout=300 sets it DOWN at 2,404 (pings every 100 s from 4; the first round at
  // or after 2,300 is 2,304, + 100 s), ending job 1's first run (3 to 2,404) NODE_FAIL, requeued at once; n001
  // reboots (REBOOTING) and returns at 3,004, where job 1 starts again (ends 8,004). Job 2 runs 11 to 5,011; the run
  // stops at 8,100.
  const RunOutcome o = run_lifecycle(R"({"HealthCheckInterval": 120, "SlurmdTimeout": 300,
      "inject": [{"time": 2000, "node": "n001", "effect": "reboot_node", "symptom": "host_down"}]})");
  const LifecycleMetrics m = lifecycle_metrics(o);
  ASSERT_EQ(m.cluster.size(), 271u);
  // 2,400: the stalled first run still holds n001.
  EXPECT_EQ(m.at(2400).jobs_running, 2u);
  EXPECT_EQ(m.at(2400).gpus_alloc, 16u);
  // 2,430 to 3,000: n001 DOWN, then rebooting; job 1 pending.
  for (const std::int64_t t : {2430, 3000}) {
    const ClusterSample& c = m.at(t);
    EXPECT_EQ(c.nodes_down, 1u) << t;
    EXPECT_EQ(c.nodes_mixed, 1u) << t;
    EXPECT_EQ(c.jobs_pending, 1u) << t;
    EXPECT_EQ(c.jobs_running, 1u) << t;
    EXPECT_EQ(c.gpus_alloc, 8u) << t;
    EXPECT_EQ(c.gpus_free, 0u) << t;
  }
  EXPECT_EQ(m.at(3030).nodes_mixed, 2u);
  EXPECT_EQ(m.at(3030).jobs_pending, 0u);
  // Busy GPU-seconds 8 x (2,401 + 5,000 + 5,000) = 99,208 at 636 W, 16 x 8,100 - 99,208 = 30,392 at 60 W:
  // 63,096,288 + 1,823,520 = 64,919,808 J. n001's GPUs miss the 20 samples 2,430 to 3,000.
  EXPECT_NEAR(m.totals.gpu_energy_kwh, 64919808 / 3.6e6, 1e-9);
  EXPECT_EQ(m.gpu(0, 5).size(), 271u - 20u);
}

TEST(GpuMetricsLifecycle, PreemptedRunCountsAndTheJobIsPendingUntilItsRestart) {
  // One node of 64 CPUs and 8 GPUs, PreemptMode=REQUEUE, GraceTime 0 (the schedule of
  // tests/scheduler/job_policy_test.cpp, derived there): job 1 (QOS low, 8 GPUs) runs 3 to 101, when job 2 (QOS
  // high, submitted at 100) preempts it; job 2 runs 101 to 201; job 1, pending again from 101, restarts at the full
  // pass at 240 and ends at 1,240. The run stops at 1,320.
  const std::string text = R"({"name": "preempt", "cluster": {"nodes": [{"prefix": "n", "count": 1, "cpus": 64,
      "memory_gb": 512, "gpus": 8}], "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": [
        {"id": 1, "qos": "low", "submit": 0, "gpus_per_node": 8, "time_limit": 60, "run_time": 1000},
        {"id": 2, "qos": "high", "submit": 100, "gpus_per_node": 8, "time_limit": 60, "run_time": 100}]},
      "scheduler": {"policy": "slurm"},
      "accounting": {"PreemptType": "preempt/qos", "PreemptMode": "REQUEUE", "qos": [{"name": "low", "GraceTime": 0},
                     {"name": "high", "Priority": 100, "Preempt": ["low"]}]}})";
  const RunOutcome o = run_scenario(parse_scenario(text, "preempt.json", "."), RunOptions{});
  ASSERT_EQ(o.state->past_runs().size(), 1u);
  EXPECT_EQ(to_seconds(o.state->job(0).start), 240);
  const LifecycleMetrics m = lifecycle_metrics(o);
  EXPECT_EQ(m.at(90).jobs_running, 1u);  // job 1's first run
  EXPECT_EQ(m.at(90).jobs_pending, 0u);
  EXPECT_EQ(m.at(90).gpus_alloc, 8u);
  EXPECT_EQ(m.at(120).jobs_running, 1u);  // job 2; job 1 pending again
  EXPECT_EQ(m.at(120).jobs_pending, 1u);
  EXPECT_EQ(m.at(120).gpus_alloc, 8u);
  EXPECT_EQ(m.at(210).jobs_running, 0u);  // job 1 waits for the 240 pass
  EXPECT_EQ(m.at(210).jobs_pending, 1u);
  EXPECT_EQ(m.at(210).nodes_idle, 1u);
  EXPECT_EQ(m.at(210).gpus_free, 8u);
  EXPECT_EQ(m.at(240).jobs_running, 1u);
  EXPECT_EQ(m.at(240).jobs_pending, 0u);
  // Busy GPU-seconds 8 x (98 + 100 + 1,000) = 9,584 at 636 W, 8 x 1,320 - 9,584 = 976 at 60 W: 6,095,424 + 58,560
  // = 6,153,984 J.
  EXPECT_DOUBLE_EQ(m.totals.horizon_s, 1320.0);
  EXPECT_NEAR(m.totals.gpu_energy_kwh, 6153984 / 3.6e6, 1e-9);
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

// ---- The stored cluster series: only the samples after a change, expanded back by the readers --------------------

/// A change-only series expanded as the readers do: every sample repeats the last row at or before it, its energy
/// extended at that row's power.
std::vector<ClusterSample> expand_changes(const std::vector<ClusterSample>& rows, const MetricsTotals& totals) {
  std::vector<std::int64_t> times;
  for (const ClusterSample& r : rows) times.push_back(r.time_s);
  std::vector<ClusterSample> out;
  expand_cluster_samples(times, static_cast<std::int64_t>(totals.cluster_step_s), 0,
                         static_cast<std::int64_t>(totals.horizon_s), 1, [&](std::int64_t t, std::size_t i) {
                           ClusterSample& s = out.emplace_back(rows[i]);
                           s.gpu_energy_j =
                               extend_energy(rows[i].gpu_energy_j, rows[i].gpu_power_w, t - rows[i].time_s);
                           s.time_s = t;
                         });
  return out;
}

/// Every field of every sample equal, doubles bit for bit.
void expect_same_series(const std::vector<ClusterSample>& every_step, const std::vector<ClusterSample>& expanded) {
  ASSERT_EQ(every_step.size(), expanded.size());
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  for (std::size_t i = 0; i < every_step.size(); ++i) {
    const ClusterSample& a = every_step[i];
    const ClusterSample& b = expanded[i];
    const auto fields = [&](const ClusterSample& c) {
      return std::tuple(c.time_s, c.nodes_idle, c.nodes_mixed, c.nodes_alloc, c.nodes_down, c.nodes_drain,
                        c.nodes_powered_down, c.jobs_pending, c.jobs_running, c.cpus_alloc, c.gpus_alloc,
                        bits(c.gpu_power_w), bits(c.gpu_energy_j), c.gpus_free, c.gpus_free_fragmented);
    };
    ASSERT_EQ(fields(a), fields(b)) << "sample " << i << " at " << a.time_s << " s";
  }
}

/// Builds `o`'s cluster series both ways and checks that the change-only one expands to every step; returns the
/// number of rows kept and of samples.
std::pair<std::size_t, std::size_t> check_change_only(const RunOutcome& o) {
  const MetricsInput input = metrics_input(o);
  const GpuBinding binding(*o.state, input.horizon);
  MetricsTotals t1, t2;
  const auto every = build_metrics(*o.state, binding, input.horizon, input.config, input.load, input.xids,
                                   input.node_conditions, {}, t1, ClusterRows::kEveryStep);
  const auto changes = build_metrics(*o.state, binding, input.horizon, input.config, input.load, input.xids,
                                     input.node_conditions, {}, t2, ClusterRows::kChanges);
  expect_same_series(every, expand_changes(changes, t2));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(t1.gpu_energy_kwh), std::bit_cast<std::uint64_t>(t2.gpu_energy_kwh));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(t1.fragmentation_mean), std::bit_cast<std::uint64_t>(t2.fragmentation_mean));
  return {changes.size(), every.size()};
}

TEST_F(GpuMetricsRun, ChangeOnlyClusterSeriesExpandsToEveryStep) {
  // Changes at 0 (submits, three starts), 100 (job 1 ends), 150 (job 4 submitted), 200 (job 2 ends, job 4 starts),
  // 250 (job 5 submitted and started) and 300 (the rest end): nothing changes in (0, 50], so the sample at 50 is
  // the one not kept.
  const auto [kept, samples] = check_change_only(outcome_);
  EXPECT_EQ(samples, 7u);
  EXPECT_EQ(kept, 6u);
}

TEST(GpuMetricsLifecycle, ChangeOnlyClusterSeriesExpandsToEveryStep) {
  // The XID 79 run above: 227 samples; changes at 0-30 (submits and starts), 1,000-1,089 (crash, drain, reboot),
  // 1,689 (return and restart), 5,011 (job 2 ends) and 6,689 (job 1 ends): a few rows.
  const RunOutcome o = run_lifecycle(R"({"HealthCheckInterval": 120,
      "inject": [{"time": 1000, "node": "n001", "xid": 79, "gpu": 2}]})");
  const auto [kept, samples] = check_change_only(o);
  EXPECT_EQ(samples, 227u);
  EXPECT_LT(kept, 15u);
}

TEST(GpuMetricsScenario, ChangeOnlyClusterSeriesOfTheQuickstartExpandsToEveryStep) {
  Scenario scenario = load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/scenarios/quickstart.json");
  scenario.metrics.per_gpu = false;
  const RunOutcome o = run_scenario(std::move(scenario), RunOptions{});
  const auto [kept, samples] = check_change_only(o);
  EXPECT_GT(samples, 5000u);
  EXPECT_LT(kept, samples);
}

// The writer takes the per-GPU samples from a thread that builds them, in batches of 16,384 through a queue of
// four: on quickstart with a 200,000-row budget (13 batches, so the builder waits for the writer), the table holds
// exactly what build_metrics sends (no batch lost or given twice), and the cluster series it returns.
TEST(MetricsWrittenBesideTheBuild, EveryBatchArrivesOnceAndWhole) {
  const RunOutcome o =
      run_scenario(load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/scenarios/quickstart.json"), RunOptions{});
  MetricsInput input = metrics_input(o);
  input.config.max_gpu_samples = 200'000;
  const auto dir = std::filesystem::path(GPUTWIN_BINARY_DIR) / "gpu-metrics-batches-test";
  std::filesystem::remove_all(dir);
  write_results(dir, run_info(o), *o.state, o.summary, *o.recorder, &input);

  std::string expected_gpu, expected_cluster;
  MetricsTotals totals;
  const GpuBinding binding(*o.state, input.horizon);
  std::size_t samples = 0;
  const auto cluster = build_metrics(
      *o.state, binding, input.horizon, input.config, input.load, input.xids, input.node_conditions,
      [&](const GpuSample& s) {
        ++samples;
        expected_gpu += fmt::format("{}|{}|{}|{}|{}|{}\n", s.node, s.gpu, s.time_s, s.job_id, s.power_w, s.energy_mj);
      },
      totals);
  for (const ClusterSample& c : cluster)
    expected_cluster += fmt::format("{}|{}|{}\n", c.time_s, c.gpus_alloc, c.gpu_energy_j);
  ASSERT_GT(samples, 5u * 16384u);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir / "results.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  const auto rows = [&](const char* sql, int columns) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < columns; ++c) {
        if (c > 0) out += '|';
        if (sqlite3_column_type(st, c) == SQLITE_INTEGER)
          out += std::to_string(sqlite3_column_int64(st, c));
        else if (sqlite3_column_type(st, c) == SQLITE_NULL)
          out += '0';
        else
          out += fmt::format("{}", sqlite3_column_double(st, c));
      }
      out += '\n';
    }
    sqlite3_finalize(st);
    return out;
  };
  // The table's key order is the order build_metrics sends (GPU by GPU, time ascending).
  const std::string got = rows("SELECT node_index, gpu, time, job_id, power_w, energy_mj FROM gpu_metrics", 6);
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), static_cast<std::ptrdiff_t>(samples));
  const auto differ = std::mismatch(got.begin(), got.end(), expected_gpu.begin(), expected_gpu.end());
  EXPECT_TRUE(got == expected_gpu) << "first difference at byte " << (differ.first - got.begin()) << ": "
                                   << got.substr(static_cast<std::size_t>(differ.first - got.begin()), 80);
  EXPECT_EQ(rows("SELECT time, gpus_alloc, gpu_energy_j FROM cluster_metrics ORDER BY time", 3), expected_cluster);
  sqlite3_close(db);
}

// A build that fails on its thread fails the write with its error, and leaves no results behind.
TEST(MetricsWrittenBesideTheBuild, AFailedBuildFailsTheWriteWhole) {
  const RunOutcome o = run_scenario(
      load_scenario(std::string(GPUTWIN_SOURCE_DIR) + "/tests/results/data/gpu_metrics.json"), RunOptions{});
  MetricsInput input = metrics_input(o);
  input.load = [](JobIndex, std::span<const NodeAllocation>) -> std::optional<GpuLoad> {
    throw std::runtime_error("speed model failed");
  };
  const auto dir = std::filesystem::path(GPUTWIN_BINARY_DIR) / "gpu-metrics-failed-build-test";
  std::filesystem::remove_all(dir);
  try {
    write_results(dir, run_info(o), *o.state, o.summary, *o.recorder, &input);
    FAIL() << "the write succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "speed model failed");
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "results.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(dir / "summary.json"));
  for (const char* name : kResultsTemporaryFiles) EXPECT_FALSE(std::filesystem::exists(dir / name)) << name;
}

}  // namespace
}  // namespace gputwin
