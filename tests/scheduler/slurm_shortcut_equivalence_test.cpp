// The `slurm` policy's shortcuts on small random overloaded workloads: the same starts, ends and node lists as
// the plain algorithm (shortcuts off), with every indexed will-run answer replayed (cross_check_will_run throws on
// a disagreement). Mixes floating requests (nodes = 0, the CPUs decide: SWF traces), fixed node counts, GPUs,
// exclusive jobs, a second partition, jobs killed at their limit, epilogs and several backfill depths and resolutions,
// so the release index's floating form and the backfill start bound (issue 16) are exercised against the plain cycle.
// The second test turns each backfill shortcut of the second round off in turn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>

#include "model/scenario.hpp"
#include "sim/runner.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;

std::string schedule_text(const RunOutcome& o) {
  std::ostringstream out;
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    const auto& rt = o.state->job(j);
    out << o.state->spec(j).id << ' ' << rt.start << ' ' << rt.end << ' ' << job_state_name(rt.state) << ' '
        << job_node_list(*o.state, j) << '\n';
  }
  return out.str();
}

struct Case {
  Scenario scenario;
  std::vector<JobSpec> jobs;
};

Case random_case(std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {  // uniform in [lo, hi]
    return lo + rng() % (hi - lo + 1);
  };
  // Mostly small clusters; one in four has 64-160 nodes, so the floating will-run's whole blocks of 64 CPU steps
  // are used too.
  const auto nodes = static_cast<std::uint32_t>(pick(0, 3) == 0 ? pick(64, 160) : pick(3, 24));
  const std::uint32_t cpus_choices[] = {1, 1, 2, 4, 8};
  const std::uint32_t cpus = cpus_choices[pick(0, 4)];
  const std::uint32_t gpus = pick(0, 2) == 0 ? 4 : 0;
  Case c{make_scenario(nodes, cpus, gpus, SchedulerPolicy::kSlurm), {}};
  SlurmParameters& p = c.scenario.scheduler.slurm;
  const std::uint32_t depths[] = {3, 20, 500};
  p.bf_max_job_test = depths[pick(0, 2)];
  p.bf_resolution_s = pick(0, 1) == 0 ? 60 : static_cast<std::int64_t>(pick(1, 90));
  p.bf_interval_s = static_cast<std::int64_t>(pick(5, 60));
  p.epoch_unix_s = static_cast<std::int64_t>(pick(0, 1) == 0 ? 0 : 1795548000 + pick(0, 3599));
  p.bf_window_min = pick(0, 3) == 0 ? 30 : 1440;
  if (pick(0, 3) == 0) p.bf_max_job_start = static_cast<std::uint32_t>(pick(1, 3));
  // Nodes COMPLETING after a job: a job leaves the running list before its resources come back, so a cycle can see
  // the same running jobs on changed nodes.
  if (pick(0, 2) == 0) p.epilog_s = static_cast<std::int64_t>(pick(1, 90));
  const bool two_partitions = nodes >= 4 && pick(0, 2) == 0;
  if (two_partitions) {  // "small": the first half of the nodes, beside "batch" (all)
    PartitionConfig small;
    small.name = "small";
    for (NodeIndex i = 0; i < nodes / 2; ++i) small.nodes.push_back(i);
    c.scenario.cluster.partitions.push_back(small);
  }
  const auto count = static_cast<std::uint32_t>(pick(80, 220));
  std::int64_t t = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    t += static_cast<std::int64_t>(pick(0, 90));  // overloaded: the queue grows
    const std::int64_t limit = static_cast<std::int64_t>(pick(1, 40)) * 60 + static_cast<std::int64_t>(pick(0, 59));
    std::int64_t run = static_cast<std::int64_t>(pick(1, static_cast<std::uint64_t>(limit)));
    if (pick(0, 9) == 0) run = limit + static_cast<std::int64_t>(pick(1, 300));  // killed at its limit
    JobSpec j;
    const std::uint64_t shape = pick(0, 9);
    if (shape < 6) {  // floating: CPUs only (an SWF job)
      j = make_job(i + 1, t, 0, static_cast<std::uint32_t>(pick(1, nodes * cpus)), 0, limit, run);
    } else if (shape < 9) {  // fixed node count
      const auto n = static_cast<std::uint32_t>(pick(1, std::max<std::uint32_t>(1, nodes / 2)));
      j = make_job(i + 1, t, n, n * static_cast<std::uint32_t>(pick(1, cpus)),
                   gpus > 0 ? static_cast<std::uint32_t>(pick(0, gpus)) : 0, limit, run);
    } else {  // exclusive
      const auto n = static_cast<std::uint32_t>(pick(0, 2));
      j = make_job(i + 1, t, n, n > 0 ? n : static_cast<std::uint32_t>(pick(1, cpus * 2)), 0, limit, run);
      j.exclusive = true;
    }
    if (two_partitions && pick(0, 2) == 0) j.partition = "small";
    c.jobs.push_back(j);
  }
  return c;
}

// Seeds to run: 60, or GPUTWIN_EQUIVALENCE_SEEDS (a run of many more seeds, by hand).
std::uint32_t seed_count() {
  const char* v = std::getenv("GPUTWIN_EQUIVALENCE_SEEDS");
  return v != nullptr ? static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10)) : 60;
}

