// Tests for reading job history: the sacct -P fixture of the acme site (tests/model/data/acme/sacct.txt: steps,
// arrays, pending, running, cancelled, timed-out, heterogeneous jobs), the real recording in
// ../shared/slurm-recordings/dev-1 checked against the workload that was submitted, slurmdb JSON of slurmrestd
// v0.0.38 to v0.0.44 (../shared/slurmrestd/examples and recorded), and the exact messages of bad lines.
#include "model/sacct.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "model/errors.hpp"

namespace gputwin {
namespace {

const std::string kAcme = std::string(GPUTWIN_SOURCE_DIR) + "/tests/model/data/acme";
const std::string kDev1 = std::string(GPUTWIN_SHARED_DIR) + "/slurm-recordings/dev-1";
const std::string kRest = std::string(GPUTWIN_SHARED_DIR) + "/slurmrestd";

SacctImport text(const std::string& body, const SacctImportOptions& options = {}) {
  std::istringstream in(body);
  return parse_sacct_text(in, "t.txt", options);
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

const JobSpec& by_id(const SacctImport& h, std::uint64_t id) {
  for (const JobSpec& j : h.jobs) {
    if (j.id == id) return j;
  }
  throw std::runtime_error("no job " + std::to_string(id));
}

TEST(SacctText, AcmeHistory) {
  const SacctImport h = read_sacct(kAcme + "/sacct.txt", SacctFormat::kParsable, {});
  // 17 job records and 4 steps; 3 records left out; the array's pending remainder 1010_[2-7%2] becomes 6 jobs.
  EXPECT_EQ(h.records, 17U);
  EXPECT_EQ(h.steps, 4U);
  EXPECT_EQ(h.skipped,
            (std::map<std::string, std::uint64_t>{{"cancelled before it started", 1},
                                                  {"heterogeneous job component after the first", 1},
                                                  {"still pending, with no time limit to stand for its run time", 1}}));
  ASSERT_EQ(h.jobs.size(), 19U);
  // The epoch is the earliest submit: job 1002 at 2025-03-03T07:59:30 UTC.
  EXPECT_EQ(h.epoch_unix_s, 1740988770);
  EXPECT_EQ(h.synthesized_ids, 6U);
  std::vector<std::uint64_t> ids;
  for (const JobSpec& j : h.jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1001, 1002, 1003, 1005, 1011, 1012, 1034, 1035, 1036, 1037, 1038, 1039,
                                             1020, 1021, 1022, 1023, 1030, 1032, 1033}));

  const JobSpec& a = h.jobs[0];  // 2 nodes x 8 H100, ran 2 h of a 4 h limit
  EXPECT_EQ(a.id, 1001U);
  EXPECT_EQ(a.name, "train-llm");
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.account, "vision");
  EXPECT_EQ(a.partition, "gpu");
  EXPECT_EQ(a.qos, "normal");
  EXPECT_EQ(a.submit_s, 30);  // 08:00:00 - 07:59:30
  EXPECT_EQ(a.observed_start_s, 35);
  EXPECT_EQ(a.nodes, 2U);
  EXPECT_EQ(a.gpus_per_node, 8U);  // gres/gpu=16 over node=2
  EXPECT_EQ(a.cpus, 224U);
  EXPECT_EQ(a.mem_per_node_mb, 512000U);  // mem=1000G = 1024000 MB over 2 nodes
  EXPECT_EQ(a.time_limit_s, 4 * 3600);
  EXPECT_EQ(a.run_time_s, 7200);
  EXPECT_EQ(a.outcome, JobState::kCompleted);
  EXPECT_EQ(a.array_job_id, 0U);
  EXPECT_EQ(a.array_task_id, -1);
  EXPECT_EQ(a.begin_s, -1);

  const JobSpec& failed = by_id(h, 1002);
  EXPECT_EQ(failed.submit_s, 0);
  EXPECT_EQ(failed.outcome, JobState::kFailed);
  EXPECT_EQ(failed.run_time_s, 240);
  EXPECT_EQ(failed.nodes, 1U);
  EXPECT_EQ(failed.gpus_per_node, 1U);
  EXPECT_EQ(failed.cpus, 14U);
  EXPECT_EQ(failed.mem_per_node_mb, 131072U);
  EXPECT_EQ(failed.qos, "high");

  const JobSpec& cancelled = by_id(h, 1003);  // "CANCELLED by 1003" while running
  EXPECT_EQ(cancelled.outcome, JobState::kCancelled);
  EXPECT_EQ(cancelled.run_time_s, 900);
  EXPECT_EQ(cancelled.partition, "debug");

