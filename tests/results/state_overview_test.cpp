// state_overview against RunView: runs stopped part way (as a live run's copy is a run as of its instant), written
// with write_results and read back with RunView, must give the same Overview, node rows, partitions and description,
// field by field and bit for bit (doubles compared with ==), at the state's second; and state_job_table the same
// Jobs pages, jobs and slurmctld views as the view's jobs table at seconds before, at and after it. The runs cover what
// the figures depend on: jobs pending, running, ended, rejected and not submitted yet; node states of a drain, an XID,
// a reboot and a requeue (faults); per-GPU samples thinned by the budget (the sample before the second, not at it),
// loads below 100% (a data-parallel profile), no per-GPU metrics, no metrics at all, nodes without GPUs, partitions
// DOWN and over part of the nodes, and a run without node history.
#include "results/state_overview.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "model/scenario.hpp"
#include "results/run_view.hpp"
#include "sim/runner.hpp"

namespace gputwin {
namespace {

class StateOverviewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gputwin-state-overview-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Runs `text` up to `until_s`, writes it as a live snapshot is written (metrics when enabled, at most
  /// `gpu_budget` per-GPU rows) and checks state_overview against RunView on the folder; returns the figures.
  StateOverview check(const std::string& text, std::int64_t until_s, std::uint64_t gpu_budget = 500'000,
                      bool node_history = true) {
    RunOptions options;
    options.stop_at = from_seconds(until_s);
    options.node_history = node_history;
    const RunOutcome o = run_scenario(parse_scenario(text, "state.json", "."), options);
    MetricsInput metrics = metrics_input(o);
    metrics.config.max_gpu_samples = std::min(metrics.config.max_gpu_samples, gpu_budget);
    const MetricsInput* written = metrics.config.enabled ? &metrics : nullptr;
    const std::filesystem::path dir = dir_ / std::to_string(until_s);
    write_results(dir, run_info(o), *o.state, o.summary, *o.recorder, written, fault_log(o));
    const StateOverview figures = state_overview(run_info(o), *o.state, *o.recorder, written, o.world->now());
    EXPECT_EQ(figures.at_s, to_seconds(o.world->now()));
    const RunView view(dir);
    expect_same(figures, view);
    expect_same_jobs(*state_job_table(*o.state, *o.recorder), view, figures.at_s);
    // The GPU indices of every run (the current ones and those requeues discarded), as the job_gpus rows.
    if (written != nullptr) {
      const JobGpuPlacement placement(*o.state, metrics.horizon);
      const auto same = [&](JobIndex j, SimTime start) {
        const auto id = static_cast<std::int64_t>(o.state->spec(j).id);
        const auto got = placement.job_gpus(id, to_seconds(start));
        EXPECT_EQ(got, view.job_gpus(id, to_seconds(start))) << "job " << id << " run at " << to_seconds(start);
        placed_runs_ += got.empty() ? 0 : 1;
      };
      for (const PastRun& run : o.state->past_runs()) same(run.job, run.start);
      for (JobIndex j = 0; j < o.state->job_count(); ++j) {
        if (o.state->job(j).start >= 0) same(j, o.state->job(j).start);
      }
      EXPECT_TRUE(placement.job_gpus(-1, 0).empty());
    }
    return figures;
  }

  static void expect_same(const StateOverview& f, const RunView& view) {
    const std::int64_t t = f.at_s;
    const RunDescription& a = f.info;
    const RunDescription& b = view.info();
    EXPECT_EQ(a.scenario, b.scenario);
    EXPECT_EQ(a.policy, b.policy);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.seed, b.seed);
    EXPECT_EQ(a.begin_s, b.begin_s);
    EXPECT_EQ(a.epoch_unix_s, b.epoch_unix_s);
    EXPECT_EQ(a.cluster_step_s, b.cluster_step_s);
    EXPECT_EQ(a.gpu_step_s, b.gpu_step_s);
    EXPECT_EQ(a.jobs, b.jobs);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.total_gpus, b.total_gpus);
    // end_s differs on purpose: the view's slider ends at the last submit of a job not submitted yet (the dashboard
    // replaces it with the snapshot's second, which the figures hold).
    EXPECT_EQ(a.end_s, t);

