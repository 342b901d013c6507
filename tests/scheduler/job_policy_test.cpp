// Hand-worked cases for JobPolicy: multifactor priority arithmetic, fair share changing the order, limits and
// their reasons, submit rejections, arrays with a throttle, dependencies, holds and --begin. Scenarios are
// written inline in JSON (the same keys users write). slurmctld starts at t = 0 (phase 0): background tick
// every 1 s, batch_sched_delay 3 s, full pass every 60 s, backfill every 30 s.
#include "scheduler/job_policy.hpp"

#include <gtest/gtest.h>

#include <map>

#include "model/errors.hpp"
#include "model/scenario.hpp"
#include "scheduler/priority.hpp"
#include "sim/runner.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::start_times;

/// One node of 64 CPUs and 8 GPUs in partition "gpu", policy slurm, plus `extra` top-level keys and the jobs.
Scenario one_node(const std::string& jobs, const std::string& extra = "", const std::string& scheduler_extra = "") {
  const std::string text = R"({"name": "t", "cluster": {"nodes": [{"prefix": "n", "count": 1, "cpus": 64,
      "memory_gb": 512, "gpus": 8}], "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}]},
      "workload": {"jobs": )" +
                           jobs + R"(}, "scheduler": {"policy": "slurm")" + scheduler_extra + "}" + extra + "}";
  return parse_scenario(text, "inline.json", ".");
}

RunOutcome run(const Scenario& s) {
  return run_scenario(s, RunOptions{});
}

/// Pending reason or final state of each job, by job id.
std::map<std::uint64_t, std::string> reasons(const RunOutcome& o) {
  std::map<std::uint64_t, std::string> out;
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    const JobRuntime& rt = o.state->job(j);
    out[o.state->spec(j).id] =
        rt.start >= 0 ? std::string(job_state_name(rt.state)) : std::string(pending_reason_name(rt.reason));
  }
  return out;
}

TEST(MultifactorPriority, EachFactorAndTheTotalByHand) {
  // 4 nodes x 64 CPUs x 8 GPUs: N = 4, C = 256. Partition p2 has PriorityJobFactor 2 (the max), QOS high has
  // Priority 100 (the max). The job: 2 nodes, 64 CPUs, 4 GPUs per node, p2, QOS high, nice 50, accruing since
  // t = 0, evaluated at t = 302400 s = 3.5 days.
  Scenario s = testing::make_scenario(4, 64, 8, SchedulerPolicy::kSlurm);
  s.cluster.partitions[0].priority_job_factor = 2;
  PartitionConfig p1 = s.cluster.partitions[0];
  p1.name = "p1";
  p1.priority_job_factor = 1;
  s.cluster.partitions.push_back(p1);
  std::vector<QosConfig> qos(2);
  qos[0].name = "normal";
  qos[1].name = "high";
  qos[1].priority = 100;
  PriorityConfig c;
  c.multifactor = true;
  c.weight_age = 1000;
  c.weight_job_size = 1000;
  c.weight_partition = 1000;
  c.weight_qos = 2000;
  c.weight_tres_gpu = 800;
  AssociationTree tree;
  const AssocId acct = tree.add_account("a", 0, 1);
  const AssocId user = tree.add_user("u", acct, 1);
  std::vector<std::uint32_t> assoc_priority(tree.size(), 0);
  PriorityEngine engine(c, s.cluster, qos, tree, assoc_priority);
  JobSpec job = testing::make_job(1, 0, 2, 64, 4, 3600, 3600);
  job.nice = 50;
  const PriorityFactors f = engine.factors(job, PriorityInputs{user, 1, 0, 0, 3600}, 302400);
  EXPECT_DOUBLE_EQ(f.age, 0.5);         // 302400 / 604800
  EXPECT_DOUBLE_EQ(f.job_size, 0.375);  // (2/4 + 64/256) / 2
  EXPECT_DOUBLE_EQ(f.partition, 1.0);   // 2 / 2
  EXPECT_DOUBLE_EQ(f.qos, 1.0);         // 100 / 100
  EXPECT_DOUBLE_EQ(f.tres, 200.0);      // 800 x (2 x 4 GPUs) / 32 GPUs in p2
  // 1000 x 0.5 + 1000 x 0.375 + 1000 x 1 + 2000 x 1 + 200 - 50 = 4025
  EXPECT_EQ(f.priority, 4025u);
  // The same job in p1 (factor 1/2) and QOS normal (priority 0: factor 0): 500 + 375 + 500 + 0 + 200 - 50.
  EXPECT_EQ(engine.factors(job, PriorityInputs{user, 0, 1, 0, 3600}, 302400).priority, 1525u);
  // Truncation toward zero: age 1/3 -> 333.33..., job size 0.375 x 1000, the rest as in p1/normal: 1358.33 -> 1358.
  EXPECT_EQ(engine.factors(job, PriorityInputs{user, 0, 1, 0, 3600}, 201600).priority, 1358u);
  // A large nice clamps at 1 (0 is reserved for held jobs).
  job.nice = 100000;
  EXPECT_EQ(engine.factors(job, PriorityInputs{user, 0, 1, 0, 3600}, 302400).priority, 1u);
  // Not accruing yet (held or dependent): no age.
  job.nice = 0;
  EXPECT_DOUBLE_EQ(engine.factors(job, PriorityInputs{user, 0, 1, -1, 3600}, 302400).age, 0.0);
}

