#include "fidelity/replay.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "model/input_file.hpp"
#include "model/scenario.hpp"
#include "sim/runner.hpp"

namespace gputwin {
namespace {

using Json = nlohmann::json;

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

Json shares(const std::string& text, const std::string& file, std::uint64_t line) {
  if (text.empty()) return 1;
  if (text == "parent") return "parent";
  try {
    std::size_t used = 0;
    const unsigned long v = std::stoul(text, &used);
    if (used == text.size() && v <= UINT32_MAX) return v;
  } catch (const std::exception&) {
  }
  throw RecordingError(file, "line " + std::to_string(line), "field 4 (Share): '" + text + "' is not a number");
}

}  // namespace

std::string associations_json(const std::string& assoc_path) {
  if (auto problem = input_file_problem(assoc_path, "configuration", kMaxConfigBytes)) {
    throw RecordingError(assoc_path, "", *problem);
  }
  std::ifstream in(assoc_path);
  Json accounts = Json::array(), users = Json::array();
  std::vector<std::string> seen_accounts;
  std::string line;
  std::uint64_t n = 0;
  Json root_users = Json::array();
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line, '|');
    if (f.size() < 4) {
      throw RecordingError(
          assoc_path, "line " + std::to_string(n),
          "expected Cluster|Account|User|Share|QOS|DefaultQOS, got " + std::to_string(f.size()) + " field(s)");
    }
    const std::string& account = f[1];
    const std::string& user = f[2];
    if (account.empty()) throw RecordingError(assoc_path, "line " + std::to_string(n), "field 2 (Account) is empty");
    const Json share = shares(f[3], assoc_path, n);
    if (user.empty()) {
      if (account == "root") continue;  // the root association has no share to compete with
      accounts.push_back({{"name", account}, {"parent", "root"}, {"Fairshare", share}});
      continue;
    }
    Json u = {{"user", user}, {"account", account == "root" ? "root-user" : account}, {"Fairshare", share}};
    if (account == "root") {
      root_users.push_back(u);
    } else {
      users.push_back(u);
    }
  }
  if (!root_users.empty()) {
    accounts.insert(accounts.begin(), Json{{"name", "root-user"}, {"parent", "root"}, {"Fairshare", 1}});
    users.insert(users.begin(), root_users.begin(), root_users.end());
  }
  return Json{{"accounts", accounts}, {"users", users}}.dump();
}

std::string replay_scenario_json(const Recording& recording, const std::string& imported,
                                 const ReplayOptions& options) {
  Json sc;
  try {
    sc = Json::parse(imported);
  } catch (const Json::parse_error& e) {
    throw RecordingError(recording.slurm_conf.string(), "", std::string("import gave no JSON: ") + e.what());
  }
  sc["name"] = "fidelity-" + recording.dir.filename().string();
  sc["scheduler"]["phase_s"] = options.phase_s;
  // The release that made the recording, where the simulator models behaviour that changed between releases.
  if (!recording.slurm_version.empty()) sc["scheduler"]["slurm_version"] = recording.slurm_version;
  if (std::filesystem::exists(recording.assoc)) {
    const Json assoc = Json::parse(associations_json(recording.assoc.string()));
    Json& acc = sc["accounting"];
    acc["auto_associations"] = false;
    acc["accounts"] = assoc["accounts"];
    acc["users"] = assoc["users"];
  }
  return sc.dump(1);
}

std::vector<RecordedJob> simulate_recording(const Recording& recording, const std::string& scenario_json,
                                            const ReplayOptions& options) {
  const std::string file = (recording.dir / "replay.json").string();
  Scenario scenario = parse_scenario(scenario_json, file, recording.dir, options.overrides);
  RunOptions run;
  run.node_history = false;
  run.reason_history = false;
  const RunOutcome outcome = run_scenario(std::move(scenario), run);
  const ClusterState& state = *outcome.state;
  std::unordered_map<std::uint64_t, JobIndex> by_id;
  for (JobIndex j = 0; j < state.job_count(); ++j) by_id.emplace(state.spec(j).id, j);
  std::vector<RecordedJob> out;
  out.reserve(recording.jobs.size());
  const std::string sacct = recording.sacct.string();
  for (const RecordedJob& real : recording.jobs) {
    auto it = by_id.find(real.job_id);
    if (it == by_id.end()) {
      throw RecordingError(sacct, "",
                           "job " + std::to_string(real.job_id) + " of result.json (workload index " +
                               std::to_string(real.idx) + ") is not in the history");
    }
    const JobRuntime& rt = state.job(it->second);
    if (rt.start < 0) {
      throw RecordingError(sacct, "", "job " + std::to_string(real.job_id) + " never starts in the simulation");
    }
    RecordedJob s = real;
    s.submit_s = state.spec(it->second).submit_s;
    s.start_s = to_seconds(rt.start);
    s.end_s = rt.end >= 0 ? to_seconds(rt.end) : -1;
    s.state.clear();
    s.nodes.clear();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gputwin
