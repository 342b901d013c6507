// A results folder that another thread keeps rewriting: a twin's, served while it polls (`gputwin twin ... --serve`).
// The writer (twin/twin_runner) holds write_mutex() while it writes the folder and calls written() after; a reader
// takes current(), which re-reads the folder when a write came since the last read: it opens the RunView under that
// same mutex (the twin replaces results.sqlite, then summary.json, which marks the folder whole), then reads the
// twin's pages from the database the view opened, so every answer comes from one whole poll. A RunView
// keeps its database open, and the twin replaces results.sqlite by renaming a new file over it, so the later reads of
// an old snapshot (pending reasons, GPU series) still see the file it opened.
//
//   FolderFeed feed(out_dir);
//   options.results_mutex = &feed.write_mutex(); options.on_written = [&] { feed.written(); };
//   DashboardApi api(feed, assets);
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "ui/live_run.hpp"
#include "ui/twin_api.hpp"

namespace gputwin {

/// One read of the folder: the run and, for a twin's folder, its pages.
struct FeedSnapshot {
  std::shared_ptr<const RunSnapshot> run;    ///< The folder as of its last complete write.
  std::shared_ptr<const TwinPageData> twin;  ///< Its forecasts and actions; null if it is not a twin's folder.
};

/// A results folder re-read after each write.
class FolderFeed {
 public:
  /// `dir` need not exist yet (the twin creates it at its first poll).
  explicit FolderFeed(std::filesystem::path dir);

  /// The folder read.
  [[nodiscard]] const std::filesystem::path& folder() const { return dir_; }
  /// Held by the writer while it writes the folder.
  [[nodiscard]] std::mutex& write_mutex() { return write_mutex_; }
  /// The writer wrote the folder whole.
  void written();
  /// The writer stopped (for good): `error` says why if it failed.
  void finished(const std::string& error = "");

  /// The newest read of the folder, re-read now if a write came since. Throws LiveError 503 before the first
  /// write, or when the folder cannot be read and there is no earlier read to answer from.
  [[nodiscard]] FeedSnapshot current();
  /// The clock as the dashboard's live bar shows it: "running" while the writer writes, then "ended" (or "failed");
  /// `now_s` is the folder's end (the last poll), `snapshots` the writes so far.
  [[nodiscard]] LiveStatus status();
  /// Ends the event streams reading this feed (before the server stops: it waits for them).
  void close_streams() { streams_closed_ = true; }
  /// True after close_streams.
  [[nodiscard]] bool streams_closed() const { return streams_closed_.load(); }
  /// Writes seen so far.
  [[nodiscard]] std::uint64_t writes() const { return writes_.load(); }

 private:
  std::filesystem::path dir_;
  std::mutex write_mutex_;  // the writer's
  std::mutex read_mutex_;   // one re-read at a time; guards current_, read_writes_, error_
  std::atomic<std::uint64_t> writes_{0};
  std::atomic<bool> finished_{false};
  std::atomic<bool> streams_closed_{false};
  std::uint64_t read_writes_ = 0;  // writes_ when current_ was read
  FeedSnapshot current_;
  std::string error_;       // the writer's failure
  std::string read_error_;  // why the last re-read failed
};

}  // namespace gputwin