TEST(MultifactorPriority, FavorSmallAndBilling) {
  Scenario s = testing::make_scenario(4, 64, 8, SchedulerPolicy::kSlurm);
  std::string error;
  ASSERT_TRUE(parse_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0", s.cluster.partitions[0].billing, error));
  std::vector<QosConfig> qos(1);
  PriorityConfig c;
  c.multifactor = true;
  c.weight_job_size = 1000;
  c.favor_small = true;
  AssociationTree tree;
  std::vector<std::uint32_t> assoc_priority(1, 0);
  PriorityEngine engine(c, s.cluster, qos, tree, assoc_priority);
  // ((4 - 1)/4 + (256 - 16)/256) / 2 = (0.75 + 0.9375) / 2 = 0.84375 -> 843.75 -> 843
  const JobSpec job = testing::make_job(1, 0, 1, 16, 2, 3600, 3600);
  EXPECT_EQ(engine.factors(job, PriorityInputs{0, 0, 0, 0, 3600}, 0).priority, 843u);
  // Billing: 16 CPUs x 1 + 64 GB x 0.25 + 2 GPUs x 2 = 16 + 16 + 4 = 36; MAX_TRES would take the max, 16.
  EXPECT_DOUBLE_EQ(engine.billing(0, 16, 65536, 1, 2), 36.0);
}

TEST(MultifactorPriority, FairShareLetsTheLightUserGoFirst) {
  // Job 1 (user a, account A) holds the node's 8 GPUs from 3 to 3603. Job 2 (user a) is submitted at 100,
  // job 3 (user b, account B) at 200; both want all 8 GPUs. PriorityCalcPeriod is 1 minute: at the first tick
  // (60) account A has usage and B none, so Fair Tree ranks B's level first (LevelFS infinite): with 2 user
  // associations b gets rank 2/2 = 1.0 and a gets 1/2 = 0.5. With PriorityWeightFairshare 10000, job 3 has
  // priority 10000 and job 2 5000: job 3 starts first, at 3603, and job 2 at 7203. Under priority/basic the
  // submit order wins instead.
  const std::string jobs = R"([
    {"id": 1, "user": "a", "account": "A", "submit": 0, "cpus": 8, "gpus_per_node": 8, "time_limit": 60, "run_time": 3600},
    {"id": 2, "user": "a", "account": "A", "submit": 100, "cpus": 8, "gpus_per_node": 8, "time_limit": 60, "run_time": 3600},
    {"id": 3, "user": "b", "account": "B", "submit": 200, "cpus": 8, "gpus_per_node": 8, "time_limit": 60, "run_time": 3600}])";
  const std::string accounts = R"(, "accounting": {"accounts": [{"name": "A"}, {"name": "B"}],
      "users": [{"user": "a", "account": "A"}, {"user": "b", "account": "B"}]})";
  const Scenario mf = one_node(jobs, accounts, R"(, "priority": {"PriorityType": "priority/multifactor",
      "PriorityWeightFairshare": 10000, "PriorityCalcPeriod": 1})");
  auto o = run(mf);
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{3, 7203, 3603}));
  // The priorities the jobs were started with. Job 3: 10000 x 1.0. Job 2 started at 7203 with the priority of
  // the 7200 tick: by then account B has used 3597 s x 8 CPUs (billing = CPUs), barely decayed, and A 3600 s x 8
  // decayed for an hour longer (half-life 7 days), so B's usage is the larger: a ranks first, 10000 x 1.0.
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    if (o.state->spec(j).id == 3 || o.state->spec(j).id == 2) {
      EXPECT_EQ(o.state->job(j).priority, 10000u);
    }
  }
  const Scenario basic = one_node(jobs, accounts);
  EXPECT_EQ(start_times(run(basic)), (std::vector<std::int64_t>{3, 3603, 7203}));
  // fcfs ordered by multifactor priority: the same fair-share order, at the classic policy's instants (job 1
  // starts at 0 and ends at 3600).
  Scenario fcfs = mf;
  fcfs.scheduler.policy = SchedulerPolicy::kFcfs;
  EXPECT_EQ(start_times(run(fcfs)), (std::vector<std::int64_t>{0, 7200, 3600}));
  fcfs.scheduler.priority.multifactor = false;
  EXPECT_EQ(start_times(run(fcfs)), (std::vector<std::int64_t>{0, 3600, 7200}));
}

