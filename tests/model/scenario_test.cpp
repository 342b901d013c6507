// Scenario loading: the documented keys, defaults, path resolution and located errors.
#include "model/scenario.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "model/errors.hpp"

namespace gputwin {
namespace {

const char* kValid = R"({"name": "lublin-fcfs", "seed": 1,
 "cluster": {"nodes": [{"prefix": "n", "count": 256, "cpus": 1, "memory_gb": 4, "gpus": 0}],
             "partitions": [{"name": "batch", "nodes": "ALL", "default": true}]},
 "workload": {"trace": {"path": "lublin_256.swf", "format": "swf"}},
 "scheduler": {"policy": "fcfs"}})";

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "s.json", "/base");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

std::string with(const std::string& from, const std::string& to) {
  std::string s = kValid;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  s.replace(pos, from.size(), to);
  return s;
}

TEST(Scenario, TheIssueExampleLoads) {
  const Scenario s = parse_scenario(kValid, "s.json", "/base");
  EXPECT_EQ(s.name, "lublin-fcfs");
  EXPECT_EQ(s.cluster.nodes.size(), 256u);
  EXPECT_EQ(s.cluster.nodes[0].name, "n001");
  EXPECT_EQ(s.cluster.nodes[255].name, "n256");
  EXPECT_EQ(s.cluster.nodes[0].memory_mb, 4096u);
  EXPECT_EQ(s.cluster.partitions[0].nodes.size(), 256u);
  EXPECT_TRUE(s.has_trace);
  EXPECT_EQ(s.trace.path, std::filesystem::path("/base/lublin_256.swf"));  // relative to the scenario's folder
  EXPECT_EQ(s.scheduler.policy, SchedulerPolicy::kFcfs);
  EXPECT_EQ(s.scheduler.slurm.bf_interval_s, 30);  // Slurm's defaults
  EXPECT_EQ(s.scheduler.slurm.bf_max_job_test, 500u);
  EXPECT_EQ(s.scheduler.slurm.default_queue_depth, 100u);
}

