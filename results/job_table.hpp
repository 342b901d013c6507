// The Jobs table of a run in memory: every job's row as the results' jobs table holds it, packed (low-cardinality
// strings interned, names and node lists in one arena), asked about any simulated time: one filtered, searched and
// sorted page with the per-state counts, one job, the jobs slurmctld would hold. RunView fills one from a results
// folder's jobs table; a live run fills one from the copy of its state in memory (state_job_table in
// results/state_overview.hpp), so both answer with this one code.
//
//   JobTable table;
//   table.add(record);                      // each row, in job id order (ties in table order)
//   table.finish(reasons);                  // the recorded reason history, for pending jobs
//   JobQuery q; q.at_s = 1000; q.filter = JobFilter::kPending;
//   JobPage page = table.jobs(q);
//
// Memory is about 100 bytes per job. A page costs one pass over the packed rows (the counts; the last four passes are
// kept, so the same second, tab and search asked again with another offset or sort skips it) and a walk of a sort order
// built once per column and direction (time-dependent sorts: see RunView's header).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "results/string_pool.hpp"

namespace gputwin {

/// Which jobs a Jobs tab shows: the consoles' ALL/RUNNING/PENDING/COMPLETED/FAILED/UNKNOWN.
enum class JobFilter : std::uint8_t { kAll, kRunning, kPending, kCompleted, kFailed, kUnknown };

/// Parses "all", "running", "pending", "completed", "failed", "unknown" (any case). Empty when unknown.
std::optional<JobFilter> parse_job_filter(std::string_view text);

/// The Jobs table's sortable columns.
enum class JobSort : std::uint8_t {
  kJobId,
  kName,
  kUser,
  kPartition,
  kNodes,
  kGpus,
  kRunTime,
  kTimeLimit,
  kState,
  kPriority,
  kSubmit,
  kStart
};

/// Parses a column name ("job_id", "name", "user", "partition", "nodes", "gpus", "run_time", "time_limit", "state",
/// "priority", "submit_time", "start_time"). Empty when unknown.
std::optional<JobSort> parse_job_sort(std::string_view text);

/// The group a job state falls in: RUNNING, PENDING, COMPLETED; FAILED for every unsuccessful end (FAILED, TIMEOUT,
/// NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, CANCELLED, PREEMPTED); UNKNOWN for anything else.
JobFilter job_state_group(std::string_view state);

/// One page request of the Jobs table.
struct JobQuery {
  std::int64_t at_s = 0;               ///< Simulated time the table shows (jobs not yet submitted are left out).
  JobFilter filter = JobFilter::kAll;  ///< Which states.
  std::string search;                  ///< Case-insensitive substring of job id, name, user, account or partition.
  std::string user;                    ///< Only this user's jobs, when set.
  JobSort sort = JobSort::kJobId;      ///< Order.
  bool descending = false;             ///< Reverse order (ties stay in job id order).
  std::size_t offset = 0;              ///< First row of the page.
  std::size_t limit = 50;              ///< Rows per page.
};

/// A job as the Jobs table shows it at a time.
struct JobRow {
  std::int64_t job_id = 0;
  std::string name, user, account, partition, qos;
  std::string state;          ///< At the query's time: PENDING, RUNNING, or the final state.
  std::string reason;         ///< Pending reason at that time ("" when none is recorded).
  std::int64_t submit_s = 0;  ///< Submit time.
  std::int64_t start_s = -1;  ///< Start time, -1 if it had not started by then.
  std::int64_t end_s = -1;    ///< End time, -1 if it had not ended by then.
  std::int64_t run_time_s = 0;
  std::int64_t time_limit_s = 0;
  std::int64_t priority = 0;
  std::int32_t nodes = 0, cpus = 0, gpus = 0;
  std::string node_list;  ///< Its nodes once started ("" while pending).
};

/// One page of the Jobs table, with the counts the filter tabs show.
struct JobPage {
  std::size_t total = 0;                ///< Jobs matching filter, search and user.
  std::array<std::size_t, 6> counts{};  ///< Submitted jobs per JobFilter (index by the enum), search and user applied.
  std::vector<JobRow> rows;             ///< The page.
};

/// One job's row as written to the results' jobs table (start and end -1 when NULL; texts "" when NULL).
struct JobRecord {
  std::int64_t job_id = 0, submit_s = 0, start_s = -1, end_s = -1, time_limit_s = 0, priority = 0;
  std::string_view name, user, account, partition, qos;
  std::string_view state;      ///< The recorded state (final, or PENDING/RUNNING when written before it ended).
  std::string_view node_list;  ///< Its nodes once started.
  std::string_view reason;     ///< The recorded reason (a pending or rejected job's).
  std::int32_t nodes = 0, cpus = 0, gpus = 0;
};

/// Every job of a run, asked about any simulated time. Thread-safe once finished: queries are const and lock the
/// lazily built sort orders.
class JobTable {
 public:
  /// A pending job's reason in force at a second: the last one the history records for that job id at or before it
  /// ("" when none is recorded).
  using ReasonAt = std::function<std::string(std::int64_t job_id, std::int64_t at_s)>;

