#include "model/input_file.hpp"

#include <system_error>
#include <utility>

namespace gputwin {
namespace {

/// "1 GiB", "64 MiB", "64 KiB" or "100 bytes": a bound in the largest unit it is a whole number of.
std::string size_text(std::uintmax_t bytes) {
  for (const auto& [shift, unit] : {std::pair{30, " GiB"}, std::pair{20, " MiB"}, std::pair{10, " KiB"}}) {
    const std::uintmax_t one = std::uintmax_t{1} << shift;
    if (bytes >= one && bytes % one == 0) return std::to_string(bytes >> shift) + unit;
  }
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::optional<std::string> input_file_problem(const std::filesystem::path& path, std::string_view kind,
                                              std::uintmax_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows symbolic links
  if (ec || !std::filesystem::exists(status)) {
    return "cannot open: " + (ec ? ec.message() : std::string("No such file or directory"));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return std::string("not a regular file (a device, FIFO, socket or folder): a ") + std::string(kind) +
           " must be a file";
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return "cannot read its size: " + ec.message();
  if (size > max_bytes) {
    return "larger than " + size_text(max_bytes) + ", the limit for a " + std::string(kind) + " (" +
           std::to_string(size) + " bytes)";
  }
  return std::nullopt;
}

}  // namespace gputwin
