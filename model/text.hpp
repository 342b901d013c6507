// Small text and calendar helpers shared by the readers of Slurm's files and the scenario loader.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace gputwin {

/// `s` in lower case (ASCII), for Slurm's case-insensitive keys and values.
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil), so no time zone is
/// involved: days_from_civil(2024, 1, 1) * 86400 is 2024-01-01T00:00:00Z in Unix seconds.
inline std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace gputwin
