#include "results/results_stream.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "results/results_sqlite.hpp"

namespace gputwin {
namespace {

// A job's hash for the order-free fold of the jobs written (summed: jobs settle in any order).
std::uint64_t job_hash(JobIndex j, const JobRunRecord& r, std::span<const NodeIndex> nodes) {
  return fold_job_run_record(0x6a09e667f3bcc909ULL + j, r, nodes);
}

// Whether a job has ended (a requeue would make it pending again).
bool ended(const JobRuntime& rt) {
  return rt.end >= 0 && rt.state != JobState::kPending && rt.state != JobState::kRunning;
}

}  // namespace

struct ResultsStream::Writer {
  Writer(const std::filesystem::path& db_path, const std::filesystem::path& csv_path, std::size_t job_count)
      : db(std::make_unique<results_sqlite::Database>(db_path)),
        csv_path(csv_path),
        line_begin(job_count),
        line_size(job_count) {
    results_sqlite::start_results_database(*db);
    db->exec(results_sqlite::kJobIndexes);
    csv.open(csv_path, std::ios::binary | std::ios::trunc);
    if (!csv) throw ResultsError(csv_path.string() + ": cannot open for writing");
    jobs.emplace(*db, "jobs", 24, kJobsColumnsAndRowid);
    node_events.emplace(*db, "node_events", 4);
    reasons.emplace(*db, "job_reasons", 3);
  }
  // Inserts the last partial batches and writes jobs.csv, its lines in job order.
  void close() {
    jobs->finish();
    node_events->finish();
    reasons->finish();
    jobs.reset();
    node_events.reset();
    reasons.reset();
    std::string buffer(kJobsCsvHeader);
    buffer.reserve(2 * kJobsCsvFlushBytes);
    for (std::size_t j = 0; j < line_begin.size(); ++j) {
      buffer.append(lines, line_begin[j], line_size[j]);
      if (buffer.size() < kJobsCsvFlushBytes) continue;
      csv.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
    csv.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    csv.close();
    if (!csv) throw ResultsError(csv_path.string() + ": write failed");
  }

  std::unique_ptr<results_sqlite::Database> db;
  std::filesystem::path csv_path;
  std::ofstream csv;
  std::string lines;                      // jobs.csv's lines, in the order the jobs settled
  std::vector<std::uint64_t> line_begin;  // per job: where its line starts in `lines`
  std::vector<std::uint32_t> line_size;   // and its length
  std::optional<results_sqlite::BatchInsert> jobs, node_events, reasons;
  std::uint64_t job_fold = 0, node_event_fold = 0, reason_fold = 0;  // of every row written
  std::size_t jobs_written = 0, node_events_written = 0, reasons_written = 0;
};

std::size_t ResultsStream::adapted_batch_jobs(std::size_t job_count) {
  return std::clamp(job_count / kBatchesPerRun, kLeastBatchJobs, kBatchJobs);
}

ResultsStream::ResultsStream(const std::filesystem::path& out_dir, const ClusterState& state, RunRecorder& recorder,
                             SimTime settle, std::size_t batch_jobs)
    : db_path_(out_dir / kResultsTemporaryFiles[0]),
      csv_path_(out_dir / kResultsTemporaryFiles[1]),
      state_(state),
      recorder_(recorder),
      settle_(settle),
      batch_jobs_(batch_jobs > 0 ? batch_jobs : adapted_batch_jobs(state.job_count())),
      batch_events_(batch_jobs_ > SIZE_MAX / 4 ? SIZE_MAX : 4 * batch_jobs_),
      specs_(state.shared_specs()),
      format_(state.config()),
      job_count_(state.job_count()),
      sent_(state.job_count(), 0) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw ResultsError(out_dir.string() + ": cannot create: " + ec.message());
  std::filesystem::remove(db_path_, ec);  // a leftover temporary from a crashed run; absence is fine
  recorder.keep_job_ends();
  try {
    writer_ = std::make_unique<Writer>(db_path_, csv_path_, job_count_);
  } catch (...) {
    writer_.reset();
    remove_files();
    throw;
  }
  thread_ = std::thread([this] { write_loop(); });
}

ResultsStream::~ResultsStream() {
  stop_writer();
  if (!finished_) {
    writer_.reset();
    remove_files();
  }
}

void ResultsStream::remove_files() {
  std::error_code ec;
  std::filesystem::remove(db_path_, ec);
  std::filesystem::remove(csv_path_, ec);
}

void ResultsStream::stop_writer() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

std::pair<std::size_t, std::size_t> ResultsStream::settle(SimTime now) {
  const std::vector<JobEnd>& ends = recorder_.job_ends();
  while (ends_settled_ < ends.size() && ends[ends_settled_].time + settle_ <= now) ++ends_settled_;
  const std::size_t events = recorder_.node_events().size();
  // The last node event may still be merged with the next change.
  const std::size_t event_end = std::max(events > 0 ? events - 1 : 0, node_events_sent_);
  return {event_end, recorder_.reason_events().size()};
}

void ResultsStream::take_settled(SimTime now) {
  if (finished_ || state_.job_count() != job_count_) return;  // jobs added: the end writes the rest
  const auto [event_end, reason_end] = settle(now);
  if (ends_settled_ - ends_sent_ >= batch_jobs_ || event_end - node_events_sent_ >= batch_events_ ||
      reason_end - reasons_sent_ >= batch_events_) {
    hand_over(ends_settled_, event_end, reason_end);
  }
}

void ResultsStream::take_all_settled(SimTime now) {
  if (finished_ || state_.job_count() != job_count_) return;
  const auto [event_end, reason_end] = settle(now);
  hand_over(ends_settled_, event_end, reason_end);
}

void ResultsStream::hand_over(std::size_t end_end, std::size_t node_event_end, std::size_t reason_end) {
  Batch batch;
  const auto add_job = [&](JobIndex j) {
    sent_[j] = 1;
    batch.job_index.push_back(j);
    batch.jobs.push_back(job_run_record(state_, j, batch.nodes));
    batch.node_ends.push_back(static_cast<std::uint32_t>(batch.nodes.size()));
  };
  const std::vector<JobEnd>& ends = recorder_.job_ends();
  for (std::size_t k = ends_sent_; k < end_end; ++k) {
    // A job requeued after this end (or ended again since) is not settled by it.
    const JobEnd& e = ends[k];
    const JobRuntime& rt = state_.job(e.job);
    if (!sent_[e.job] && ended(rt) && rt.end == e.time) add_job(e.job);
  }
  ends_sent_ = end_end;
  if (finished_) {
    for (JobIndex j = 0; j < job_count_; ++j) {
      if (!sent_[j]) add_job(j);
    }
  }
  jobs_sent_ += batch.jobs.size();
  const auto& events = recorder_.node_events();
  batch.node_events.assign(events.begin() + static_cast<std::ptrdiff_t>(node_events_sent_),
                           events.begin() + static_cast<std::ptrdiff_t>(node_event_end));
  const auto& reasons = recorder_.reason_events();
  batch.reasons.assign(reasons.begin() + static_cast<std::ptrdiff_t>(reasons_sent_),
                       reasons.begin() + static_cast<std::ptrdiff_t>(reason_end));
  node_events_sent_ = node_event_end;
  reasons_sent_ = reason_end;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(batch));
  }
  changed_.notify_one();
}

