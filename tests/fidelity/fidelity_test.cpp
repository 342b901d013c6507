// fidelity/: Kendall's tau-b, the report's band, spread and verdict, recordings and associations read with errors
// that name the file and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fidelity/live_recorder.hpp"
#include "fidelity/recording.hpp"
#include "fidelity/replay.hpp"
#include "fidelity/report.hpp"

namespace gputwin {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("gputwin-fidelity-test-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::vector<RecordedJob> jobs(const std::vector<std::pair<std::int64_t, std::int64_t>>& submit_start) {
  std::vector<RecordedJob> out;
  for (std::size_t i = 0; i < submit_start.size(); ++i) {
    RecordedJob j;
    j.idx = static_cast<std::uint32_t>(i);
    j.job_id = i + 1;
    j.submit_s = submit_start[i].first;
    j.start_s = submit_start[i].second;
    out.push_back(j);
  }
  return out;
}

Recording recording(const std::string& name, std::vector<RecordedJob> js) {
  Recording r;
  r.dir = fs::path("/rec") / name;
  r.jobs = std::move(js);
  return r;
}

TEST(KendallTauB, MatchesScipyOnTiesAndReversals) {
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
  // scipy.stats.kendalltau([1, 2, 2, 3], [1, 3, 2, 4]) = 0.9128709291752769
  EXPECT_NEAR(kendall_tau_b({1, 2, 2, 3}, {1, 3, 2, 4}), 0.9128709291752769, 1e-12);
  EXPECT_DOUBLE_EQ(kendall_tau_b({5, 5}, {5, 5}), 1.0);
}

TEST(FidelityReport, BandSpreadAndVerdict) {
  // Three replicas: waits 10, 12, 14 s (starts 10/12/14 after submit 0 and 20/22/24 after submit 10).
  std::vector<Recording> real = {recording("r1", jobs({{0, 10}, {10, 20}})), recording("r2", jobs({{0, 12}, {10, 22}})),
                                 recording("r3", jobs({{0, 14}, {10, 24}}))};
  // Pairwise |start diff|: 2, 4, 2 -> mean 8/3.
  std::vector<std::vector<RecordedJob>> sim = {jobs({{0, 11}, {10, 21}}), jobs({{0, 11}, {10, 21}}),
                                               jobs({{0, 11}, {10, 21}})};
  FidelityReport r = compare_with_replicas(real, sim, {});
  EXPECT_EQ(r.jobs, 2u);
  EXPECT_EQ(r.pairs.size(), 3u);
  EXPECT_NEAR(r.pair_start_diff_s, 8.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.sim_start_diff_s, (1 + 1 + 3) / 3.0, 1e-12);  // 1, 1, 3 to r1, r2, r3
  EXPECT_DOUBLE_EQ(r.band_low_s, 10);
  EXPECT_DOUBLE_EQ(r.band_high_s, 14);
  EXPECT_DOUBLE_EQ(r.sim_wait_s, 11);
  EXPECT_TRUE(r.inside);
  EXPECT_NE(format_report(r, "t").find("INSIDE"), std::string::npos);

  // Mean simulated wait (14.5 + 14 + 14) / 3 = 14.17 s: 1.19% above the upper edge, outside with the 1% tolerance,
  // inside with 2%.
  sim = {jobs({{0, 14}, {10, 24}}), jobs({{0, 14}, {10, 24}}), jobs({{0, 14}, {10, 24}})};
  sim[0][0].start_s = 14;
  sim[0][1].start_s = 25;
  sim[1][1].start_s = 24;
  r = compare_with_replicas(real, sim, {});
  EXPECT_NEAR(r.sim_wait_s, (14.5 + 14 + 14) / 3, 1e-12);
  EXPECT_NEAR(r.wait_outside_pct, 100 * (r.sim_wait_s - 14) / 14, 1e-9);
  EXPECT_FALSE(r.wait_inside);
  EXPECT_TRUE(compare_with_replicas(real, sim, {.edge_tolerance = 0.02}).wait_inside);

  // Far later starts: outside on both counts.
  sim = {jobs({{0, 40}, {10, 60}}), jobs({{0, 40}, {10, 60}}), jobs({{0, 40}, {10, 60}})};
  r = compare_with_replicas(real, sim, {});
  EXPECT_FALSE(r.wait_inside);
  EXPECT_FALSE(r.starts_inside);
  EXPECT_FALSE(r.inside);
  EXPECT_NE(format_report(r, "t").find("OUTSIDE"), std::string::npos);
}

TEST(FidelityReport, OneReplicaHasNoVerdict) {
  const FidelityReport r = compare_with_replicas({recording("r1", jobs({{0, 5}}))}, {jobs({{0, 5}})}, {});
  EXPECT_FALSE(r.has_spread);
  EXPECT_FALSE(r.inside);
  EXPECT_NE(format_report(r, "t").find("verdict          none"), std::string::npos);
}

TEST(FidelityReport, ReplicasOfDifferentWorkloadsAreRefused) {
  std::vector<Recording> real = {recording("r1", jobs({{0, 5}, {1, 6}})), recording("r2", jobs({{0, 5}}))};
  try {
    compare_with_replicas(real, {jobs({{0, 5}, {1, 6}}), jobs({{0, 5}})}, {});
    FAIL() << "expected RecordingError";
  } catch (const RecordingError& e) {
    EXPECT_EQ(e.file(), "/rec/r2/result.json");
    EXPECT_NE(std::string(e.what()).find("not the same workload"), std::string::npos);
  }
}

TEST(ReadRecording, TimesFromTheFirstSubmissionAndFieldErrors) {
  const fs::path d = temp_dir("read");
  write(d / "slurm.conf", "ClusterName=x\n");
  write(d / "sacct.txt", "JobID\n");
  write(d / "result.json", R"({"t0": 1.5, "jobs": [
    {"idx": 1, "job_id": 2, "submit": 45.3, "start": 46.3, "end": 82.3, "state": "COMPLETED", "nodes": "gpu01"},
    {"idx": 0, "job_id": 1, "submit": 38.3, "start": 38.3, "end": 68.3, "state": "COMPLETED", "nodes": "gpu01"}]})");
  const Recording r = read_recording(d);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_EQ(r.jobs[0].idx, 0u);
  EXPECT_EQ(r.jobs[0].submit_s, 0);
  EXPECT_EQ(r.jobs[1].submit_s, 7);
  EXPECT_EQ(r.jobs[1].start_s, 8);
  EXPECT_EQ(r.jobs[1].end_s, 44);
  EXPECT_DOUBLE_EQ(mean_wait_s(r.jobs), 0.5);

  write(d / "result.json", R"({"jobs": [{"idx": 0, "job_id": 1, "submit": 1, "start": "x", "end": 2,
    "state": "COMPLETED"}]})");
  try {
    read_recording(d);
    FAIL() << "expected RecordingError";
  } catch (const RecordingError& e) {
    EXPECT_EQ(e.file(), (d / "result.json").string());
    EXPECT_EQ(e.location(), "/jobs/0/start");
  }
  // A number beyond a double (nlohmann's out_of_range escaped before), and an end before the start.
  const std::pair<std::string, std::string> bad[] = {
      {R"({"jobs": [{"idx": 0, "job_id": 1, "submit": 1e999, "start": 2, "end": 3, "state": "COMPLETED"}]})",
       "not JSON: a number too large for a double"},
      {R"({"jobs": [{"idx": 0, "job_id": 1, "submit": 1, "start": 5, "end": 4, "state": "COMPLETED"}]})",
       "before the job's start"}};
  for (const auto& [json, problem] : bad) {
    write(d / "result.json", json);
    try {
      read_recording(d);
      ADD_FAILURE() << "expected RecordingError for " << json;
    } catch (const RecordingError& e) {
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << e.what();
    }
  }
  fs::remove(d / "sacct.txt");
  EXPECT_THROW(read_recording(d), RecordingError);
}