  const JobSpec& timeout = by_id(h, 1005);  // ran exactly its 1 h limit: replayed 1 s past it, so it times out
  EXPECT_EQ(timeout.outcome, JobState::kTimeout);
  EXPECT_EQ(timeout.time_limit_s, 3600);
  EXPECT_EQ(timeout.run_time_s, 3601);

  const JobSpec& task0 = by_id(h, 1011);  // 1010_0, JobIDRaw 1011
  EXPECT_EQ(task0.array_job_id, 1010U);
  EXPECT_EQ(task0.array_task_id, 0);
  EXPECT_EQ(task0.array_max_running, 2U);  // the %2 of the array's pending record applies to every task
  EXPECT_EQ(task0.run_time_s, 1800);
  EXPECT_EQ(by_id(h, 1012).array_task_id, 1);
  EXPECT_EQ(by_id(h, 1012).run_time_s, 1530);
  for (std::size_t k = 0; k < 6; ++k) {  // 1010_[2-7%2]: tasks 2..7, pending, fresh ids above the largest (1033)
    const JobSpec& t = h.jobs[6 + k];
    EXPECT_EQ(t.id, 1034U + k);
    EXPECT_EQ(t.array_job_id, 1010U);
    EXPECT_EQ(t.array_task_id, static_cast<std::int32_t>(2 + k));
    EXPECT_EQ(t.array_max_running, 2U);
    EXPECT_EQ(t.submit_s, 1230);
    EXPECT_EQ(t.observed_start_s, -1);
    EXPECT_EQ(t.run_time_s, 3600);  // pending: runs for its time limit
    EXPECT_EQ(t.gpus_per_node, 1U);
    EXPECT_EQ(t.mem_per_node_mb, 65536U);
  }

  const JobSpec& pending = by_id(h, 1020);  // requested shape (ReqTRES) since it never started
  EXPECT_EQ(pending.nodes, 4U);
  EXPECT_EQ(pending.gpus_per_node, 8U);
  EXPECT_EQ(pending.cpus, 448U);
  EXPECT_EQ(pending.mem_per_node_mb, 1024000U);
  EXPECT_EQ(pending.run_time_s, 4 * 3600);
  EXPECT_EQ(pending.observed_start_s, -1);

  const JobSpec& running = by_id(h, 1021);
  EXPECT_EQ(running.observed_start_s, 3931);  // 09:05:01 - 07:59:30
  EXPECT_EQ(running.run_time_s, 86400);       // runs for its 1-00:00:00 limit
  EXPECT_EQ(running.outcome, JobState::kCompleted);

  EXPECT_EQ(by_id(h, 1022).outcome, JobState::kNodeFail);
  EXPECT_EQ(by_id(h, 1022).run_time_s, 600);

  const JobSpec& het0 = by_id(h, 1023);  // first component of a heterogeneous job; a CPU job
  EXPECT_EQ(het0.partition, "cpu");
  EXPECT_EQ(het0.nodes, 0U);  // one node asked: the selector packs its CPUs
  EXPECT_EQ(het0.gpus_per_node, 0U);
  EXPECT_EQ(het0.cpus, 8U);
  EXPECT_EQ(het0.mem_per_node_mb, 16384U);

  const JobSpec& cfd = by_id(h, 1030);  // asked for 2 nodes (ReqTRES node=2)
  EXPECT_EQ(cfd.nodes, 2U);
  EXPECT_EQ(cfd.cpus, 512U);
  EXPECT_EQ(cfd.mem_per_node_mb, 65536U);
  EXPECT_EQ(cfd.run_time_s, 3 * 3600);

  EXPECT_EQ(by_id(h, 1032).outcome, JobState::kOutOfMemory);
  EXPECT_EQ(by_id(h, 1032).run_time_s, 100);

  const JobSpec& nightly = by_id(h, 1033);  // eligible 30 minutes after submit: --begin
  EXPECT_EQ(nightly.submit_s, 3030);
  EXPECT_EQ(nightly.begin_s, 4830);
  EXPECT_EQ(nightly.observed_start_s, 4831);
}

