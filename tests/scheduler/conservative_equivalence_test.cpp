// The kept conservative plan (shortcuts on) must give exactly the schedule of the plain algorithm (shortcuts off:
// every queued job re-planned on a rebuilt profile at every pass): the same start time and the same nodes and
// resources for every job. Random small clusters and traces, many seeds, reaching each path of the kept plan:
// passes after submissions only (new jobs placed on the kept profile), jobs that end at their limit (the plan
// holds) or before it (a re-plan from the first job not proven unchanged), jobs killed past their limit and an
// epilog that holds nodes past a job's expected end (the profile rebuilt), several partitions, exclusive, GPU
// and memory requests, node weights. A failure prints the seed and the job table, small enough to check by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <sstream>

#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;

// One random case: a cluster of 3-8 nodes and 6-40 jobs.
struct Case {
  Scenario scenario;
  std::vector<JobSpec> jobs;
};

Case random_case(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto nodes = static_cast<std::uint32_t>(pick(3, 8));
  const auto cpus = static_cast<std::uint32_t>(pick(0, 2) == 0 ? 1 : pick(1, 4));
  const auto gpus = static_cast<std::uint32_t>(pick(0, 2) == 0 ? pick(1, 4) : 0);
  Case c{make_scenario(nodes, cpus, gpus, SchedulerPolicy::kConservative), {}};
  for (NodeConfig& n : c.scenario.cluster.nodes) {
    n.memory_mb = 4096;
    if (pick(0, 3) == 0) n.weight = static_cast<std::uint32_t>(pick(1, 3));
  }
  if (pick(0, 2) == 0) {  // a second, overlapping partition over the upper half of the nodes
    PartitionConfig p;
    p.name = "half";
    for (NodeIndex i = nodes / 2; i < nodes; ++i) p.nodes.push_back(i);
    c.scenario.cluster.partitions.push_back(p);
  }
  if (pick(0, 3) == 0) c.scenario.scheduler.slurm.epilog_s = pick(1, 30);
  const int count = pick(6, 40);
  const int spread = pick(50, 600);  // submit times over [0, spread): small spreads make long queues
  for (int k = 0; k < count; ++k) {
    const auto job_nodes = static_cast<std::uint32_t>(pick(0, 3) == 0 ? 0 : pick(1, static_cast<int>(nodes)));
    const std::uint32_t job_cpus = job_nodes == 0
                                       ? static_cast<std::uint32_t>(pick(1, static_cast<int>(cpus * 2)))
                                       : job_nodes * static_cast<std::uint32_t>(pick(1, static_cast<int>(cpus)));
    const std::uint32_t job_gpus = gpus > 0 && pick(0, 1) == 0 ? static_cast<std::uint32_t>(pick(0, 2)) : 0;
    const std::int64_t limit = pick(1, 20) * 10;
    // Run times: early (most), exactly the limit, or past it (killed at the limit).
    const int kind = pick(0, 5);
    const std::int64_t run = kind == 0 ? limit : kind == 1 ? limit + 50 : pick(1, static_cast<int>(limit));
    JobSpec j = make_job(static_cast<std::uint64_t>(k + 1), pick(0, spread), job_nodes, job_cpus, job_gpus, limit, run);
    if (pick(0, 5) == 0) j.exclusive = true;
    if (pick(0, 4) == 0) j.mem_per_node_mb = static_cast<std::uint64_t>(pick(1, 4)) * 1024;
    if (c.scenario.cluster.partitions.size() > 1 && pick(0, 2) == 0) j.partition = "half";
    c.jobs.push_back(j);
  }
  return c;
}

// Every job's start time and allocation, one line each: what the two algorithms must agree on.
std::string schedule(const RunOutcome& o) {
  std::ostringstream out;
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    out << "job " << o.state->spec(j).id << " start "
        << (o.state->job(j).start >= 0 ? to_seconds(o.state->job(j).start) : -1) << " on";
    for (const NodeAllocation& a : o.state->allocation(j)) {
      out << " n" << a.node << ":" << a.cpus << "c" << a.gpus << "g" << a.mem_mb << "m";
    }
    out << "\n";
  }
  return out.str();
}

