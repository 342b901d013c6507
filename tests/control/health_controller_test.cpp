// HealthController alone, driven by a scripted world: health events, job releases, recovery ends and timers in;
// the exact actions out.
#include "control/health_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "tests/support/fake_world.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using testing::FakeWorld;
using ::testing::IsEmpty;

HealthEvent xid79_on(NodeIndex n) {
  HealthEvent e;
  e.node = n;
  e.by = DetectedBy::kHealthCheck;
  e.xid = 79;
  e.gpu = 2;
  e.symptom = Symptom::kGpuLost;
  e.needs = FaultEffect::kRebootNode;
  return e;
}

// An XID on GPU `gpu` of node `n`, seen by `by`, whose diagnosis calls for `needs`.
HealthEvent xid_on(NodeIndex n, std::uint32_t xid, std::uint32_t gpu, FaultEffect needs,
                   DetectedBy by = DetectedBy::kHealthCheck) {
  HealthEvent e;
  e.node = n;
  e.by = by;
  e.xid = xid;
  e.gpu = gpu;
  e.symptom = Symptom::kGpuError;
  e.needs = needs;
  return e;
}

// Node `n` stopped answering (slurmctld's SlurmdTimeout has set it DOWN already).
HealthEvent not_responding_on(NodeIndex n, FaultEffect needs) {
  HealthEvent e;
  e.node = n;
  e.by = DetectedBy::kSlurmdTimeout;
  e.not_responding = true;
  e.symptom = Symptom::kHostDown;
  e.needs = needs;
  return e;
}

// `count` jobs, ids 1.., of user "u" (none submitted yet).
std::vector<JobSpec> jobs(std::uint32_t count) {
  std::vector<JobSpec> specs(count);
  for (std::uint32_t j = 0; j < count; ++j) {
    specs[j].id = j + 1;
    specs[j].user = "u";
    specs[j].gpus_per_node = 1;
  }
  return specs;
}

TEST(HealthController, DrainsAnIdleNodeRebootsItAndResumesItWhenItIsBack) {
  FakeWorld w(4, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  h.on_health_event(xid79_on(2));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n003 'xid 79 gpu 2 (health_check)'", "reboot n003 'xid 79 gpu 2 (health_check)'"));
  h.on_node_recovered(2);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n003"));
  h.on_node_recovered(2);  // a stale end changes nothing
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

TEST(HealthController, ResetsTheGpusOfAnIdleNodeThatNeedsAResetAndResumesIt) {
  // A reset needs no reboot: drain, reset the GPUs while the node stays DRAINED, resume when the reset is done.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  h.on_health_event(xid_on(0, 94, 5, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 94 gpu 5 (health_check)'", "reset gpus n001 'xid 94 gpu 5 (health_check)'"));
  EXPECT_EQ(w.state().node_condition(0), NodeCondition::kDrain);
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kNone);
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  EXPECT_EQ(w.state().node_condition(0), NodeCondition::kNone);
  EXPECT_THAT(w.take_timers(), IsEmpty());
}

TEST(HealthController, SetsANodeThatNeedsARepairDownAndSendsItToRepair) {
  // repair.fail_state off: a repair-needing node is drained like any other, then set DOWN and sent to repair once
  // idle (it is idle at once); the reason is the symptom's, as there is no XID.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  HealthEvent e;
  e.node = 1;
  e.by = DetectedBy::kActiveCheck;
  e.symptom = Symptom::kHostError;
  e.needs = FaultEffect::kRepairNode;
  h.on_health_event(e);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n002 'host_error (active_check)'", "down n002 'host_error (active_check)' (fault)",
                          "repair n002 'host_error (active_check)'"));
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kDown);
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
}

