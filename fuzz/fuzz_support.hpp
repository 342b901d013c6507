// Helpers shared by the libFuzzer targets of fuzz/: the input as text, a scratch folder of the process's own for
// inputs that are read from files, and a quiet stdout (readers that print, such as squeue, would flood the log).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gputwin::fuzz {

/// The fuzz input as text (any bytes, NUL included).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A folder of this process's own under $TMPDIR (or /tmp), made on first use and removed at exit.
const std::filesystem::path& scratch_dir();

/// Writes `bytes` to scratch_dir()/`name` (replacing it) and returns its path.
std::filesystem::path write_scratch(const std::string& name, std::string_view bytes);

/// Sends stdout to /dev/null (libFuzzer reports on stderr).
void silence_stdout();

/// Splits `text` at every `separator`: the part before the first one, then each part after one.
std::vector<std::string_view> split_at(std::string_view text, std::string_view separator);

}  // namespace gputwin::fuzz
