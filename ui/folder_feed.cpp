#include "ui/folder_feed.hpp"

namespace gputwin {

FolderFeed::FolderFeed(std::filesystem::path dir) : dir_(std::move(dir)) {}

void FolderFeed::written() {
  writes_.fetch_add(1);
}

void FolderFeed::finished(const std::string& error) {
  std::lock_guard lock(read_mutex_);
  error_ = error;
  finished_ = true;
  read_writes_ = 0;  // re-read once more: the snapshot is no longer live
}

FeedSnapshot FolderFeed::current() {
  std::lock_guard lock(read_mutex_);
  const std::uint64_t writes = writes_.load();
  if (writes == 0) throw LiveError(503, "the twin has not written its results folder yet (its first poll)");
  if (read_writes_ == writes && current_.run) return current_;
  try {
    FeedSnapshot next;
    std::shared_ptr<RunSnapshot> run;
    {
      // The writer waits meanwhile: while it writes, results.sqlite and summary.json (which marks the folder whole)
      // are replaced one after the other.
      std::lock_guard write_lock(write_mutex_);
      run = std::const_pointer_cast<RunSnapshot>(finished_snapshot(dir_));
    }
    // The rest reads the database the view opened: the same poll, whatever the writer does meanwhile.
    if (run->view->info().kind == "twin") next.twin = load_twin_page_data(*run->view);
    run->live = !finished_;
    next.run = std::move(run);
    next.run->view->prepare_orders();
    current_ = std::move(next);
    read_writes_ = writes;
    read_error_.clear();
  } catch (const std::exception& e) {
    // A folder that cannot be read (damaged by hand, a disk full): answer from the last good read if there is one.
    read_error_ = e.what();
    read_writes_ = writes;
    if (!current_.run) throw LiveError(503, dir_.string() + ": cannot read the results: " + read_error_);
  }
  return current_;
}

LiveStatus FolderFeed::status() {
  LiveStatus s;
  s.speed = 1;  // a live cluster's clock: real time
  s.snapshots = writes_.load();
  try {
    const FeedSnapshot snap = current();
    s.now_s = snap.run->now_s;
    s.total_jobs = snap.run->view->info().jobs;
  } catch (const LiveError&) {
  }
  std::lock_guard lock(read_mutex_);
  s.state = !finished_ ? "running" : error_.empty() ? "ended" : "failed";
  s.error = !error_.empty() ? error_ : read_error_;
  return s;
}

}  // namespace gputwin