TEST(HealthController, SetsANodeThatNeedsARepairFailUnderFailState) {
  // repair.fail_state: FAIL instead of DRAIN for a repair; the recovery finds it FAIL already (it would set FAIL for
  // a node that was only drained before an escalation) and sends it to repair.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.repair.fail_state = true;
  HealthController h(faults, w);
  h.on_health_event(xid_on(1, 95, 3, FaultEffect::kRepairNode));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("fail n002 'xid 95 gpu 3 (health_check)'", "repair n002 'xid 95 gpu 3 (health_check)'"));
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kFail);
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
}

TEST(HealthController, FailsABusyNodeThatNeedsARepairAndRepairsItOnceIdle) {
  // fail_state, a job on the node: FAIL (FAILING) now, the repair once the job's release leaves it idle.
  FakeWorld w(2, 8, jobs(1));
  FaultsConfig faults;
  faults.repair.fail_state = true;
  HealthController h(faults, w);
  w.run(0, {0}, 8);
  h.on_health_event(xid_on(0, 95, 3, FaultEffect::kRepairNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("fail n001 'xid 95 gpu 3 (health_check)'"));
  w.finish(0);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("repair n001 'xid 95 gpu 3 (health_check)'"));
}

TEST(HealthController, DrainsRatherThanFailsUnderFailStateWhenNoRepairIsNeeded) {
  // FAIL is only for nodes bound for repair: a reboot drains.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.repair.fail_state = true;
  HealthController h(faults, w);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'", "reboot n001 'xid 79 gpu 2 (health_check)'"));
  EXPECT_EQ(w.state().node_condition(0), NodeCondition::kRebooting);
}

