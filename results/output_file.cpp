#include "results/output_file.hpp"

#include <fstream>
#include <stdexcept>
#include <string>

#include "model/errors.hpp"

namespace gputwin {

void check_output_target(const std::filesystem::path& target, std::string_view option) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(target, ec);
  if (ec || !std::filesystem::exists(status)) return;  // nothing there: it will be created
  if (std::filesystem::is_symlink(status)) {
    throw InputError(target.string(), "", std::string(option) + ": is a symbolic link; refusing to replace it");
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError(target.string(), "",
                     std::string(option) +
                         ": exists and is not a regular file (a device, FIFO or directory); refusing to replace it");
  }
}

void write_file_whole(const std::filesystem::path& target, std::string_view option,
                      const std::function<void(std::ostream&)>& write) {
  check_output_target(target, option);
  const std::filesystem::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp");
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(tmp.string() + ": cannot open for writing");
    write(out);
    out.flush();
    if (!out) throw std::runtime_error(tmp.string() + ": write failed");
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw std::runtime_error(target.string() + ": cannot move into place: " + ec.message());
  }
}

}  // namespace gputwin