// The case as a table to check by hand: cluster and every job's request.
std::string describe(const Case& c) {
  std::ostringstream out;
  const NodeConfig& n = c.scenario.cluster.nodes.front();
  out << c.scenario.cluster.nodes.size() << " nodes x " << n.cpus << " CPUs, " << n.gpus << " GPUs; weights";
  for (const NodeConfig& node : c.scenario.cluster.nodes) out << " " << node.weight;
  out << "; partitions " << c.scenario.cluster.partitions.size() << "; epilog " << c.scenario.scheduler.slurm.epilog_s
      << " s\n";
  for (const JobSpec& j : c.jobs) {
    out << "  job " << j.id << ": submit " << j.submit_s << ", nodes " << j.nodes << ", cpus " << j.cpus
        << ", gpus/node " << j.gpus_per_node << ", mem/node " << j.mem_per_node_mb << ", limit " << j.time_limit_s
        << ", run " << j.run_time_s << (j.exclusive ? ", exclusive" : "") << (j.partition.empty() ? "" : ", half")
        << "\n";
  }
  return out.str();
}

// Seeds to run: `fallback`, or GPUTWIN_EQUIVALENCE_SEEDS (a run of many more seeds, by hand).
std::uint32_t seed_count(std::uint32_t fallback) {
  const char* v = std::getenv("GPUTWIN_EQUIVALENCE_SEEDS");
  return v != nullptr ? static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}

std::string run_schedule(Case c, bool shortcuts) {
  c.scenario.scheduler.slurm.shortcuts = shortcuts;
  return schedule(run_jobs(c.scenario, c.jobs, RunOptions{}));
}

TEST(ConservativeEquivalence, KeptPlanGivesThePlainAlgorithmsScheduleOnRandomTraces) {
  for (std::uint32_t seed = 1; seed <= seed_count(2000); ++seed) {
    const Case c = random_case(seed);
    const std::string plain = run_schedule(c, false);
    const std::string kept = run_schedule(c, true);
    ASSERT_EQ(plain, kept) << "seed " << seed << "\n" << describe(c);
  }
}

TEST(ConservativeEquivalence, LongQueuesOnSingleCpuNodes) {
  // The overloaded-replay shape: single-CPU nodes, arrivals much faster than the machine drains them.
  for (std::uint32_t seed = 1; seed <= seed_count(60); ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Case c{make_scenario(16, 1, 0, SchedulerPolicy::kConservative), {}};
    for (int k = 0; k < 120; ++k) {
      const std::int64_t limit = pick(1, 60) * 10;
      const std::int64_t run = pick(0, 4) == 0 ? limit : pick(1, static_cast<int>(limit));
      const auto n = static_cast<std::uint32_t>(pick(0, 2) == 0 ? pick(1, 16) : pick(1, 3));
      c.jobs.push_back(make_job(static_cast<std::uint64_t>(k + 1), pick(0, 2000), n, n, 0, limit, run));
    }
    ASSERT_EQ(run_schedule(c, false), run_schedule(c, true)) << "seed " << seed << "\n" << describe(c);
  }
}

