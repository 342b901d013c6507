#include "cli/views.hpp"

#include <fmt/core.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "results/results_db.hpp"
#include "scheduler/job_policy.hpp"
#include "sim/runner.hpp"

namespace gputwin {
namespace {

/// squeue's %M: [days-]hours:minutes:seconds, minutes:seconds under an hour.
std::string elapsed(std::int64_t s) {
  if (s < 0) s = 0;
  const std::int64_t d = s / 86400, h = (s / 3600) % 24, m = (s / 60) % 60, sec = s % 60;
  if (d > 0) return fmt::format("{}-{:02}:{:02}:{:02}", d, h, m, sec);
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, sec);
  return fmt::format("{}:{:02}", m, sec);
}

/// Right-aligned, truncated to `width` like squeue's "%.Nx".
std::string fit(const std::string& s, std::size_t width) {
  const std::string t = s.size() > width ? s.substr(0, width) : s;
  return std::string(width - t.size(), ' ') + t;
}

/// Runs the scenario up to `at_s` and returns the outcome with the scheduler alive.
RunOutcome run_until(const Scenario& scenario, std::int64_t at_s) {
  RunOptions options;
  options.node_history = false;
  options.reason_history = false;
  options.stop_at = from_seconds(at_s);
  return run_scenario(scenario, options);
}

}  // namespace

bool parse_sim_time(const std::string& text, std::int64_t& seconds) {
  if (text.empty()) return false;
  if (text.find_first_not_of("0123456789") == std::string::npos) {
    seconds = std::stoll(text);
    return true;
  }
  if (text.find(':') == std::string::npos && text.find('-') == std::string::npos) return false;
  return parse_slurm_time(text, seconds) && seconds >= 0;
}

int print_squeue(const std::filesystem::path& results_dir, std::int64_t at_s, const std::string& user) {
  ResultsDb results(results_dir / "results.sqlite");  // checked whole; InputError (exit 2) names the file
  results.require_columns("jobs", {"job_id", "partition", "name", "user", "start_time", "nodes", "node_list",
                                   "array_job_id", "array_task_id", "priority", "submit_time", "end_time"});
  results.require_columns("job_reasons", {"job_id", "time", "reason"});
  sqlite3* db = results.handle();
  // Queued at `at`: submitted, not ended, and not rejected (rejected jobs end at their submit time unstarted).
  const char* sql = R"sql(
SELECT j.job_id, j.partition, j.name, j.user, j.start_time, j.nodes, j.node_list, j.array_job_id, j.array_task_id,
  (SELECT r.reason FROM job_reasons r WHERE r.job_id = j.job_id AND r.time <= ?1 ORDER BY r.time DESC LIMIT 1),
  j.priority
FROM jobs j
WHERE j.submit_time <= ?1 AND (j.end_time IS NULL OR j.end_time > ?1)
  AND NOT (j.start_time IS NULL AND j.end_time IS NOT NULL) AND (?2 = '' OR j.user = ?2)
ORDER BY j.partition, (j.start_time IS NOT NULL AND j.start_time <= ?1), j.priority DESC, j.job_id)sql";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) results.fail("squeue query");
  sqlite3_bind_int64(st, 1, at_s);
  sqlite3_bind_text(st, 2, user.c_str(), -1, SQLITE_TRANSIENT);
  fmt::print("{} {} {} {} {} {} {} {}\n", fit("JOBID", 18), fit("PARTITION", 9), fit("NAME", 8), fit("USER", 8),
             fit("ST", 2), fit("TIME", 10), fit("NODES", 6), "NODELIST(REASON)");
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    std::string id = column_text(st, 0);
    if (sqlite3_column_type(st, 7) != SQLITE_NULL) id = column_text(st, 7) + "_" + column_text(st, 8);
    const bool running = sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_int64(st, 4) <= at_s;
    const std::string reason = sqlite3_column_type(st, 9) == SQLITE_NULL ? "None" : column_text(st, 9);
    fmt::print("{} {} {} {} {} {} {} {}\n", fit(id, 18), fit(column_text(st, 1), 9), fit(column_text(st, 2), 8),
               fit(column_text(st, 3), 8), fit(running ? "R" : "PD", 2),
               fit(running ? elapsed(at_s - sqlite3_column_int64(st, 4)) : "0:00", 10), fit(column_text(st, 5), 6),
               running ? column_text(st, 6) : "(" + reason + ")");
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) results.fail("squeue query");
  return 0;
}