TEST(AssociationsJson, UsersUnderRootGetTheirOwnAccount) {
  const fs::path d = temp_dir("assoc");
  write(d / "assoc.txt",
        "twin|root||1|normal|\ntwin|root|root|1|high,normal|\ntwin|ml||1|normal|\ntwin|ml|root|1|high,normal|\n"
        "twin|physics||1|normal|\ntwin|physics|nobody|1|high,normal|\n");
  const auto j = nlohmann::json::parse(associations_json((d / "assoc.txt").string()));
  ASSERT_EQ(j["accounts"].size(), 3u);
  EXPECT_EQ(j["accounts"][0]["name"], "root-user");
  EXPECT_EQ(j["accounts"][1]["name"], "ml");
  ASSERT_EQ(j["users"].size(), 3u);
  EXPECT_EQ(j["users"][0]["account"], "root-user");
  EXPECT_EQ(j["users"][2]["user"], "nobody");

  write(d / "assoc.txt", "twin|ml||lots|normal|\n");
  try {
    associations_json((d / "assoc.txt").string());
    FAIL() << "expected RecordingError";
  } catch (const RecordingError& e) {
    EXPECT_EQ(e.location(), "line 1");
    EXPECT_NE(std::string(e.what()).find("Share"), std::string::npos);
  }
}

TEST(Workload, ReadAndTimeScaled) {
  const fs::path d = temp_dir("workload");
  write(d / "w.json", R"([{"idx": 0, "submit_offset": 10.0, "gpus": 16, "nodes": 2, "runtime_s": 90,
    "time_limit_min": 3, "user": "root", "account": "ml"}])");
  std::vector<WorkloadJob> w = read_workload(d / "w.json");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].gpus_per_node, 8u);
  EXPECT_EQ(w[0].partition, "gpu");
  w = scale_workload(w, 0.5);
  EXPECT_DOUBLE_EQ(w[0].submit_offset_s, 5.0);
  EXPECT_EQ(w[0].runtime_s, 45);
  EXPECT_EQ(w[0].time_limit_min, 2);  // ceil(1.5)

  write(d / "w.json", R"([{"submit_offset": -1, "nodes": 1, "runtime_s": 1, "time_limit_min": 1}])");
  try {
    read_workload(d / "w.json");
    FAIL() << "expected RecordingError";
  } catch (const RecordingError& e) {
    EXPECT_EQ(e.location(), "/0/submit_offset");
  }
}

}  // namespace
}  // namespace gputwin