TEST(ConservativeEquivalence, MixedNodesAndLateGpuOrMemoryRequests) {
  // The profile's own shortcuts: a window's one-CPU nodes take 1 as their minimum unread, so one-CPU nodes sit
  // between nodes of 2-4 CPUs; the GPU and memory columns stay the reset's values until an allocation holding
  // some is applied, so most jobs ask for neither and a few, anywhere in the trace, ask for GPUs or memory (the
  // columns start to vary mid-plan, after rebuilds and in kept profiles). Long queues, most jobs ending early,
  // so most passes rebuild the profile a job planned again sees in one sweep (AvailabilityProfile::rebuild).
  for (std::uint32_t seed = 1; seed <= seed_count(300); ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const auto nodes = static_cast<std::uint32_t>(pick(4, 12));
    Case c{make_scenario(nodes, 1, 0, SchedulerPolicy::kConservative), {}};
    const bool gpus = pick(0, 1) == 0;
    for (NodeConfig& n : c.scenario.cluster.nodes) {
      n.cpus = pick(0, 1) == 0 ? 1 : static_cast<std::uint32_t>(pick(2, 4));
      n.gpus = gpus ? static_cast<std::uint32_t>(pick(1, 2)) : 0;
      n.memory_mb = 4096;
    }
    if (pick(0, 3) == 0) c.scenario.scheduler.slurm.epilog_s = pick(1, 20);
    const int count = pick(20, 60);
    for (int k = 0; k < count; ++k) {
      const std::int64_t limit = pick(1, 40) * 10;
      const std::int64_t run = pick(0, 4) == 0 ? limit : pick(1, static_cast<int>(limit));
      const bool by_nodes = pick(0, 3) == 0;
      const auto n = static_cast<std::uint32_t>(pick(1, static_cast<int>(nodes)));
      JobSpec j = by_nodes ? make_job(static_cast<std::uint64_t>(k + 1), pick(0, 800), n, n, 0, limit, run)
                           : make_job(static_cast<std::uint64_t>(k + 1), pick(0, 800), 0,
                                      static_cast<std::uint32_t>(pick(1, static_cast<int>(nodes * 2))), 0, limit, run);
      if (pick(0, 9) == 0) {  // a rare request that makes a column vary
        if (gpus && by_nodes) j.gpus_per_node = 1;
        if (!gpus || pick(0, 1) == 0) j.mem_per_node_mb = static_cast<std::uint64_t>(pick(1, 4)) * 1024;
      }
      if (pick(0, 9) == 0) j.exclusive = true;
      c.jobs.push_back(j);
    }
    ASSERT_EQ(run_schedule(c, false), run_schedule(c, true)) << "seed " << seed << "\n" << describe(c);
  }
}

TEST(ConservativeEquivalence, ReservationBeginningAtAnEarlyEnd) {
  // 2 nodes x 1 CPU. A (n0) and B (n1) run from 0 with limit 100; C needs both nodes, so it reserves [100, 150),
  // beginning at A's (and B's) expected end; D (1 node, 60 s) reserves [150, 210). A ends early at 30: the
  // boundary at 100 that C's reservation begins on loses one of its sources (B's end keeps it), so C is planned
  // again and keeps [100, 150); D now fits on n0 in [30, 90) and starts at 30. By hand: A 0 n0, B 0 n1, C 100
  // n0 n1, D 30 n0.
  Case c{make_scenario(2, 1, 0, SchedulerPolicy::kConservative), {}};
  c.jobs.push_back(make_job(1, 0, 1, 1, 0, 100, 30));   // A
  c.jobs.push_back(make_job(2, 0, 1, 1, 0, 100, 100));  // B
  c.jobs.push_back(make_job(3, 1, 2, 2, 0, 50, 50));    // C
  c.jobs.push_back(make_job(4, 2, 1, 1, 0, 60, 60));    // D
  const std::string expected =
      "job 1 start 0 on n0:1c0g0m\njob 2 start 0 on n1:1c0g0m\njob 3 start 100 on n0:1c0g0m n1:1c0g0m\n"
      "job 4 start 30 on n0:1c0g0m\n";
  EXPECT_EQ(run_schedule(c, false), expected);
  EXPECT_EQ(run_schedule(c, true), expected);
  // The same with B ending early too, at 60: the boundary at 100 loses its last source, so C cannot begin there;
  // n1 is free from 60 and n0 once D ends at 90 (its expected end, a boundary), so C starts at 90.
  c.jobs[1].run_time_s = 60;
  const std::string plain = run_schedule(c, false);
  EXPECT_EQ(run_schedule(c, true), plain);
  EXPECT_NE(plain.find("job 3 start 90 on n0:1c0g0m n1:1c0g0m"), std::string::npos) << plain;
}

}  // namespace
}  // namespace gputwin