TEST(HealthController, NeitherDrainsNorRequeuesANodeThatStoppedRespondingAndRebootsIt) {
  // slurmctld set the node DOWN itself (ending its jobs): no drain, and no requeue even with
  // requeue_on_detection; the recovery (a reboot) starts at once; ReturnToService 2 resumes it when it is back.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.requeue_on_detection = true;
  HealthController h(faults, w);
  w.set_condition(1, NodeCondition::kDown);
  h.on_health_event(not_responding_on(1, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n002 'Not responding'"));
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
  EXPECT_THAT(w.take_timers(), IsEmpty());
}

TEST(HealthController, SendsANodeThatStoppedRespondingAndNeedsARepairToRepair) {
  // Already DOWN: no drain, and nothing to set for the repair: it is sent to repair.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  w.set_condition(0, NodeCondition::kDown);
  h.on_health_event(not_responding_on(0, FaultEffect::kRepairNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("repair n001 'Not responding'"));
}

TEST(HealthController, ABusyNodeWaitsForItsJobsBeforeItsRecovery) {
  // Job 1 runs on n001 and n002, job 2 on n001. A fault on n001 drains it; job 1's release leaves job 2 there
  // (and n002 is healthy): nothing; job 2's release leaves n001 idle: the reboot. No requeue by default.
  FakeWorld w(2, 8, jobs(2));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {0, 1}, 4);
  w.run(1, {0}, 2);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'"));
  EXPECT_EQ(w.state().job(0).state, JobState::kRunning);
  EXPECT_EQ(w.state().job(1).state, JobState::kRunning);
  w.finish(0);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.finish(1);
  h.on_job_released(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'xid 79 gpu 2 (health_check)'"));
  h.on_job_released(1);  // a repeated release starts nothing: the recovery runs
  EXPECT_THAT(w.take_actions(), IsEmpty());
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
}

TEST(HealthController, AFurtherEventEscalatesTheRecoveryToTheWorseOneAndDoesNothingElse) {
  // n003 busy: a reset-needing XID drains it. Then, before the recovery: a reboot-needing XID (again) escalates
  // reset -> reboot; a reset-needing one does not lower it back; an event found by people (not `again`, but for
  // a node already out) neither drains nor requeues. None of them acts; the release then reboots the node, with
  // the first event's reason.
  FakeWorld w(4, 8, jobs(1));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {2}, 8);
  h.on_health_event(xid_on(2, 94, 1, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n003 'xid 94 gpu 1 (health_check)'"));
  HealthEvent worse = xid79_on(2);
  worse.again = true;
  h.on_health_event(worse);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  HealthEvent milder = xid_on(2, 94, 4, FaultEffect::kResetGpu);
  milder.again = true;
  h.on_health_event(milder);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  HealthEvent people;
  people.node = 2;
  people.by = DetectedBy::kNotDetected;
  people.found_by_people = true;
  people.symptom = Symptom::kSilent;
  people.needs = FaultEffect::kResetGpu;
  h.on_health_event(people);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_EQ(w.state().job(0).state, JobState::kRunning);  // not requeued
  w.finish(0);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n003 'xid 94 gpu 1 (health_check)'"));
}

TEST(HealthController, EscalationToARepairSetsTheDrainedNodeDownOrFail) {
  // reboot -> repair on a drained, busy node: once idle it is set DOWN (fail_state off) or FAIL (on) and sent to
  // repair; the node was drained (not failed) when the first, reboot-needing event came.
  for (const bool fail_state : {false, true}) {
    SCOPED_TRACE(fail_state ? "fail_state" : "down");
    FakeWorld w(4, 8, jobs(1));
    FaultsConfig faults;
    faults.repair.fail_state = fail_state;
    HealthController h(faults, w);
    w.run(0, {3}, 8);
    h.on_health_event(xid79_on(3));
    EXPECT_THAT(w.take_actions(), ElementsAre("drain n004 'xid 79 gpu 2 (health_check)'"));
    HealthEvent worse = xid_on(3, 95, 6, FaultEffect::kRepairNode);
    worse.again = true;
    h.on_health_event(worse);
    EXPECT_THAT(w.take_actions(), IsEmpty());
    w.finish(0);
    h.on_job_released(0);
    if (fail_state) {
      EXPECT_THAT(w.take_actions(),
                  ElementsAre("fail n004 'xid 79 gpu 2 (health_check)'", "repair n004 'xid 79 gpu 2 (health_check)'"));
      EXPECT_EQ(w.state().node_condition(3), NodeCondition::kFail);
    } else {
      EXPECT_THAT(w.take_actions(), ElementsAre("down n004 'xid 79 gpu 2 (health_check)' (fault)",
                                                "repair n004 'xid 79 gpu 2 (health_check)'"));
      EXPECT_EQ(w.state().node_condition(3), NodeCondition::kDown);
    }
  }
}

TEST(HealthController, AnEventDuringTheRecoveryTakesNoAction) {
  // The reboot runs: a further event on the node neither drains nor starts another recovery.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'", "reboot n001 'xid 79 gpu 2 (health_check)'"));
  HealthEvent again = xid_on(0, 95, 1, FaultEffect::kRepairNode);
  again.again = true;
  h.on_health_event(again);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_EQ(w.state().node_condition(0), NodeCondition::kRebooting);
}

TEST(HealthController, RequeueOnDetectionRequeuesTheNodesJobsAfterTheDrain) {
  // Meta style: drain, then requeue the jobs on n003 (job 1; job 2 on n004 stays). The requeue leaves the node
  // idle, so the reboot follows at once; the job's later release starts nothing more.
  FakeWorld w(4, 8, jobs(2));
  FaultsConfig faults;
  faults.requeue_on_detection = true;
  HealthController h(faults, w);
  w.run(0, {2}, 8);
  w.run(1, {3}, 8);
  h.on_health_event(xid79_on(2));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n003 'xid 79 gpu 2 (health_check)'",
                                            "requeue jobs on n003 'xid 79 gpu 2 (health_check)' (fault)",
                                            "reboot n003 'xid 79 gpu 2 (health_check)'"));
  EXPECT_EQ(w.state().job(0).state, JobState::kNodeFail);
  EXPECT_EQ(w.state().job(1).state, JobState::kRunning);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

TEST(HealthController, AFaultFoundByPeopleRequeuesTheNodesJobs) {
  // requeue_on_detection off, but people found the fault (a black hole for a day): its jobs are requeued too.
  // Reason: the symptom (no XID) and "found by people" instead of the mechanism.
  FakeWorld w(2, 8, jobs(1));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {1}, 4);
  HealthEvent e;
  e.node = 1;
  e.by = DetectedBy::kNotDetected;
  e.found_by_people = true;
  e.symptom = Symptom::kSilent;
  e.needs = FaultEffect::kResetGpu;
  h.on_health_event(e);
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n002 'silent (found by people)'",
                                            "requeue jobs on n002 'silent (found by people)' (fault)",
                                            "reset gpus n002 'silent (found by people)'"));
  EXPECT_EQ(w.state().job(0).state, JobState::kNodeFail);
}