TEST(SacctText, Options) {
  SacctImportOptions o;
  o.keep_pending = false;
  o.keep_running = false;
  o.keep_cancelled_before_start = true;
  o.eligible_as_begin = false;
  o.epoch_unix_s = 1740988800;  // 08:00:00
  const SacctImport h = read_sacct(kAcme + "/sacct.txt", SacctFormat::kParsable, o);
  EXPECT_EQ(h.skipped, (std::map<std::string, std::uint64_t>{{"heterogeneous job component after the first", 1},
                                                             {"still pending when the history was taken", 8},
                                                             {"still running when the history was taken", 1}}));
  ASSERT_EQ(h.jobs.size(), 12U);
  EXPECT_EQ(h.epoch_unix_s, 1740988800);
  EXPECT_EQ(by_id(h, 1001).submit_s, 0);
  EXPECT_EQ(by_id(h, 1002).submit_s, -30);
  const JobSpec& never = by_id(h, 1004);
  EXPECT_EQ(never.outcome, JobState::kCancelled);
  EXPECT_EQ(never.run_time_s, 0);
  EXPECT_EQ(never.observed_start_s, -1);
  EXPECT_EQ(never.gpus_per_node, 4U);  // requested
  EXPECT_EQ(by_id(h, 1033).begin_s, -1);
}

// What was submitted in the dev-1 recording (workload.json): GPUs, nodes, time limit in minutes, sleep seconds.
struct Submitted {
  std::uint32_t gpus, nodes, limit_min, run_s;
};
const std::vector<Submitted> kDev1Workload = {
    {2, 1, 1, 30},  {4, 1, 2, 36},  {16, 2, 4, 78}, {8, 1, 2, 73},   {1, 1, 2, 46},  {16, 2, 2, 47}, {4, 1, 3, 93},
    {8, 1, 2, 42},  {32, 4, 1, 40}, {8, 1, 2, 45},  {16, 2, 3, 55},  {1, 1, 3, 67},  {8, 1, 2, 90},  {1, 1, 5, 110},
    {1, 1, 4, 115}, {1, 1, 1, 27},  {2, 1, 2, 107}, {1, 1, 4, 88},   {1, 1, 4, 120}, {8, 1, 2, 90},  {2, 1, 1, 31},
    {8, 1, 4, 91},  {1, 1, 3, 76},  {1, 1, 4, 98},  {32, 4, 3, 115}, {8, 1, 3, 98},  {32, 4, 1, 37}, {2, 1, 2, 41},
    {8, 1, 1, 34},  {8, 1, 3, 111}, {1, 1, 5, 115}, {1, 1, 3, 103},  {2, 1, 3, 81},  {1, 1, 3, 87},  {2, 1, 2, 27},
    {32, 4, 3, 78}, {4, 1, 2, 58},  {1, 1, 3, 73},  {2, 1, 3, 88},   {2, 1, 2, 38}};

TEST(SacctText, RealRecordingMatchesWhatWasSubmitted) {
  const SacctImport h = read_sacct(kDev1 + "/sacct.txt", SacctFormat::kParsable, {});
  ASSERT_EQ(h.jobs.size(), 40U);
  EXPECT_EQ(h.records, 40U);
  EXPECT_EQ(h.skipped_total(), 0U);
  EXPECT_EQ(h.epoch_unix_s, 1795313158);  // 2026-11-22T02:05:58, job 1's submit
  for (std::size_t i = 0; i < h.jobs.size(); ++i) {
    const JobSpec& j = h.jobs[i];
    const Submitted& s = kDev1Workload[i];
    EXPECT_EQ(j.id, i + 1);
    EXPECT_EQ(j.nodes, s.nodes) << j.id;
    EXPECT_EQ(j.nodes * j.gpus_per_node, s.gpus) << j.id;
    EXPECT_EQ(j.cpus, 8 * s.gpus) << j.id;  // 8 CPUs per GPU
    EXPECT_EQ(j.time_limit_s, 60 * s.limit_min) << j.id;
    EXPECT_EQ(j.run_time_s, s.run_s) << j.id;  // End - Start equals the sleep to the second
    EXPECT_EQ(j.outcome, JobState::kCompleted);
    EXPECT_TRUE(j.user == "root" || j.user == "nobody") << j.user;
    EXPECT_EQ(j.account, j.user == "root" ? "ml" : "physics");
    EXPECT_EQ(j.partition, "");  // no Partition column: the default partition
  }
  EXPECT_EQ(h.jobs[0].submit_s, 0);
  EXPECT_EQ(h.jobs[0].observed_start_s, 0);
  EXPECT_EQ(h.jobs[0].mem_per_node_mb, 8192U);  // mem=8G on one node
  EXPECT_EQ(h.jobs[2].mem_per_node_mb, 8192U);  // mem=16G over 2 nodes
  EXPECT_EQ(h.jobs[7].submit_s, 126);           // job 8: 02:08:04
  EXPECT_EQ(h.jobs[7].observed_start_s, 305);   // started 02:11:03
}

