// OperationsController alone, driven by a scripted world (tests/support/fake_world.hpp): its start and window
// timers, job releases, boots and recoveries in; the exact node actions, timers, expected returns and operation
// records out.
#include "control/operations_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/support/fake_world.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using testing::FakeWorld;
using ::testing::IsEmpty;
using testing::make_job;
using A = ClusterOperation::Action;

using Timer = std::tuple<ControllerId, TimerId, double>;

ClusterOperation op(double time_s, A action, std::vector<std::uint32_t> nodes, double duration_s = 0,
                    bool rolling = false, std::string name = {}) {
  ClusterOperation o;
  o.time_s = time_s;
  o.action = action;
  o.nodes = std::move(nodes);
  o.duration_s = duration_s;
  o.rolling = rolling;
  o.name = std::move(name);
  return o;
}

// Operation records as text: "100 add_nodes node_ready n003 killed 0" ("-" for the whole operation; the image or
// volume name after the node when there is one).
std::vector<std::string> steps(const OperationsController& c) {
  std::vector<std::string> out;
  for (const OperationRecord& r : c.records()) {
    out.push_back(std::to_string(to_seconds(r.time)) + " " + r.action + " " + r.step + " " +
                  (r.node == UINT32_MAX ? std::string("-") : FakeWorld::node_name(r.node)) +
                  (r.name.empty() ? std::string() : " " + r.name) + " killed " + std::to_string(r.jobs_killed));
  }
  return out;
}

// A 1-node job of `gpus` GPUs.
JobSpec job(std::uint64_t id, std::uint32_t gpus = 8) {
  return make_job(id, 0, 1, 1, gpus, 3600, 1000);
}

// Operation `index` starts at `t` seconds (its start timer, 2 x index, fires).
void start_op_at(FakeWorld& w, OperationsController& c, std::size_t index, double t) {
  w.set_now_s(t);
  c.on_timer(static_cast<TimerId>(2 * index));
}

TEST(OperationsController, StartTimersAreTwiceTheOperationIndexAtTheLaterOfNowAndTheirTime) {
  // Operations at 10, 50 and 200 started at 30: timers 0, 2, 4 at max(30, time) = 30, 50, 200. Nothing else yet.
  FakeWorld w(2, 8);
  const std::vector<ClusterOperation> ops = {op(10, A::kUpdateImage, {}), op(50, A::kUpdateImage, {}),
                                             op(200, A::kUpdateImage, {})};
  OperationsController c(ops, w);
  w.set_now_s(30);
  c.on_start();
  EXPECT_THAT(w.take_timers(),
              ElementsAre(Timer{ControllerId::kOperations, 0, 30.0}, Timer{ControllerId::kOperations, 2, 50.0},
                          Timer{ControllerId::kOperations, 4, 200.0}));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(c.records(), IsEmpty());
}

TEST(OperationsController, AddNodesPowersUpItsAbsentNodesForTheColdStart) {
  // add_nodes n003-n004 at 100 with a 444 s cold start, then add_nodes n002 at 300. nodes_added_later lists them in
  // operation order. The world starts them absent (POWERED_DOWN), except n002 here, which is in service: at 100
  // n003 and n004 power up "for 444 s" and a node is expected back at 544; at 300 n002 is skipped. At 544 n003 boots
  // (node_ready), n004 does not (no record); a repeated boot end changes nothing.
  FakeWorld w(4, 8);
  const std::vector<ClusterOperation> ops = {op(100, A::kAddNodes, {2, 3}, 444), op(300, A::kAddNodes, {1}, 444)};
  OperationsController c(ops, w);
  EXPECT_THAT(c.nodes_added_later(), ElementsAre(2u, 3u, 1u));
  w.set_condition(2, NodeCondition::kPoweredDown);
  w.set_condition(3, NodeCondition::kPoweredDown);
  c.on_start();
  start_op_at(w, c, 0, 100);
  EXPECT_THAT(w.take_actions(), ElementsAre("power up n003 for 444 s", "power up n004 for 444 s"));
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 544.0);
  start_op_at(w, c, 1, 300);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_now_s(544);
  c.on_node_booted(2, true);
  c.on_node_booted(3, false);
  c.on_node_booted(2, true);
  c.on_node_booted(0, true);  // a boot the operation did not ask for
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(steps(c), ElementsAre("100 add_nodes start - killed 0", "300 add_nodes start - killed 0",
                                    "544 add_nodes node_ready n003 killed 0"));
}