  /// A packed row.
  struct Job {
    std::int64_t job_id = 0, submit = 0, start = -1, end = -1, time_limit = 0, priority = 0;
    std::uint32_t name_off = 0, name_len = 0, nodes_off = 0, nodes_len = 0;
    std::uint32_t user = 0, account = 0, partition = 0, qos = 0, final_state = 0, reason = 0;
    std::int32_t nodes = 0, cpus = 0, gpus = 0;
  };

  JobTable();
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  /// Makes room for `rows` rows whose names and node lists take `text_bytes` bytes (optional: saves regrowing).
  void reserve(std::size_t rows, std::size_t text_bytes);
  /// Appends a row; rows come in job id order (RunView reads them ORDER BY job_id).
  void add(const JobRecord& record);
  /// Ends the filling: `reasons` answers the reason of a job pending at a time (may be empty: none recorded).
  void finish(ReasonAt reasons);

  /// One page of the Jobs table.
  [[nodiscard]] JobPage jobs(const JobQuery& query) const;
  /// Job `job_id` as of `at_s`; empty if there is no such job.
  [[nodiscard]] std::optional<JobRow> job(std::int64_t job_id, std::int64_t at_s) const;
  /// Jobs slurmctld would still hold at `at_s` (RunView::controller_jobs).
  [[nodiscard]] std::vector<JobRow> controller_jobs(std::int64_t at_s, std::int64_t min_job_age_s) const;
  /// Jobs as of `at_s` submitted by `to_s` not ended before `from_s` (RunView::jobs_between).
  [[nodiscard]] std::vector<JobRow> jobs_between(std::int64_t at_s, std::int64_t from_s, std::int64_t to_s,
                                                 std::size_t max_jobs) const;
  /// Every (account, user) pair that submitted a job, sorted.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> account_users() const;
  /// Every QOS a job ran under, sorted.
  [[nodiscard]] std::vector<std::string> qos_names() const;
  /// Builds every sort order now (else each is built by the first page that asks for it).
  void prepare_orders() const;
  /// Builds the order the pages sorted by `sort` (`descending`) walk, if they walk a prebuilt one.
  void prepare_order(JobSort sort, bool descending) const;

  /// The packed rows, in job id order.
  [[nodiscard]] const std::vector<Job>& rows() const { return jobs_; }
  /// An interned string (user, account, partition, QOS, state, reason).
  [[nodiscard]] std::string_view text(std::uint32_t id) const { return strings_.text(id); }
  /// A row's job name.
  [[nodiscard]] std::string_view name(const Job& j) const { return {text_arena_.data() + j.name_off, j.name_len}; }
  /// A row's node list ("" if it never started).
  [[nodiscard]] std::string_view node_list(const Job& j) const {
    return {text_arena_.data() + j.nodes_off, j.nodes_len};
  }
  /// Job `j` as the table shows it at `at_s`.
  [[nodiscard]] JobRow row(const Job& j, std::int64_t at_s) const;

 private:
  /// The state of job `j` at `at_s`, as an interned id, or -1 if it was not submitted yet.
  [[nodiscard]] std::int32_t state_at(const Job& j, std::int64_t at_s) const;
  std::uint32_t append_text(std::string_view s);
  /// Permutation of jobs_ by a time-independent column (ties in job id order), built once per direction.
  const std::vector<std::uint32_t>& order_by(JobSort sort, bool descending) const;
  /// Calls use(key), key(row) being the row's sort key by a time-independent column (ordered as the column sorts).
  template <class F>
  void with_sort_key(JobSort sort, F&& use) const;
  /// Jobs that started and ended, by run time (end - start; ties in job id order), built once per direction.
  const std::vector<std::uint32_t>& duration_order(bool descending) const;
  /// The hits from..to (of `total`) of the Jobs table sorted by run time at query.at_s, appended to `chosen`.
  void run_time_page(const JobQuery& query, const std::vector<std::uint8_t>& hit, std::size_t total, std::size_t from,
                     std::size_t to, std::vector<std::uint32_t>& chosen) const;
  static constexpr int kDurationOrderKey = 1000;  // orders_'s key for duration_order (+1 descending)
  /// The jobs a query's second, tab, search and user select (a flag per row), the counts per tab and the hits per
  /// state id: one pass over the rows.
  struct Matches {
    std::int64_t at_s = 0;
    JobFilter filter = JobFilter::kAll;
    std::string search, user;
    JobPage counts;  // total and counts only
    std::vector<std::uint8_t> hit;
    std::vector<std::uint32_t> state_hits;
  };
  /// The Matches of `query`: one of the last kKeptMatches made if it was for the same second, tab, search and user.
  [[nodiscard]] std::shared_ptr<const Matches> matches(const JobQuery& query) const;

  StringPool strings_;  // users, accounts, partitions, QOS, states, reasons
  std::vector<Job> jobs_;
  std::vector<char> text_arena_;   // job names and node lists
  std::vector<char> lower_names_;  // text_arena_ in lower case (the name search)
  std::uint32_t pending_id_ = 0, running_id_ = 0, rejected_id_ = 0;
  ReasonAt reasons_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<int, std::vector<std::uint32_t>> orders_;
  mutable std::mutex matches_mutex_;
  static constexpr std::size_t kKeptMatches = 4;
  mutable std::vector<std::shared_ptr<const Matches>> last_matches_;  // the newest first
};

}  // namespace gputwin
