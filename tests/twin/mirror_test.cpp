// The mirror: node states in sinfo's terms, the history of changes across polls, and job specs from records.
#include "twin/mirror.hpp"

#include <gtest/gtest.h>

#include "tests/twin/twin_fixtures.hpp"

namespace gputwin {
namespace {

using test::gpu_node;
using test::gpu_partition;
using test::pending_job;
using test::running_job;

RestNode with_flags(RestNode n, std::vector<std::string> flags) {
  n.flags = std::move(flags);
  return n;
}

TEST(MirrorNodeState, FlagsAndBaseStateGiveSinfosState) {
  EXPECT_EQ(node_state_of(gpu_node("a")), NodeState::kIdle);
  EXPECT_EQ(node_state_of(gpu_node("a", "MIXED")), NodeState::kMixed);
  EXPECT_EQ(node_state_of(with_flags(gpu_node("a"), {"DRAIN"})), NodeState::kDrained);
  EXPECT_EQ(node_state_of(with_flags(gpu_node("a", "MIXED"), {"DRAIN"})), NodeState::kDraining);
  EXPECT_EQ(node_state_of(with_flags(gpu_node("a", "DOWN"), {"NOT_RESPONDING"})), NodeState::kDown);
  EXPECT_EQ(node_state_of(with_flags(gpu_node("a"), {"POWERED_DOWN"})), NodeState::kPoweredDown);
  EXPECT_EQ(node_state_of(with_flags(gpu_node("a"), {"REBOOT_ISSUED"})), NodeState::kRebooting);
  EXPECT_EQ(node_state_of(with_flags(gpu_node("a", "ALLOCATED"), {"FAIL"})), NodeState::kFailing);
  EXPECT_EQ(node_condition_of(with_flags(gpu_node("a"), {"DRAIN"})), NodeCondition::kDrain);
  EXPECT_EQ(node_condition_of(gpu_node("a", "DOWN")), NodeCondition::kDown);
  EXPECT_EQ(node_condition_of(gpu_node("a", "ALLOCATED")), NodeCondition::kNone);
}

TEST(MirrorTres, CountsAndMemoryUnits) {
  EXPECT_EQ(tres_count("cpu=16,mem=64G,node=2,billing=16,gres/gpu=16", "node"), 2u);
  EXPECT_EQ(tres_count("cpu=16,mem=64G,node=2", "mem"), 65536u);
  EXPECT_EQ(tres_count("cpu=16,mem=500M", "mem"), 500u);
  EXPECT_EQ(tres_count("cpu=16,mem=64G,node=2,gres/gpu=16", "gres/gpu"), 16u);
  EXPECT_FALSE(tres_count("cpu=16", "node").has_value());
  EXPECT_FALSE(tres_count("node=x", "node").has_value());
}

TEST(Mirror, FirstPollBuildsTheConfigurationAndHistory) {
  Mirror m;
  RestNode drained = with_flags(gpu_node("gpu02"), {"DRAIN"});
  drained.reason = "XID 79";
  const PollChanges c =
      m.apply(Snapshot{1000,
                       {gpu_node("gpu01"), drained},
                       {gpu_partition("gpu[01-02]")},
                       {running_job(7, "alice", "gpu01", 900, 600), pending_job(8, "bob", 950, 600, 5)}});
  EXPECT_EQ(m.epoch(), 890);  // job 7's submit (running_job submits 10 s before its start)
  EXPECT_EQ(c.nodes_added, 2u);
  EXPECT_EQ(c.jobs_new, 2u);
  ASSERT_EQ(c.started.size(), 1u);
  EXPECT_EQ(c.started[0], 7u);
  ASSERT_EQ(m.config().nodes.size(), 2u);
  EXPECT_EQ(m.config().nodes[1].gpus, 8u);
  ASSERT_EQ(m.config().partitions.size(), 1u);
  EXPECT_EQ(m.config().partitions[0].nodes, (std::vector<NodeIndex>{0, 1}));
  ASSERT_EQ(m.node_history().size(), 2u);
  EXPECT_EQ(m.node_history()[1].state, NodeState::kDrained);
  EXPECT_EQ(m.node_history()[1].reason, "XID 79");
  EXPECT_EQ(m.job_history().size(), 2u);
}

// fuzz_rest_reply: a reply whose node list is not a hostlist ("gpu[01-") threw std::invalid_argument out of the
// mirror; it names no node of ours now, as a list of names the cluster does not have.
TEST(Mirror, ANodeListThatIsNotAHostlistNamesNoNode) {
  Mirror m;
  (void)m.apply(Snapshot{1000, {gpu_node("gpu01"), gpu_node("gpu02")}, {gpu_partition("gpu[01-02]")}, {}});
  EXPECT_EQ(m.nodes_of("gpu[01-02]"), (std::vector<NodeIndex>{0, 1}));
  EXPECT_TRUE(m.nodes_of("gpu[01-").empty());
  EXPECT_TRUE(m.nodes_of("gpu[02-01]").empty());
  const JobSpec spec = m.job_spec(running_job(7, "alice", "gpu[01-", 900, 600), 0);
  EXPECT_EQ(spec.nodes, 1u);
}

TEST(Mirror, LaterPollsRecordOnlyChanges) {
  Mirror m;
  m.apply(Snapshot{1000, {gpu_node("gpu01")}, {gpu_partition("gpu01")}, {pending_job(8, "bob", 950, 600, 5)}});
  // Same again: nothing changes.
  PollChanges c =
      m.apply(Snapshot{1030, {gpu_node("gpu01")}, {gpu_partition("gpu01")}, {pending_job(8, "bob", 950, 600, 6)}});
  EXPECT_EQ(c.nodes_changed + c.jobs_changed + c.jobs_new, 0u);
  EXPECT_EQ(m.job_history().size(), 1u);
  // The job starts, the node is allocated.
  RestJob started = running_job(8, "bob", "gpu01", 1040, 600);
  started.submit_time = 950;
  c = m.apply(Snapshot{1060, {gpu_node("gpu01", "ALLOCATED")}, {gpu_partition("gpu01")}, {started}});
  EXPECT_EQ(c.nodes_changed, 1u);
  EXPECT_EQ(c.jobs_changed, 1u);
  ASSERT_EQ(c.started.size(), 1u);
  EXPECT_EQ(m.job(8)->record.start_time, 1040);
  // It ends and slurmctld forgets it.
  RestJob done = started;
  done.state = "COMPLETED";
  done.end_time = 1200;
  c = m.apply(Snapshot{1210, {gpu_node("gpu01")}, {gpu_partition("gpu01")}, {done}});
  ASSERT_EQ(c.ended.size(), 1u);
  c = m.apply(Snapshot{1240, {gpu_node("gpu01")}, {gpu_partition("gpu01")}, {}});
  EXPECT_EQ(c.jobs_gone, 1u);
  EXPECT_FALSE(m.job(8)->listed);
  EXPECT_EQ(m.job(8)->record.state, "COMPLETED");
  EXPECT_EQ(m.job_history().size(), 3u);  // PENDING, RUNNING, COMPLETED
}

TEST(Mirror, NodesKeepTheirIndexWhenOthersDisappear) {
  Mirror m;
  m.apply(Snapshot{1000, {gpu_node("gpu01"), gpu_node("gpu02")}, {gpu_partition("gpu[01-02]")}, {}});
  m.apply(Snapshot{1030, {gpu_node("gpu02")}, {gpu_partition("gpu02")}, {}});
  EXPECT_EQ(m.node_index("gpu02"), 1u);
  EXPECT_FALSE(m.node_listed(0));
  EXPECT_TRUE(m.node_listed(1));
  m.apply(Snapshot{1060, {gpu_node("gpu03"), gpu_node("gpu02")}, {gpu_partition("gpu[02-03]")}, {}});
  EXPECT_EQ(m.node_index("gpu03"), 2u);
  EXPECT_EQ(m.config().nodes.size(), 3u);
}

TEST(MirrorJobSpec, PendingNodeCountComesFromTheRequestNotTheEstimate) {
  Mirror m;
  m.apply(Snapshot{1000, {gpu_node("gpu01")}, {gpu_partition("gpu01")}, {}});
  RestJob j = pending_job(9, "bob", 900, 3600, 5);
  j.node_count = 3;  // slurmctld's estimate for a pending job (22.05 showed 3 for a 2-node request)
  j.tres_req = "cpu=16,mem=64G,node=2,billing=16,gres/gpu=16";
  j.cpus = 16;
  j.dependency = "afterok:7(unfulfilled)";
  const JobSpec spec = m.job_spec(j, 1000);
  EXPECT_EQ(spec.nodes, 2u);
  EXPECT_EQ(spec.cpus, 16u);
  EXPECT_EQ(spec.gpus_per_node, 8u);
  EXPECT_EQ(spec.submit_s, -100);
  EXPECT_EQ(spec.time_limit_s, 3600);
  EXPECT_EQ(spec.dependency, "afterok:7");
}

TEST(MirrorJobSpec, HeldJobsStayHeld) {
  Mirror m;
  m.apply(Snapshot{1000, {gpu_node("gpu01")}, {gpu_partition("gpu01")}, {}});
  RestJob j = pending_job(9, "bob", 900, 3600, 0);
  j.held = true;
  j.reason = "JobHeldAdmin";
  EXPECT_EQ(m.job_spec(j, 1000).hold_until_s, kHeldForever);
}

TEST(SpreadAllocation, SplitsTotalsAndNeverOverfillsANode) {
  JobSpec spec;
  spec.cpus = 10;
  spec.gpus_per_node = 8;
  spec.mem_per_node_mb = 1000;
  RestJob job;
  job.gpus = 12;
  std::vector<std::uint32_t> cpus{64, 4};
  std::vector<std::uint32_t> gpus{8, 8};
  std::vector<std::uint64_t> mem{512, 512000};
  const auto a = spread_allocation(spec, job, {0, 1}, cpus, gpus, mem);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].cpus, 5u);
  EXPECT_EQ(a[1].cpus, 4u);  // only 4 left on node 1
  EXPECT_EQ(a[0].gpus, 6u);
  EXPECT_EQ(a[1].gpus, 6u);
  EXPECT_EQ(a[0].mem_mb, 512u);  // clamped to what node 0 has
  EXPECT_EQ(cpus[1], 0u);
  EXPECT_EQ(gpus[0], 2u);
}

}  // namespace
}  // namespace gputwin