    const Overview x = f.overview;
    const Overview y = view.overview(t);
    EXPECT_EQ(x.at_s, y.at_s);
    EXPECT_EQ(x.total_gpus, y.total_gpus);
    EXPECT_EQ(x.allocated_gpus, y.allocated_gpus);
    EXPECT_EQ(x.gpu_util_pct, y.gpu_util_pct);  // bit for bit, not nearly
    EXPECT_EQ(x.gpu_mem_pct, y.gpu_mem_pct);
    EXPECT_EQ(x.running_jobs, y.running_jobs);
    EXPECT_EQ(x.pending_jobs, y.pending_jobs);
    EXPECT_EQ(x.idle_nodes, y.idle_nodes);
    EXPECT_EQ(x.total_nodes, y.total_nodes);
    EXPECT_EQ(x.node_groups, y.node_groups);

    const std::vector<NodeRow> nodes = view.nodes(t);
    ASSERT_EQ(f.nodes.size(), nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      const NodeRow& p = f.nodes[n];
      const NodeRow& q = nodes[n];
      SCOPED_TRACE(q.name);
      EXPECT_EQ(p.index, q.index);
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.state, q.state);
      EXPECT_EQ(p.group, q.group);
      EXPECT_EQ(p.cpus, q.cpus);
      EXPECT_EQ(p.gpus, q.gpus);
      EXPECT_EQ(p.memory_mb, q.memory_mb);
      EXPECT_EQ(p.gpu_type, q.gpu_type);
      EXPECT_EQ(p.gpu_util_pct, q.gpu_util_pct);
      EXPECT_EQ(p.gpu_mem_pct, q.gpu_mem_pct);
      EXPECT_EQ(p.xid, q.xid);
    }