TEST(MultifactorPriority, AnOperatorsFixedPriorityOutlastsTheDecayThread) {
  // The fair-share case above, where job 3 (priority 10000) goes before job 2 (5000): an operator sets job 2's
  // priority to 20000 at 150 (scontrol update priority=20000, an operation). The decay thread's ticks every minute
  // leave it, so job 2 starts first at 3603 and job 3 at 7203, and job 2 ran with 20000.
  const std::string jobs = R"([
    {"id": 1, "user": "a", "account": "A", "submit": 0, "cpus": 8, "gpus_per_node": 8, "time_limit": 60, "run_time": 3600},
    {"id": 2, "user": "a", "account": "A", "submit": 100, "cpus": 8, "gpus_per_node": 8, "time_limit": 60, "run_time": 3600},
    {"id": 3, "user": "b", "account": "B", "submit": 200, "cpus": 8, "gpus_per_node": 8, "time_limit": 60, "run_time": 3600}])";
  const std::string extra = R"(, "accounting": {"accounts": [{"name": "A"}, {"name": "B"}],
      "users": [{"user": "a", "account": "A"}, {"user": "b", "account": "B"}]},
      "operations": [{"time": 150, "action": "set_priority", "jobs": [2], "priority": 20000}])";
  const Scenario mf = one_node(jobs, extra, R"(, "priority": {"PriorityType": "priority/multifactor",
      "PriorityWeightFairshare": 10000, "PriorityCalcPeriod": 1})");
  const RunOutcome o = run(mf);
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{3, 3603, 7203}));
  EXPECT_EQ(o.state->job(1).priority, 20000u);
}

