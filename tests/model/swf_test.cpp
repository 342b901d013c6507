// Tests for SWF reading, writing and conversion to jobs, on inline traces and on two real logs from the Parallel
// Workloads Archive (HPC2N) and MetaCentrum (extended SWF), see /work/shared/traces/README.md.
#include "model/swf.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "model/errors.hpp"

namespace gputwin {
namespace {

const std::string kHpc2n = std::string(GPUTWIN_SHARED_DIR) + "/traces/hpc2n-subset.swf";
const std::string kMetacentrum = std::string(GPUTWIN_SHARED_DIR) + "/traces/metacentrum-wagap-2013.swf";

SwfTrace parse(const std::string& text) {
  std::istringstream in(text);
  return parse_swf(in, "test.swf");
}

std::string write(const SwfTrace& trace) {
  std::ostringstream out;
  write_swf(out, trace);
  return out.str();
}

// The full message of the TraceError parsing `text` throws, or "" if it parses.
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

// A record line with the given job number, submit, run time, processors, requested time and status; the rest -1.
std::string record_line(int job, int submit, const std::string& run, int procs, int requested_s, int status,
                        int user = 3, int group = 2) {
  return std::to_string(job) + " " + std::to_string(submit) + " 0 " + run + " " + std::to_string(procs) + " -1 -1 " +
         std::to_string(procs) + " " + std::to_string(requested_s) + " -1 " + std::to_string(status) + " " +
         std::to_string(user) + " " + std::to_string(group) + " -1 -1 -1 -1 -1\n";
}

TEST(ParseSwf, AJobNumberTwiceIsAnErrorUnlessBothAreCheckpointParts) {
  // Issue 17: a repeated job number used to pass silently (two jobs with one id in the results).
  EXPECT_EQ(parse_error(record_line(7, 0, "10", 1, 60, 1) + record_line(8, 1, "10", 1, 60, 1) +
                        record_line(7, 2, "10", 1, 60, 1)),
            "test.swf: line 3: job number 7 again (first at line 1); a job number appears twice only for the parts "
            "of a checkpointed job (status 2-4)");
  // The parts of one checkpointed job share its number (SWF status 2 and 3 or 4).
  EXPECT_EQ(parse_error(record_line(7, 0, "10", 1, 60, 2) + record_line(7, 20, "10", 1, 60, 3)), "");
  EXPECT_NE(parse_error(record_line(7, 0, "10", 1, 60, 2) + record_line(7, 20, "10", 1, 60, 1)), "");
  // -1 (unknown) may repeat.
  EXPECT_EQ(parse_error(record_line(-1, 0, "10", 1, 60, 1) + record_line(-1, 1, "10", 1, 60, 1)), "");
}

TEST(ParseSwf, InlineTrace) {
  const SwfTrace trace = parse(
      "; Version: 2.2\n"
      ";\n"
      "\n"
      "  1  0 10 100 4 98.5 -1 4 3600 -1 1 7 2 -1 1 1 -1 -1\r\n"
      "; a comment between records\n"
      "\t2\t5\t-1\t-1\t8\t-1\t-1\t-1\t-1\t-1\t5\t-1\t-1\t-1\t-1\t-1\t1\t30  \n"
      "3 6 0 20 1 1 1024 1 86400 4294967296 0 4 1 1 -1 1 1 1 {7} q_1d 1:ppn=1\n");
  EXPECT_EQ(trace.header_comments, (std::vector<std::string>{" Version: 2.2", "", " a comment between records"}));
  ASSERT_EQ(trace.records.size(), 3U);
  const SwfRecord& a = trace.records[0];
  EXPECT_EQ(a.job_number, 1);
  EXPECT_EQ(a.submit_time_s, 0);
  EXPECT_EQ(a.wait_time_s, 10);
  EXPECT_EQ(a.run_time_s, 100);
  EXPECT_EQ(a.allocated_processors, 4);
  EXPECT_EQ(a.average_cpu_time_s, 98.5);
  EXPECT_EQ(a.used_memory_kb, -1);
  EXPECT_EQ(a.requested_processors, 4);
  EXPECT_EQ(a.requested_time_s, 3600);
  EXPECT_EQ(a.requested_memory_kb, -1);
  EXPECT_EQ(a.status, 1);
  EXPECT_EQ(a.user_id, 7);
  EXPECT_EQ(a.group_id, 2);
  EXPECT_EQ(a.executable_id, -1);
  EXPECT_EQ(a.queue_id, 1);
  EXPECT_EQ(a.partition_id, 1);
  EXPECT_EQ(a.preceding_job, -1);
  EXPECT_EQ(a.think_time_s, -1);
  EXPECT_EQ(a.extra, "");
  EXPECT_EQ(a.line, 4U);
  EXPECT_EQ(trace.records[1].preceding_job, 1);
  EXPECT_EQ(trace.records[1].think_time_s, 30);
  EXPECT_EQ(trace.records[1].line, 6U);
  EXPECT_EQ(trace.records[2].requested_memory_kb, 4294967296.0);
  EXPECT_EQ(trace.records[2].extra, "{7} q_1d 1:ppn=1");
}

TEST(ParseSwf, IntegerFieldMayBeWrittenAsWholeReal) {
  const SwfTrace trace = parse("1 0 0 10 4.0 -1 -1 +4 -1 -1 1 1e1 1 -1 -1 -1 -1 -1\n");
  EXPECT_EQ(trace.records[0].allocated_processors, 4);
  EXPECT_EQ(trace.records[0].requested_processors, 4);
  EXPECT_EQ(trace.records[0].user_id, 10);
}

TEST(WriteSwf, PrintsIntegersAndShortestReals) {
  SwfTrace trace;
  trace.header_comments = {" Version: 2.2", ""};
  SwfRecord record;
  record.job_number = 12;
  record.submit_time_s = 342343;
  record.run_time_s = 553;
  record.average_cpu_time_s = 552.21;
  record.requested_memory_kb = 68719476736;
  record.think_time_s = 0.1;
  record.extra = "{1} q_1d";
  trace.records.push_back(record);
  EXPECT_EQ(write(trace),
            "; Version: 2.2\n;\n"
            "12 342343 -1 553 -1 552.21 -1 -1 -1 68719476736 -1 -1 -1 -1 -1 -1 -1 0.1 {1} q_1d\n");
  EXPECT_EQ(parse(write(trace)), trace);
}

TEST(SwfRoundTrip, HeaderAndRecords) {
  const std::string text =
      "; Version: 2.2\n"
      ";  Computer:   two spaces kept\n"
      "1 0 10 100 4 98.5 -1 4 3600 -1 1 7 2 -1 1 1 -1 -1\n"
      "2 5 1e-05 1.5e+20 8 -1 -1 -1 -1 -1 5 -1 -1 -1 -1 -1 1 30 x  y\n";
  const SwfTrace trace = parse(text);
  EXPECT_EQ(trace.header_comments[1], "  Computer:   two spaces kept");
  const std::string written = write(trace);
  EXPECT_EQ(written,
            "; Version: 2.2\n"
            ";  Computer:   two spaces kept\n"
            "1 0 10 100 4 98.5 -1 4 3600 -1 1 7 2 -1 1 1 -1 -1\n"
            "2 5 1e-05 1.5e+20 8 -1 -1 -1 -1 -1 5 -1 -1 -1 -1 -1 1 30 x  y\n");
  EXPECT_EQ(parse(written), trace);
  // CRs before a line end are all part of it: a comment ";( \r\r\r" kept one CR, which the written trace lost
  // (found by fuzz_swf's round trip).
  const SwfTrace crs = parse(";( \r \r\r\n");
  EXPECT_EQ(crs.header_comments.at(0), "( \r ");
  EXPECT_EQ(parse(write(crs)), crs);
}

TEST(SwfRoundTrip, Hpc2nIsExact) {
  const SwfTrace trace = read_swf(kHpc2n);
  ASSERT_EQ(trace.records.size(), 3170U);
  ASSERT_EQ(trace.header_comments.size(), 23U);
  EXPECT_EQ(trace.header_comments[0], " Version: 2.2");
  EXPECT_EQ(trace.header_comments[22], "");

  // "    1        0 308434  31405   30  31405    -1   30  37980    -1  1   1   1  -1 -1  1 -1 -1" (line 24)
  const SwfRecord& first = trace.records[0];
  EXPECT_EQ(first.line, 24U);
  EXPECT_EQ(first.job_number, 1);
  EXPECT_EQ(first.submit_time_s, 0);
  EXPECT_EQ(first.wait_time_s, 308434);
  EXPECT_EQ(first.run_time_s, 31405);
  EXPECT_EQ(first.allocated_processors, 30);
  EXPECT_EQ(first.average_cpu_time_s, 31405);
  EXPECT_EQ(first.requested_processors, 30);
  EXPECT_EQ(first.requested_time_s, 37980);
  EXPECT_EQ(first.status, 1);
  EXPECT_EQ(first.partition_id, 1);
  // "   12   342343      5    553   40 552.21    -1   40  43200    -1  1   4   1  -1 -1  1 -1 -1"
  EXPECT_EQ(trace.records[6].job_number, 12);
  EXPECT_EQ(trace.records[6].average_cpu_time_s, 552.21);
  // "   16   347726      5     -1    8 240379    -1    8 345600    -1 -1   5   1  -1 -1  1 -1 -1"
  EXPECT_EQ(trace.records[10].run_time_s, -1);
  EXPECT_EQ(trace.records[10].status, -1);
  // Last: " 7183  4950011  15715    129   50 129.02 18432   50   1800    -1  1   8   1  -1 -1  1 -1 -1"
  EXPECT_EQ(trace.records.back().job_number, 7183);
  EXPECT_EQ(trace.records.back().used_memory_kb, 18432);
  EXPECT_EQ(trace.records.back().line, 3193U);

  const std::string written = write(trace);
  const std::size_t first_line = written.find("\n1 ") + 1;
  EXPECT_EQ(written.substr(first_line, written.find('\n', first_line) - first_line),
            "1 0 308434 31405 30 31405 -1 30 37980 -1 1 1 1 -1 -1 1 -1 -1");
  EXPECT_NE(written.find("\n12 342343 5 553 40 552.21 -1 40 43200 -1 1 4 1 -1 -1 1 -1 -1\n"), std::string::npos);
  const SwfTrace again = parse(written);
  EXPECT_EQ(again, trace);
  EXPECT_EQ(write(again), written);
}

TEST(SwfRoundTrip, MetacentrumKeepsExtendedFields) {
  const SwfTrace trace = read_swf(kMetacentrum);
  ASSERT_EQ(trace.records.size(), 17900U);
  EXPECT_TRUE(trace.header_comments.empty());
  const SwfRecord& first = trace.records[0];
  EXPECT_EQ(first.job_number, 0);
  EXPECT_EQ(first.submit_time_s, 1356996147);
  EXPECT_EQ(first.run_time_s, 56011);
  EXPECT_EQ(first.requested_memory_kb, 68719476736.0);
  EXPECT_EQ(first.extra.substr(0, 6), "{1241,");
  EXPECT_EQ(first.extra.substr(first.extra.size() - 37), "} q_1d 1:ppn=64:x86_64:cl_zewura#excl");
  EXPECT_EQ(trace.records[1].extra, "{1129,1129,1129,1129,1129,1129,1129,1129,1129,1129,1129,1129} q_2w 1:ppn=12");

  const SwfTrace again = parse(write(trace));
  EXPECT_EQ(again, trace);
}

TEST(ParseSwf, MalformedLinesNameLineAndField) {
  const std::string header = "; Version: 2.2\n\n";
  EXPECT_EQ(parse_error(header + "1 0 0 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1\n"),
            "test.swf: line 3: expected 18 fields, found 17");
  EXPECT_EQ(
      parse_error(header + record_line(1, 0, "10", 4, 60, 1) + "1 0 0 10 abc -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"),
      "test.swf: line 4: field 5 (allocated processors): 'abc' is not a number");
  EXPECT_EQ(parse_error("1 0 0 10 4.5 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "test.swf: line 1: field 5 (allocated processors): '4.5' is not an integer");
  EXPECT_EQ(parse_error("1 0 0 10 4 -1 -1 -2 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "test.swf: line 1: field 8 (requested processors): '-2' is negative; only -1 (unknown) is allowed");
  EXPECT_EQ(parse_error("1 0 0 1O -1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "test.swf: line 1: field 4 (run time): '1O' is not a number");
  EXPECT_EQ(parse_error("1 0 0 nan -1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"),
            "test.swf: line 1: field 4 (run time): 'nan' is not a number");
  EXPECT_EQ(parse_error("1 0 0 10 -1 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 x\n"),
            "test.swf: line 1: field 18 (think time): 'x' is not a number");
  EXPECT_EQ(parse_error("x\n"), "test.swf: line 1: expected 18 fields, found 1");

  try {
    parse("1 0 0 10 4.5 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.file(), "test.swf");
    EXPECT_EQ(e.line(), 1U);
  }
}

TEST(ReadSwf, MissingFile) {
  try {
    read_swf("/nonexistent/trace.swf");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/trace.swf: cannot open: No such file or directory");
    EXPECT_EQ(e.line(), 0U);
  }
}

TEST(SwfToJobs, CpusMapping) {
  const SwfTrace trace = parse(record_line(7, 100, "50.6", 4, 3600, 1));
  const SwfImportResult result = swf_to_jobs(trace, {}, "test.swf");
  ASSERT_EQ(result.jobs.size(), 1U);
  EXPECT_EQ(result.skipped, 0U);
  const JobSpec& job = result.jobs[0];
  EXPECT_EQ(job.id, 7U);
  EXPECT_EQ(job.name, "job7");
  EXPECT_EQ(job.user, "u3");
  EXPECT_EQ(job.account, "g2");
  EXPECT_EQ(job.partition, "");
  EXPECT_EQ(job.submit_s, 100);
  EXPECT_EQ(job.run_time_s, 51);
  EXPECT_EQ(job.time_limit_s, 3600);
  EXPECT_EQ(job.nodes, 0U);
  EXPECT_EQ(job.cpus, 4U);
  EXPECT_EQ(job.gpus_per_node, 0U);
  EXPECT_FALSE(job.exclusive);
  EXPECT_EQ(job.outcome, JobState::kCompleted);
}

TEST(SwfToJobs, NodesMapping) {
  SwfImportOptions options;
  options.processors = SwfProcessorMapping::kNodes;
  options.cpus_per_node = 64;
  options.partition = "batch";
  const JobSpec job = swf_to_jobs(parse(record_line(1, 0, "10", 3, 60, 1)), options, "t").jobs.at(0);
  EXPECT_EQ(job.nodes, 3U);
  EXPECT_EQ(job.cpus, 192U);
  EXPECT_TRUE(job.exclusive);
  EXPECT_EQ(job.partition, "batch");
}

TEST(SwfToJobs, GpusMapping) {
  SwfImportOptions options;
  options.processors = SwfProcessorMapping::kGpus;
  options.gpus_per_node = 8;
  options.cpus_per_node = 64;
  const SwfTrace trace = parse(record_line(1, 0, "10", 4, 60, 1) + record_line(2, 0, "10", 8, 60, 1) +
                               record_line(3, 0, "10", 12, 60, 1) + record_line(4, 0, "10", 17, 60, 1));
  auto jobs = swf_to_jobs(trace, options, "t").jobs;
  ASSERT_EQ(jobs.size(), 4U);
  // 4 GPUs: one node, 4 GPUs, 4 x (64 / 8) CPUs.
  EXPECT_EQ(jobs[0].nodes, 1U);
  EXPECT_EQ(jobs[0].gpus_per_node, 4U);
  EXPECT_EQ(jobs[0].cpus, 32U);
  EXPECT_EQ(jobs[1].nodes, 1U);
  EXPECT_EQ(jobs[1].gpus_per_node, 8U);
  EXPECT_EQ(jobs[1].cpus, 64U);
  // 12 GPUs: ceil(12 / 8) = 2 nodes of ceil(12 / 2) = 6.
  EXPECT_EQ(jobs[2].nodes, 2U);
  EXPECT_EQ(jobs[2].gpus_per_node, 6U);
  EXPECT_EQ(jobs[2].cpus, 96U);
  // 17 GPUs: 3 nodes of ceil(17 / 3) = 6.
  EXPECT_EQ(jobs[3].nodes, 3U);
  EXPECT_EQ(jobs[3].gpus_per_node, 6U);
  EXPECT_EQ(jobs[3].cpus, 136U);

  options.cpus_per_gpu = 2;
  EXPECT_EQ(swf_to_jobs(trace, options, "t").jobs[2].cpus, 24U);
  // Fewer CPUs than GPUs per node: 0 CPUs per GPU, so one CPU per node.
  options.cpus_per_gpu = 0;
  options.cpus_per_node = 4;
  EXPECT_EQ(swf_to_jobs(trace, options, "t").jobs[3].cpus, 3U);
  options.gpus_per_node = 0;
  EXPECT_THROW(swf_to_jobs(trace, options, "t"), std::invalid_argument);
}

TEST(SwfToJobs, RequestedProcessorsFallBackToAllocated) {
  const SwfTrace trace = parse(
      "1 0 0 10 6 -1 -1 -1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "2 0 0 10 6 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\n");
  const auto jobs = swf_to_jobs(trace, {}, "t").jobs;
  EXPECT_EQ(jobs[0].cpus, 6U);
  EXPECT_EQ(jobs[1].cpus, 2U);
}

TEST(SwfToJobs, TimeLimits) {
  const SwfTrace trace = parse(record_line(1, 0, "100", 1, 60, 1) + record_line(2, 0, "100", 1, -1, 1) +
                               record_line(3, 0, "100", 1, 0, 1));
  auto jobs = swf_to_jobs(trace, {}, "t").jobs;
  EXPECT_EQ(jobs[0].time_limit_s, 60);  // Runs into its limit: the simulator makes it a TIMEOUT.
  EXPECT_EQ(jobs[0].run_time_s, 100);
  EXPECT_EQ(jobs[1].time_limit_s, 100);
  EXPECT_EQ(jobs[2].time_limit_s, 100);
  SwfImportOptions options;
  options.estimates = SwfEstimateRule::kRequested;
  jobs = swf_to_jobs(trace, options, "t").jobs;
  EXPECT_EQ(jobs[0].time_limit_s, 60);
  EXPECT_EQ(jobs[1].time_limit_s, kNoTimeLimit);
  EXPECT_EQ(jobs[2].time_limit_s, kNoTimeLimit);
}

TEST(SwfToJobs, OutcomeAndUnknownIds) {
  const SwfTrace trace =
      parse(record_line(1, 0, "10", 1, 60, 1) + record_line(2, 0, "10", 1, 60, 0) + record_line(3, 0, "10", 1, 60, 5) +
            record_line(4, 0, "10", 1, 60, 3) + record_line(5, 0, "10", 1, 60, -1, -1, -1));
  const auto jobs = swf_to_jobs(trace, {}, "t").jobs;
  ASSERT_EQ(jobs.size(), 5U);
  EXPECT_EQ(jobs[0].outcome, JobState::kCompleted);
  EXPECT_EQ(jobs[1].outcome, JobState::kFailed);
  EXPECT_EQ(jobs[2].outcome, JobState::kCancelled);
  EXPECT_EQ(jobs[3].outcome, JobState::kCompleted);
  EXPECT_EQ(jobs[4].outcome, JobState::kCompleted);
  EXPECT_EQ(jobs[4].user, "unknown");
  EXPECT_EQ(jobs[4].account, "unknown");
}

TEST(SwfToJobs, SkipsRecordsThatCannotRun) {
  const std::string good = record_line(1, 0, "10", 1, 60, 1);
  const SwfTrace trace = parse(good + record_line(2, 0, "0", 4, 60, 5) + record_line(3, 0, "-1", 4, 60, 1) +
                               record_line(4, 0, "10", 0, 60, 1) + record_line(5, 0, "-1", -1, 60, -1) +
                               record_line(6, 0, "12", 4, 60, 5));
  const SwfImportResult result = swf_to_jobs(trace, {}, "t");
  ASSERT_EQ(result.jobs.size(), 2U);
  EXPECT_EQ(result.jobs[0].id, 1U);
  EXPECT_EQ(result.jobs[1].id, 6U);  // Cancelled while running: kept, ends CANCELLED after its run time.
  EXPECT_EQ(result.skipped, 4U);

  SwfImportOptions strict;
  strict.skip_invalid = false;
  const auto strict_error = [&](const std::string& text) -> std::string {
    try {
      swf_to_jobs(parse(good + text), strict, "t.swf");
    } catch (const TraceError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(strict_error(record_line(2, 0, "0", 4, 60, 5)), "t.swf: line 2: job 2: cancelled before it started");
  EXPECT_EQ(strict_error(record_line(3, 0, "-1", 4, 60, 1)),
            "t.swf: line 2: job 3: run time -1 is unknown or negative");
  EXPECT_EQ(strict_error(record_line(4, 0, "10", 0, 60, 1)),
            "t.swf: line 2: job 4: no processor count (requested and allocated are unknown or 0)");
  EXPECT_EQ(strict_error(record_line(5, -1, "10", 1, 60, 1)),
            "t.swf: line 2: job 5: submit time -1 is unknown or negative");
  EXPECT_EQ(strict_error(record_line(-1, 0, "10", 1, 60, 1)), "t.swf: line 2: job number is unknown (-1)");
  EXPECT_EQ(strict_error(""), "");
}

TEST(SwfToJobs, RealTraces) {
  SwfImportOptions options;
  options.cpus_per_node = 2;
  const SwfImportResult hpc2n = swf_to_jobs(read_swf(kHpc2n), options, kHpc2n);
  // 25 records have run time -1 (status -1): 3170 - 25.
  EXPECT_EQ(hpc2n.jobs.size(), 3145U);
  EXPECT_EQ(hpc2n.skipped, 25U);
  const JobSpec& first = hpc2n.jobs[0];
  EXPECT_EQ(first.id, 1U);
  EXPECT_EQ(first.submit_s, 0);
  EXPECT_EQ(first.run_time_s, 31405);
  EXPECT_EQ(first.time_limit_s, 37980);
  EXPECT_EQ(first.cpus, 30U);
  EXPECT_EQ(first.user, "u1");

  // Two MetaCentrum records (jobs 4185 and 4199) have negative run times.
  const SwfImportResult metacentrum = swf_to_jobs(read_swf(kMetacentrum), {}, kMetacentrum);
  EXPECT_EQ(metacentrum.jobs.size(), 17898U);
  EXPECT_EQ(metacentrum.skipped, 2U);
  EXPECT_EQ(metacentrum.jobs[0].submit_s, 1356996147);
}

}  // namespace
}  // namespace gputwin