void ResultsStream::write_loop() {
  while (true) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, everything written
      batch = std::move(queue_.front());
      queue_.pop_front();
      if (error_) continue;  // failed: the rest is dropped, finish() reports the error
    }
    try {
      write_batch(batch);
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
  }
}

void ResultsStream::write_batch(const Batch& batch) {
  Writer& w = *writer_;
  const std::vector<JobSpec>& specs = *specs_;
  std::uint32_t nodes_begin = 0;
  for (std::size_t k = 0; k < batch.jobs.size(); ++k) {
    const JobIndex j = batch.job_index[k];
    const JobRunRecord& record = batch.jobs[k];
    const JobSpec& spec = specs[j];
    const std::span<const NodeIndex> nodes(batch.nodes.data() + nodes_begin, batch.node_ends[k] - nodes_begin);
    nodes_begin = batch.node_ends[k];
    const std::string list = format_.node_list(nodes);
    w.line_begin[j] = w.lines.size();
    format_.append_csv_line(w.lines, spec, record, list);
    w.line_size[j] = static_cast<std::uint32_t>(w.lines.size() - w.line_begin[j]);
    format_.add_jobs_row(*w.jobs, spec, record, list, nodes);
    w.jobs->int64(24, static_cast<sqlite3_int64>(j) + 1);  // where a write in job order puts it
    w.jobs->end_row();
    w.job_fold += job_hash(j, record, nodes);
  }
  w.jobs_written += batch.jobs.size();
  for (const NodeEvent& e : batch.node_events) {
    add_node_event_row(*w.node_events, e);
    w.node_event_fold = fold_node_event(w.node_event_fold, e);
  }
  w.node_events_written += batch.node_events.size();
  for (const ReasonEvent& e : batch.reasons) {
    add_reason_row(*w.reasons, e, specs[e.job].id);
    w.reason_fold = fold_reason_event(w.reason_fold, e);
  }
  w.reasons_written += batch.reasons.size();
}

std::unique_ptr<results_sqlite::Database> ResultsStream::finish() {
  if (finished_) throw std::logic_error("ResultsStream::finish called twice");
  stats_.jobs = jobs_sent_;
  stats_.node_events = node_events_sent_;
  stats_.reasons = reasons_sent_;
  // Jobs added during the run (a live submission) are not in the writer's specs: everything is written again.
  const bool whole = state_.job_count() == job_count_;
  finished_ = true;
  if (whole) hand_over(recorder_.job_ends().size(), recorder_.node_events().size(), recorder_.reason_events().size());
  // What the rows should say, folded while the writer writes the rest.
  std::uint64_t job_fold = 0, node_event_fold = 0, reason_fold = 0;
  if (whole) {
    std::vector<NodeIndex> nodes;
    for (JobIndex j = 0; j < job_count_; ++j) {
      nodes.clear();
      const JobRunRecord record = job_run_record(state_, j, nodes);  // fills `nodes` before they are folded
      job_fold += job_hash(j, record, nodes);
    }
    for (const NodeEvent& e : recorder_.node_events()) node_event_fold = fold_node_event(node_event_fold, e);
    for (const ReasonEvent& e : recorder_.reason_events()) reason_fold = fold_reason_event(reason_fold, e);
  }
  stop_writer();
  if (error_) {
    writer_.reset();
    remove_files();
    std::rethrow_exception(error_);
  }
  Writer& w = *writer_;
  const bool same = whole && w.jobs_written == job_count_ && w.job_fold == job_fold &&
                    w.node_events_written == recorder_.node_events().size() && w.node_event_fold == node_event_fold &&
                    w.reasons_written == recorder_.reason_events().size() && w.reason_fold == reason_fold;
  if (!same) {
    stats_.dropped = true;
    writer_.reset();
    remove_files();
    return nullptr;
  }
  try {
    w.close();
  } catch (...) {
    writer_.reset();
    remove_files();
    throw;
  }
  return std::move(w.db);
}

}  // namespace gputwin
