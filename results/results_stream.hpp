// ResultsStream: writes the results of a run that can no longer change while the run goes on, on a thread of its own,
// so that a long run's writing overlaps its simulation (the simulation takes one core; writing takes the other):
//   - the jobs settled so far: ended at least the settle time (the run's EpilogTime: resources released, a requeue
//     decided) before the instant just done, and not requeued since. Their rows go into the jobs table as they settle,
//     each at its own rowid (job index + 1, where a write after the run puts it), and their jobs.csv lines are kept in
//     memory, to be written in job order at the end;
//   - the node_events rows (all but the last, which the recorder may still merge with the next change) and the
//     job_reasons rows recorded so far, in order.
// write_results(..., stream) then has the stream write the rest of those, checks that every row written still says
// what the final state and recorder say (a fold of them against the rows' fold), and adds the other tables to the
// same database. Should a row have changed after it was written, the stream's files are dropped and write_results
// writes everything from the final state, as without a stream: the results are the same either way, byte for byte
// in jobs.csv and row for row (by rowid) in results.sqlite.
//
//   ResultsStream stream(out_dir, state, recorder, from_seconds(epilog_s));
//   ... between instants: stream.take_settled(world.now());
//   write_results(out_dir, info, state, summary, recorder, ..., &stream);
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "model/cluster_state.hpp"
#include "results/recorder.hpp"
#include "results/run_rows.hpp"

namespace gputwin {

/// Writes a run's settled jobs, node events and reasons while the run goes on (see the file comment).
class ResultsStream {
 public:
  /// What the stream wrote before the run ended, and whether its rows passed the check at the end.
  struct Stats {
    std::size_t jobs = 0;         ///< Jobs written while the run went on.
    std::size_t node_events = 0;  ///< node_events rows written while the run went on.
    std::size_t reasons = 0;      ///< job_reasons rows written while the run went on.
    bool dropped = false;         ///< The check at the end failed: everything was written again from the final state.
  };

  /// The most jobs settled before they are handed to the writer at once (node events and reasons: four times as
  /// many), when the batch adapts to the run (batch_jobs 0): a run of fewer than kBatchJobs * kBatchesPerRun jobs is
  /// handed over in about kBatchesPerRun batches (of kLeastBatchJobs at least), so that its writer starts early in
  /// the run rather than with most of the rows left for after it.
  static constexpr std::size_t kBatchJobs = 4096;
  /// Batches an adapted run is handed over in, about.
  static constexpr std::size_t kBatchesPerRun = 32;
  /// The fewest jobs in an adapted batch (a hand-over costs a lock and a wake-up).
  static constexpr std::size_t kLeastBatchJobs = 256;
  /// The jobs per batch for a run of `job_count` jobs when the batch adapts: job_count / kBatchesPerRun, within
  /// [kLeastBatchJobs, kBatchJobs].
  static std::size_t adapted_batch_jobs(std::size_t job_count);

  /// Opens the temporary files of `out_dir` (kResultsTemporaryFiles; the folder is created if missing) and starts
  /// the writer. `state` and `recorder` are the run's and must outlive the stream; the recorder keeps job ends from
  /// now on (create the stream before the run starts), and the run must not add jobs. A job is settled `settle` after
  /// its end, and `batch_jobs` settled jobs are handed over at once (0: adapted to the run, see kBatchJobs). Throws
  /// ResultsError if a file cannot be opened.
  ResultsStream(const std::filesystem::path& out_dir, const ClusterState& state, RunRecorder& recorder, SimTime settle,
                std::size_t batch_jobs = 0);
  /// Stops the writer; without finish(), the temporary files are removed.
  ~ResultsStream();
  ResultsStream(const ResultsStream&) = delete;
  ResultsStream& operator=(const ResultsStream&) = delete;

  /// On the run's thread between instants, `now` the instant just done: hands what has settled since the last call
  /// to the writer, in batches (a few compares when there is nothing to hand over).
  void take_settled(SimTime now);
  /// As take_settled, but hands over everything settled by `now`, however little.
  void take_all_settled(SimTime now);

  /// For write_results, after the run: has the writer write the rest of the jobs, node events and reasons, waits for
  /// it, and checks every row against the final state and recorder. Returns the database (its transaction open,
  /// those three tables whole; jobs.csv written and closed), or null if the check failed (the stream's files are
  /// then removed). Rethrows the writer's error.
  std::unique_ptr<results_sqlite::Database> finish();

  /// What was written, and whether the check dropped it (valid after finish()).
  [[nodiscard]] const Stats& stats() const { return stats_; }

 private:
  // What the writer is handed at once: settled jobs (any order) with their nodes, and the node events and reasons
  // following the ones handed over before.
  struct Batch {
    std::vector<JobIndex> job_index;
    std::vector<JobRunRecord> jobs;
    std::vector<std::uint32_t> node_ends;  // per job: where its nodes end in `nodes`
    std::vector<NodeIndex> nodes;
    std::vector<NodeEvent> node_events;
    std::vector<ReasonEvent> reasons;
  };
  // The writer's open files and inserts, and its folds of what it wrote.
  struct Writer;

  // Advances ends_settled_ to `now`; returns where the node events and reasons to hand over end.
  std::pair<std::size_t, std::size_t> settle(SimTime now);
  void hand_over(std::size_t end_end, std::size_t node_event_end, std::size_t reason_end);
  void write_loop();
  void write_batch(const Batch& batch);
  void stop_writer();
  void remove_files();

  std::filesystem::path db_path_, csv_path_;
  const ClusterState& state_;
  const RunRecorder& recorder_;
  SimTime settle_;
  std::size_t batch_jobs_;
  std::size_t batch_events_;  // node events or reasons handed over at once (four times batch_jobs_)
  std::shared_ptr<const std::vector<JobSpec>> specs_;  // the run's specs (the writer reads them)
  JobRowFormat format_;
  std::size_t job_count_;
  // The run's thread: what has been handed over (indices into the recorder's histories), and how far the job ends
  // have settled.
  std::size_t ends_sent_ = 0, ends_settled_ = 0, node_events_sent_ = 0, reasons_sent_ = 0;
  std::vector<std::uint8_t> sent_;  // per job: handed over
  std::size_t jobs_sent_ = 0;
  bool finished_ = false;
  Stats stats_;
  // Shared with the writer.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::unique_ptr<Writer> writer_;  // the writer thread's (the run's thread takes it back after joining)
  std::thread thread_;              // last: started once every member above exists
};

}  // namespace gputwin