TEST(Limits, QosMaxJobsPerUserHoldsTheSecondJobWithItsReason) {
  // QOS normal: MaxJobsPerUser 1. User a's jobs 1 and 2 (1 GPU each) would both fit at 3; job 2 waits with
  // QOSMaxJobsPerUserLimit until job 1 ends at 103 (the epilog's schedule() starts it then). User b's job 3
  // starts at once. Without AccountingStorageEnforce=limits the limit is not enforced.
  const std::string jobs = R"([
    {"id": 1, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 2, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 3, "user": "b", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100}])";
  const std::string limit = R"(, "accounting": {"AccountingStorageEnforce": "associations,limits",
      "qos": [{"name": "normal", "MaxJobsPerUser": 1}]})";
  EXPECT_EQ(start_times(run(one_node(jobs, limit))), (std::vector<std::int64_t>{3, 103, 3}));
  const std::string unenforced = R"(, "accounting": {"qos": [{"name": "normal", "MaxJobsPerUser": 1}]})";
  EXPECT_EQ(start_times(run(one_node(jobs, unenforced))), (std::vector<std::int64_t>{3, 3, 3}));
  // The reason while waiting: a job that never gets to run keeps it. Here job 2 runs for ever (limit 1 day).
  const std::string long_jobs = R"([
    {"id": 1, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": "1-00:00:00", "run_time": 86400},
    {"id": 2, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100}])";
  Scenario s = one_node(long_jobs, limit);
  s.inline_jobs[0].run_time_s = 86400;
  auto o = run_scenario(s, RunOptions{});
  EXPECT_EQ(start_times(o)[1], 86403);
}

TEST(Limits, AssocGrpGresAndQosMaxGresPerUserAreCheckedWithTheSelectedTres) {
  // Account A: GrpTRES gres/gpu=4. Jobs 1 and 2 (3 GPUs each, users a1 and a2 in A): 3 + 3 > 4, so job 2
  // waits (AssocGrpGRES) until job 1 ends at 103. Job 3 (account B) starts at 3.
  const std::string jobs = R"([
    {"id": 1, "user": "a1", "account": "A", "submit": 0, "gpus_per_node": 3, "time_limit": 10, "run_time": 100},
    {"id": 2, "user": "a2", "account": "A", "submit": 0, "gpus_per_node": 3, "time_limit": 10, "run_time": 100},
    {"id": 3, "user": "b", "account": "B", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100}])";
  const std::string grp = R"(, "accounting": {"AccountingStorageEnforce": "limits",
      "accounts": [{"name": "A", "GrpTRES": "gres/gpu=4"}, {"name": "B"}]})";
  EXPECT_EQ(start_times(run(one_node(jobs, grp))), (std::vector<std::int64_t>{3, 103, 3}));
  // QOS MaxTRESPerUser gres/gpu=4 with one user: the same shape, reason QOSMaxGRESPerUser.
  const std::string per_user = R"([
    {"id": 1, "user": "a", "submit": 0, "gpus_per_node": 3, "time_limit": 10, "run_time": 100},
    {"id": 2, "user": "a", "submit": 0, "gpus_per_node": 3, "time_limit": 10, "run_time": 1000000}])";
  const std::string qos = R"(, "accounting": {"AccountingStorageEnforce": "limits",
      "qos": [{"name": "normal", "MaxTRESPerUser": "gres/gpu=4"}]})";
  Scenario s = one_node(per_user, qos);
  s.inline_jobs[0].run_time_s = 1000000;  // job 1 never ends within the run's horizon... it ends at its limit
  auto o = run_scenario(s, RunOptions{});
  EXPECT_EQ(start_times(o)[0], 3);
  // Job 1 hits its 10-minute limit: the 30 s time-limit check kills it at 630 (600 + 3 rounded up to 30 s
  // ticks), and job 2 starts then.
  EXPECT_EQ(start_times(o)[1], 630);
}