TEST(OperationsController, RemoveNodesDrainsAndDeletesEachNodeOnceIdle) {
  // remove_nodes n001, n002, n004 at 100. n001 is idle: drained and deleted at once (node_removed at 100). n002 runs
  // job 1: drained, deleted when job 1's resources are released at 150. n004 is DOWN (not in service): skipped.
  // Job 2's release on n003 (not being removed) does nothing.
  FakeWorld w(4, 8, {job(1), job(2)});
  const std::vector<ClusterOperation> ops = {op(100, A::kRemoveNodes, {0, 1, 3})};
  OperationsController c(ops, w);
  c.on_start();
  w.run(0, {1}, 8);
  w.run(1, {2}, 8);
  w.set_condition(3, NodeCondition::kDown);
  start_op_at(w, c, 0, 100);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'remove_nodes'", "delete n001 'remove_nodes'", "drain n002 'remove_nodes'"));
  w.set_now_s(120);
  w.finish(1);
  c.on_job_released(1);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_now_s(150);
  w.finish(0);
  c.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("delete n002 'remove_nodes'"));
  EXPECT_THAT(steps(c), ElementsAre("100 remove_nodes start - killed 0", "100 remove_nodes node_removed n001 killed 0",
                                    "150 remove_nodes node_removed n002 killed 0"));
}

TEST(OperationsController, RemoveNodesDeletesAPoweredDownNodeAtOnce) {
  // n002 is POWERED_DOWN (a pool node the autoscaler powered off): deleted at once, so it is never powered up
  // again; n001 in service drains as usual.
  FakeWorld w(2, 8, {job(1)});
  const std::vector<ClusterOperation> ops = {op(100, A::kRemoveNodes, {0, 1})};
  OperationsController c(ops, w);
  w.run(0, {0}, 8);
  w.set_condition(1, NodeCondition::kPoweredDown);
  start_op_at(w, c, 0, 100);
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'remove_nodes'", "delete n002 'remove_nodes'"));
  EXPECT_THAT(steps(c),
              ElementsAre("100 remove_nodes start - killed 0", "100 remove_nodes node_removed n002 killed 0"));
}

TEST(OperationsController, UpdateImageIsARecordAndNothingElse) {
  // update_image "img:v2" at 10 with job 1 running on n001: no node action, no timer, no node expected back.
  FakeWorld w(2, 8, {job(1)});
  const std::vector<ClusterOperation> ops = {op(10, A::kUpdateImage, {0, 1}, 0, false, "img:v2")};
  OperationsController c(ops, w);
  c.on_start();
  w.take_timers();
  w.run(0, {0}, 8);
  start_op_at(w, c, 0, 10);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 0.0);
  EXPECT_EQ(w.state().job(0).state, JobState::kRunning);
  EXPECT_THAT(steps(c), ElementsAre("10 update_image start - img:v2 killed 0"));
}

TEST(OperationsController, AttachVolumeAtOnceRebootsEveryNodeInServiceKillingItsJobs) {
  // attach_volume "data" at 1,000 on n001-n004, restart 600 s. n001 runs jobs 1 and 2, n002 job 3, n003 is idle, n004
  // is drained (skipped). Each node in service reboots killing its jobs for 600 s: 2 + 1 + 0 = 3 runs ended (the
  // start record's count), all NODE_FAIL; back expected at 1,600. At 1,600 n001 and n003 recover: resumed,
  // node_restarted. n002 was set DOWN meanwhile (no longer rebooting): left alone. n004 never restarted: nothing.
  FakeWorld w(4, 8, {job(1, 4), job(2, 4), job(3)});
  const std::vector<ClusterOperation> ops = {op(1000, A::kAttachVolume, {0, 1, 2, 3}, 600, false, "data")};
  OperationsController c(ops, w);
  c.on_start();
  w.take_timers();
  w.run(0, {0}, 4);
  w.run(1, {0}, 4);
  w.run(2, {1}, 8);
  w.set_condition(3, NodeCondition::kDrain);
  start_op_at(w, c, 0, 1000);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'attach_volume data' killing jobs for 600 s",
                                            "reboot n002 'attach_volume data' killing jobs for 600 s",
                                            "reboot n003 'attach_volume data' killing jobs for 600 s"));
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 1600.0);
  for (JobIndex j = 0; j < 3; ++j) EXPECT_EQ(w.state().job(j).state, JobState::kNodeFail) << "job index " << j;
  w.set_now_s(1600);
  w.set_condition(1, NodeCondition::kDown);
  c.on_node_recovered(0);
  c.on_node_recovered(1);
  c.on_node_recovered(2);
  c.on_node_recovered(3);
  c.on_node_recovered(0);  // a stale end
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001", "resume n003"));
  EXPECT_THAT(steps(c), ElementsAre("1000 attach_volume start - data killed 3",
                                    "1600 attach_volume node_restarted n001 data killed 0",
                                    "1600 attach_volume node_restarted n003 data killed 0"));
}

