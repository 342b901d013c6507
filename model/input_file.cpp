#include "model/input_file.hpp"

#include <system_error>

namespace gputwin {
namespace {

std::string size_text(std::uintmax_t bytes) {
  if (bytes >= (std::uintmax_t{1} << 30) && bytes % (std::uintmax_t{1} << 30) == 0) {
    return std::to_string(bytes >> 30) + " GiB";
  }
  return std::to_string(bytes >> 20) + " MiB";
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
