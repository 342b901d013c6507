#include "model/job.hpp"

#include <array>
#include <cctype>

namespace gputwin {
namespace {

struct StateName {
  JobState state;
  std::string_view name;
};

constexpr std::array<StateName, 9> kStateNames{{
    {JobState::kPending, "PENDING"},
    {JobState::kRunning, "RUNNING"},
    {JobState::kCompleted, "COMPLETED"},
    {JobState::kCancelled, "CANCELLED"},
    {JobState::kFailed, "FAILED"},
    {JobState::kTimeout, "TIMEOUT"},
    {JobState::kNodeFail, "NODE_FAIL"},
    {JobState::kPreempted, "PREEMPTED"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY"},
}};

}  // namespace

std::string_view job_state_name(JobState state) {
  for (const auto& s : kStateNames) {
    if (s.state == state) return s.name;
  }
  return "UNKNOWN";
}

std::optional<JobState> parse_job_state(std::string_view name) {
  const auto space = name.find(' ');
  if (space != std::string_view::npos) name = name.substr(0, space);
  for (const auto& s : kStateNames) {
    if (s.name.size() != name.size()) continue;
    bool equal = true;
    for (std::size_t i = 0; i < name.size() && equal; ++i) {
      equal = std::toupper(static_cast<unsigned char>(name[i])) == s.name[i];
    }
    if (equal) return s.state;
  }
  if (name == "OOM") return JobState::kOutOfMemory;
  return std::nullopt;
}

}  // namespace gputwin