TEST(OperationsController, RestartWorkersAtOnceRestartsEveryWorkerKillingItsJobs) {
  // restart_workers at 1,000 (60 s pod restart) on n001-n002, job 1 on n001: both reboot killing jobs for 60 s, one
  // run ended; back expected at 1,060, where both recover and are resumed.
  FakeWorld w(2, 8, {job(1)});
  const std::vector<ClusterOperation> ops = {op(1000, A::kRestartWorkers, {0, 1}, 60)};
  OperationsController c(ops, w);
  c.on_start();
  w.run(0, {0}, 8);
  start_op_at(w, c, 0, 1000);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'restart_workers' killing jobs for 60 s",
                                            "reboot n002 'restart_workers' killing jobs for 60 s"));
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 1060.0);
  EXPECT_EQ(w.state().job(0).state, JobState::kNodeFail);
  w.set_now_s(1060);
  c.on_node_recovered(1);
  c.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002", "resume n001"));
  EXPECT_THAT(steps(c),
              ElementsAre("1000 restart_workers start - killed 1", "1060 restart_workers node_restarted n002 killed 0",
                          "1060 restart_workers node_restarted n001 killed 0"));
}

TEST(OperationsController, RollingRestartDrainsEachNodeAndRestartsItOnceIdleKillingNothing) {
  // Rolling restart_workers at 100 (60 s) on n001-n002, job 1 on n002 until 500. n001 is idle: drained and rebooted
  // (no kill) at once; n002 drained. Start record: 0 killed; back expected at 160. n001 recovers at 160: resumed.
  // Job 1 completes at 500: n002 reboots then (back expected at 560), recovers at 560: resumed. Job 1 was never
  // killed.
  FakeWorld w(2, 8, {job(1)});
  const std::vector<ClusterOperation> ops = {op(100, A::kRestartWorkers, {0, 1}, 60, true)};
  OperationsController c(ops, w);
  c.on_start();
  w.run(0, {1}, 8);
  start_op_at(w, c, 0, 100);
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'restart_workers'", "reboot n001 'restart_workers' for 60 s",
                                            "drain n002 'restart_workers'"));
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 160.0);
  w.set_now_s(160);
  c.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  w.set_now_s(500);
  w.finish(0);
  c.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n002 'restart_workers' for 60 s"));
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 560.0);
  w.set_now_s(560);
  c.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
  EXPECT_EQ(w.state().job(0).state, JobState::kCompleted);
  EXPECT_THAT(steps(c),
              ElementsAre("100 restart_workers start - killed 0", "160 restart_workers node_restarted n001 killed 0",
                          "560 restart_workers node_restarted n002 killed 0"));
}

TEST(OperationsController, RollingAttachVolumeDrainsWithTheVolumeNameAndRestartsWhenIdle) {
  // Rolling attach_volume "data" at 0 (600 s) on idle n001: drained and rebooted ('attach_volume data', the same
  // reason for every step of the operation) without killing, for 600 s; back expected at 600; recovered at 600:
  // resumed.
  FakeWorld w(1, 8);
  const std::vector<ClusterOperation> ops = {op(0, A::kAttachVolume, {0}, 600, true, "data")};
  OperationsController c(ops, w);
  c.on_start();
  start_op_at(w, c, 0, 0);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'attach_volume data'", "reboot n001 'attach_volume data' for 600 s"));
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 600.0);
  w.set_now_s(600);
  c.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  EXPECT_THAT(steps(c), ElementsAre("0 attach_volume start - data killed 0",
                                    "600 attach_volume node_restarted n001 data killed 0"));
}