    const std::vector<PartitionRow> parts = view.partitions(t);
    ASSERT_EQ(f.partitions.size(), parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const PartitionRow& p = f.partitions[i];
      const PartitionRow& q = parts[i];
      SCOPED_TRACE(q.name);
      EXPECT_EQ(p.name, q.name);
      EXPECT_EQ(p.nodes, q.nodes);
      EXPECT_EQ(p.state, q.state);
      EXPECT_EQ(p.gpu_type, q.gpu_type);
      EXPECT_EQ(p.is_default, q.is_default);
      EXPECT_EQ(p.default_time_s, q.default_time_s);
      EXPECT_EQ(p.max_time_s, q.max_time_s);
      EXPECT_EQ(p.total_nodes, q.total_nodes);
      EXPECT_EQ(p.avail_nodes, q.avail_nodes);
      EXPECT_EQ(p.total_gpus, q.total_gpus);
    }
  }

  /// A job row as text, every field (equal texts: equal rows).
  static std::string text(const JobRow& r) {
    return std::to_string(r.job_id) + "|" + r.name + "|" + r.user + "|" + r.account + "|" + r.partition + "|" + r.qos +
           "|" + r.state + "|" + r.reason + "|" + std::to_string(r.submit_s) + "|" + std::to_string(r.start_s) + "|" +
           std::to_string(r.end_s) + "|" + std::to_string(r.run_time_s) + "|" + std::to_string(r.time_limit_s) + "|" +
           std::to_string(r.priority) + "|" + std::to_string(r.nodes) + "|" + std::to_string(r.cpus) + "|" +
           std::to_string(r.gpus) + "|" + r.node_list;
  }
  static std::string text(const JobPage& page) {
    std::string out = std::to_string(page.total) + " [";
    for (const std::size_t c : page.counts) out += std::to_string(c) + " ";
    out += "]\n";
    for (const JobRow& r : page.rows) out += text(r) + "\n";
    return out;
  }

  /// The Jobs table of the state against the view's: every filter, sort and direction, pages at the start, inside
  /// and at the end, searches (a user, a digit, a name's letters in another case, nothing), a user's jobs, every job
  /// alone and slurmctld's view, at seconds before, at and after the state's.
  static void expect_same_jobs(const JobTable& table, const RunView& view, std::int64_t now_s) {
    ASSERT_EQ(table.rows().size(), view.info().jobs);
    std::size_t pages = 0, rows = 0, pending_with_reason = 0;
    for (const std::int64_t at : {std::int64_t{0}, now_s / 3, now_s / 2, now_s, now_s + 5000}) {
      for (int f = 0; f <= static_cast<int>(JobFilter::kUnknown); ++f) {
        for (int s = 0; s <= static_cast<int>(JobSort::kStart); ++s) {
          for (const bool desc : {false, true}) {
            for (const std::string search : {"", "u", "1", "A", "zzz"}) {
              JobQuery q;
              q.at_s = at;
              q.filter = static_cast<JobFilter>(f);
              q.sort = static_cast<JobSort>(s);
              q.descending = desc;
              q.search = search;
              q.limit = 7;
              const JobPage first = view.jobs(q);
              for (const std::size_t offset :
                   {std::size_t{0}, std::size_t{9}, first.total / 2, first.total > 3 ? first.total - 3 : 0}) {
                q.offset = offset;
                const JobPage expected = view.jobs(q);
                const JobPage got = table.jobs(q);
                ASSERT_EQ(text(got), text(expected))
                    << "t=" << at << " filter=" << f << " sort=" << s << " desc=" << desc << " search=" << search
                    << " offset=" << offset;
                ++pages;
                rows += got.rows.size();
                for (const JobRow& r : got.rows) pending_with_reason += r.state == "PENDING" && !r.reason.empty();
              }
            }
          }
        }
      }
      JobQuery mine;
      mine.at_s = at;
      mine.user = view.account_users().empty() ? "" : view.account_users().front().second;
      mine.limit = 1000;
      EXPECT_EQ(text(table.jobs(mine)), text(view.jobs(mine)));
      for (const JobTable::Job& j : table.rows()) {
        const auto a = table.job(j.job_id, at);
        const auto b = view.job(j.job_id, at);
        ASSERT_TRUE(a && b);
        EXPECT_EQ(text(*a), text(*b));
      }
      const auto slurm_a = table.controller_jobs(at, 300);
      const auto slurm_b = view.controller_jobs(at, 300);
      ASSERT_EQ(slurm_a.size(), slurm_b.size());
      for (std::size_t i = 0; i < slurm_a.size(); ++i) EXPECT_EQ(text(slurm_a[i]), text(slurm_b[i]));
    }
    EXPECT_FALSE(table.job(-5, now_s).has_value());
    EXPECT_EQ(table.account_users(), view.account_users());
    EXPECT_EQ(table.qos_names(), view.qos_names());
    // What the checks went through (else equal answers could be empty ones).
    EXPECT_GT(pages, 1000u);
    EXPECT_GT(rows, 0u);
    saw_pending_reasons_ += pending_with_reason;
  }

  static inline std::size_t saw_pending_reasons_ = 0;
  static inline std::size_t placed_runs_ = 0;
  std::filesystem::path dir_;
};

std::string quickstart() {
  return R"({"name": "quickstart", "seed": 1,
    "cluster": {"nodes": [{"prefix": "gpu", "count": 32, "cpus": 112, "memory_gb": 2048, "gpus": 8, "gpu_type": "h100"},
                          {"prefix": "old", "count": 4, "cpus": 32, "memory_gb": 256, "gpus": 4, "gpu_type": "a100-40gb"},
                          {"prefix": "cpu", "count": 4, "cpus": 64, "memory_gb": 256}],
                "partitions": [{"name": "gpu", "nodes": "gpu[001-032]", "default": true, "max_time": "14-00:00:00",
                                "default_time": "1:00:00"},
                               {"name": "legacy", "nodes": "old[001-004]", "state": "DOWN"},
                               {"name": "all", "nodes": "ALL", "max_time": "UNLIMITED"}]},
    "workload": {"synthetic": {"profile": "acme-seren", "jobs": 680, "load": 1.3, "partition": "gpu"}},
    "scheduler": {"policy": "slurm", "bf_interval": 30, "bf_max_job_test": 500}})";
}