TEST(Limits, SubmitRejectionsAndPendingForeverWithoutDenyOnLimit) {
  // QOS normal: MaxSubmitJobsPerUser 2 rejects user a's third job at submit. QOS big: MaxTRES gres/gpu=4 with
  // DenyOnLimit rejects job 4 (8 GPUs); QOS wide has the same limit without DenyOnLimit: job 5 stays pending
  // for ever with QOSMaxGRESPerJob.
  const std::string jobs = R"([
    {"id": 1, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 2, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 3, "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 4, "user": "b", "qos": "big", "submit": 0, "gpus_per_node": 8, "time_limit": 10, "run_time": 100},
    {"id": 5, "user": "c", "qos": "wide", "submit": 0, "gpus_per_node": 8, "time_limit": 10, "run_time": 100}])";
  const std::string acc = R"(, "accounting": {"AccountingStorageEnforce": "limits,qos", "qos": [
      {"name": "normal", "MaxSubmitJobsPerUser": 2},
      {"name": "big", "MaxTRES": "gres/gpu=4", "Flags": "DenyOnLimit"},
      {"name": "wide", "MaxTRES": "gres/gpu=4"}]})";
  auto o = run(one_node(jobs, acc));
  const auto r = reasons(o);
  EXPECT_EQ(r.at(1), "COMPLETED");
  EXPECT_EQ(r.at(2), "COMPLETED");
  EXPECT_EQ(r.at(3), "QOSMaxSubmitJobPerUserLimit");
  EXPECT_EQ(r.at(4), "QOSMaxGRESPerJob");
  EXPECT_EQ(r.at(5), "QOSMaxGRESPerJob");
  EXPECT_EQ(o.summary.rejected, 2u);
  EXPECT_EQ(o.state->job(4).state, JobState::kPending);  // job 5 (index 4): never rejected, never started
  // A user's DefaultQOS applies when the job names none: user d's default is "big", so an 8-GPU job is rejected.
  const std::string dflt = R"([{"id": 1, "user": "d", "account": "acct", "submit": 0, "gpus_per_node": 8,
      "time_limit": 10, "run_time": 10}])";
  const std::string acc_d = R"(, "accounting": {"AccountingStorageEnforce": "limits,qos", "qos": [
      {"name": "big", "MaxTRES": "gres/gpu=4", "Flags": "DenyOnLimit"}], "accounts": [{"name": "acct"}],
      "users": [{"user": "d", "account": "acct", "DefaultQOS": "big"}]})";
  EXPECT_EQ(reasons(run(one_node(dflt, acc_d))).at(1), "QOSMaxGRESPerJob");
  // An unknown QOS with AccountingStorageEnforce=qos is rejected (InvalidQOS).
  const std::string bad = R"([{"id": 1, "qos": "nope", "submit": 0, "time_limit": 10, "run_time": 10}])";
  EXPECT_EQ(reasons(run(one_node(bad, acc))).at(1), "InvalidQOS");
}

TEST(Eligibility, ArrayThrottleRunsAtMostNTasks) {
  // --array=0-5%2, 1 GPU each, 100 s: tasks 0 and 1 start at 3, 2 and 3 at 103, 4 and 5 at 203 (each end's
  // epilog schedule() starts the next tasks). Ids are 10..15 (id + k), ArrayJobID 10.
  const std::string jobs =
      R"([{"id": 10, "array": "0-5%2", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100}])";
  auto o = run(one_node(jobs));
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{3, 3, 103, 103, 203, 203}));
  EXPECT_EQ(o.state->spec(5).array_job_id, 10u);
  EXPECT_EQ(o.state->spec(5).array_task_id, 5);
  // Without the throttle all six start at 3.
  const std::string free = R"([{"id": 10, "array": "0-5", "submit": 0, "gpus_per_node": 1, "time_limit": 10,
      "run_time": 100}])";
  EXPECT_EQ(start_times(run(one_node(free))), (std::vector<std::int64_t>(6, 3)));
}

TEST(Eligibility, DependencyChains) {
  // Job 1 fails at 103. afterok:1 (job 2) can never run: DependencyNeverSatisfied. afternotok:1 (job 3) and
  // afterany:1 (job 4) become eligible when job 1 ends; the epilog's schedule() at 103 starts them.
  // after:1+1 (job 5) may start 60 s after job 1 started (3 + 60 = 63): the next pass is the full one at 120
  // (the 60 s full pass at 60 is too early; nothing else triggers a pass before 103... the release at 103 does).
  // Job 6 is afterok:4 (a chain): it starts when job 4 completes at 203.
  const std::string jobs = R"([
    {"id": 1, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "outcome": "FAILED"},
    {"id": 2, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "afterok:1"},
    {"id": 3, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "afternotok:1"},
    {"id": 4, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "afterany:1"},
    {"id": 5, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "after:1+1"},
    {"id": 6, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "afterok:4"}])";
  auto o = run(one_node(jobs));
  const auto starts = start_times(o);
  EXPECT_EQ(starts[0], 3);
  EXPECT_EQ(starts[1], -1);
  EXPECT_EQ(starts[2], 103);
  EXPECT_EQ(starts[3], 103);
  EXPECT_EQ(starts[5], 203);
  EXPECT_EQ(reasons(o).at(2), "DependencyNeverSatisfied");
  EXPECT_GE(starts[4], 63);
  EXPECT_LE(starts[4], 103);
}

