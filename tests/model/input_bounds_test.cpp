// Every count, time and rate read from outside has a documented bound (model/input_limits.hpp), checked where it
// is read, with an error naming the file and place: beyond it a value could overflow simulated time, exhaust
// memory or make a run tick for ever (issue 17's findings, each as a case).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "model/errors.hpp"
#include "model/input_limits.hpp"
#include "model/scenario.hpp"
#include "model/slurm_conf.hpp"
#include "model/swf.hpp"

namespace gputwin {
namespace {

const char* kBase = R"({"name": "b", "seed": 1,
 "cluster": {"nodes": [{"prefix": "n", "count": 2, "cpus": 4, "gpus": 8}],
             "partitions": [{"name": "p", "nodes": "ALL", "default": true}]},
 "workload": {"jobs": [{"id": 1, "submit": 0, "cpus": 4, "run_time": 100}]},
 "scheduler": {"policy": "fcfs"}})";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kBase;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  s.replace(pos, from.size(), to);
  return s;
}

/// The error of loading `text` and materialising its workload, or "no error".
std::string error_of(const std::string& text) {
  try {
    const Scenario s = parse_scenario(text, "s.json", "/base");
    load_workload(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(InputBounds, NodeCountsBeyondTheBoundAreRefusedBeforeAnyNodeIsMade) {
  EXPECT_EQ(error_of(with("\"count\": 2", "\"count\": 2147483648")),
            "s.json: /cluster/nodes/0/count: expected at most 1000000 (an input bound, README \"Reliability\")");
  EXPECT_EQ(error_of(with("\"count\": 2", "\"count\": 1000000000000")),
            "s.json: /cluster/nodes/0/count: expected at most 1000000 (an input bound, README \"Reliability\")");
  // Two groups within the bound each but beyond it together.
  EXPECT_EQ(
      error_of(with(R"({"prefix": "n", "count": 2, "cpus": 4, "gpus": 8})",
                    R"({"prefix": "a", "count": 600000, "cpus": 4}, {"prefix": "b", "count": 600000, "cpus": 4})")),
      "s.json: /cluster/nodes/1/count: the cluster would have more than 1000000 nodes (an input bound)");
}

TEST(InputBounds, PerNodeSizesAreBounded) {
  EXPECT_NE(error_of(with("\"gpus\": 8", "\"gpus\": 1025")).find("/cluster/nodes/0/gpus: expected at most 1024"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"cpus\": 4, \"gpus\"", "\"cpus\": 65536, \"gpus\""))
                .find("/cluster/nodes/0/cpus: expected at most 65535"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"gpus\": 8", "\"gpus\": 8, \"memory_gb\": 1e300"))
                .find("/cluster/nodes/0/memory_gb: expected a number from 0 to 1048576"),
            std::string::npos);
  // A digits count of a billion would make each node's name a gigabyte long.
  EXPECT_NE(error_of(with("\"gpus\": 8", "\"gpus\": 8, \"digits\": 1000000000"))
                .find("/cluster/nodes/0/digits: expected at most 18"),
            std::string::npos);
  // 1024 GPUs on each of 20,000 nodes is beyond the cluster's GPU bound (2^24).
  EXPECT_NE(error_of(with("\"count\": 2, \"cpus\": 4, \"gpus\": 8", "\"count\": 20000, \"cpus\": 4, \"gpus\": 1024"))
                .find("/cluster/nodes/0/gpus: the cluster would have more than 16777216 GPUs"),
            std::string::npos);
}

TEST(InputBounds, JobTimesNearInt64SecondsAreRefusedWithTheirPointer) {
  // The issue's case: a run time of 9.2e12 s overflowed microseconds and ended a job with no end time.
  EXPECT_EQ(error_of(with("\"run_time\": 100", "\"run_time\": 9200000000000")),
            "s.json: /workload/jobs/0/run_time: expected at most 1000000000 (an input bound, README \"Reliability\")");
  EXPECT_NE(
      error_of(with("\"submit\": 0", "\"submit\": 10000000001")).find("/workload/jobs/0/submit: expected at most"),
      std::string::npos);
  EXPECT_NE(error_of(with("\"run_time\": 100", "\"run_time\": 100, \"begin\": 100000000000000"))
                .find("/workload/jobs/0/begin: expected at most"),
            std::string::npos);
  // Minutes and Slurm time strings: a day count that would overflow when turned into seconds.
  EXPECT_NE(error_of(with("\"run_time\": 100", "\"run_time\": 100, \"time_limit\": 9223372036854775807"))
                .find("/workload/jobs/0/time_limit: expected at most 16666666 minutes"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"run_time\": 100", "\"run_time\": 100, \"time_limit\": \"106751991167300-00:00:00\""))
                .find("/workload/jobs/0/time_limit: '106751991167300-00:00:00' is not a Slurm time"),
            std::string::npos);
  EXPECT_NE(error_of(with("\"run_time\": 100", "\"run_time\": 100, \"time_limit\": \"20000-00:00:00\""))
                .find("/workload/jobs/0/time_limit: expected at most 1000000000 seconds"),
            std::string::npos);
  EXPECT_EQ(error_of(with("\"run_time\": 100", "\"run_time\": 1000000000")), "no error");  // the bound itself
}

