// `gputwin import` on files recorded from a real Slurm 22.05.8 (tests/model/data/local-slurm; its README says how
// they were made): 26 sbatch jobs on 4 nodes x 8 H100 (GPU jobs by --gres and --gpus-per-node, 2-node jobs, an
// array with a %2 throttle, an afterok/afterany chain, a never-satisfied dependency, a timeout, a failure, jobs
// cancelled while pending and while running, a held job released later, a second account and QOS, a reservation),
// read as `sacct -X -P`, `sacct -P` with steps, `sacct --json` and slurmrestd's /slurmdb/v0.0.38/jobs, with the
// cluster's slurm.conf, gres.conf, sacctmgr dump and QOS. Every value below was checked against the recorded files;
// times are seconds after the first submit, 2026-11-22T08:42:49 UTC.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/errors.hpp"
#include "model/sacct.hpp"
#include "model/scenario.hpp"
#include "model/slurm_conf.hpp"

namespace gputwin {
namespace {

const std::string kDir = std::string(GPUTWIN_SOURCE_DIR) + "/tests/model/data/local-slurm";
constexpr std::int64_t kEpoch = 1795336969;  // 2026-11-22T08:42:49 UTC: the submit of jobs 1 to 17

SacctImport history(const std::string& file, SacctFormat format, const SacctImportOptions& options = {}) {
  return read_sacct(kDir + "/" + file, format, options);
}

const JobSpec* find(const SacctImport& h, std::uint64_t id) {
  for (const JobSpec& j : h.jobs) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

std::vector<std::uint64_t> ids_of(const SacctImport& h) {
  std::vector<std::uint64_t> ids;
  for (const JobSpec& j : h.jobs) ids.push_back(j.id);
  return ids;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// What each job that ran should import as (the same from every format). `begin` is the Eligible time when it is
// later than Submit: accounting keeps no --dependency, -H or array-throttle wait, only when the job became eligible.
struct Expected {
  std::uint64_t id;
  const char* name;
  const char* user;
  const char* account;
  const char* partition;
  const char* qos;
  std::int64_t submit, begin, start;
  std::uint32_t nodes, gpus_per_node, cpus;
  std::uint64_t mem_per_node_mb;
  std::int64_t limit_s, run_s;
  JobState outcome;
  std::uint64_t array_job_id;
  std::int32_t task;
};

constexpr JobState kOk = JobState::kCompleted;
// In sacct -X -P order (array tasks after job 17, where sacct prints the array; JSON lists them by job id).
const std::vector<Expected> kRan = {
    {1, "gpu1", "root", "ml", "gpu", "normal", 0, -1, 26, 1, 1, 4, 4096, 300, 20, kOk, 0, -1},
    {2, "gpn2", "root", "ml", "gpu", "high", 0, -1, 1, 1, 2, 8, 8192, 300, 30, kOk, 0, -1},
    {3, "n2-gres4", "root", "ml", "gpu", "normal", 0, -1, 106, 2, 4, 8, 4096, 600, 40, kOk, 0, -1},
    {4, "n2-gpn8", "root", "ml", "gpu", "normal", 0, -1, 81, 2, 8, 2, 1024, 300, 25, kOk, 0, -1},
    {6, "dep-a", "root", "ml", "gpu", "normal", 0, -1, 1, 1, 1, 1, 1024, 120, 10, kOk, 0, -1},
    {7, "dep-b", "root", "ml", "gpu", "normal", 0, 12, 16, 1, 1, 1, 1024, 120, 10, kOk, 0, -1},  // afterok:6
    {8, "dep-c", "root", "ml", "gpu", "normal", 0, 27, 31, 1, 3, 1, 1024, 120, 5, kOk, 0, -1},   // afterany:7
    {9, "fail", "root", "ml", "gpu", "normal", 0, -1, 1, 1, 1, 1, 1024, 120, 5, JobState::kFailed, 0, -1},
    {11, "timeout", "root", "ml", "gpu", "normal", 0, -1, 1, 1, 2, 1, 1024, 60, 83, JobState::kTimeout, 0, -1},
    {13, "held", "root", "ml", "gpu", "normal", 0, 31, 41, 1, 1, 1, 1024, 120, 10, kOk, 0, -1},  // released at 31
    {14, "vision", "root", "vision", "gpu", "low", 0, -1, 1, 1, 4, 1, 1024, 180, 15, kOk, 0, -1},
    {15, "debug1", "root", "ml", "debug", "normal", 0, -1, 1, 1, 1, 1, 1024, 120, 10, kOk, 0, -1},
    {16, "resv", "root", "ml", "gpu", "normal", 0, -1, 1, 1, 2, 1, 1024, 120, 10, kOk, 0, -1},
    {21, "arr", "root", "ml", "gpu", "normal", 0, -1, 11, 1, 1, 1, 1024, 180, 10, kOk, 5, 0},
    {22, "arr", "root", "ml", "gpu", "normal", 0, -1, 21, 1, 1, 1, 1024, 180, 13, kOk, 5, 1},
    {23, "arr", "root", "ml", "gpu", "normal", 0, 22, 26, 1, 1, 1, 1024, 180, 16, kOk, 5, 2},  // %2: waited
    {24, "arr", "root", "ml", "gpu", "normal", 0, 35, 36, 1, 1, 1, 1024, 180, 19, kOk, 5, 3},
    {25, "arr", "root", "ml", "gpu", "normal", 0, 45, 46, 1, 1, 1, 1024, 180, 22, kOk, 5, 4},
    {5, "arr", "root", "ml", "gpu", "normal", 0, 56, 56, 1, 1, 1, 1024, 180, 25, kOk, 5, 5},  // the last task keeps 5
    {18, "cpu-only", "root", "ml", "gpu", "normal", 1, -1, 1, 0, 0, 4, 4096, 120, 5, kOk, 0, -1},
    {19, "phys", "nobody", "physics", "gpu", "normal", 1, -1, 21, 1, 2, 1, 1024, 240, 20, kOk, 0, -1},
    {20, "phys-n2", "nobody", "physics", "gpu", "high", 1, -1, 1, 2, 1, 2, 1024, 180, 15, kOk, 0, -1},
    {26, "cancel-running", "root", "ml", "gpu", "normal", 161, -1, 162, 1, 1, 1, 1024, 300, 12, JobState::kCancelled, 0,
     -1},
};

// Checks `job` against `e`; `throttle` is the array's %N as the format records it.
void expect_job(const JobSpec& job, const Expected& e, std::uint32_t throttle, const std::string& format) {
  SCOPED_TRACE(format + " job " + std::to_string(e.id) + " (" + e.name + ")");
  EXPECT_EQ(job.id, e.id);
  EXPECT_EQ(job.name, e.name);
  EXPECT_EQ(job.user, e.user);
  EXPECT_EQ(job.account, e.account);
  EXPECT_EQ(job.partition, e.partition);
  EXPECT_EQ(job.qos, e.qos);
  EXPECT_EQ(job.submit_s, e.submit);
  EXPECT_EQ(job.begin_s, e.begin);
  EXPECT_EQ(job.hold_until_s, -1);  // a hold shows only as the later eligible time
  EXPECT_EQ(job.observed_start_s, e.start);
  EXPECT_EQ(job.nodes, e.nodes);
  EXPECT_EQ(job.gpus_per_node, e.gpus_per_node);
  EXPECT_EQ(job.cpus, e.cpus);
  EXPECT_EQ(job.mem_per_node_mb, e.mem_per_node_mb);
  EXPECT_EQ(job.time_limit_s, e.limit_s);
  EXPECT_EQ(job.run_time_s, e.run_s);
  EXPECT_EQ(job.outcome, e.outcome);
  EXPECT_EQ(job.array_job_id, e.array_job_id);
  EXPECT_EQ(job.array_task_id, e.task);
  EXPECT_EQ(job.array_max_running, e.array_job_id != 0 ? throttle : 0U);
  EXPECT_EQ(job.dependency, "");  // Slurm 22.05 accounting does not keep --dependency (no sacct column, no JSON key)
  EXPECT_EQ(job.nice, 0);         // nor --nice (job 15 had --nice=100)
  EXPECT_EQ(job.reservation, "");
  EXPECT_FALSE(job.exclusive);
}

void expect_all_ran(const SacctImport& h, std::uint32_t throttle, const std::string& format) {
  ASSERT_EQ(h.jobs.size(), kRan.size()) << format;
  for (const Expected& e : kRan) {
    const JobSpec* j = find(h, e.id);
    ASSERT_NE(j, nullptr) << format << ": no job " << e.id;
    expect_job(*j, e, throttle, format);
  }
}

// The three records that never started: 10 (afterok on the failed job 9, scancel'ed when it was
// DependencyNeverSatisfied), 12 (--begin=now+3600, scancel'ed pending) and 17 (scancel'ed pending).
const std::map<std::string, std::uint64_t> kSkippedCancelled = {{"cancelled before it started", 3}};

TEST(LocalSlurmSacct, ParsableJobs) {
  const SacctImport h = history("sacct.txt", SacctFormat::kParsable);
  EXPECT_EQ(h.records, 26U);
  EXPECT_EQ(h.steps, 0U);
  EXPECT_EQ(h.skipped, kSkippedCancelled);
  EXPECT_EQ(h.epoch_unix_s, kEpoch);
  EXPECT_EQ(h.synthesized_ids, 0U);  // JobIDRaw gives every array task its own id
  EXPECT_EQ(h.source_version, "");
  EXPECT_EQ(ids_of(h), (std::vector<std::uint64_t>{1,  2,  3,  4,  6,  7,  8, 9,  11, 13, 14, 15,
                                                   16, 21, 22, 23, 24, 25, 5, 18, 19, 20, 26}));
  // sacct -P text keeps no array throttle once every task has started (JobID "5_3", no "%2"): 0.
  expect_all_ran(h, 0, "sacct");
}

TEST(LocalSlurmSacct, ParsableWithStepsGivesTheSameJobs) {
  const SacctImport steps = history("sacct-steps.txt", SacctFormat::kParsable);
  EXPECT_EQ(steps.records, 26U);
  EXPECT_EQ(steps.steps, 23U);  // one .batch step per job that started
  EXPECT_EQ(steps.skipped, kSkippedCancelled);
  EXPECT_EQ(steps.epoch_unix_s, kEpoch);
  expect_all_ran(steps, 0, "sacct with steps");
  const SacctImport jobs = history("sacct.txt", SacctFormat::kParsable);
  EXPECT_EQ(ids_of(steps), ids_of(jobs));
}

TEST(LocalSlurmSacct, DefaultColumnsAreRejectedWithTheColumnsToAskFor) {
  // `sacct -P` without --format prints JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode: no submit time.
  const std::string file = kDir + "/sacct-default.txt";
  std::string message;
  try {
    read_sacct(file, SacctFormat::kParsable, {});
  } catch (const TraceError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, file +
                         ": line 1: the header line has no submit column (found "
                         "JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode; run sacct -P "
                         "--format=JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,"
                         "Elapsed,Timelimit,State,NNodes,NCPUS,ReqTRES,AllocTRES,NodeList)");
}

TEST(LocalSlurmSacct, SacctJson) {
  const SacctImport h = history("sacct.json", SacctFormat::kJson);
  EXPECT_EQ(h.source_version, "v0.0.38");  // 22.05's sacct --json uses the openapi/dbv0.0.38 plugin
  EXPECT_EQ(h.records, 26U);
  EXPECT_EQ(h.steps, 0U);
  EXPECT_EQ(h.skipped, kSkippedCancelled);
  EXPECT_EQ(h.epoch_unix_s, kEpoch);
  EXPECT_EQ(h.gpus_from_submit_line, 0U);  // gres/gpu is accounted (AccountingStorageTRES=gres/gpu)
  EXPECT_EQ(ids_of(h), (std::vector<std::uint64_t>{1,  2,  3,  4,  5,  6,  7,  8,  9,  11, 13, 14,
                                                   15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26}));
  // The %2 is on the array's own record (job 5: array.limits.max.running.tasks 2) and applies to every task.
  expect_all_ran(h, 2, "sacct-json");
}

TEST(LocalSlurmSacct, SlurmdbJson) {
  const SacctImport h = history("slurmdb-jobs.json", SacctFormat::kSlurmdbJson);
  EXPECT_EQ(h.source_version, "v0.0.38");
  EXPECT_EQ(h.records, 26U);
  EXPECT_EQ(h.skipped, kSkippedCancelled);
  EXPECT_EQ(h.epoch_unix_s, kEpoch);
  EXPECT_EQ(h.gpus_from_submit_line, 0U);
  expect_all_ran(h, 2, "slurmdb-json");
}

TEST(LocalSlurmSacct, ThreeFormatsAgreeOnEveryJob) {
  const SacctImport text = history("sacct.txt", SacctFormat::kParsable);
  const SacctImport json = history("sacct.json", SacctFormat::kJson);
  const SacctImport rest = history("slurmdb-jobs.json", SacctFormat::kSlurmdbJson);
  ASSERT_EQ(text.jobs.size(), json.jobs.size());
  ASSERT_EQ(text.jobs.size(), rest.jobs.size());
  EXPECT_EQ(text.epoch_unix_s, json.epoch_unix_s);
  EXPECT_EQ(text.epoch_unix_s, rest.epoch_unix_s);
  for (const JobSpec& t : text.jobs) {
    for (const SacctImport* other : {&json, &rest}) {
      const JobSpec* o = find(*other, t.id);
      ASSERT_NE(o, nullptr) << t.id;
      SCOPED_TRACE("job " + std::to_string(t.id));
      EXPECT_EQ(o->name, t.name);
      EXPECT_EQ(o->user, t.user);
      EXPECT_EQ(o->account, t.account);
      EXPECT_EQ(o->partition, t.partition);
      EXPECT_EQ(o->qos, t.qos);
      EXPECT_EQ(o->submit_s, t.submit_s);
      EXPECT_EQ(o->begin_s, t.begin_s);
      EXPECT_EQ(o->observed_start_s, t.observed_start_s);
      EXPECT_EQ(o->nodes, t.nodes);
      EXPECT_EQ(o->gpus_per_node, t.gpus_per_node);
      EXPECT_EQ(o->cpus, t.cpus);
      EXPECT_EQ(o->mem_per_node_mb, t.mem_per_node_mb);
      EXPECT_EQ(o->time_limit_s, t.time_limit_s);
      EXPECT_EQ(o->run_time_s, t.run_time_s);
      EXPECT_EQ(o->outcome, t.outcome);
      EXPECT_EQ(o->array_job_id, t.array_job_id);
      EXPECT_EQ(o->array_task_id, t.array_task_id);
      EXPECT_EQ(o->dependency, t.dependency);
      // The only difference: the JSON keeps the array's throttle, sacct text does not.
      EXPECT_EQ(o->array_max_running, t.array_job_id != 0 ? 2U : 0U);
      EXPECT_EQ(t.array_max_running, 0U);
    }
  }
}

TEST(LocalSlurmSacct, CancelledBeforeStartKeptOnRequest) {
  SacctImportOptions keep;
  keep.keep_cancelled_before_start = true;
  for (const auto& [file, format] : {std::pair<const char*, SacctFormat>{"sacct.txt", SacctFormat::kParsable},
                                     {"sacct.json", SacctFormat::kJson},
                                     {"slurmdb-jobs.json", SacctFormat::kSlurmdbJson}}) {
    SCOPED_TRACE(file);
    const SacctImport h = history(file, format, keep);
    EXPECT_TRUE(h.skipped.empty());
    ASSERT_EQ(h.jobs.size(), 26U);
    struct Never {
      std::uint64_t id;
      std::int64_t begin, limit_s;
      std::uint32_t nodes, gpus_per_node, cpus;
      std::uint64_t mem_per_node_mb;
    };
    // Shapes from ReqTRES / tres.requested. Job 10 was never eligible (Eligible Unknown / 0), job 12 would have
    // been at its --begin, an hour after submit; job 17 became eligible 1 s after submit.
    for (const Never& n :
         {Never{10, -1, 120, 1, 1, 1, 1024}, Never{12, 3600, 600, 4, 8, 4, 1024}, Never{17, 1, 300, 1, 1, 1, 1024}}) {
      const JobSpec* j = find(h, n.id);
      ASSERT_NE(j, nullptr) << n.id;
      EXPECT_EQ(j->outcome, JobState::kCancelled) << n.id;
      EXPECT_EQ(j->run_time_s, 0) << n.id;
      EXPECT_EQ(j->observed_start_s, -1) << n.id;
      EXPECT_EQ(j->submit_s, 0) << n.id;
      EXPECT_EQ(j->begin_s, n.begin) << n.id;
      EXPECT_EQ(j->time_limit_s, n.limit_s) << n.id;
      EXPECT_EQ(j->nodes, n.nodes) << n.id;
      EXPECT_EQ(j->gpus_per_node, n.gpus_per_node) << n.id;
      EXPECT_EQ(j->cpus, n.cpus) << n.id;
      EXPECT_EQ(j->mem_per_node_mb, n.mem_per_node_mb) << n.id;
    }
  }
}

TEST(LocalSlurmSacct, MidRunSnapshotWithThePendingArrayRemainder) {
  // sacct -X -P 6 s after the submissions: jobs running and pending, "5_[0-5%2]" for the array's tasks (none
  // started yet). Jobs not yet eligible (dependencies 7, 8, 10; --begin 12; held 13) are not listed by sacct.
  const SacctImport h = history("sacct-midrun.txt", SacctFormat::kParsable);
  EXPECT_EQ(h.records, 15U);
  EXPECT_TRUE(h.skipped.empty());
  EXPECT_EQ(h.epoch_unix_s, kEpoch);
  EXPECT_EQ(h.synthesized_ids, 6U);
  // The remainder becomes one pending job per task, in place, with fresh ids above the largest (20).
  EXPECT_EQ(ids_of(h),
            (std::vector<std::uint64_t>{1, 2, 3, 4, 6, 9, 11, 14, 15, 16, 17, 21, 22, 23, 24, 25, 26, 18, 19, 20}));
  for (std::int32_t task = 0; task < 6; ++task) {
    const JobSpec* t = find(h, 21U + static_cast<std::uint64_t>(task));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->array_job_id, 5U);
    EXPECT_EQ(t->array_task_id, task);
    EXPECT_EQ(t->array_max_running, 2U);  // the %2
    EXPECT_EQ(t->submit_s, 0);
    EXPECT_EQ(t->observed_start_s, -1);
    EXPECT_EQ(t->run_time_s, 180);  // pending: runs for its --time=3
    EXPECT_EQ(t->nodes, 1U);
    EXPECT_EQ(t->gpus_per_node, 1U);
    EXPECT_EQ(t->mem_per_node_mb, 1024U);
  }
  const JobSpec* running = find(h, 2);  // RUNNING: runs for its limit
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->observed_start_s, 1);
  EXPECT_EQ(running->run_time_s, 300);
  EXPECT_EQ(running->outcome, JobState::kCompleted);
  EXPECT_EQ(running->gpus_per_node, 2U);
  const JobSpec* failing = find(h, 9);  // still running then; it fails later
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ(failing->outcome, JobState::kCompleted);
  EXPECT_EQ(failing->run_time_s, 120);
  const JobSpec* pending = find(h, 3);  // PENDING 2-node job: its shape from ReqTRES (gres/gpu=8, node=2)
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->observed_start_s, -1);
  EXPECT_EQ(pending->nodes, 2U);
  EXPECT_EQ(pending->gpus_per_node, 4U);
  EXPECT_EQ(pending->cpus, 8U);
  EXPECT_EQ(pending->mem_per_node_mb, 4096U);
  EXPECT_EQ(pending->run_time_s, 600);
  const JobSpec* wide = find(h, 4);
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->nodes, 2U);
  EXPECT_EQ(wide->gpus_per_node, 8U);
  const JobSpec* late = find(h, 17);  // eligible 1 s after submit
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->begin_s, 1);
}

