// Golden whole-scenario tests: scenario JSON + SWF trace in, exact schedule out. The start times are worked by
// hand below; the full jobs.csv of each run is compared with tests/golden/<scenario>.expected.csv, and a
// mismatch prints the differing lines.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sim/runner.hpp"
#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

const std::string kGolden = std::string(GPUTWIN_SOURCE_DIR) + "/tests/golden/";

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs a golden scenario, writes its results to a temporary folder and returns jobs.csv; checks it against the
// expected file line by line.
RunOutcome run_golden(const std::string& name) {
  RunOutcome o = run_scenario(load_scenario(kGolden + name + ".json"), RunOptions{});
  const auto out = std::filesystem::path(GPUTWIN_BINARY_DIR) / "golden-out" / name;
  write_results(out, run_info(o), *o.state, o.summary, *o.recorder);
  const auto actual = lines_of(read_file(out / "jobs.csv"));
  const auto expected_path = kGolden + name + ".expected.csv";
  const auto expected = lines_of(read_file(expected_path));
  EXPECT_FALSE(expected.empty()) << "missing " << expected_path << "; actual output is in " << out / "jobs.csv";
  std::ostringstream diff;
  for (std::size_t i = 0; i < std::max(actual.size(), expected.size()); ++i) {
    const std::string a = i < actual.size() ? actual[i] : "<none>";
    const std::string e = i < expected.size() ? expected[i] : "<none>";
    if (a != e) diff << "line " << i + 1 << "\n  expected: " << e << "\n  actual:   " << a << "\n";
  }
  EXPECT_TRUE(diff.str().empty()) << name << " jobs.csv differs:\n" << diff.str();
  return o;
}

// The trace (4 nodes x 1 CPU; processors map to CPUs): J1 t=0 3 CPUs 100 s; J2 t=1 3 CPUs 100 s;
// J3 t=2 4 CPUs 100 s; J4 t=3 1 CPU 300 s. Requested times equal run times.

TEST(Golden, FourNodesFcfs) {
  // J1 0-100; J2 waits for 3 nodes: 100-200; J3 needs all 4: 200-300; J4 behind J3: 300.
  EXPECT_EQ(testing::start_times(run_golden("four_nodes_fcfs")), (std::vector<std::int64_t>{0, 100, 200, 300}));
}

TEST(Golden, FourNodesSjf) {
  // Requested times 100, 100, 100, 300: the same order as FCFS, so the same schedule.
  EXPECT_EQ(testing::start_times(run_golden("four_nodes_sjf")), (std::vector<std::int64_t>{0, 100, 200, 300}));
}

TEST(Golden, FourNodesEasy) {
  // Head J2 reserves n[1-3] at 100; J4 backfills at 3 on the extra node n4 (it only has to spare the head).
  // J3 then waits for n4 until 303.
  EXPECT_EQ(testing::start_times(run_golden("four_nodes_easy")), (std::vector<std::int64_t>{0, 100, 303, 3}));
}

TEST(Golden, FourNodesEasyTextbook) {
  // Head J2 needs 3 nodes at its shadow time 100, when all 4 are free: 1 extra node. J4 (1 node, ends 303 > 100)
  // uses it and starts at 3 on n4, the only free node; J3 then waits for n4 until 303, as under easy.
  EXPECT_EQ(testing::start_times(run_golden("four_nodes_easy_textbook")), (std::vector<std::int64_t>{0, 100, 303, 3}));
}

TEST(Golden, FourNodesConservative) {
  // J3 holds a reservation at [200,300) on all nodes, so J4 (300 s) cannot use n4 in [3,200): it starts at 300.
  EXPECT_EQ(testing::start_times(run_golden("four_nodes_conservative")), (std::vector<std::int64_t>{0, 100, 200, 300}));
}

TEST(Golden, FourNodesSlurm) {
  // slurmctld starts at 0: the first pass after J1's submit is the tick at max(0, 0 + batch_sched_delay 3) = 3.
  // J1 runs 3-103. Backfill at 30 reserves whole nodes: J2 [60,240) on n[1-3] (start 103 floored to 60 s),
  // J3 from 240, J4 from 360; J4 cannot use n4 now because its 300 s would cross J2's slot. Every later cycle
  // agrees, so starts come from the main scheduler at each job end: J2 103, J3 203, J4 303.
  EXPECT_EQ(testing::start_times(run_golden("four_nodes_slurm")), (std::vector<std::int64_t>{3, 103, 203, 303}));
}

}  // namespace
}  // namespace gputwin