TEST(InputBounds, ParseSlurmTimeRefusesPartsThatWouldOverflow) {
  std::int64_t s = 0;
  EXPECT_FALSE(parse_slurm_time("106751991167301-00:00:00", s));
  EXPECT_FALSE(parse_slurm_time("99999999999999999:00", s));
  ASSERT_TRUE(parse_slurm_time("11574-00:00:00", s));  // about the bound: parsed, the caller bounds it
  EXPECT_EQ(s, 11574LL * 86400);
}

TEST(InputBounds, ASyntheticLoadThatSpreadsJobsBeyondTheBoundIsRefused) {
  // The issue's cases: load 1e-20 gave submit times of -2^63; load 1e-12 ran for ever.
  const std::string synthetic = R"("synthetic": {"profile": "acme-seren", "jobs": 10, "load": 1e-20})";
  const std::string error =
      error_of(with(R"("jobs": [{"id": 1, "submit": 0, "cpus": 4, "run_time": 100}])", synthetic));
  EXPECT_NE(error.find("/workload/synthetic: synthetic workload: load"), std::string::npos) << error;
  EXPECT_NE(error.find("beyond the bound on submit times"), std::string::npos) << error;
  const std::string slow = R"("synthetic": {"profile": "acme-seren", "jobs": 10, "load": 1e-12})";
  EXPECT_NE(error_of(with(R"("jobs": [{"id": 1, "submit": 0, "cpus": 4, "run_time": 100}])", slow))
                .find("beyond the bound on submit times"),
            std::string::npos);
  EXPECT_NE(error_of(with(R"("jobs": [{"id": 1, "submit": 0, "cpus": 4, "run_time": 100}])",
                          R"("synthetic": {"profile": "acme-seren", "jobs": 20000001})"))
                .find("/workload/synthetic/jobs: expected at most 20000000"),
            std::string::npos);
}

TEST(InputBounds, SwfTimesBeyondTheBoundNameTheLine) {
  std::istringstream in(
      "1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
      "2 100000000000000 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n");
  const SwfTrace trace = parse_swf(in, "t.swf");
  SwfImportOptions options;
  options.cpus_per_node = 4;
  try {
    swf_to_jobs(trace, options, "t.swf");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.swf: line 2: job 2: submit time 1e+14 s is beyond the bound of 1e10 s (about 317 years)");
  }
  std::istringstream run("1 0 0 9200000000000 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n");
  EXPECT_THROW(swf_to_jobs(parse_swf(run, "r.swf"), options, "r.swf"), TraceError);
}

TEST(InputBounds, SlurmConfNodeSizesAndCountsAreBounded) {
  const auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      parse_slurm_conf(in, "slurm.conf", "/base");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("NodeName=n1 CPUs=70000\n").find("slurm.conf: line 1: NodeName=n1: 70000 CPUs per node"),
            std::string::npos);
  std::string many;
  for (int i = 0; i < 2; ++i) many += "NodeName=r" + std::to_string(i) + "n[1-600000] CPUs=4\n";
  EXPECT_NE(error(many).find("line 2: NodeName=r1n[1-600000]: more than 1000000 nodes"), std::string::npos)
      << error(many);
}

TEST(InputBounds, AHugeValueQuotedInAnErrorIsCutInTheMiddle) {
  // The issue's case: a 10 MB value was echoed whole into the one-line error.
  const std::string huge(10'000'000, 'x');
  const std::string error = error_of(with("\"gpus\": 8", "\"gpus\": 8, \"gpu_type\": \"" + huge + "\""));
  EXPECT_LT(error.size(), 1000u);
  EXPECT_EQ(error.rfind("s.json: /cluster/nodes/0/gpu_type: unknown GPU model 'xxx", 0), 0u) << error.substr(0, 200);
  EXPECT_NE(error.find("bytes cut ...]"), std::string::npos);
}

}  // namespace
}  // namespace gputwin