TEST(HealthController, AnEpilogFindingWaitsForTheReleaseEvenOnAnIdleNode) {
  // The Epilog of job 1 finds the fault: the job has ended and its resources are back (the node is idle), but the
  // recovery starts only with the release's last step, on_job_released.
  FakeWorld w(2, 8, jobs(1));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {0}, 8);
  w.finish(0);
  ASSERT_EQ(w.state().node_jobs()[0], 0u);
  h.on_health_event(xid_on(0, 79, 2, FaultEffect::kRebootNode, DetectedBy::kEpilog));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'xid 79 gpu 2 (epilog)'"));
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'xid 79 gpu 2 (epilog)'"));
}

TEST(HealthController, ReturnToServiceZeroKeepsANotRespondingNodeDownUntilTheAdminResumesIt) {
  // ReturnToService=0, admin_resume_s 3600. n002 stops answering (DOWN) at 100 s and is rebooted; it registers at
  // 700 s but is set DOWN again ("Not responding") with a timer for 700 + 3600 = 4300 s, when it is expected back;
  // the timer resumes it. A stale recovery end meanwhile changes nothing; the timer twice resumes once.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.return_to_service = 0;
  faults.repair.admin_resume_s = 3600;
  HealthController h(faults, w);
  w.set_now_s(100);
  w.set_condition(1, NodeCondition::kDown);
  h.on_health_event(not_responding_on(1, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n002 'Not responding'"));
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_EQ(w.expected_return_s(), 0);
  w.set_now_s(700);
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("down n002 'Not responding' (fault)"));
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kHealth, TimerId{1}, 4300.0)));
  EXPECT_EQ(w.expected_return_s(), 4300);
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kDown);
  w.set_now_s(1000);
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_now_s(4300);
  h.on_timer(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kNone);
  h.on_timer(1);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(w.take_timers(), IsEmpty());
}

