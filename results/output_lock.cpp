#include "results/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "results/results_store.hpp"

namespace gputwin {

OutputFolderLock::OutputFolderLock(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ResultsError(dir.string() + ": cannot create: " + ec.message());
  const std::filesystem::path file = dir / ".gputwin.lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw ResultsError(file.string() + ": cannot open: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char owner[32] = {};
    const ssize_t n = ::pread(fd_, owner, sizeof owner - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK) {
      throw ResultsError(dir.string() + ": another gputwin run is writing this folder" +
                         (n > 0 ? " (pid " + std::string(owner, static_cast<std::size_t>(n)) + ")" : std::string()) +
                         "; wait for it to finish or choose another --out");
    }
    throw ResultsError(file.string() + ": cannot lock: " + std::strerror(error));
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid only helps the message of a run that finds the folder taken; the lock itself holds.
  }
  // What a killed run may have left: the results store's temporary names.
  for (const char* name : kResultsTemporaryFiles) {
    std::filesystem::remove(dir / name, ec);
  }
}

OutputFolderLock::~OutputFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace gputwin