TEST(SacctText, FormsOfJobIdsStatesAndColumns) {
  // sacct -p (trailing '|'), columns in another order, no JobIDRaw (array tasks get fresh ids), a requeued job
  // printed twice (sacct -D: the last record stands), Unix-time timestamps, TimelimitRaw in minutes, ElapsedRaw.
  const SacctImport h = text(
      "State|JobID|Submit|Start|End|ElapsedRaw|TimelimitRaw|NCPUS|NNodes|ReqMem|Partition|\n"
      "COMPLETED|7_1|1000|1010|1070|60|5|2|1|4000Mn|gpu,debug|\n"
      "COMPLETED|7_3|1000|1010|1040|30|5|2|1|1000Mc||\n"
      "NODE_FAIL|9|1100|1100|1150|50|UNLIMITED|1|1|1G||\n"
      "COMPLETED+|9|1100|1200|1300|100|UNLIMITED|1|1|1G||\n"
      "SPECIAL_EXIT|10|1200|1201|1202|1|10|1|1|||\n"
      "REVOKED|11|1200|None|None||10|1|1|||\n"
      "BOOT_FAIL|12|1300|None|1301||10|1|1|||\n");
  EXPECT_EQ(h.skipped,
            (std::map<std::string, std::uint64_t>{{"earlier record of the same job id (requeued run)", 1},
                                                  {"ended (NODE_FAIL) without starting", 1},
                                                  {"revoked (federated job that ran on another cluster)", 1}}));
  ASSERT_EQ(h.jobs.size(), 4U);
  EXPECT_EQ(h.epoch_unix_s, 1000);
  EXPECT_EQ(h.jobs[0].id, 13U);  // fresh ids above the largest id (12)
  EXPECT_EQ(h.jobs[0].array_job_id, 7U);
  EXPECT_EQ(h.jobs[0].array_task_id, 1);
  EXPECT_EQ(h.jobs[0].time_limit_s, 300);
  EXPECT_EQ(h.jobs[0].run_time_s, 60);
  EXPECT_EQ(h.jobs[0].partition, "gpu");  // pending in gpu,debug: the first
  EXPECT_EQ(h.jobs[0].mem_per_node_mb, 4000U);
  EXPECT_EQ(h.jobs[1].id, 14U);
  EXPECT_EQ(h.jobs[1].mem_per_node_mb, 2000U);  // 1000M per CPU x 2 CPUs
  EXPECT_EQ(h.jobs[2].id, 9U);
  EXPECT_EQ(h.jobs[2].outcome, JobState::kCompleted);  // "COMPLETED+" of the rerun
  EXPECT_EQ(h.jobs[2].run_time_s, 100);
  EXPECT_EQ(h.jobs[2].time_limit_s, kNoTimeLimit);
  EXPECT_EQ(h.jobs[2].mem_per_node_mb, 1024U);
  EXPECT_EQ(h.jobs[3].id, 10U);
  EXPECT_EQ(h.jobs[3].outcome, JobState::kFailed);  // SPECIAL_EXIT
  EXPECT_EQ(h.synthesized_ids, 2U);
}

TEST(SacctText, TresUnits) {
  // Counts and memory as sacct prints them: K/M/G/T are powers of 1024; memory is in MB when bare.
  const SacctImport h = text(
      "JobID|Submit|Start|End|State|AllocTRES\n"
      "1|100|100|160|COMPLETED|cpu=1.5K,mem=1.50T,node=3,gres/gpu:a100=2,gres/gpu:h100=4\n"
      "2|100|100|160|COMPLETED|cpu=2,mem=500K,node=1\n"
      "3|100|100|160|COMPLETED|cpu=2,mem=300,node=1,gres/gpu=3,gres/gpu:h100=3\n");
  ASSERT_EQ(h.jobs.size(), 3U);
  EXPECT_EQ(h.jobs[0].cpus, 1536U);
  EXPECT_EQ(h.jobs[0].nodes, 3U);
  EXPECT_EQ(h.jobs[0].gpus_per_node, 2U);         // 2 + 4 typed GPUs over 3 nodes
  EXPECT_EQ(h.jobs[0].mem_per_node_mb, 524288U);  // 1.5 x 1024 x 1024 MB over 3 nodes
  EXPECT_EQ(h.jobs[1].mem_per_node_mb, 1U);       // 500 KB rounds up to 1 MB
  EXPECT_EQ(h.jobs[2].mem_per_node_mb, 300U);
  EXPECT_EQ(h.jobs[2].gpus_per_node, 3U);  // the untyped count, not untyped + typed
  EXPECT_EQ(h.jobs[2].run_time_s, 60);     // no Elapsed column: End - Start
}

