#include "model/dependency.hpp"

#include <charconv>

namespace gputwin {
namespace {

bool parse_id(std::string_view s, std::uint64_t& id) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), id);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && id > 0;
}

}  // namespace

bool parse_dependency(std::string_view text, Dependency& out, std::string& error) {
  out = Dependency{};
  if (text.empty()) return true;
  const bool has_comma = text.find(',') != std::string_view::npos;
  const bool has_any = text.find('?') != std::string_view::npos;
  if (has_comma && has_any) {
    error = "',' and '?' cannot be mixed in one dependency";
    return false;
  }
  out.any = has_any;
  const char sep = has_any ? '?' : ',';
  std::size_t pos = 0;
  while (true) {
    const std::size_t next = text.find(sep, pos);
    const std::string_view item = text.substr(pos, next == std::string_view::npos ? text.npos : next - pos);
    DependencyTerm term;
    const std::size_t colon = item.find(':');
    const std::string_view type = item.substr(0, colon);
    if (type == "singleton") {
      term.type = DependencyType::kSingleton;
      if (colon != std::string_view::npos) {
        error = "singleton takes no job ids";
        return false;
      }
    } else {
      if (type == "after") {
        term.type = DependencyType::kAfter;
      } else if (type == "afterany") {
        term.type = DependencyType::kAfterAny;
      } else if (type == "afterok") {
        term.type = DependencyType::kAfterOk;
      } else if (type == "afternotok") {
        term.type = DependencyType::kAfterNotOk;
      } else {
        error = "unsupported dependency type '" + std::string(type) +
                "' (supported: after, afterany, afterok, afternotok, singleton)";
        return false;
      }
      if (colon == std::string_view::npos) {
        error = "'" + std::string(item) + "' names no job id";
        return false;
      }
      std::size_t p = colon + 1;
      while (true) {
        const std::size_t c = item.find(':', p);
        std::string_view id_text = item.substr(p, c == std::string_view::npos ? item.npos : c - p);
        const std::size_t plus = id_text.find('+');
        if (plus != std::string_view::npos) {
          std::uint64_t minutes = 0;
          const std::string_view m = id_text.substr(plus + 1);
          auto r = std::from_chars(m.data(), m.data() + m.size(), minutes);
          if (term.type != DependencyType::kAfter || m.empty() || r.ec != std::errc() || r.ptr != m.data() + m.size()) {
            error = "bad '+minutes' in '" + std::string(id_text) + "' (only after:id+minutes)";
            return false;
          }
          term.after_delay_s = static_cast<std::int64_t>(minutes) * 60;
          id_text = id_text.substr(0, plus);
        }
        std::uint64_t id = 0;
        if (!parse_id(id_text, id)) {
          error = "'" + std::string(id_text) + "' is not a job id";
          return false;
        }
        term.job_ids.push_back(id);
        if (c == std::string_view::npos) break;
        p = c + 1;
      }
    }
    out.terms.push_back(std::move(term));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return true;
}

DependencyStatus combine_dependency(bool any, const std::vector<DependencyStatus>& terms) {
  bool all_satisfied = true;
  bool all_never = true;
  for (DependencyStatus s : terms) {
    if (any && s == DependencyStatus::kSatisfied) return DependencyStatus::kSatisfied;
    if (!any && s == DependencyStatus::kNever) return DependencyStatus::kNever;
    all_satisfied = all_satisfied && s == DependencyStatus::kSatisfied;
    all_never = all_never && s == DependencyStatus::kNever;
  }
  if (any) return all_never && !terms.empty() ? DependencyStatus::kNever : DependencyStatus::kWaiting;
  return all_satisfied ? DependencyStatus::kSatisfied : DependencyStatus::kWaiting;
}

}  // namespace gputwin