TEST(LocalSlurmConf, SlurmConfAndGresConf) {
  SlurmConf conf = read_slurm_conf(kDir + "/slurm.conf");
  EXPECT_EQ(conf.cluster_name, "twin");
  ASSERT_EQ(conf.nodes.size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) {
    const SlurmNode& n = conf.nodes[i];
    SCOPED_TRACE(n.name);
    EXPECT_EQ(n.name, "gpu0" + std::to_string(i + 1));
    EXPECT_EQ(n.cpus, 64U);
    EXPECT_EQ(n.boards, 1U);
    EXPECT_EQ(n.sockets, 2U);  // Boards=1 x SocketsPerBoard=2
    EXPECT_EQ(n.cores_per_socket, 32U);
    EXPECT_EQ(n.threads_per_core, 1U);
    EXPECT_EQ(n.real_memory_mb, 512000U);
    EXPECT_EQ(n.gpus, 8U);
    EXPECT_EQ(n.gpu_type, "h100");
    EXPECT_FALSE(n.mixed_gpu_types);
    EXPECT_EQ(n.weight, 1U);
    EXPECT_EQ(n.state, "UNKNOWN");
    EXPECT_EQ(n.source.line, 64U + i);
  }
  ASSERT_EQ(conf.partitions.size(), 2U);
  const SlurmPartition& gpu = conf.partitions[0];
  EXPECT_EQ(gpu.name, "gpu");
  EXPECT_EQ(gpu.nodes_expr, "gpu[01-04]");
  EXPECT_EQ(gpu.nodes, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(gpu.is_default);
  EXPECT_EQ(gpu.max_time_s, -1);  // MaxTime=INFINITE
  EXPECT_FALSE(gpu.default_time_s.has_value());
  EXPECT_EQ(gpu.state, "UP");
  EXPECT_EQ(gpu.priority_job_factor, 1U);
  const SlurmPartition& debug = conf.partitions[1];
  EXPECT_EQ(debug.name, "debug");
  EXPECT_EQ(debug.nodes, (std::vector<std::size_t>{0, 1}));
  EXPECT_FALSE(debug.is_default);
  EXPECT_EQ(debug.max_time_s, 3600);
  EXPECT_EQ(debug.priority_job_factor, 10U);

  EXPECT_EQ(conf.scheduler_type, "sched/backfill");
  EXPECT_EQ(conf.select_type, "select/cons_tres");
  EXPECT_EQ(conf.select_type_parameters, "CR_Core_Memory");
  EXPECT_EQ(conf.scheduler.bf_interval, 5);
  EXPECT_EQ(conf.scheduler.bf_resolution, 60);
  EXPECT_FALSE(conf.scheduler.sched_interval.has_value());
  EXPECT_EQ(conf.kill_wait_s, 5);
  EXPECT_FALSE(conf.over_time_limit_min.has_value());
  const SlurmPriorityParameters& p = conf.priority;
  EXPECT_EQ(p.type, "priority/multifactor");
  EXPECT_EQ(p.weight_age, 1000U);
  EXPECT_EQ(p.weight_fairshare, 10000U);
  EXPECT_EQ(p.weight_job_size, 1000U);
  EXPECT_EQ(p.weight_partition, 1000U);
  EXPECT_EQ(p.weight_qos, 1000U);
  EXPECT_FALSE(p.weight_assoc.has_value());
  EXPECT_EQ(p.weight_tres, "GRES/gpu=1000");
  EXPECT_EQ(p.calc_period_s, 60);         // PriorityCalcPeriod=1 (minutes)
  EXPECT_EQ(p.decay_half_life_s, 86400);  // 1-0
  EXPECT_EQ(conf.accounting_storage_enforce, "associations,limits,qos");
  std::vector<std::string> not_modelled;
  for (const ConfSetting& s : conf.not_modelled) not_modelled.push_back(s.key);
  EXPECT_EQ(not_modelled, (std::vector<std::string>{"DefMemPerCPU"}));

  const GresConf gres = read_gres_conf(kDir + "/gres.conf");
  EXPECT_EQ(gres.autodetect, "off");
  ASSERT_EQ(gres.gpus.size(), 4U);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(gres.gpus[i].nodes, (std::vector<std::string>{"gpu0" + std::to_string(i + 1)}));
    EXPECT_EQ(gres.gpus[i].type, "h100");
    EXPECT_EQ(gres.gpus[i].count, 8U);  // File=.../nvidia[0-7]
  }
  EXPECT_TRUE(gres.not_modelled.empty());
  EXPECT_TRUE(apply_gres_conf(conf, gres).empty());  // slurm.conf and gres.conf agree
}