TEST(OperationsController, MaintenanceSetsNodesDownForTheWindowAndResumesThemAtItsEnd) {
  // maintenance at 100 for 3,600 s on n001-n003; job 1 on n001, n003 drained (skipped). n001 and n002 go DOWN
  // (cause operation), job 1's run ends (1 killed); window timers 2 x node + 1 = 1 and 3 at 3,700; back expected at
  // 3,700. n002 is resumed by someone else at 2,000. At 3,700 timer 1 resumes n001 (node_back); timer 3 finds n002
  // changed: nothing. A repeated timer 1 does nothing.
  FakeWorld w(3, 8, {job(1)});
  const std::vector<ClusterOperation> ops = {op(100, A::kMaintenance, {0, 1, 2}, 3600)};
  OperationsController c(ops, w);
  c.on_start();
  w.take_timers();
  w.run(0, {0}, 8);
  w.set_condition(2, NodeCondition::kDrain);
  start_op_at(w, c, 0, 100);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("down n001 'maintenance' (operation)", "down n002 'maintenance' (operation)"));
  EXPECT_THAT(w.take_timers(),
              ElementsAre(Timer{ControllerId::kOperations, 1, 3700.0}, Timer{ControllerId::kOperations, 3, 3700.0}));
  EXPECT_DOUBLE_EQ(w.expected_return_s(), 3700.0);
  EXPECT_EQ(w.state().job(0).state, JobState::kNodeFail);
  w.set_now_s(2000);
  w.set_condition(1, NodeCondition::kNone);
  w.set_now_s(3700);
  c.on_timer(1);
  c.on_timer(3);
  c.on_timer(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  EXPECT_THAT(steps(c), ElementsAre("100 maintenance start - killed 1", "3700 maintenance node_back n001 killed 0"));
}

TEST(OperationsController, NodesNotInServiceAreSkippedByEveryNodeAction) {
  // n001 DOWN, n002 rebooting, n003 POWERED_DOWN: a restart at once, a rolling restart and a maintenance on them
  // act on none (each still records its start, 0 killed); add_nodes on in-service n004 neither; remove_nodes skips
  // n001 and n002 (RemoveNodesDeletesAPoweredDownNodeAtOnce: it deletes the powered-down n003).
  FakeWorld w(4, 8);
  const std::vector<ClusterOperation> ops = {op(0, A::kRemoveNodes, {0, 1}),
                                             op(0, A::kRestartWorkers, {0, 1, 2}, 60),
                                             op(0, A::kAttachVolume, {0, 1, 2}, 600, true, "v"),
                                             op(0, A::kMaintenance, {0, 1, 2}, 100), op(0, A::kAddNodes, {3}, 444)};
  OperationsController c(ops, w);
  w.set_condition(0, NodeCondition::kDown);
  w.set_condition(1, NodeCondition::kRebooting);
  w.set_condition(2, NodeCondition::kPoweredDown);
  c.on_start();
  w.take_timers();
  for (std::size_t i = 0; i < ops.size(); ++i) start_op_at(w, c, i, 0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_THAT(steps(c), ElementsAre("0 remove_nodes start - killed 0", "0 restart_workers start - killed 0",
                                    "0 attach_volume start - v killed 0", "0 maintenance start - killed 0",
                                    "0 add_nodes start - killed 0"));
}

TEST(OperationsController, HoldReleaseAndSetPriorityActOnPendingJobsById) {
  // Jobs 1-3; 1 and 2 submitted and pending, 3 not submitted yet. Hold [1, 3, 7] at 10: job 1 is held; job 3 is
  // not pending yet and job 7 not in the workload ("not_pending"). Priority 500 for [2] at 20; release [1] at 30.
  FakeWorld w(1, 8, {job(1), job(2), job(3)});
  w.submit(0);
  w.submit(1);
  ClusterOperation hold = op(10, A::kHoldJobs, {});
  hold.jobs = {1, 3, 7};
  ClusterOperation prio = op(20, A::kSetPriority, {});
  prio.jobs = {2};
  prio.priority = 500;
  ClusterOperation release = op(30, A::kReleaseJobs, {});
  release.jobs = {1};
  const std::vector<ClusterOperation> ops = {hold, prio, release};
  OperationsController c(ops, w);
  start_op_at(w, c, 0, 10);
  EXPECT_THAT(w.take_actions(), ElementsAre("hold job 1"));
  start_op_at(w, c, 1, 20);
  EXPECT_THAT(w.take_actions(), ElementsAre("priority job 2 500"));
  start_op_at(w, c, 2, 30);
  EXPECT_THAT(w.take_actions(), ElementsAre("release job 1"));
  EXPECT_THAT(steps(c), ElementsAre("10 hold done - job 1 killed 0", "10 hold not_pending - job 3 killed 0",
                                    "10 hold not_pending - job 7 killed 0", "20 set_priority done - job 2 killed 0",
                                    "30 release done - job 1 killed 0"));
}

}  // namespace
}  // namespace gputwin
