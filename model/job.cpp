#include "model/job.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace gputwin {

bool parse_slurm_time(std::string_view text, std::int64_t& seconds);
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

namespace gputwin {

bool parse_array_spec(std::string_view text, std::vector<std::int32_t>& tasks, std::uint32_t& max_running) {
  tasks.clear();
  max_running = 0;
  const auto pct = text.find('%');
  if (pct != std::string_view::npos) {
    const std::string_view n = text.substr(pct + 1);
    auto r = std::from_chars(n.data(), n.data() + n.size(), max_running);
    if (n.empty() || r.ec != std::errc() || r.ptr != n.data() + n.size()) return false;
    text = text.substr(0, pct);
  }
  auto number = [](std::string_view s, std::int64_t& v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && v >= 0 && v <= 4'000'000;
  };
  std::size_t pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    const std::string_view item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    std::int64_t first = 0, last = 0, step = 1;
    const auto colon = item.find(':');
    const std::string_view range = item.substr(0, colon);
    if (colon != std::string_view::npos && (!number(item.substr(colon + 1), step) || step == 0)) return false;
    const auto dash = range.find('-');
    if (dash == std::string_view::npos) {
      if (!number(range, first)) return false;
      last = first;
    } else if (!number(range.substr(0, dash), first) || !number(range.substr(dash + 1), last) || last < first) {
      return false;
    }
    for (std::int64_t t = first; t <= last; t += step) tasks.push_back(static_cast<std::int32_t>(t));
    if (tasks.size() > 1'000'000) return false;  // MaxArraySize is at most 4,000,001; keep runs sane
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  return !tasks.empty();
}

bool parse_switches_spec(std::string_view text, std::uint32_t& count, std::int64_t& wait_s) {
  const std::size_t at = text.find('@');
  const std::string_view number = text.substr(0, at);
  if (number.empty() || number.size() > 6 ||
      !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  count = static_cast<std::uint32_t>(std::stoul(std::string(number)));
  wait_s = -1;
  if (at == std::string_view::npos) return true;
  return parse_slurm_time(text.substr(at + 1), wait_s);
}

}  // namespace gputwin