TEST(Scenario, ErrorsNameTheFileAndJsonPointer) {
  EXPECT_EQ(error_of(with("\"gpus\": 0", "\"gpus\": -1")),
            "s.json: /cluster/nodes/0/gpus: expected a non-negative integer");
  EXPECT_EQ(error_of(with("\"gpus\": 0", "\"gpus\": \"eight\"")),
            "s.json: /cluster/nodes/0/gpus: expected a non-negative integer");
  EXPECT_EQ(error_of(with("\"count\": 256", "\"count\": 0")),
            "s.json: /cluster/nodes/0/count: expected a positive integer");
  EXPECT_EQ(
      error_of(with("\"policy\": \"fcfs\"", "\"policy\": \"lifo\"")),
      "s.json: /scheduler/policy: unknown policy 'lifo' (known: fcfs, sjf, easy, easy-textbook, conservative, slurm)");
  EXPECT_EQ(error_of(with("\"nodes\": \"ALL\"", "\"nodes\": \"m[1-2]\"")),
            "s.json: /cluster/partitions/0/nodes: no node named 'm1'");
  EXPECT_EQ(error_of(with("\"format\": \"swf\"", "\"format\": \"gwf\"")),
            "s.json: /workload/trace/format: unsupported trace format 'gwf' (supported: swf, sacct, sacct-json, "
            "slurmdb-json)");
  EXPECT_EQ(error_of(with("\"seed\": 1,", "")).substr(0, 8), "no error");
  EXPECT_EQ(error_of(with("\"name\": \"lublin-fcfs\",", "")), "s.json: /name: missing required key");
  EXPECT_NE(error_of(with("\"cpus\": 1,", "\"cpus\": 1, \"gpu\": 8,")).find("/cluster/nodes/0/gpu: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of("{\"name\": ").find("s.json: invalid JSON: parse error"), std::string::npos);
  // A number beyond a double is invalid JSON too; nlohmann's out_of_range.406 escaped as a raw library error quoting
  // the whole number (found by fuzz_scenario).
  EXPECT_EQ(error_of("{\"name\": 333333e3333333333333}"), "s.json: invalid JSON: a number too large for a double");
  EXPECT_EQ(error_of(with("\"scheduler\": {\"policy\": \"fcfs\"}",
                          "\"scheduler\": {\"policy\": \"slurm\", \"bf_interval\": 0}")),
            "s.json: /scheduler/bf_interval: expected -1 (disabled) or a positive number of seconds");
  EXPECT_EQ(error_of(with("\"gpus\": 0", "\"gpus\": 8, \"gpu_type\": \"h1000\"")).substr(0, 53),
            "s.json: /cluster/nodes/0/gpu_type: unknown GPU model ");
}

TEST(Scenario, TheNameIsAPlainNameNotAPath) {
  // The name becomes out/<name>: "../..", "/tmp/x" or "a/b" would write outside out/ (issue 17).
  const std::string refused =
      "' is not a plain name: use at most 128 letters, digits, '.', '_' and '-' (not '.' or '..'); it names the "
      "output folder out/<name>";
  EXPECT_EQ(error_of(with("lublin-fcfs", "../..")), "s.json: /name: '../.." + refused);
  EXPECT_EQ(error_of(with("lublin-fcfs", "/tmp/x")), "s.json: /name: '/tmp/x" + refused);
  EXPECT_EQ(error_of(with("lublin-fcfs", "a/b")), "s.json: /name: 'a/b" + refused);
  EXPECT_EQ(error_of(with("lublin-fcfs", "..")), "s.json: /name: '.." + refused);
  EXPECT_EQ(error_of(with("lublin-fcfs", std::string(129, 'x'))).find("is not a plain name"), 82u);  // name cut to 64
  EXPECT_EQ(error_of(with("lublin-fcfs", "llama3.1_405b-run")).substr(0, 8), "no error");
}

TEST(Scenario, AKeyGivenTwiceIsAnError) {
  // Issue 17: JSON keeps the last of two equal keys, silently dropping the first value.
  EXPECT_EQ(error_of(with("\"seed\": 1,", "\"seed\": 1, \"seed\": 2,")),
            "s.json: /seed: key given twice in one object");
  EXPECT_EQ(error_of(with("\"default\": true", "\"default\": true, \"name\": \"other\"")),
            "s.json: /cluster/partitions/0/name: key given twice in one object");
  EXPECT_EQ(error_of(with("\"cpus\": 1,", "\"cpus\": 1, \"cpus\": 2,")),
            "s.json: /cluster/nodes/0/cpus: key given twice in one object");
  // The same key in two different objects is fine.
  EXPECT_EQ(error_of(kValid).substr(0, 8), "no error");
}

TEST(Scenario, DependenciesOnItselfAndCyclesAreRefused) {
  // Issue 17: such jobs used to pend for ever without a word.
  const auto jobs = [](const std::string& list) {
    return with("\"trace\": {\"path\": \"lublin_256.swf\", \"format\": \"swf\"}", "\"jobs\": [" + list + "]");
  };
  const std::string a = R"({"id": 1, "run_time": 10, "dependency": "afterok:2"})";
  const std::string b = R"({"id": 2, "run_time": 10, "dependency": "afterany:3"})";
  const std::string c = R"({"id": 3, "run_time": 10, "dependency": "afterok:1"})";
  EXPECT_EQ(error_of(jobs(a + "," + b + "," + c)),
            "s.json: /workload/jobs/0/dependency: dependency cycle job 1 -> job 2 -> job 3 -> job 1: these jobs would "
            "pend for ever");
  EXPECT_EQ(error_of(jobs(R"({"id": 1, "run_time": 10}, {"id": 2, "run_time": 10, "dependency": "afterok:1:2"})")),
            "s.json: /workload/jobs/1/dependency: job 2 depends on itself: it would pend for ever");
  // An array job whose tasks wait for the array itself is a cycle too.
  EXPECT_NE(error_of(jobs(R"({"id": 10, "run_time": 10, "array": "0-3", "dependency": "afterok:10"})"))
                .find("/workload/jobs/0/dependency: "),
            std::string::npos);
  // A chain, a diamond and a dependency on a job outside the workload are fine.
  EXPECT_EQ(error_of(jobs(R"({"id": 1, "run_time": 10}, {"id": 2, "run_time": 10, "dependency": "afterok:1"},
                            {"id": 3, "run_time": 10, "dependency": "afterok:1,afterany:2"},
                            {"id": 4, "run_time": 10, "dependency": "afterok:2:3:99"})"))
                .substr(0, 8),
            "no error");
}

TEST(Scenario, BothEasyVariantsAndTheSchedulingPointAreNamed) {
  EXPECT_EQ(parse_scenario(kValid, "s.json", "/base").scheduler.scheduling_point, SchedulingPoint::kInstant);
  const Scenario s =
      parse_scenario(with("\"policy\": \"fcfs\"", "\"policy\": \"easy-textbook\", \"scheduling_point\": \"event\""),
                     "s.json", "/base");
  EXPECT_EQ(s.scheduler.policy, SchedulerPolicy::kEasyTextbook);
  EXPECT_EQ(s.scheduler.scheduling_point, SchedulingPoint::kEvent);
  EXPECT_EQ(policy_name(SchedulerPolicy::kEasyTextbook), "easy-textbook");
  EXPECT_EQ(policy_name(SchedulerPolicy::kEasy), "easy");
  EXPECT_EQ(scheduling_point_name(SchedulingPoint::kEvent), "event");
  EXPECT_EQ(parse_scenario(with("\"policy\": \"fcfs\"", "\"policy\": \"easy\", \"scheduling_point\": \"instant\""),
                           "s.json", "/base")
                .scheduler.scheduling_point,
            SchedulingPoint::kInstant);
  EXPECT_EQ(error_of(with("\"policy\": \"fcfs\"", "\"policy\": \"fcfs\", \"scheduling_point\": \"job\"")),
            "s.json: /scheduler/scheduling_point: unknown scheduling point 'job' (known: instant, event)");
  EXPECT_EQ(error_of(with("\"policy\": \"fcfs\"", "\"policy\": \"slurm\", \"scheduling_point\": \"event\"")),
            "s.json: /scheduler/scheduling_point: \"event\" applies to the classic policies (fcfs, sjf, easy, "
            "easy-textbook, conservative); the slurm policy schedules on its own triggers (batch_sched_delay, "
            "sched_interval, bf_interval)");
}

TEST(Scenario, SlurmReleaseAndWallClockOfTheSlurmPolicy) {
  const Scenario d = parse_scenario(kValid, "s.json", "/base");
  EXPECT_EQ(d.scheduler.slurm.slurm_version, 2411u);
  EXPECT_EQ(d.scheduler.slurm.epoch_unix_s, 0);
  const Scenario s =
      parse_scenario(with("\"policy\": \"fcfs\"",
                          "\"policy\": \"slurm\", \"slurm_version\": \"22.05.8\", \"epoch_unix_s\": 1795548315"),
                     "s.json", "/base");
  EXPECT_EQ(s.scheduler.slurm.slurm_version, 2205u);
  EXPECT_EQ(s.scheduler.slurm.epoch_unix_s, 1795548315);
  EXPECT_EQ(parse_scenario(with("\"policy\": \"fcfs\"", "\"policy\": \"slurm\", \"slurm_version\": \"23.11\""),
                           "s.json", "/base")
                .scheduler.slurm.slurm_version,
            2311u);
  EXPECT_EQ(error_of(with("\"policy\": \"fcfs\"", "\"policy\": \"slurm\", \"slurm_version\": \"22.5\"")),
            "s.json: /scheduler/slurm_version: expected a Slurm release such as \"22.05\" or \"24.11.1\"");
  EXPECT_EQ(error_of(with("\"policy\": \"fcfs\"", "\"policy\": \"slurm\", \"epoch_unix_s\": -1")),
            "s.json: /scheduler/epoch_unix_s: expected an integer in [0, 1099511627776]");
}

TEST(Scenario, PartitionsTakeHostlistsAndSlurmTimes) {
  const Scenario s = parse_scenario(
      with("{\"name\": \"batch\", \"nodes\": \"ALL\", \"default\": true}",
           "{\"name\": \"batch\", \"nodes\": \"n[001-004,010]\", \"max_time\": \"1-12:00:00\", \"default_time\": 30, "
           "\"priority_tier\": 2}"),
      "s.json", "/base");
  const PartitionConfig& p = s.cluster.partitions[0];
  EXPECT_EQ(p.nodes, (std::vector<NodeIndex>{0, 1, 2, 3, 9}));
  EXPECT_EQ(p.max_time_s, 36 * 3600);
  EXPECT_EQ(p.default_time_s, 30 * 60);  // integers are minutes, as in slurm.conf
  EXPECT_EQ(p.priority_tier, 2u);
}

TEST(Scenario, SlurmTimeFormats) {
  std::int64_t s = 0;
  ASSERT_TRUE(parse_slurm_time("UNLIMITED", s));
  EXPECT_EQ(s, -1);
  ASSERT_TRUE(parse_slurm_time("90", s));
  EXPECT_EQ(s, 5400);
  ASSERT_TRUE(parse_slurm_time("1:30", s));
  EXPECT_EQ(s, 90);
  ASSERT_TRUE(parse_slurm_time("02:00:00", s));
  EXPECT_EQ(s, 7200);
  ASSERT_TRUE(parse_slurm_time("2-0", s));
  EXPECT_EQ(s, 2 * 86400);
  ASSERT_TRUE(parse_slurm_time("1-02:03", s));
  EXPECT_EQ(s, 86400 + 2 * 3600 + 3 * 60);
  ASSERT_TRUE(parse_slurm_time("1-02:03:04", s));
  EXPECT_EQ(s, 86400 + 2 * 3600 + 3 * 60 + 4);
  EXPECT_FALSE(parse_slurm_time("", s));
  EXPECT_FALSE(parse_slurm_time("1:2:3:4", s));
  EXPECT_FALSE(parse_slurm_time("x", s));
  EXPECT_FALSE(parse_slurm_time("-5", s));
}

TEST(Scenario, MissingFileAndTraceErrorsAreLocated) {
  try {
    load_scenario("/nonexistent/dir/x.json");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json: cannot open"), std::string::npos);
  }
  Scenario s = parse_scenario(kValid, "s.json", "/nonexistent");
  try {
    load_workload(s);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("lublin_256.swf: cannot open"), std::string::npos);
  }
}

TEST(Scenario, BadTraceLineNamesFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / "gputwin-scenario-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.swf") << "; header\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 -1 x\n";
  Scenario s = parse_scenario(with("lublin_256.swf", "bad.swf"), "s.json", dir);
  try {
    load_workload(s);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), 3u);
    EXPECT_NE(std::string(e.what()).find("bad.swf: line 3: "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gputwin