TEST(SacctText, BadLinesNameFileLineAndField) {
  auto err = [](const std::string& body) { return error_of([&] { text(body); }); };
  const std::string header = "JobID|Submit|State|Timelimit\n";
  EXPECT_EQ(err(header + "1|2025-01-01T00:00:00|COMPLETED|01:00:00\n2|yesterday|COMPLETED|01:00:00\n"),
            "t.txt: line 3: Submit: 'yesterday' is not a time (YYYY-MM-DDTHH:MM:SS, Unix seconds, Unknown or None)");
  EXPECT_EQ(err(header + "1|2025-01-01T00:00:00|COMPLETED\n"),
            "t.txt: line 2: expected 4 '|'-separated fields as in the header, found 3");
  EXPECT_EQ(err(header + "1|2025-01-01T00:00:00|WEIRD|01:00:00\n"),
            "t.txt: line 2: State: 'WEIRD' is not a Slurm job state");
  EXPECT_EQ(err(header + "x1|2025-01-01T00:00:00|COMPLETED|01:00:00\n"),
            "t.txt: line 2: JobID: 'x1' is not a job id (123, 123_4, 123_[5-9%2] or a step)");
  EXPECT_EQ(err(header + "5_[1-x]|2025-01-01T00:00:00|PENDING|01:00:00\n"),
            "t.txt: line 2: JobID: '5_[1-x]': bad array task list");
  EXPECT_EQ(err(header + "1|2025-01-01T00:00:00|COMPLETED|soon\n"),
            "t.txt: line 2: Timelimit: 'soon' is not a Slurm time");
  EXPECT_EQ(err(header + "1|Unknown|PENDING|01:00:00\n"),
            "t.txt: line 2: Submit: 'Unknown': every job has a submit time");
  EXPECT_EQ(err("JobID|Submit|AllocTRES|State\n1|2025-01-01T00:00:00|cpu=4,gres/gpu=two|COMPLETED\n"),
            "t.txt: line 2: AllocTRES: 'gres/gpu=two' has a bad count");
  // A count too large for any job (and for int64: the conversion was undefined behaviour; found by fuzz_sacct_text).
  EXPECT_EQ(err("JobID|Submit|AllocTRES|State\n1|2025-01-01T00:00:00|mem=8e72G|COMPLETED\n"),
            "t.txt: line 2: AllocTRES: 'mem=8e72G' has a bad count");
  EXPECT_EQ(err("JobID|Submit|AllocTRES|State\n1|2025-01-01T00:00:00|cpu=inf|COMPLETED\n"),
            "t.txt: line 2: AllocTRES: 'cpu=inf' has a bad count");
  EXPECT_EQ(err("JobID|Submit|Start|State\n1|2025-01-01T00:00:00|Unknown|RUNNING\n"),
            "t.txt: line 2: State 'RUNNING' but no start time");
  EXPECT_EQ(err("JobID|Submit\n1|2025-01-01T00:00:00\n"),
            "t.txt: line 1: the header line has no state column (found JobID|Submit; run sacct -P "
            "--format=JobID,JobIDRaw,JobName,User,Account,Partition,QOS,Submit,Eligible,Start,End,Elapsed,Timelimit,"
            "State,NNodes,NCPUS,ReqTRES,AllocTRES,NodeList)");
  EXPECT_EQ(err(""), "t.txt: empty file: expected sacct -P output with its header line");
  EXPECT_EQ(error_of([] { read_sacct("/nonexistent/h.txt", SacctFormat::kParsable, {}); }),
            "/nonexistent/h.txt: cannot open: No such file or directory");
}

TEST(SacctTime, Formats) {
  std::int64_t t = 0;
  ASSERT_TRUE(parse_sacct_time("1970-01-01T00:00:00", t));
  EXPECT_EQ(t, 0);
  ASSERT_TRUE(parse_sacct_time("2024-02-29 12:34:56", t));  // leap day, space separator
  EXPECT_EQ(t, 1709210096);
  ASSERT_TRUE(parse_sacct_time("1795311973", t));
  EXPECT_EQ(t, 1795311973);
  EXPECT_FALSE(parse_sacct_time("2024-13-01T00:00:00", t));
  EXPECT_FALSE(parse_sacct_time("Unknown", t));
  SacctFormat f = SacctFormat::kParsable;
  ASSERT_TRUE(parse_sacct_format("slurmdb-json", f));
  EXPECT_EQ(f, SacctFormat::kSlurmdbJson);
  EXPECT_EQ(sacct_format_name(SacctFormat::kJson), "sacct-json");
  EXPECT_FALSE(parse_sacct_format("swf", f));
}

