// `gputwin compare A B`: two runs' results side by side (what-if studies: the same workload under two
// configurations): headline numbers, then mean wait per account and per partition.
#pragma once

#include <filesystem>

namespace gputwin {

/// Prints the comparison of results folders `a` and `b`; returns the exit code (2 if either is unreadable).
int print_comparison(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace gputwin