TEST_F(StateOverviewTest, AGpuClusterPartWayThroughItsDay) {
  // 680 jobs on 32 H100 nodes offered 1.3x their capacity: a queue builds; four A100 nodes in a DOWN partition;
  // four nodes without GPUs (no type, so no framebuffer size); a partition over all three kinds. Checked at
  // four seconds from the first submits to after the last, with the per-GPU budget of a live snapshot (500,000 rows)
  // and a small one (5,000 rows: samples hours apart, so the sample shown is well before the second).
  bool saw_pending = false, saw_running = false, saw_partial_util = false;
  for (const std::int64_t until : {0L, 997L, 20'011L, 86'400L}) {
    SCOPED_TRACE(until);
    const StateOverview f = check(quickstart(), until);
    saw_pending |= f.overview.pending_jobs > 0;
    saw_running |= f.overview.running_jobs > 0;
    saw_partial_util |= f.overview.gpu_util_pct > 0 && f.overview.gpu_util_pct < 100;
    const StateOverview thin = check(quickstart(), until, 5'000);
    EXPECT_GE(thin.info.gpu_step_s, f.info.gpu_step_s);
  }
  // What the checks went through (else the equalities above could hold on empty figures).
  EXPECT_GT(saw_pending_reasons_, 0u);
  EXPECT_GT(placed_runs_, 0u);
  EXPECT_TRUE(saw_pending);
  EXPECT_TRUE(saw_running);
  EXPECT_TRUE(saw_partial_util);
}

std::string lifecycle(const std::string& extra) {
  return R"({"name": "lifecycle", "seed": 1,
    "cluster": {"nodes": [{"prefix": "n", "count": 3, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100"}],
                "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
    "workload": {"jobs": [
      {"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 5000, "time_limit": 600},
      {"id": 2, "submit": 10, "nodes": 1, "cpus": 8, "gpus_per_node": 4, "run_time": 5000, "time_limit": 600},
      {"id": 3, "submit": 20, "nodes": 1, "cpus": 80, "gpus_per_node": 1, "run_time": 100, "time_limit": 600},
      {"id": 4, "submit": 9000, "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 100, "time_limit": 600}]},
    "scheduler": {"policy": "slurm"})" +
         extra + "}";
}

TEST_F(StateOverviewTest, XidsRebootsAndRequeuesInTheNodeStatesAndGpuSamples) {
  // An XID 79 on n001 GPU 2 at 1,000 s crashes job 1 (requeued), the health check drains and reboots the node (its
  // exporter silent while REBOOTING: no GPU rows); an XID 48 on n002 GPU 5 at 2,000 s; job 3 asks for more CPUs
  // than a node has (REJECTED at submit); job 4 is submitted after the runs stop. Checked before, during and after
  // the reboot, at the 30 s metrics interval.
  const std::string text = lifecycle(R"(, "faults": {"HealthCheckInterval": 120, "inject": [
      {"time": 1000, "node": "n001", "xid": 79, "gpu": 2}, {"time": 2000, "node": "n002", "xid": 48, "gpu": 5}]})");
  bool saw_down = false, saw_xid = false, saw_unsampled = false;
  for (const std::int64_t until : {500L, 1'000L, 1'200L, 1'700L, 2'015L, 3'000L}) {
    SCOPED_TRACE(until);
    const StateOverview f = check(text, until);
    saw_down |= f.overview.node_groups[4] > 0;
    for (const NodeRow& n : f.nodes) {
      saw_xid |= n.xid != 0;
      saw_unsampled |= n.gpu_util_pct < 0;
    }
  }
  EXPECT_TRUE(saw_down);
  EXPECT_TRUE(saw_xid);
  EXPECT_TRUE(saw_unsampled);
}

TEST_F(StateOverviewTest, WithoutNodeHistoryOrMetrics) {
  // Without node history every node reads IDLE in the view; without per-GPU rows, or without metrics, GPU use is
  // unknown (-1, shown as null): the figures say the same.
  const StateOverview no_history = check(lifecycle(""), 2'000, 500'000, false);
  EXPECT_EQ(no_history.overview.idle_nodes, 3);
  const StateOverview no_per_gpu = check(lifecycle(R"(, "metrics": {"per_gpu": false})"), 2'000);
  EXPECT_EQ(no_per_gpu.overview.gpu_util_pct, -1);
  EXPECT_GT(no_per_gpu.info.gpu_step_s, 0);
  const StateOverview none = check(lifecycle(R"(, "metrics": {"enabled": false})"), 2'000);
  EXPECT_EQ(none.overview.gpu_util_pct, -1);
  EXPECT_EQ(none.info.gpu_step_s, 0);
  EXPECT_EQ(none.overview.running_jobs, 2);
}

TEST_F(StateOverviewTest, GpuIndicesOfAJobSpreadOverSharedNodes) {
  // Job 1 takes GPUs 0-3 of n01; job 2 (two nodes, four GPUs each) then gets 4-7 there and 0-3 of n02: its runs'
  // GPU indices differ per node, and job 3 (one GPU) lands where the binding leaves one.
  const std::string text = R"({"name": "shared", "seed": 1,
    "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 64, "memory_gb": 512, "gpus": 8, "gpu_type": "h100",
                           "digits": 2}],
                "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
    "workload": {"jobs": [
      {"id": 1, "nodes": 1, "cpus": 8, "gpus_per_node": 4, "run_time": 5000, "time_limit": 6000},
      {"id": 2, "submit": 10, "nodes": 2, "cpus": 16, "gpus_per_node": 4, "run_time": 5000, "time_limit": 6000},
      {"id": 3, "submit": 20, "nodes": 1, "cpus": 8, "gpus_per_node": 1, "run_time": 5000, "time_limit": 6000}]},
    "scheduler": {"policy": "fcfs"}})";
  const StateOverview f = check(text, 100);
  EXPECT_EQ(f.overview.running_jobs, 3);
}

TEST_F(StateOverviewTest, ProfiledLoadsBelowFullUse) {
  // A data-parallel profile on jobs of 16 GPUs: their GPUs are busy below 100% (the speed model's reference load,
  // scaled by the run's speed once it completed), on a fat tree.
  const std::string text = R"({"name": "profiled", "seed": 3,
    "cluster": {"nodes": [{"prefix": "n", "count": 4, "cpus": 8, "memory_gb": 64, "gpus": 8, "gpu_type": "h100",
                           "digits": 2}],
                "partitions": [{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "UNLIMITED"}],
                "topology": {"fat_tree": {"nodes_per_leaf": 2, "leaves_per_spine": 2}}},
    "workload": {"jobs": [
      {"id": 1, "user": "u1", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 1000, "time_limit": 2000},
      {"id": 2, "user": "u1", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 500, "time_limit": 2000},
      {"id": 3, "user": "u2", "nodes": 2, "cpus": 16, "gpus_per_node": 8, "run_time": 3000, "time_limit": 4000,
       "submit": 100},
      {"id": 4, "user": "u2", "nodes": 1, "cpus": 8, "gpus_per_node": 8, "run_time": 2000, "time_limit": 3000,
       "submit": 50}]},
    "scheduler": {"policy": "fcfs"},
    "metrics": {"interval_s": 60},
    "performance": {"profiles": [{"name": "dp", "min_gpus": 16,
                                  "data_parallel": {"parameters_billion": 7, "compute_s": 2.0, "overlap": 0.5}}]}})";
  bool partial = false;
  for (const std::int64_t until : {300L, 1'830L, 2'500L}) {
    SCOPED_TRACE(until);
    for (const NodeRow& n : check(text, until).nodes) partial |= n.gpu_util_pct > 0 && n.gpu_util_pct < 99;
  }
  EXPECT_TRUE(partial);
}

}  // namespace
}  // namespace gputwin