TEST(LocalSlurmConf, SacctmgrDumpAndQos) {
  const SacctmgrDump dump = read_sacctmgr_dump(kDir + "/sacctmgr-dump.cfg");
  EXPECT_EQ(dump.cluster, "twin");
  EXPECT_EQ(dump.root.fairshare, 1U);
  EXPECT_EQ(dump.root.qos, "normal");
  ASSERT_EQ(dump.accounts.size(), 3U);
  EXPECT_EQ(dump.accounts[0].name, "ml");
  EXPECT_EQ(dump.accounts[0].parent, "root");
  EXPECT_EQ(dump.accounts[0].fairshare, 1U);
  EXPECT_EQ(dump.accounts[1].name, "physics");
  EXPECT_EQ(dump.accounts[1].parent, "root");
  EXPECT_EQ(dump.accounts[1].fairshare, 3U);
  EXPECT_EQ(dump.accounts[2].name, "vision");
  EXPECT_EQ(dump.accounts[2].parent, "ml");
  EXPECT_EQ(dump.accounts[2].fairshare, 2U);
  ASSERT_EQ(dump.users.size(), 4U);
  const std::vector<std::pair<std::string, std::string>> users = {
      {"root", "root"}, {"root", "ml"}, {"root", "vision"}, {"nobody", "physics"}};
  for (std::size_t i = 0; i < users.size(); ++i) {
    EXPECT_EQ(dump.users[i].name, users[i].first) << i;
    EXPECT_EQ(dump.users[i].parent, users[i].second) << i;
    EXPECT_EQ(dump.users[i].fairshare, 1U) << i;
    EXPECT_EQ(dump.users[i].default_account, users[i].first == "root" ? "ml" : "physics") << i;
    EXPECT_EQ(dump.users[i].qos, users[i].first == "root" ? "high,low,normal" : "high,normal") << i;
  }

  const std::vector<SacctmgrQos> qos = read_sacctmgr_qos(kDir + "/qos.txt");
  ASSERT_EQ(qos.size(), 3U);
  EXPECT_EQ(qos[0].name, "normal");
  EXPECT_EQ(qos[0].priority, 0U);
  EXPECT_EQ(qos[1].name, "high");
  EXPECT_EQ(qos[1].priority, 1000U);
  EXPECT_EQ(qos[2].name, "low");
  EXPECT_EQ(qos[2].priority, 10U);
  EXPECT_EQ(qos[2].max_wall_s, 1800);
  for (const SacctmgrQos& q : qos) {
    EXPECT_EQ(q.usage_factor, 1.0) << q.name;
    EXPECT_EQ(q.preempt_mode, "") << q.name;  // "cluster": inherit
    EXPECT_EQ(q.grace_time_s, 0) << q.name;
    EXPECT_TRUE(q.preempt.empty()) << q.name;
    EXPECT_TRUE(q.other.empty()) << q.name;
  }
  EXPECT_FALSE(qos[0].max_wall_s.has_value());
}