TEST(Eligibility, SingletonRunsOneJobOfANameAtATime) {
  // Three jobs named "train" of user a with singleton: one at a time, in submit order: 3, 103, 203.
  const std::string jobs = R"([
    {"id": 1, "name": "train", "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "singleton"},
    {"id": 2, "name": "train", "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "singleton"},
    {"id": 3, "name": "train", "user": "a", "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "singleton"}])";
  EXPECT_EQ(start_times(run(one_node(jobs))), (std::vector<std::int64_t>{3, 103, 203}));
}

TEST(Eligibility, HoldAndBeginTime) {
  // Job 1 is held until 500: the release is a job update. It queues a main-scheduler run for the next
  // background tick (501), but backfill, idle and polling every second since its last cycle (_more_work), sees
  // the update at its 500 poll and starts the job first. Job 2 has --begin=300: nothing triggers a pass when it
  // becomes eligible, so the full pass at 300 (every 60 s) starts it. Job 3 is held for ever.
  const std::string jobs = R"([
    {"id": 1, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "hold_until": 500},
    {"id": 2, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "begin": 300},
    {"id": 3, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "hold_until": "forever"}])";
  auto o = run(one_node(jobs));
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{500, 300, -1}));
  EXPECT_EQ(reasons(o).at(3), "JobHeldUser");
}

TEST(Eligibility, ClassicPoliciesHonourDependencies) {
  const std::string jobs = R"([
    {"id": 1, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 2, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100, "dependency": "afterok:1"}])";
  Scenario s = one_node(jobs);
  s.scheduler.policy = SchedulerPolicy::kFcfs;
  EXPECT_EQ(start_times(run(s)), (std::vector<std::int64_t>{0, 100}));
}

TEST(ScenarioAccounting, ErrorsNameTheField) {
  auto fails_with = [](const std::string& extra, const std::string& expected) {
    try {
      one_node(R"([{"id": 1, "run_time": 1}])", extra);
      ADD_FAILURE() << "accepted: " << extra;
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  fails_with(R"(, "accounting": {"qos": [{"name": "x", "GrpTRES": "gres/gpu=lots"}]})",
             "/accounting/qos/0/GrpTRES: bad value 'lots' for gres/gpu");
  fails_with(R"(, "accounting": {"accounts": [{"name": "x", "parent": "y"}]})",
             "/accounting/accounts/0/parent: no account named 'y'");
  fails_with(R"(, "accounting": {"users": [{"user": "u", "account": "zz"}]})",
             "/accounting/users/0/account: no account named 'zz'");
  fails_with(R"(, "accounting": {"AccountingStorageEnforce": "limitz"})", "/accounting/AccountingStorageEnforce");
  try {
    one_node(R"([{"id": 1, "run_time": 1, "dependency": "afterok:x"}])");
    ADD_FAILURE();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/workload/jobs/0/dependency: 'x' is not a job id"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

// One node, 8 GPUs. Job 1 (QOS low, all 8 GPUs, 1000 s) starts at 3. Job 2 (QOS high, which may preempt low;
// 8 GPUs, 100 s) is submitted at 100; the background tick serves it at 101: it does not fit, so select_nodes
// preempts job 1 (the only candidate) and job 2 waits for its resources.
std::string preemption_jobs() {
  return R"([
    {"id": 1, "qos": "low", "submit": 0, "gpus_per_node": 8, "time_limit": 60, "run_time": 1000},
    {"id": 2, "qos": "high", "submit": 100, "gpus_per_node": 8, "time_limit": 60, "run_time": 100}])";
}
std::string preemption_accounting(const std::string& mode, std::int64_t grace) {
  return R"(, "accounting": {"PreemptType": "preempt/qos", "PreemptMode": ")" + mode + R"(", "qos": [
      {"name": "low", "GraceTime": )" +
         std::to_string(grace) + R"(}, {"name": "high", "Priority": 100,
      "Preempt": ["low"]}]})";
}