TEST(SacctJson, SlurmrestdV0038Example) {
  const SacctImport h = read_sacct(kRest + "/examples/v0.0.38/slurmdb-job.json", SacctFormat::kSlurmdbJson, {});
  EXPECT_EQ(h.source_version, "v0.0.38");
  ASSERT_EQ(h.jobs.size(), 1U);
  const JobSpec& j = h.jobs[0];
  EXPECT_EQ(h.epoch_unix_s, 1795311973);
  EXPECT_EQ(j.id, 1U);
  EXPECT_EQ(j.name, "smoke-run");
  EXPECT_EQ(j.user, "root");
  EXPECT_EQ(j.account, "ml");
  EXPECT_EQ(j.partition, "gpu");
  EXPECT_EQ(j.qos, "normal");
  EXPECT_EQ(j.outcome, JobState::kCancelled);  // state.current "CANCELLED" after it started
  EXPECT_EQ(j.run_time_s, 3);
  EXPECT_EQ(j.time_limit_s, 600);  // time.limit 10 (minutes)
  EXPECT_EQ(j.nodes, 1U);
  EXPECT_EQ(j.gpus_per_node, 2U);  // tres.allocated gres/gpu 2
  EXPECT_EQ(j.cpus, 4U);
  EXPECT_EQ(j.mem_per_node_mb, 4096U);
  EXPECT_EQ(j.observed_start_s, 0);
}

TEST(SacctJson, SlurmrestdV0043Example) {
  const SacctImport h = read_sacct(kRest + "/examples/v0.0.43/slurmdb-jobs.json", SacctFormat::kSlurmdbJson, {});
  EXPECT_EQ(h.source_version, "v0.0.43");
  ASSERT_EQ(h.jobs.size(), 2U);
  EXPECT_EQ(h.epoch_unix_s, 1795311552);
  const JobSpec& first = h.jobs[0];  // no gres/gpu TRES and no submit line: a CPU job
  EXPECT_EQ(first.id, 1U);
  EXPECT_EQ(first.name, "twin43");
  EXPECT_EQ(first.qos, "");
  EXPECT_EQ(first.gpus_per_node, 0U);
  EXPECT_EQ(first.nodes, 0U);
  EXPECT_EQ(first.cpus, 4U);
  EXPECT_EQ(first.time_limit_s, 600);  // {"set": true, "number": 10}
  EXPECT_EQ(first.run_time_s, 6);
  EXPECT_EQ(first.observed_start_s, 2);
  const JobSpec& second = h.jobs[1];
  EXPECT_EQ(second.id, 3U);
  EXPECT_EQ(second.submit_s, 72);
  EXPECT_EQ(second.gpus_per_node, 2U);
  EXPECT_EQ(second.nodes, 1U);
  EXPECT_EQ(second.outcome, JobState::kCancelled);
  EXPECT_EQ(second.run_time_s, 4);
}

TEST(SacctJson, RecordedSlurm2411And2511AllVersions) {
  // Every slurmdb-job-*.json recorded from Slurm 24.11 (v0.0.42) and 25.11 (v0.0.41 to v0.0.44): one job each
  // (none in *-unfound). Only 25.11/v0.0.41's "archived" job was cancelled before it started.
  std::uint64_t files = 0, jobs = 0, records = 0, skipped = 0, from_submit_line = 0;
  for (const auto& version : std::filesystem::recursive_directory_iterator(kRest + "/recorded")) {
    const std::string name = version.path().filename().string();
    if (name.rfind("slurmdb-job-", 0) != 0 || version.path().extension() != ".json") continue;
    const SacctImport h = read_sacct(version.path(), SacctFormat::kSlurmdbJson, {});
    ++files;
    jobs += h.jobs.size();
    records += h.records;
    skipped += h.skipped_total();
    from_submit_line += h.gpus_from_submit_line;
    EXPECT_EQ(h.source_version, version.path().parent_path().filename() == "0.0.41"   ? "v0.0.41"
                                : version.path().parent_path().filename() == "0.0.42" ? "v0.0.42"
                                : version.path().parent_path().filename() == "0.0.43" ? "v0.0.43"
                                                                                      : "v0.0.44")
        << version.path();
  }
  EXPECT_EQ(files, 90U);  // 18 endpoints x 5 recordings
  EXPECT_EQ(records, 85U);
  EXPECT_EQ(skipped, 1U);
  EXPECT_EQ(jobs, 84U);
  // None of these sites accounts gres/gpu, so every GPU job's count comes from its submit line: the 11 gpus-* jobs
  // of each recording, plus "archived" of both v0.0.42 recordings, which is the --gpus 6 job 6354.
  EXPECT_EQ(from_submit_line, 5U * 11 + 2);
}