TEST(SlurmShortcutEquivalence, RandomOverloadedWorkloadsGiveThePlainSchedule) {
  std::uint64_t plain_tests = 0, fast_tests = 0, compared = 0;
  const std::uint32_t seeds = seed_count();
  for (std::uint32_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Case c = random_case(seed);
    Scenario plain = c.scenario;
    plain.scheduler.slurm.shortcuts = false;
    Scenario fast = c.scenario;
    fast.scheduler.slurm.shortcuts = true;
    fast.scheduler.slurm.cross_check_will_run = true;
    const RunOutcome p = run_jobs(plain, c.jobs, RunOptions{});
    const RunOutcome f = run_jobs(fast, c.jobs, RunOptions{});
    ASSERT_EQ(schedule_text(p), schedule_text(f)) << "seed " << seed;
    plain_tests += p.scheduler_stats.jobs_tested;
    fast_tests += f.scheduler_stats.jobs_tested;
    compared += p.summary.started;
  }
  EXPECT_GT(compared, 3000u);              // the workloads did run
  EXPECT_LT(fast_tests * 2, plain_tests);  // and the shortcuts did skip tests
}

// Each backfill shortcut of issue 16's second round (a node choice skipped when counts show it overlaps, one scratch
// moved between will-run keys, the release index and first-records scan kept between cycles, the CPU-count test
// before will-run) on its own switch: with all of them on but no will-run cross-check (so only the schedule can tell)
// and with each one off, the schedule must be the plain algorithm's.
TEST(SlurmShortcutEquivalence, EachBackfillShortcutOnOrOffGivesThePlainSchedule) {
  const std::uint32_t seeds = seed_count();
  using Switch = bool SlurmParameters::*;
  const Switch switches[] = {&SlurmParameters::shortcut_overlap_by_count, &SlurmParameters::shortcut_key_scratch,
                             &SlurmParameters::shortcut_keep_index, &SlurmParameters::shortcut_cpu_count};
  for (std::uint32_t seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Case c = random_case(seed);
    Scenario plain = c.scenario;
    plain.scheduler.slurm.shortcuts = false;
    const std::string expected = schedule_text(run_jobs(plain, c.jobs, RunOptions{}));
    Scenario fast = c.scenario;
    fast.scheduler.slurm.shortcuts = true;
    ASSERT_EQ(expected, schedule_text(run_jobs(fast, c.jobs, RunOptions{}))) << "seed " << seed << ", all on";
    for (std::size_t k = 0; k < std::size(switches); ++k) {
      Scenario one_off = fast;
      one_off.scheduler.slurm.*switches[k] = false;
      ASSERT_EQ(expected, schedule_text(run_jobs(one_off, c.jobs, RunOptions{})))
          << "seed " << seed << ", switch " << k << " off";
    }
  }
}

// Jobs requeued by faults, by a restart of every worker and by spot reclaims, then started again: the running list held
// a job that restarted after skipped backfill cycles twice (skipped cycles do not refresh it; the plain cycle does
// every bf_interval), so will-run released its nodes twice and the shortcuts changed both schedules.
TEST(SlurmShortcutEquivalence, JobsRequeuedAndStartedAgainGiveThePlainSchedule) {
  const std::string dir = std::string(GPUTWIN_SOURCE_DIR) + "/scenarios/";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"health-check-interval.json",
       {"/cluster/nodes/0/count=64", "/workload/synthetic/jobs=3000", "/faults/rate_scale=50",
        R"(/faults/lemons={"fraction":0.05,"rate_multiplier":5,"preserve_fleet_rate":false})"}},
      {"quickstart.json",
       {R"(/operations=[{"time":10000,"action":"update_image","image":"pytorch-24.05"},)"
        R"({"time":15000,"action":"add_nodes","nodes":"gpu[029-032]","cold_start_s":300},)"
        R"({"time":"05:00:00","action":"attach_volume","volume":"datasets"},)"
        R"({"time":30000,"action":"restart_workers"},)"
        R"({"time":40000,"action":"maintenance","nodes":"gpu[001-004]","duration":"02:00:00"},)"
        R"({"time":150000,"action":"remove_nodes","nodes":"gpu[025-028]"}])"}},
      {"autoscale-idle-window.json",  // spot reclaims requeue jobs on an autoscaled pool
       {R"(/cost/prices=[{"nodes":"gpu[001-064]","usd_per_gpu_hour":3,"model":"on_demand"},)"
        R"({"nodes":"gpu[065-128]","usd_per_node_hour":10,"model":"spot"}])",
        "/cost/spot_interruptions_per_node_day=2", "/cost/spot_notice_s=60"}},
  };
  for (const auto& [file, overrides] : cases) {
    SCOPED_TRACE(file);
    Scenario plain = load_scenario(dir + file, overrides);
    plain.scheduler.slurm.shortcuts = false;
    Scenario fast = load_scenario(dir + file, overrides);
    fast.scheduler.slurm.shortcuts = true;
    const RunOutcome p = run_scenario(std::move(plain), RunOptions{});
    const RunOutcome f = run_scenario(std::move(fast), RunOptions{});
    std::uint64_t restarts = 0;
    for (JobIndex j = 0; j < p.state->job_count(); ++j) restarts += p.state->job(j).restarts;
    EXPECT_GE(restarts, 3u);  // jobs did run again
    const std::string plain_text = schedule_text(p), fast_text = schedule_text(f);
    const auto first = std::mismatch(plain_text.begin(), plain_text.end(), fast_text.begin(), fast_text.end());
    const auto line_at = [](const std::string& text, std::string::const_iterator at) {
      const auto from = text.rfind('\n', static_cast<std::size_t>(at - text.begin()));
      const std::size_t begin = from == std::string::npos ? 0 : from + 1;
      return text.substr(begin, text.find('\n', begin) - begin);
    };
    EXPECT_TRUE(first.first == plain_text.end() && first.second == fast_text.end())
        << "first difference: plain '" << line_at(plain_text, first.first) << "', shortcuts '"
        << line_at(fast_text, first.second) << "'";
  }
}

}  // namespace
}  // namespace gputwin
