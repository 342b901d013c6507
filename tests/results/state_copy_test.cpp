// The copies a live run makes of the simulation's state (ClusterState::assign_copy, RunRecorder::assign_copy): equal
// to the source, and made into the copy's own memory again when the source has grown since the last copy.
#include <gtest/gtest.h>

#include <vector>

#include "model/cluster_state.hpp"
#include "results/recorder.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;

/// Starts job `j` on node `node` with one CPU.
void start_on(ClusterState& state, JobIndex j, NodeIndex node, SimTime now) {
  const NodeAllocation a{node, 1, 0, 0};
  state.allocate(j, std::span<const NodeAllocation>(&a, 1), now);
}

TEST(StateCopy, ACopyIntoEarlierMemoryEqualsTheSourceAndStaysInPlaceAsTheSourceGrows) {
  const Scenario scenario = make_scenario(4, 16, 0, SchedulerPolicy::kFcfs);
  std::vector<JobSpec> jobs;
  for (std::uint64_t id = 1; id <= 200; ++id) jobs.push_back(make_job(id, 0, 1, 1, 0, 60, 60));
  ClusterState source(scenario.cluster, jobs);
  RunRecorder recorder(true, true);
  // Started one by one, so the allocation pool and the node history grow by doubling, as in a run.
  JobIndex next = 0;
  const auto run_some = [&](JobIndex count) {
    for (JobIndex k = 0; k < count; ++k, ++next) {
      start_on(source, next, next % 4, next);
      recorder.on_node_state(next % 4, NodeState::kMixed, next);  // one event each: no two merge
      recorder.on_job_reason(next, PendingReason::kPriority, next);
    }
  };
  run_some(40);
  ClusterState copy(scenario.cluster, {});
  RunRecorder copied(true, true);
  copy.assign_copy(source, scenario.cluster);
  copied.assign_copy(recorder);
  // Grow the sources, within the room they already have (as between two copies of a long run).
  const std::size_t pool_room = source.allocation_pool().size();
  run_some(10);
  ASSERT_GT(source.allocation_pool().size(), pool_room);
  const NodeAllocation* pool_before = copy.allocation_pool().data();
  const NodeEvent* events_before = copied.node_events().data();
  const ReasonEvent* reasons_before = copied.reason_events().data();
  copy.assign_copy(source, scenario.cluster);
  copied.assign_copy(recorder);
  // Into the same memory: without room kept at the first copy, each vector would have been allocated anew.
  EXPECT_EQ(copy.allocation_pool().data(), pool_before);
  EXPECT_EQ(copied.node_events().data(), events_before);
  EXPECT_EQ(copied.reason_events().data(), reasons_before);
  // And equal to the source.
  ASSERT_EQ(copy.job_count(), source.job_count());
  for (JobIndex j = 0; j < source.job_count(); ++j) {
    EXPECT_EQ(copy.job(j).state, source.job(j).state) << j;
    EXPECT_EQ(copy.job(j).start, source.job(j).start) << j;
    ASSERT_EQ(copy.allocation(j).size(), source.allocation(j).size()) << j;
    for (std::size_t k = 0; k < source.allocation(j).size(); ++k)
      EXPECT_EQ(copy.allocation(j)[k].node, source.allocation(j)[k].node);
  }
  EXPECT_EQ(std::vector<std::uint32_t>(copy.free_cpus().begin(), copy.free_cpus().end()),
            std::vector<std::uint32_t>(source.free_cpus().begin(), source.free_cpus().end()));
  ASSERT_EQ(copied.node_events().size(), recorder.node_events().size());
  ASSERT_EQ(copied.reason_events().size(), recorder.reason_events().size());
  for (std::size_t i = 0; i < recorder.node_events().size(); ++i) {
    EXPECT_EQ(copied.node_events()[i].time, recorder.node_events()[i].time);
    EXPECT_EQ(copied.node_events()[i].node, recorder.node_events()[i].node);
  }
  for (std::size_t i = 0; i < recorder.reason_events().size(); ++i)
    EXPECT_EQ(copied.reason_events()[i].job, recorder.reason_events()[i].job);
}

}  // namespace
}  // namespace gputwin