TEST(SacctJson, RecordedJobsFields) {
  const std::string r2411 = kRest + "/recorded/24.11/0.0.42/";
  const std::string r2511 = kRest + "/recorded/25.11/";
  {
    // sbatch --partition ia --gpus 12 on two nodes; the site does not account gres/gpu: GPUs from submit_line.
    const SacctImport h = read_sacct(r2411 + "slurmdb-job-gpus-multi-nodes.json", SacctFormat::kSlurmdbJson, {});
    ASSERT_EQ(h.jobs.size(), 1U);
    const JobSpec& j = h.jobs[0];
    EXPECT_EQ(j.id, 6371U);
    EXPECT_EQ(j.user, "jthomas");
    EXPECT_EQ(j.account, "biology");
    EXPECT_EQ(j.partition, "ia");
    EXPECT_EQ(j.nodes, 2U);
    EXPECT_EQ(j.gpus_per_node, 6U);
    EXPECT_EQ(j.cpus, 2U);
    EXPECT_EQ(j.time_limit_s, 60);
    EXPECT_EQ(j.run_time_s, 60);  // RUNNING when recorded: runs for its limit
    EXPECT_EQ(h.gpus_from_submit_line, 1U);
  }
  {
    const SacctImport h = read_sacct(r2511 + "0.0.44/slurmdb-job-timeout.json", SacctFormat::kSlurmdbJson, {});
    ASSERT_EQ(h.jobs.size(), 1U);
    EXPECT_EQ(h.jobs[0].id, 5737U);
    EXPECT_EQ(h.jobs[0].outcome, JobState::kTimeout);
    EXPECT_EQ(h.jobs[0].time_limit_s, 60);
    EXPECT_EQ(h.jobs[0].run_time_s, 82);  // elapsed, already past the limit
    EXPECT_EQ(h.jobs[0].observed_start_s, 1);
    EXPECT_EQ(h.jobs[0].mem_per_node_mb, 512U);
  }
  {
    // sbatch --begin now+1hour, still pending: eligible 3600 s after submit.
    const SacctImport h = read_sacct(r2511 + "0.0.41/slurmdb-job-pending.json", SacctFormat::kSlurmdbJson, {});
    ASSERT_EQ(h.jobs.size(), 1U);
    EXPECT_EQ(h.jobs[0].id, 17U);
    EXPECT_EQ(h.jobs[0].begin_s, 3600);
    EXPECT_EQ(h.jobs[0].run_time_s, 60);
    EXPECT_EQ(h.jobs[0].observed_start_s, -1);
    EXPECT_EQ(h.jobs[0].cpus, 1U);
  }
  {
    const SacctImport h = read_sacct(r2511 + "0.0.41/slurmdb-job-archived.json", SacctFormat::kSlurmdbJson, {});
    EXPECT_TRUE(h.jobs.empty());  // CANCELLED, start NO_VAL
    EXPECT_EQ(h.skipped, (std::map<std::string, std::uint64_t>{{"cancelled before it started", 1}}));
  }
  struct Gpus {
    const char* file;
    std::uint32_t nodes, per_node;
  };
  for (const Gpus& g : {Gpus{"slurmdb-job-gpus-gres.json", 1, 4}, Gpus{"slurmdb-job-gpus-per-node.json", 2, 1},
                        Gpus{"slurmdb-job-gpus-per-task.json", 1, 4}, Gpus{"slurmdb-job-gpus-per-socket.json", 1, 4},
                        Gpus{"slurmdb-job-gpus-type.json", 1, 1}, Gpus{"slurmdb-job-gpus-multi-types.json", 1, 1},
                        Gpus{"slurmdb-job-gpus-running.json", 1, 4}}) {
    const SacctImport h = read_sacct(r2511 + "0.0.43/" + g.file, SacctFormat::kSlurmdbJson, {});
    ASSERT_EQ(h.jobs.size(), 1U) << g.file;
    EXPECT_EQ(h.jobs[0].nodes, g.nodes) << g.file;
    EXPECT_EQ(h.jobs[0].gpus_per_node, g.per_node) << g.file;
  }
}