TEST(Preemption, QosRequeueRunsThePreemptorAndRequeuesThePreempted) {
  // REQUEUE, GraceTime 0: job 1 ends PREEMPTED at 101, its resources are released at once and job 2 starts at
  // 101. Job 1 returns to PENDING, eligible after the requeue delay (101 + 121 = 222); job 2 ends at 201. The
  // delay passing is not a job update (no scheduler run, no backfill _more_work), so job 1 restarts from
  // scratch at the next full pass, 240; its first run (98 s x 8 GPUs = 784 GPU-seconds) is lost.
  auto o = run(one_node(preemption_jobs(), preemption_accounting("REQUEUE", 0)));
  const auto starts = start_times(o);
  EXPECT_EQ(starts[1], 101);
  EXPECT_EQ(starts[0], 240);
  const JobRuntime& first = o.state->job(0);
  EXPECT_EQ(first.restarts, 1u);
  EXPECT_DOUBLE_EQ(first.lost_gpu_s, 784.0);
  EXPECT_EQ(first.state, JobState::kCompleted);
  EXPECT_EQ(o.summary.requeues, 1u);
  EXPECT_EQ(o.scheduler_stats.preemptions, 1u);
  ASSERT_EQ(o.recorder->preemptions().size(), 1u);
  EXPECT_EQ(o.recorder->preemptions()[0].preemptor, 1u);  // job index of job 2
}

TEST(Preemption, CancelModeAndGraceTime) {
  // CANCEL with GraceTime 30: job 1 is told to leave at 101 and ends PREEMPTED at 131; job 2 starts at 131.
  auto o = run(one_node(preemption_jobs(), preemption_accounting("CANCEL", 30)));
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{3, 131}));
  EXPECT_EQ(o.state->job(0).state, JobState::kPreempted);
  EXPECT_EQ(to_seconds(o.state->job(0).end), 131);
  EXPECT_EQ(o.state->job(0).restarts, 0u);
}

TEST(Preemption, PartitionPriorityTier) {
  // Two partitions over the same node: "hi" (PriorityTier 2) may preempt "lo" (tier 1) with preempt/
  // partition_prio, CANCEL. Job 2 in hi preempts job 1 in lo at 101; without PreemptMode it waits until 1003.
  const std::string jobs = R"([
    {"id": 1, "partition": "lo", "submit": 0, "gpus_per_node": 8, "time_limit": 60, "run_time": 1000},
    {"id": 2, "partition": "hi", "submit": 100, "gpus_per_node": 8, "time_limit": 60, "run_time": 100}])";
  auto scenario = [&](const std::string& mode) {
    const std::string text = R"({"name": "t", "cluster": {"nodes": [{"prefix": "n", "count": 1, "cpus": 64,
        "memory_gb": 512, "gpus": 8}], "partitions": [{"name": "lo", "nodes": "ALL", "default": true},
        {"name": "hi", "nodes": "ALL", "priority_tier": 2}]}, "workload": {"jobs": )" +
                             jobs +
                             R"(}, "scheduler": {"policy": "slurm"}, "accounting": {"PreemptType":
        "preempt/partition_prio", "PreemptMode": ")" +
                             mode + R"("}})";
    return parse_scenario(text, "inline.json", ".");
  };
  EXPECT_EQ(start_times(run(scenario("CANCEL"))), (std::vector<std::int64_t>{3, 101}));
  EXPECT_EQ(start_times(run(scenario("OFF"))), (std::vector<std::int64_t>{3, 1003}));
}

}  // namespace
}  // namespace gputwin

