// A results folder belongs to one run at a time: the run holds an exclusive lock on DIR/.gputwin.lock (flock) from
// before it starts simulating until its results are in place, so a second run into the same folder stops at once
// instead of mixing its files with the first one's. Temporary files a killed run left there are removed when the
// lock is taken (no live run can own them then).
//
//   OutputFolderLock lock(out_dir);   // throws ResultsError naming the folder if another run holds it
#pragma once

#include <filesystem>

namespace gputwin {

/// Holds the lock of a results folder (created if missing) until destroyed.
class OutputFolderLock {
 public:
  explicit OutputFolderLock(const std::filesystem::path& dir);
  ~OutputFolderLock();
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace gputwin