TEST(SacctJson, ArraysHetJobsAndShapes) {
  // v0.0.41+ shapes: numbers as {set, infinite, number}, state lists; an array task, the array's pending
  // remainder ("task": "4-6%2", task_id unset), a second het component, an unlimited time limit.
  const std::string doc = R"({"meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}}, "jobs": [
    {"job_id": 51, "name": "a", "user": "u", "account": "acc", "partition": "p", "qos": "normal",
     "array": {"job_id": 50, "task_id": {"set": true, "infinite": false, "number": 3}, "task": "",
               "limits": {"max": {"running": {"tasks": 2}}}},
     "time": {"submission": 100, "eligible": 100, "start": 110, "end": 170, "elapsed": 60,
              "limit": {"set": true, "infinite": false, "number": 5}},
     "state": {"current": ["COMPLETED"], "reason": "None"}, "nodes": "n1",
     "tres": {"allocated": [{"type": "cpu", "name": "", "count": 8}, {"type": "node", "name": "", "count": 1},
                            {"type": "gres", "name": "gpu:h100", "count": 2}], "requested": []}},
    {"job_id": 50, "array": {"job_id": 50, "task_id": {"set": false, "infinite": false, "number": 0},
                             "task": "4-6%2"},
     "time": {"submission": 100, "start": 0, "end": 0, "elapsed": 0,
              "limit": {"set": true, "infinite": true, "number": 0}},
     "state": {"current": ["PENDING"]}, "nodes": "None assigned",
     "tres": {"requested": [{"type": "cpu", "count": 8}, {"type": "gres", "name": "gpu", "count": 2}]}},
    {"job_id": 60, "het": {"job_id": 59, "job_offset": {"set": true, "infinite": false, "number": 1}},
     "time": {"submission": 90}, "state": {"current": ["COMPLETED"]}}
  ]})";
  const SacctImport h = parse_sacct_json(doc, "j.json", {});
  EXPECT_EQ(h.source_version, "v0.0.42");
  EXPECT_EQ(h.records, 3U);
  // The remainder has no time limit to stand for its run time: its 3 tasks are skipped.
  EXPECT_EQ(h.skipped,
            (std::map<std::string, std::uint64_t>{{"heterogeneous job component after the first", 1},
                                                  {"still pending, with no time limit to stand for its run time", 3}}));
  ASSERT_EQ(h.jobs.size(), 1U);
  EXPECT_EQ(h.jobs[0].id, 51U);
  EXPECT_EQ(h.jobs[0].array_job_id, 50U);
  EXPECT_EQ(h.jobs[0].array_task_id, 3);
  EXPECT_EQ(h.jobs[0].array_max_running, 2U);
  EXPECT_EQ(h.jobs[0].gpus_per_node, 2U);  // typed gres/gpu:h100 counts when no untyped entry is given
  EXPECT_EQ(h.jobs[0].time_limit_s, 300);
  EXPECT_EQ(h.jobs[0].observed_start_s, 10);
}

TEST(SacctJson, BadDocumentsNameThePointer) {
  auto err = [](const std::string& doc) { return error_of([&] { parse_sacct_json(doc, "j.json", {}); }); };
  EXPECT_EQ(err("{\"jobs\": [}"),
            "j.json: invalid JSON: parse error at line 1, column 11: syntax error while parsing value - unexpected "
            "'}'; expected '[', '{', or a literal");
  // A number beyond a double: nlohmann throws out_of_range (not parse_error), which escaped with its message.
  EXPECT_EQ(err("{\"jobs\": 1e999}"), "j.json: invalid JSON: a number too large for a double");
  EXPECT_EQ(err("{\"errors\": [{\"description\": \"Invalid token\", \"error\": \"Unspecified error\"}]}"),
            "j.json: /jobs: missing job array (slurmrestd reported: Invalid token Unspecified error)");
  EXPECT_EQ(err("{\"jobs\": [{\"job_id\": \"7\"}]}"), "j.json: /jobs/0/job_id: expected a number");
  EXPECT_EQ(err("{\"jobs\": [{\"job_id\": 7}]}"), "j.json: /jobs/0/time: missing");
  const std::string queue = kRest + "/recorded/25.11/0.0.44/slurm-jobs.json";  // /slurm/v0.0.44/jobs, not slurmdb
  EXPECT_EQ(error_of([&] { read_sacct(queue, SacctFormat::kSlurmdbJson, {}); }),
            queue +
                ": /jobs/0: this is slurmctld's queue (/slurm/v0.0.XX/jobs), not job history: use "
                "/slurmdb/v0.0.XX/jobs or sacct --json");
  EXPECT_EQ(err("{\"jobs\": [{\"job_id\": 7, \"time\": {\"submission\": 5}, \"state\": {\"current\": [\"ODD\"]}}]}"),
            "j.json: /jobs/0: State: 'ODD' is not a Slurm job state");
  EXPECT_EQ(err("{\"jobs\": [{\"job_id\": 7, \"time\": {\"submission\": 5, \"limit\": \"ten\"}, \"state\": "
                "{\"current\": \"COMPLETED\"}}]}"),
            "j.json: /jobs/0/time/limit: expected a number");
}

}  // namespace
}  // namespace gputwin