namespace gputwin {
namespace {

Scenario with_reservations(std::uint32_t nodes, const std::string& reservations, const std::string& jobs) {
  const std::string text = R"({"name": "t", "cluster": {"nodes": [{"prefix": "n", "count": )" + std::to_string(nodes) +
                           R"(, "cpus": 64, "memory_gb": 512, "gpus": 8}], "partitions": [{"name": "gpu",
      "nodes": "ALL", "default": true}]}, "reservations": )" +
                           reservations + R"(, "workload": {"jobs": )" + jobs +
                           R"(}, "scheduler": {"policy": "slurm"}})";
  return parse_scenario(text, "inline.json", ".");
}

TEST(Reservations, MaintenanceWindowKeepsOffJobsThatWouldOverlapIt) {
  // One node, MAINT reservation [1000, 2000). At 3, job 1 (limit 30 min: [3, 1803) overlaps) finds no usable
  // node: NODES_BUSY fails the partition, so job 2 waits for backfill at 30 ([30, 630) ends before 1000). Job 3
  // (submitted at 500, limit 10 min: [501, 1101) overlaps) waits too. The window ending is a node update; the
  // main scheduler's tick at 2001 starts job 1 (8 GPUs), and job 3 follows when it ends at 2101.
  const Scenario s = with_reservations(
      1, R"([{"name": "maint", "start": 1000, "duration": "00:16:40", "nodes": "ALL", "flags": "MAINT"}])", R"([
    {"id": 1, "submit": 0, "gpus_per_node": 8, "time_limit": 30, "run_time": 100},
    {"id": 2, "submit": 0, "gpus_per_node": 1, "time_limit": 10, "run_time": 100},
    {"id": 3, "submit": 500, "gpus_per_node": 1, "time_limit": 10, "run_time": 100}])");
  EXPECT_EQ(start_times(run(s)), (std::vector<std::int64_t>{2001, 30, 2101}));
}

TEST(Reservations, TeamReservationAdmitsOnlyItsAccountsAndOnlyWhileActive) {
  // n001 is reserved for account "team" over [0, 400), and again ("later") over [500, 1000). Job 1 (team, in
  // "team") runs on n001 at 3. Job 2 (other account) gets n002 at 3; job 3 (other) must wait for n002 (n001 is
  // reserved for the whole of its run) until job 2 ends at 103. Job 4 asks for "team" from the wrong account:
  // rejected at submit. Job 5 (team, in "later") pends with reason Reservation until the reservation starts at
  // 500, a node update served by the background tick at 501.
  const Scenario s = with_reservations(2, R"([
    {"name": "team", "start": 0, "duration": 400, "nodes": "n001", "accounts": ["team"]},
    {"name": "later", "start": 500, "duration": 500, "nodes": "n001", "accounts": ["team"]}])",
                                       R"([
    {"id": 1, "account": "team", "reservation": "team", "submit": 0, "gpus_per_node": 8, "time_limit": 5, "run_time": 100},
    {"id": 2, "account": "other", "submit": 0, "gpus_per_node": 8, "time_limit": 5, "run_time": 100},
    {"id": 3, "account": "other", "submit": 0, "gpus_per_node": 8, "time_limit": 5, "run_time": 100},
    {"id": 4, "account": "other", "reservation": "team", "submit": 0, "gpus_per_node": 8, "time_limit": 5, "run_time": 100},
    {"id": 5, "account": "team", "reservation": "later", "submit": 0, "gpus_per_node": 8, "time_limit": 5, "run_time": 100}])");
  auto o = run(s);
  EXPECT_EQ(start_times(o), (std::vector<std::int64_t>{3, 3, 103, -1, 501}));
  EXPECT_EQ(testing::node_lists(o)[0], "n001");
  EXPECT_EQ(testing::node_lists(o)[2], "n002");
  EXPECT_EQ(testing::node_lists(o)[4], "n001");
  EXPECT_EQ(reasons(o).at(4), "InvalidReservation");
}

}  // namespace
}  // namespace gputwin
