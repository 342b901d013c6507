// Helpers for tests: small clusters and jobs built in code, and running them through the real runner.
#pragma once

#include <string>
#include <vector>

#include "model/errors.hpp"
#include "model/scenario.hpp"
#include "sim/runner.hpp"

namespace gputwin::testing {

/// The message of the ScenarioError `build()` throws, or "no error" (scenario error tests).
template <typename Build>
std::string scenario_error(Build&& build) {
  try {
    build();
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

/// A scenario with `count` identical nodes named n001.. in one partition "batch" (default), policy `policy`.
inline Scenario make_scenario(std::uint32_t count, std::uint32_t cpus, std::uint32_t gpus, SchedulerPolicy policy) {
  Scenario s;
  s.name = "test";
  for (std::uint32_t i = 0; i < count; ++i) {
    NodeConfig n;
    n.name = "n" + std::string(i + 1 < 10 ? "00" : (i + 1 < 100 ? "0" : "")) + std::to_string(i + 1);
    n.cpus = cpus;
    n.gpus = gpus;
    n.memory_mb = 1024ULL * 1024;
    s.cluster.nodes.push_back(n);
  }
  PartitionConfig p;
  p.name = "batch";
  p.is_default = true;
  for (NodeIndex i = 0; i < count; ++i) p.nodes.push_back(i);
  s.cluster.partitions.push_back(p);
  s.scheduler.policy = policy;
  return s;
}

/// A tree over 8 nodes: leaf s0 = nodes 0-3, leaf s1 = nodes 4-7, root s2 above both (2 hops between leaves).
inline SlurmTopology two_leaf_tree() {
  SlurmTopology t;
  t.kind = TopologyKind::kTree;
  t.switches = {{"s0", 0, 2, {}, {0, 1, 2, 3}, ""},
                {"s1", 0, 2, {}, {4, 5, 6, 7}, ""},
                {"s2", 1, -1, {0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}, ""}};
  t.switch_distance = {{0, 2, 1}, {2, 0, 1}, {1, 1, 0}};
  t.leaf_of_node = {0, 0, 0, 0, 1, 1, 1, 1};
  return t;
}

/// A job: id, submit time, exact nodes (0 = floating), CPUs, GPUs per node, time limit and run time (s).
inline JobSpec make_job(std::uint64_t id, std::int64_t submit, std::uint32_t nodes, std::uint32_t cpus,
                        std::uint32_t gpus_per_node, std::int64_t limit, std::int64_t run) {
  JobSpec j;
  j.id = id;
  j.name = "j" + std::to_string(id);
  j.user = "u";
  j.account = "a";
  j.submit_s = submit;
  j.nodes = nodes;
  j.cpus = cpus;
  j.gpus_per_node = gpus_per_node;
  j.time_limit_s = limit;
  j.run_time_s = run;
  return j;
}

/// Start times (seconds) of the jobs of a finished run, by job id order of the input; -1 if never started.
inline std::vector<std::int64_t> start_times(const RunOutcome& o) {
  std::vector<std::pair<std::uint64_t, std::int64_t>> by_id;
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    by_id.emplace_back(o.state->spec(j).id, o.state->job(j).start >= 0 ? to_seconds(o.state->job(j).start) : -1);
  }
  std::sort(by_id.begin(), by_id.end());
  std::vector<std::int64_t> out;
  for (auto& [id, t] : by_id) out.push_back(t);
  return out;
}

/// Node lists of the jobs by id order.
inline std::vector<std::string> node_lists(const RunOutcome& o) {
  std::vector<std::pair<std::uint64_t, std::string>> by_id;
  for (JobIndex j = 0; j < o.state->job_count(); ++j)
    by_id.emplace_back(o.state->spec(j).id, job_node_list(*o.state, j));
  std::sort(by_id.begin(), by_id.end());
  std::vector<std::string> out;
  for (auto& [id, s] : by_id) out.push_back(s);
  return out;
}

}  // namespace gputwin::testing
