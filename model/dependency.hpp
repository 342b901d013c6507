// Job dependencies (--dependency) in Slurm's syntax and their evaluation (job_mgr.c:test_job_dependency):
// after[:id[+minutes]], afterany, afterok, afternotok and singleton, joined by ',' (all must hold) or '?' (any).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gputwin {

/// Kinds of dependency.
enum class DependencyType : std::uint8_t { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kSingleton };

/// One "type:id:id" term.
struct DependencyTerm {
  DependencyType type = DependencyType::kAfterAny;  ///< Kind.
  std::vector<std::uint64_t> job_ids;               ///< Target job ids (array job ids mean every task).
  std::int64_t after_delay_s = 0;                   ///< after:id+minutes, in seconds.
};

/// A parsed --dependency.
struct Dependency {
  bool any = false;                   ///< '?' joins the terms (any satisfies); ',' (all) otherwise.
  std::vector<DependencyTerm> terms;  ///< Terms.
};

/// Parses a --dependency string; false with `error` set if malformed.
bool parse_dependency(std::string_view text, Dependency& out, std::string& error);

/// State of one term or of a whole dependency.
enum class DependencyStatus : std::uint8_t { kWaiting, kSatisfied, kNever };

/// Combines term statuses with all (',') or any ('?') semantics.
DependencyStatus combine_dependency(bool any, const std::vector<DependencyStatus>& terms);

}  // namespace gputwin
