// Small text helpers shared by the readers of Slurm's files and the scenario loader.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace gputwin {

/// `s` in lower case (ASCII), for Slurm's case-insensitive keys and values.
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace gputwin