TEST(HealthController, ReturnToServiceZeroResumesARepairedNodeAtOnce) {
  // A repair includes the admin's resume: the not-responding node is back when the repair ends, no timer.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.return_to_service = 0;
  faults.repair.admin_resume_s = 3600;
  HealthController h(faults, w);
  w.set_condition(1, NodeCondition::kDown);
  h.on_health_event(not_responding_on(1, FaultEffect::kRepairNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("repair n002 'Not responding'"));
  w.set_now_s(9000);
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_EQ(w.expected_return_s(), 0);
}

TEST(HealthController, ReturnToServiceZeroResumesADrainedNodeAtOnce) {
  // ReturnToService concerns nodes DOWN for not responding: a drained node's reboot ends in its resume.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.return_to_service = 0;
  faults.repair.admin_resume_s = 3600;
  HealthController h(faults, w);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'", "reboot n001 'xid 79 gpu 2 (health_check)'"));
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  EXPECT_THAT(w.take_timers(), IsEmpty());
}

TEST(HealthController, ReturnToServiceZeroWithAnImmediateAdminResumesAtOnce) {
  // admin_resume_s 0: the admin resumes the node as it registers, so there is nothing to wait for.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.return_to_service = 0;
  faults.repair.admin_resume_s = 0;
  HealthController h(faults, w);
  w.set_condition(0, NodeCondition::kDown);
  h.on_health_event(not_responding_on(0, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'Not responding'"));
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n001"));
  EXPECT_THAT(w.take_timers(), IsEmpty());
}

TEST(HealthController, ARecoveredNodePoweredDownMeanwhileIsNotResumedAndIsForgotten) {
  // The reboot of n001 runs when the node is powered down (deleted): its recovery end resumes nothing and the
  // node stays POWERED_DOWN. Forgotten: a new fault after it comes back is a fresh one (drain and reboot again,
  // not an escalation), and a stale end of the old recovery changes nothing.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  HealthController h(faults, w);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'", "reboot n001 'xid 79 gpu 2 (health_check)'"));
  w.set_condition(0, NodeCondition::kPoweredDown);
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_EQ(w.state().node_condition(0), NodeCondition::kPoweredDown);
  w.set_condition(0, NodeCondition::kNone);
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  h.on_health_event(xid_on(0, 94, 7, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 94 gpu 7 (health_check)'", "reset gpus n001 'xid 94 gpu 7 (health_check)'"));
}

TEST(HealthController, ANodePoweredDownWhileItWaitsForItsJobsIsForgotten) {
  // n001 is drained with job 1 on it when it is powered down (a spot reclaim ending the job): the job's release
  // then starts no recovery. A fault after the node comes back is a fresh one.
  FakeWorld w(2, 8, jobs(1));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {0}, 8);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'"));
  w.finish(0);
  w.set_condition(0, NodeCondition::kPoweredDown);
  h.on_node_changed(0, NodeCondition::kDrain, NodeCondition::kPoweredDown);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_condition(0, NodeCondition::kNone);
  h.on_health_event(xid_on(0, 94, 1, FaultEffect::kResetGpu));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 94 gpu 1 (health_check)'", "reset gpus n001 'xid 94 gpu 1 (health_check)'"));
}

TEST(HealthController, ANodePoweredDownWhileItAwaitsTheAdminIsForgotten) {
  // ReturnToService=0: n002 waits DOWN for the admin (timer at 700 + 3600 = 4300 s) and is powered down at
  // 2000 s: the timer resumes nothing.
  FakeWorld w(2, 8);
  FaultsConfig faults;
  faults.return_to_service = 0;
  faults.repair.admin_resume_s = 3600;
  HealthController h(faults, w);
  w.set_condition(1, NodeCondition::kDown);
  h.on_health_event(not_responding_on(1, FaultEffect::kRebootNode));
  w.set_now_s(700);
  h.on_node_recovered(1);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n002 'Not responding'", "down n002 'Not responding' (fault)"));
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kHealth, TimerId{1}, 4300.0)));
  w.set_now_s(2000);
  w.set_condition(1, NodeCondition::kPoweredDown);
  h.on_node_changed(1, NodeCondition::kDown, NodeCondition::kPoweredDown);
  w.set_now_s(4300);
  h.on_timer(1);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_EQ(w.state().node_condition(1), NodeCondition::kPoweredDown);
}

TEST(HealthController, OtherConditionChangesOfAWaitingNodeKeepItsFault) {
  // Only a power-down forgets: n001, drained with a job, set DOWN by something else (or powering down) still gets
  // its recovery when the job's release leaves it idle.
  FakeWorld w(2, 8, jobs(1));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {0}, 8);
  h.on_health_event(xid79_on(0));
  EXPECT_THAT(w.take_actions(), ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'"));
  w.set_condition(0, NodeCondition::kDown);
  h.on_node_changed(0, NodeCondition::kDrain, NodeCondition::kDown);
  h.on_node_changed(0, NodeCondition::kDown, NodeCondition::kPoweringDown);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.finish(0);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'xid 79 gpu 2 (health_check)'"));
}

TEST(HealthController, TracksEachNodeOnItsOwn) {
  // n001 busy (job 1) and n002 idle fail together: n002 reboots at once, n001 waits; n002's end resumes only
  // n002; a timer for a node not awaiting an admin resumes nothing; job 1's release then reboots n001.
  FakeWorld w(3, 8, jobs(1));
  FaultsConfig faults;
  HealthController h(faults, w);
  w.run(0, {0}, 8);
  h.on_health_event(xid79_on(0));
  h.on_health_event(xid_on(1, 48, 0, FaultEffect::kRebootNode));
  EXPECT_THAT(w.take_actions(),
              ElementsAre("drain n001 'xid 79 gpu 2 (health_check)'", "drain n002 'xid 48 gpu 0 (health_check)'",
                          "reboot n002 'xid 48 gpu 0 (health_check)'"));
  h.on_node_recovered(1);
  h.on_node_recovered(0);  // n001's recovery has not started: nothing to end
  EXPECT_THAT(w.take_actions(), ElementsAre("resume n002"));
  h.on_timer(0);
  h.on_timer(2);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.finish(0);
  h.on_job_released(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("reboot n001 'xid 79 gpu 2 (health_check)'"));
}

TEST(HealthController, ReasonsNameTheXidAndGpuOrTheSymptomAndWhatFoundIt) {
  HealthEvent e = xid_on(0, 79, 2, FaultEffect::kRebootNode);
  EXPECT_EQ(health_reason(e), "xid 79 gpu 2 (health_check)");
  e.gpu = UINT32_MAX;  // an XID naming no GPU
  e.by = DetectedBy::kNcclWatchdog;
  EXPECT_EQ(health_reason(e), "xid 79 (nccl_watchdog)");
  e.gpu = 0;
  e.by = DetectedBy::kProlog;
  EXPECT_EQ(health_reason(e), "xid 79 gpu 0 (prolog)");
  e.found_by_people = true;  // people, not the mechanism
  EXPECT_EQ(health_reason(e), "xid 79 gpu 0 (found by people)");

  HealthEvent s;  // a symptom without an XID (a GPU named without one is not mentioned)
  s.by = DetectedBy::kActiveCheck;
  s.symptom = Symptom::kLinkDown;
  s.gpu = 3;
  EXPECT_EQ(health_reason(s), "link_down (active_check)");
  s.found_by_people = true;
  s.symptom = Symptom::kDegraded;
  EXPECT_EQ(health_reason(s), "degraded (found by people)");

  HealthEvent d = not_responding_on(0, FaultEffect::kRebootNode);  // Slurm's own reason, whatever else is known
  EXPECT_EQ(health_reason(d), "Not responding");
  d.xid = 79;
  d.gpu = 2;
  d.found_by_people = true;
  EXPECT_EQ(health_reason(d), "Not responding");
}

TEST(HealthController, AnUnsetAdminDelayIsAsLongAsPeopleTakeToNoticeANode) {
  // admin_resume_s < 0 (its default) means undetected_found_s (86,400 s), as the scenario loader reads it: a
  // FaultsConfig built in code (a twin's) waits the same day. Rebooted node recovered at 600 s: back at 87,000 s.
  FakeWorld w(1, 8);
  FaultsConfig faults;
  faults.return_to_service = 0;
  ASSERT_LT(faults.repair.admin_resume_s, 0);
  HealthController h(faults, w);
  w.set_condition(0, NodeCondition::kDown);
  h.on_health_event(not_responding_on(0, FaultEffect::kRebootNode));
  w.take_actions();
  w.set_now_s(600);
  h.on_node_recovered(0);
  EXPECT_THAT(w.take_actions(), ElementsAre("down n001 'Not responding' (fault)"));
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kHealth, 0u, 87000.0)));
}

}  // namespace
}  // namespace gputwin