int print_sprio(const Scenario& scenario, std::int64_t at_s) {
  const RunOutcome o = run_until(scenario, at_s);
  const JobPolicy* policy = o.scheduler->job_policy();
  const PriorityConfig& w = scenario.scheduler.priority;
  const ClusterState& state = *o.state;
  const std::int64_t now = to_seconds(o.world->now());
  fmt::print("{} {} {} {} {} {} {} {} {} {} {}\n", fit("JOBID", 10), fit("PARTITION", 9), fit("PRIORITY", 10),
             fit("SITE", 10), fit("AGE", 10), fit("FAIRSHARE", 10), fit("JOBSIZE", 10), fit("PARTITION", 10),
             fit("QOS", 10), fit("NICE", 10), "TRES");
  // sprio prints each factor times its weight, rounded (sprio.c: "%*.0f").
  auto weighted = [](double weight, double factor) { return fmt::format("{:.0f}", weight * factor); };
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    if (!rt.submitted || rt.state != JobState::kPending || rt.rejected) continue;
    const PriorityFactors f = policy->factors(j, now);
    const JobSpec& spec = state.spec(j);
    const std::string id =
        spec.array_job_id != 0 ? fmt::format("{}_{}", spec.array_job_id, spec.array_task_id) : std::to_string(spec.id);
    fmt::print("{} {} {} {} {} {} {} {} {} {} {}\n", fit(id, 10),
               fit(scenario.cluster.partitions[rt.partition].name, 9), fit(std::to_string(policy->priority(j)), 10),
               fit("0", 10), fit(weighted(w.weight_age, f.age), 10), fit(weighted(w.weight_fairshare, f.fairshare), 10),
               fit(weighted(w.weight_job_size, f.job_size), 10), fit(weighted(w.weight_partition, f.partition), 10),
               fit(weighted(w.weight_qos, f.qos), 10), fit(std::to_string(f.nice), 10),
               f.tres > 0 ? fmt::format("{:.0f}", f.tres) : "");
  }
  if (!w.multifactor) fmt::print(stderr, "note: PriorityType is priority/basic: factors are all zero\n");
  return 0;
}

int print_sshare(const Scenario& scenario, std::int64_t at_s, bool long_format) {
  const RunOutcome o = run_until(scenario, at_s);
  const AssociationTree& tree = o.scheduler->job_policy()->associations();
  fmt::print("{:<20} {:>10} {:>10} {:>11} {:>11}", "Account", "User", "RawShares", "NormShares", "RawUsage");
  if (long_format) fmt::print(" {:>11}", "NormUsage");
  fmt::print(" {:>13} {:>10}", "EffectvUsage", "FairShare");
  if (long_format) fmt::print(" {:>10}", "LevelFS");
  fmt::print("\n");
  // sshare's order (sshare's _sort_childern_list): depth-first; within a level users first, then by name.
  std::vector<std::vector<AssocId>> children(tree.size());
  for (AssocId id = 1; id < tree.size(); ++id) children[tree.parent(id)].push_back(id);
  std::vector<AssocId> order;
  std::vector<AssocId> stack{0};
  while (!stack.empty()) {
    const AssocId id = stack.back();
    stack.pop_back();
    order.push_back(id);
    std::vector<AssocId>& kids = children[id];
    std::sort(kids.begin(), kids.end(), [&](AssocId a, AssocId b) {
      const AssociationView va = tree.view(a), vb = tree.view(b);
      const bool ua = !va.user.empty(), ub = !vb.user.empty();
      if (ua != ub) return ua;
      return (ua ? va.user : va.account) < (ub ? vb.user : vb.account);
    });
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
  // Depth of each association for sshare's indentation of accounts.
  std::vector<int> depth(tree.size(), 0);
  for (AssocId id : order) {
    if (id != 0) depth[id] = depth[tree.parent(id)] + 1;
    const AssociationView v = tree.view(id);
    const std::string name = id == 0 ? "root" : std::string(static_cast<std::size_t>(depth[id] - 1), ' ') + v.account;
    const std::string shares = v.shares_parent ? "parent" : std::to_string(v.raw_shares);
    fmt::print("{:<20} {:>10} {:>10} {:>11.6f} {:>11.0f}", name, v.user, shares, v.norm_shares, v.raw_usage);
    if (long_format) fmt::print(" {:>11.6f}", v.norm_usage);
    fmt::print(" {:>13.6f} {:>10}", v.effective_usage, v.user.empty() ? "" : fmt::format("{:.6f}", v.fs_factor));
    if (long_format) {
      const std::string level = id == 0 ? "" : (std::isinf(v.level_fs) ? "inf" : fmt::format("{:.6g}", v.level_fs));
      fmt::print(" {:>10}", level);
    }
    fmt::print("\n");
  }
  if (!scenario.scheduler.priority.multifactor)
    fmt::print(stderr, "note: PriorityType is priority/basic: usage is not accumulated\n");
  return 0;
}

}  // namespace gputwin
