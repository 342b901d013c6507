// Output files written whole or not at all, and never over what is not an output: a target that exists must be a
// regular file (not a device such as /dev/null, a FIFO, a directory or a symbolic link), the bytes go to a temporary
// file beside it, and that file replaces the target only once complete.
//
//   write_file_whole(out, "--out", [&](std::ostream& o) { export_metrics(dir, options, o); });
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace gputwin {

/// Throws InputError naming `target` and `option` if `target` exists and is not a regular file, or is a symbolic
/// link (replacing it would destroy the device, FIFO or link, or write through it).
void check_output_target(const std::filesystem::path& target, std::string_view option);

/// Writes `target` whole or not at all: check_output_target, then `write` fills `.<name>.tmp` beside it, which is
/// renamed over it when `write` returns and the stream is good; the temporary file is removed on any failure.
void write_file_whole(const std::filesystem::path& target, std::string_view option,
                      const std::function<void(std::ostream&)>& write);

}  // namespace gputwin