// `gputwin import` (the built command) on the recorded site and each history format: the scenario loads with the
// model API, its workload is exactly what read_sacct gives, and `gputwin validate` and `gputwin run` accept it.
TEST(LocalSlurmImport, ScenarioFromEachFormatValidatesAndRuns) {
  const std::filesystem::path gputwin = std::filesystem::path(GPUTWIN_BINARY_DIR) / "gputwin";
  if (!std::filesystem::exists(gputwin)) GTEST_SKIP() << gputwin << " is not built";
  const std::filesystem::path out = std::filesystem::path(GPUTWIN_BINARY_DIR) / "local-slurm-import";
  std::filesystem::create_directories(out);
  for (const auto& [file, format] : {std::pair<const char*, SacctFormat>{"sacct.txt", SacctFormat::kParsable},
                                     {"sacct.json", SacctFormat::kJson},
                                     {"slurmdb-jobs.json", SacctFormat::kSlurmdbJson}}) {
    const std::string name(sacct_format_name(format));
    SCOPED_TRACE(name);
    const std::filesystem::path scenario_file = out / (name + ".json");
    const std::filesystem::path err_file = out / (name + ".err");
    const std::string import = "'" + gputwin.string() + "' import '" + kDir + "/slurm.conf' --gres '" + kDir +
                               "/gres.conf' --assoc '" + kDir + "/sacctmgr-dump.cfg' --qos '" + kDir +
                               "/qos.txt' --sacct '" + kDir + "/" + file + "' --sacct-format " + name + " > '" +
                               scenario_file.string() + "' 2> '" + err_file.string() + "'";
    ASSERT_EQ(std::system(import.c_str()), 0) << read_text(err_file);
    const std::string notes = read_text(err_file);
    EXPECT_NE(notes.find(": 23 jobs of 2 users in 3 accounts; epoch (submit 0) 2026-11-22T08:42:49 = Unix 1795336969"),
              std::string::npos)
        << notes;
    EXPECT_NE(notes.find("history: skipped 3: cancelled before it started"), std::string::npos) << notes;

    const Scenario s = parse_scenario(read_text(scenario_file), scenario_file.string(), out);
    EXPECT_EQ(s.name, "twin");
    ASSERT_EQ(s.cluster.nodes.size(), 4U);
    for (const NodeConfig& n : s.cluster.nodes) {
      EXPECT_EQ(n.cpus, 64U) << n.name;
      EXPECT_EQ(n.gpus, 8U) << n.name;
      EXPECT_EQ(n.gpu_type, "h100") << n.name;
      EXPECT_EQ(n.memory_mb, 512000U) << n.name;
    }
    EXPECT_EQ(s.cluster.nodes[3].name, "gpu04");
    ASSERT_EQ(s.cluster.partitions.size(), 2U);
    EXPECT_EQ(s.cluster.partitions[0].name, "gpu");
    EXPECT_TRUE(s.cluster.partitions[0].is_default);
    EXPECT_EQ(s.cluster.partitions[0].nodes.size(), 4U);
    EXPECT_EQ(s.cluster.partitions[1].name, "debug");
    EXPECT_EQ(s.cluster.partitions[1].nodes.size(), 2U);
    EXPECT_EQ(s.cluster.partitions[1].max_time_s, 3600);
    EXPECT_EQ(s.cluster.partitions[1].priority_job_factor, 10U);
    EXPECT_EQ(s.scheduler.policy, SchedulerPolicy::kSlurm);
    EXPECT_EQ(s.scheduler.slurm.bf_interval_s, 5);
    EXPECT_EQ(s.scheduler.slurm.kill_wait_s, 5);
    EXPECT_TRUE(s.scheduler.priority.multifactor);
    EXPECT_EQ(s.scheduler.priority.weight_fairshare, 10000U);
    EXPECT_EQ(s.scheduler.priority.weight_tres_gpu, 1000.0);
    EXPECT_EQ(s.scheduler.priority.calc_period_s, 60);
    EXPECT_EQ(s.accounting.qos.size(), 3U);
    EXPECT_EQ(s.accounting.accounts.size(), 3U);
    EXPECT_EQ(s.accounting.users.size(), 3U);  // root's association directly under root is left out
    ASSERT_TRUE(s.has_trace);
    EXPECT_EQ(s.trace.format, name);

    const std::vector<JobSpec> jobs = load_workload(s);
    const SacctImport direct = history(file, format);
    ASSERT_EQ(jobs.size(), direct.jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      EXPECT_EQ(jobs[i].id, direct.jobs[i].id);
      EXPECT_EQ(jobs[i].submit_s, direct.jobs[i].submit_s);
      EXPECT_EQ(jobs[i].run_time_s, direct.jobs[i].run_time_s);
      EXPECT_EQ(jobs[i].gpus_per_node, direct.jobs[i].gpus_per_node);
      EXPECT_EQ(jobs[i].array_max_running, direct.jobs[i].array_max_running);
    }

    const std::filesystem::path validate_out = out / (name + ".validate");
    ASSERT_EQ(std::system(("'" + gputwin.string() + "' validate '" + scenario_file.string() + "' > '" +
                           validate_out.string() + "' 2>&1")
                              .c_str()),
              0)
        << read_text(validate_out);
    EXPECT_NE(read_text(validate_out).find("OK: scenario 'twin', 4 nodes, 2 partitions, 23 jobs, policy slurm"),
              std::string::npos)
        << read_text(validate_out);

    const std::filesystem::path run_out = out / (name + ".run");
    ASSERT_EQ(std::system(("'" + gputwin.string() + "' run '" + scenario_file.string() + "' --no-results > '" +
                           run_out.string() + "' 2>&1")
                              .c_str()),
              0)
        << read_text(run_out);
    // Every job replays, with the recorded outcomes: job 26 CANCELLED, 9 FAILED, 11 TIMEOUT.
    EXPECT_NE(read_text(run_out).find("jobs       23 (CANCELLED 1  COMPLETED 20  FAILED 1  TIMEOUT 1  rejected at "
                                      "submit 0)"),
              std::string::npos)
        << read_text(run_out);
  }
}

}  // namespace
}  // namespace gputwin
