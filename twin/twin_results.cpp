#include "twin/twin_results.hpp"

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "results/results_store.hpp"
#include "results/summary.hpp"
#include "scheduler/scheduler.hpp"
#include "sim/runner.hpp"

namespace gputwin {

namespace {

constexpr const char* kTwinSchema = R"sql(
CREATE TABLE twin_info (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE polls (time INTEGER NOT NULL, fetch_s REAL NOT NULL, mirror_s REAL NOT NULL, forecast_s REAL NOT NULL,
  write_s REAL NOT NULL, nodes INTEGER NOT NULL, jobs INTEGER NOT NULL, pending INTEGER NOT NULL,
  running INTEGER NOT NULL, error TEXT);
CREATE TABLE forecasts (made_at INTEGER NOT NULL, job_id INTEGER NOT NULL, horizon_s INTEGER,
  predicted_start INTEGER, slurm_estimate INTEGER, actual_start INTEGER);
CREATE TABLE node_forecasts (made_at INTEGER NOT NULL, node TEXT NOT NULL, state TEXT NOT NULL, reason TEXT,
  predicted_return INTEGER);
CREATE TABLE actions (time INTEGER NOT NULL, controller TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL,
  reason TEXT, outcome TEXT NOT NULL, call TEXT);
CREATE TABLE job_states (time INTEGER NOT NULL, job_id INTEGER NOT NULL, state TEXT NOT NULL, reason TEXT);
CREATE TABLE associations (account TEXT, user TEXT, partition TEXT, parent_account TEXT, shares_raw INTEGER,
  default_qos TEXT, qos TEXT, max_jobs INTEGER, max_submit_jobs INTEGER, grp_jobs INTEGER);
CREATE TABLE qos (name TEXT NOT NULL, priority INTEGER, max_wall_pj INTEGER, max_jobs_pu INTEGER,
  max_submit_pu INTEGER, preempt TEXT, usage_factor REAL);
CREATE INDEX forecasts_by_job ON forecasts(job_id, made_at);
)sql";

// A prepared INSERT, finalized on scope exit.
class Insert {
 public:
  Insert(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Insert() { sqlite3_finalize(stmt_); }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;
  Insert& text(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Insert& integer(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  // An epoch time relative to `epoch`, NULL when unset (`v` <= 0 for timestamps, < 0 for durations).
  Insert& time(int i, std::int64_t v, std::int64_t epoch) {
    if (v <= 0)
      sqlite3_bind_null(stmt_, i);
    else
      sqlite3_bind_int64(stmt_, i, v - epoch);
    return *this;
  }
  Insert& real(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  Insert& null(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  void step() {
    if (sqlite3_step(stmt_) != SQLITE_DONE) fail();
    sqlite3_reset(stmt_);
  }

 private:
  [[noreturn]] void fail() { throw ResultsError(std::string("results.sqlite: ") + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw ResultsError("results.sqlite: " + msg);
  }
}

void write_configuration(sqlite3* db, const Mirror& mirror, const TwinLog& log);

void write_twin_tables(sqlite3* db, const Mirror& mirror, const TwinLog& log, const TwinInfo& info) {
  exec(db, kTwinSchema);
  const std::int64_t epoch = mirror.epoch();
  {
    Insert st(db, "INSERT INTO twin_info VALUES (?,?)");
    const std::pair<const char*, std::string> rows[] = {{"epoch_unix", std::to_string(epoch)},
                                                        {"last_poll_unix", std::to_string(mirror.now())},
                                                        {"slurmrestd", info.url},
                                                        {"api_version", info.api_version},
                                                        {"predictor", info.predictor},
                                                        {"controllers", info.controllers},
                                                        {"mode", info.act ? "act" : "dry-run"},
                                                        {"polls", std::to_string(mirror.polls())}};
    for (const auto& [key, value] : rows) st.text(1, key).text(2, value).step();
  }
  {
    Insert st(db, "INSERT INTO polls VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const PollRecord& p : log.polls) {
      st.integer(1, p.time - epoch).real(2, p.fetch_s).real(3, p.mirror_s).real(4, p.forecast_s).real(5, p.write_s);
      st.integer(6, static_cast<std::int64_t>(p.nodes)).integer(7, static_cast<std::int64_t>(p.jobs));
      st.integer(8, static_cast<std::int64_t>(p.pending)).integer(9, static_cast<std::int64_t>(p.running));
      if (p.error.empty())
        st.null(10);
      else
        st.text(10, p.error);
      st.step();
    }
  }
  {
    Insert st(db, "INSERT INTO forecasts VALUES (?,?,?,?,?,?)");
    for (const ForecastRow& row : log.forecasts) {
      const JobForecast& f = row.forecast;
      st.integer(1, f.made_at - epoch).integer(2, static_cast<std::int64_t>(f.job_id));
      if (f.predicted_start >= 0)
        st.integer(3, f.predicted_start - f.made_at);
      else
        st.null(3);
      st.time(4, f.predicted_start, epoch).time(5, f.slurm_estimate, epoch).time(6, row.actual_start, epoch).step();
    }
  }
  {
    Insert st(db, "INSERT INTO node_forecasts VALUES (?,?,?,?,?)");
    for (const NodeForecast& f : log.node_forecasts) {
      st.integer(1, f.made_at - epoch).text(2, f.node).text(3, f.state).text(4, f.reason);
      st.time(5, f.predicted_return, epoch).step();
    }
  }
  {
    Insert st(db, "INSERT INTO actions VALUES (?,?,?,?,?,?,?)");
    for (const ActionRecord& a : log.actions) {
      st.integer(1, a.time - epoch).text(2, a.controller).text(3, a.action).text(4, a.target).text(5, a.reason);
      st.text(6, a.outcome).text(7, a.call).step();
    }
  }
  write_configuration(db, mirror, log);
  {
    Insert st(db, "INSERT INTO job_states VALUES (?,?,?,?)");
    for (const JobChange& c : mirror.job_history()) {
      st.integer(1, c.time - epoch).integer(2, static_cast<std::int64_t>(c.job_id)).text(3, c.state);
      st.text(4, c.reason).step();
    }
  }
}

// A comma-separated list.
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// The configuration tables: partitions as the last poll saw them, associations and QOS as read at start.
void write_configuration(sqlite3* db, const Mirror& mirror, const TwinLog& log) {
  const auto optional = [](Insert& st, int i, const std::optional<std::int64_t>& v) -> Insert& {
    return v ? st.integer(i, *v) : st.null(i);
  };
  {
    exec(db, "DELETE FROM partitions");  // the configured rows of the base writer: slurmrestd's view replaces them
    Insert st(db, "INSERT INTO partitions VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const RestPartition& p : mirror.partitions()) {
      st.text(1, p.name).text(2, p.nodes).integer(3, p.is_default ? 1 : 0);
      optional(st, 4, p.default_time_s);
      optional(st, 5, p.max_time_s);
      st.text(6, p.state).integer(7, p.priority_tier).integer(8, p.priority_job_factor);
      st.integer(9, p.total_nodes).integer(10, p.total_cpus).step();
    }
  }
  {
    Insert st(db, "INSERT INTO associations VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const RestAssociation& a : log.associations) {
      st.text(1, a.account).text(2, a.user).text(3, a.partition).text(4, a.parent_account).integer(5, a.shares_raw);
      st.text(6, a.default_qos).text(7, joined(a.qos));
      optional(st, 8, a.max_jobs);
      optional(st, 9, a.max_submit_jobs);
      optional(st, 10, a.grp_jobs);
      st.step();
    }
  }
  {
    Insert st(db, "INSERT INTO qos VALUES (?,?,?,?,?,?,?)");
    for (const RestQos& q : log.qos) {
      st.text(1, q.name).integer(2, q.priority);
      optional(st, 3, q.max_wall_pj_s);
      optional(st, 4, q.max_jobs_pu);
      optional(st, 5, q.max_submit_pu);
      st.text(6, joined(q.preempt)).real(7, q.usage_factor).step();
    }
  }
}

// A final state of the model for a Slurm state name (BOOT_FAIL and DEADLINE have none: FAILED).
JobState final_state(const std::string& name) {
  if (const auto s = parse_job_state(name)) return *s;
  return JobState::kFailed;
}

}  // namespace

ClusterState mirror_state(const Mirror& mirror, RunRecorder& recorder) {
  const ClusterConfig& config = mirror.config();
  const std::int64_t epoch = mirror.epoch();
  std::vector<JobSpec> specs;
  specs.reserve(mirror.jobs().size());
  for (const MirrorJob& mj : mirror.jobs()) specs.push_back(mirror.job_spec(mj.record, epoch));
  ClusterState state(config, std::move(specs));
  const std::size_t nodes = config.nodes.size();
  std::vector<std::uint32_t> free_cpus(nodes);
  std::vector<std::uint32_t> free_gpus(nodes);
  std::vector<std::uint64_t> free_mem(nodes);
  const auto reset_free = [&](const std::vector<NodeIndex>& on) {
    for (NodeIndex n : on) {
      free_cpus[n] = state.free_cpus()[n];
      free_gpus[n] = state.free_gpus()[n];
      free_mem[n] = state.free_mem_mb()[n];
    }
  };
  // Ended jobs first (each allocated and released in turn), then the running ones, which fit together.
  for (int pass = 0; pass < 2; ++pass) {
    for (JobIndex j = 0; j < state.job_count(); ++j) {
      const RestJob& job = mirror.jobs()[j].record;
      const bool ended = job_ended(job.state);
      if ((pass == 0) != ended) continue;
      JobRuntime& rt = state.job_mut(j);
      const int p = job.partition.empty() ? config.default_partition() : config.partition_index(job.partition);
      rt.partition = p < 0 ? 0 : static_cast<std::uint32_t>(p);
      rt.submitted = true;
      rt.time_limit_s = state.spec(j).time_limit_s;
      if (rt.time_limit_s < 0 && p >= 0)
        rt.time_limit_s = effective_time_limit_s(state.spec(j), config.partitions[static_cast<std::size_t>(p)]);
      rt.priority = static_cast<std::uint32_t>(std::clamp<std::int64_t>(job.priority.value_or(0), 0, UINT32_MAX));
      const std::vector<NodeIndex> on = mirror.nodes_of(job.nodes);
      const bool started = job.start_time > 0 && job.state != "PENDING" && !on.empty();
      if (started) {
        reset_free(on);
        const auto allocation = spread_allocation(state.spec(j), job, on, free_cpus, free_gpus, free_mem);
        state.allocate(j, allocation, from_seconds(job.start_time - epoch));
        if (ended) {
          const std::int64_t end = std::max(job.end_time, job.start_time);
          state.finish(j, final_state(job.state), from_seconds(end - epoch));
          state.release(j);
        }
      } else if (ended) {
        state.end_pending(j, final_state(job.state), from_seconds(std::max(job.end_time, job.submit_time) - epoch));
      } else if (const auto reason = parse_pending_reason(job.reason)) {
        rt.reason = *reason;
      }
    }
  }
  for (const NodeChange& c : mirror.node_history())
    recorder.on_node_state(c.node, c.state, from_seconds(c.time - epoch));
  for (const JobChange& c : mirror.job_history()) {
    if (c.state != "PENDING") continue;
    const auto reason = parse_pending_reason(c.reason);
    const MirrorJob* mj = mirror.job(c.job_id);
    if (!reason || mj == nullptr) continue;
    recorder.on_job_reason(static_cast<JobIndex>(mj - mirror.jobs().data()), *reason, from_seconds(c.time - epoch));
  }
  return state;
}

void write_twin_results(const std::filesystem::path& out_dir, const Mirror& mirror, const TwinLog& log,
                        const TwinInfo& info) {
  RunRecorder recorder(true, true);
  const ClusterState state = mirror_state(mirror, recorder);
  const RunSummary summary = summarize(state);
  RunInfo run;
  run.scenario = "twin";
  run.scenario_file = info.url;
  run.policy = "slurmctld";
  run.version = std::string(gputwin_version());
  run.wall_time_s = info.wall_time_s;
  run.events = mirror.polls();
  run.parameters_json = nlohmann::json{{"twin", true},
                                       {"epoch_unix", mirror.epoch()},
                                       {"slurmrestd", info.url},
                                       {"api_version", info.api_version},
                                       {"predictor", info.predictor},
                                       {"controllers", info.controllers},
                                       {"mode", info.act ? "act" : "dry-run"}}
                            .dump();
  // Cluster metrics (node states, allocation, modelled GPU power) from the mirrored allocations, as a run's are;
  // per-GPU series are left out: a poll rewrites the folder, and a twin has DCGM for real per-GPU figures.
  MetricsInput metrics;
  metrics.config.per_gpu = false;
  metrics.config.epoch_unix_s = mirror.epoch();
  metrics.horizon = from_seconds(mirror.now() - mirror.epoch());
  std::vector<NodeCondition> last(mirror.config().nodes.size(), NodeCondition::kNone);
  for (const NodeChange& c : mirror.node_history()) {
    if (c.condition == last[c.node]) continue;
    last[c.node] = c.condition;
    metrics.node_conditions.push_back(NodeConditionEvent{from_seconds(c.time - mirror.epoch()), c.node, c.condition});
  }
  const ExtraTablesWriter extra = [&](sqlite3* db) { write_twin_tables(db, mirror, log, info); };
  write_results(out_dir, run, state, summary, recorder, &metrics, nullptr, nullptr, &extra);
}

}  // namespace gputwin
