#include "results/job_table.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <memory>
#include <numeric>
#include <type_traits>
#include <utility>

#include "model/text.hpp"
#include "results/run_view.hpp"  // job_phase_at

namespace gputwin {

namespace {

/// out = 0..rows-1 sorted by key(row), ties in row order: one sort of contiguous (key, row) pairs, each distinct,
/// so std::sort gives the stable order without an indirect stable sort's scattered reads.
template <class Key>
void sort_rows_by(std::size_t rows, Key key, std::vector<std::uint32_t>& out) {
  using K = std::decay_t<decltype(key(0u))>;
  std::vector<std::pair<K, std::uint32_t>> keyed(rows);
  for (std::uint32_t i = 0; i < rows; ++i) keyed[i] = {key(i), i};
  std::sort(keyed.begin(), keyed.end());
  out.resize(rows);
  for (std::size_t k = 0; k < rows; ++k) out[k] = keyed[k].second;
}

/// out = `ascending` (by key, ties in row order) in descending key order, ties still in row order: reversed, then
/// each run of equal keys reversed back.
template <class Key>
void reverse_keeping_ties(const std::vector<std::uint32_t>& ascending, Key key, std::vector<std::uint32_t>& out) {
  out.assign(ascending.rbegin(), ascending.rend());
  for (std::size_t b = 0; b < out.size();) {
    std::size_t e = b + 1;
    const auto k = key(out[b]);
    while (e < out.size() && key(out[e]) == k) ++e;
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(b), out.begin() + static_cast<std::ptrdiff_t>(e));
    b = e;
  }
}

/// Case-insensitive: does `hay` contain `needle_lower` (already lower case)?
bool contains_lower(std::string_view hay, std::string_view needle_lower) {
  if (needle_lower.empty()) return true;
  if (hay.size() < needle_lower.size()) return false;
  for (std::size_t i = 0; i + needle_lower.size() <= hay.size(); ++i) {
    std::size_t k = 0;
    while (k < needle_lower.size() &&
           std::tolower(static_cast<unsigned char>(hay[i + k])) == static_cast<unsigned char>(needle_lower[k])) {
      ++k;
    }
    if (k == needle_lower.size()) return true;
  }
  return false;
}

}  // namespace

std::optional<JobFilter> parse_job_filter(std::string_view text) {
  const std::string t = lower(text);
  if (t == "all" || t.empty()) return JobFilter::kAll;
  if (t == "running") return JobFilter::kRunning;
  if (t == "pending") return JobFilter::kPending;
  if (t == "completed") return JobFilter::kCompleted;
  if (t == "failed") return JobFilter::kFailed;
  if (t == "unknown") return JobFilter::kUnknown;
  return std::nullopt;
}

std::optional<JobSort> parse_job_sort(std::string_view text) {
  static constexpr std::pair<std::string_view, JobSort> kNames[] = {
      {"job_id", JobSort::kJobId},       {"name", JobSort::kName},
      {"user", JobSort::kUser},          {"partition", JobSort::kPartition},
      {"nodes", JobSort::kNodes},        {"gpus", JobSort::kGpus},
      {"run_time", JobSort::kRunTime},   {"time_limit", JobSort::kTimeLimit},
      {"state", JobSort::kState},        {"priority", JobSort::kPriority},
      {"submit_time", JobSort::kSubmit}, {"start_time", JobSort::kStart}};
  for (const auto& [name, sort] : kNames) {
    if (name == text) return sort;
  }
  return std::nullopt;
}

JobFilter job_state_group(std::string_view state) {
  if (state == "RUNNING" || state == "COMPLETING" || state == "CONFIGURING" || state == "SUSPENDED") {
    return JobFilter::kRunning;
  }
  if (state == "PENDING" || state == "REQUEUED") return JobFilter::kPending;
  if (state == "COMPLETED") return JobFilter::kCompleted;
  static constexpr std::string_view kFailed[] = {"FAILED",    "TIMEOUT",  "NODE_FAIL", "OUT_OF_MEMORY",
                                                 "BOOT_FAIL", "DEADLINE", "CANCELLED", "PREEMPTED"};
  for (std::string_view f : kFailed) {
    if (state == f) return JobFilter::kFailed;
  }
  return JobFilter::kUnknown;
}

JobTable::JobTable() {
  pending_id_ = strings_.intern("PENDING");
  rejected_id_ = strings_.intern("REJECTED");
  running_id_ = strings_.intern("RUNNING");
}

std::uint32_t JobTable::append_text(std::string_view s) {
  const auto off = static_cast<std::uint32_t>(text_arena_.size());
  text_arena_.insert(text_arena_.end(), s.begin(), s.end());
  return off;
}

void JobTable::reserve(std::size_t rows, std::size_t text_bytes) {
  jobs_.reserve(rows);
  text_arena_.reserve(text_bytes);
}

void JobTable::add(const JobRecord& r) {
  Job j;
  j.job_id = r.job_id;
  j.name_off = append_text(r.name);
  j.name_len = static_cast<std::uint32_t>(r.name.size());
  j.user = strings_.intern(r.user);
  j.account = strings_.intern(r.account);
  j.partition = strings_.intern(r.partition);
  j.qos = strings_.intern(r.qos);
  j.submit = r.submit_s;
  j.start = r.start_s;
  j.end = r.end_s;
  j.final_state = strings_.intern(r.state);
  j.nodes = r.nodes;
  j.cpus = r.cpus;
  j.gpus = r.gpus;
  j.time_limit = r.time_limit_s;
  j.nodes_off = append_text(r.node_list);
  j.nodes_len = static_cast<std::uint32_t>(r.node_list.size());
  j.priority = r.priority;
  j.reason = strings_.intern(r.reason);
  jobs_.push_back(j);
}

void JobTable::finish(ReasonAt reasons) {
  reasons_ = std::move(reasons);
  lower_names_.resize(text_arena_.size());
  std::transform(text_arena_.begin(), text_arena_.end(), lower_names_.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
}

std::int32_t JobTable::state_at(const Job& j, std::int64_t at_s) const {
  switch (job_phase_at(j.submit, j.start, j.end, at_s)) {
    case JobPhase::kNotSubmitted:
      return -1;
    case JobPhase::kRunning:
      return static_cast<std::int32_t>(running_id_);
    case JobPhase::kPending:
      return static_cast<std::int32_t>(pending_id_);
    case JobPhase::kRecorded:
      break;
  }
  return static_cast<std::int32_t>(j.final_state);
}

JobRow JobTable::row(const Job& j, std::int64_t at_s) const {
  JobRow r;
  r.job_id = j.job_id;
  r.name.assign(text_arena_.data() + j.name_off, j.name_len);
  r.user = text(j.user);
  r.account = text(j.account);
  r.partition = text(j.partition);
  r.qos = text(j.qos);
  const std::int32_t state = state_at(j, at_s);
  r.state = state >= 0 ? std::string(text(static_cast<std::uint32_t>(state))) : "";
  r.submit_s = j.submit;
  const bool started = j.start >= 0 && at_s >= j.start;
  r.start_s = started ? j.start : -1;
  r.end_s = j.end >= 0 && at_s >= j.end ? j.end : -1;
  r.run_time_s = started ? (r.end_s >= 0 ? j.end : at_s) - j.start : 0;
  r.time_limit_s = j.time_limit;
  r.priority = j.priority;
  r.nodes = j.nodes;
  r.cpus = j.cpus;
  r.gpus = j.gpus;
  if (started) r.node_list.assign(text_arena_.data() + j.nodes_off, j.nodes_len);
  if (state == static_cast<std::int32_t>(pending_id_)) {
    // The reason in force at `at_s`: the last one recorded before it, else the final one if it never started.
    if (reasons_) r.reason = reasons_(j.job_id, at_s);
    if (r.reason.empty() && j.start < 0) r.reason = text(j.reason);
  } else if (state >= 0 && j.end >= 0 && at_s >= j.end) {
    r.reason = text(j.reason);
  }
  return r;
}

template <class F>
void JobTable::with_sort_key(JobSort sort, F&& use) const {
  // Interned texts (users, partitions) are compared by their rank among the pool's texts: one integer per row.
  const auto text_rank = [&](std::uint32_t Job::*column) {
    std::vector<std::uint32_t> ids(strings_.size());
    std::iota(ids.begin(), ids.end(), 0u);
    std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) { return text(a) < text(b); });
    std::vector<std::uint32_t> rank(ids.size());
    for (std::uint32_t r = 0; r < ids.size(); ++r) rank[ids[r]] = r;
    use([&, column, rank = std::move(rank)](std::uint32_t i) { return rank[jobs_[i].*column]; });
  };
  switch (sort) {
    case JobSort::kName:
      use([&](std::uint32_t i) { return name(jobs_[i]); });
      break;
    case JobSort::kUser:
      text_rank(&Job::user);
      break;
    case JobSort::kPartition:
      text_rank(&Job::partition);
      break;
    case JobSort::kNodes:
      use([&](std::uint32_t i) { return jobs_[i].nodes; });
      break;
    case JobSort::kGpus:
      use([&](std::uint32_t i) { return jobs_[i].gpus; });
      break;
    case JobSort::kTimeLimit:
      use([&](std::uint32_t i) { return jobs_[i].time_limit; });
      break;
    case JobSort::kPriority:
      use([&](std::uint32_t i) { return jobs_[i].priority; });
      break;
    case JobSort::kSubmit:
      use([&](std::uint32_t i) { return jobs_[i].submit; });
      break;
    case JobSort::kStart:
      use([&](std::uint32_t i) { return jobs_[i].start < 0 ? INT64_MAX : jobs_[i].start; });
      break;
    default:
      use([&](std::uint32_t i) { return jobs_[i].job_id; });
      break;
  }
}

const std::vector<std::uint32_t>& JobTable::order_by(JobSort sort, bool descending) const {
  std::lock_guard lock(cache_mutex_);
  auto& order = orders_[static_cast<int>(sort) * 2 + (descending ? 1 : 0)];
  if (!order.empty() || jobs_.empty()) return order;
  // Ties keep job id order (jobs_ is in job id order) in both directions. The descending order is the ascending one
  // reversed with each run of ties put back in row order, so each column is sorted once.
  auto& ascending = orders_[static_cast<int>(sort) * 2];
  with_sort_key(sort, [&](auto key) {
    if (ascending.empty()) sort_rows_by(jobs_.size(), key, ascending);
    if (descending) reverse_keeping_ties(ascending, key, order);
  });
  return order;
}

void JobTable::prepare_order(JobSort sort, bool descending) const {
  if (sort == JobSort::kRunTime) {
    duration_order(descending);
  } else if (sort != JobSort::kJobId && sort != JobSort::kState) {
    order_by(sort, descending);
  }
}

void JobTable::prepare_orders() const {
  for (const JobSort sort : {JobSort::kName, JobSort::kUser, JobSort::kPartition, JobSort::kNodes, JobSort::kGpus,
                             JobSort::kTimeLimit, JobSort::kPriority, JobSort::kSubmit, JobSort::kStart}) {
    order_by(sort, false);
    order_by(sort, true);
  }
  duration_order(false);
  duration_order(true);
}

const std::vector<std::uint32_t>& JobTable::duration_order(bool descending) const {
  std::lock_guard lock(cache_mutex_);
  auto& order = orders_[kDurationOrderKey + (descending ? 1 : 0)];
  if (!order.empty()) return order;
  const auto duration = [&](std::uint32_t i) { return jobs_[i].end - jobs_[i].start; };
  auto& ascending = orders_[kDurationOrderKey];
  if (ascending.empty()) {
    std::vector<std::uint32_t> ended;
    for (std::uint32_t i = 0; i < jobs_.size(); ++i) {
      if (jobs_[i].start >= 0 && jobs_[i].end >= 0) ended.push_back(i);
    }
    sort_rows_by(
        ended.size(), [&](std::uint32_t k) { return duration(ended[k]); }, ascending);
    for (std::uint32_t& k : ascending) k = ended[k];  // positions in `ended` (in row order) to rows
  }
  if (descending) reverse_keeping_ties(ascending, duration, order);
  return order;
}

void JobTable::run_time_page(const JobQuery& query, const std::vector<std::uint8_t>& hit, std::size_t total,
                             std::size_t from, std::size_t to, std::vector<std::uint32_t>& chosen) const {
  // At time t a job's run time is end - start once it has ended, t - start while it runs, 0 before it starts (or if
  // it never does). Each kind is walked in its order: ended jobs by duration (a permutation built once), running ones
  // by start (the earlier start, the longer the run), the rest in job id order with run time 0 (these two collected
  // here). The page is a merge of the three by (run time, job id). A page in the second half is found from the end:
  // the same orders walked backwards merge in exactly the reverse order. A page in the middle is selected instead.
  const std::int64_t t = query.at_s;
  const bool desc = query.descending;
  const auto& by_duration = duration_order(desc);
  const bool backward = from > total / 2;
  const std::size_t skip = backward ? total - to : from, take = to - from;
  const auto select_page = [&] {
    std::vector<std::pair<std::int64_t, std::uint32_t>> keyed;
    keyed.reserve(total);
    for (std::uint32_t i = 0; i < jobs_.size(); ++i) {
      if (!hit[i]) continue;
      const Job& j = jobs_[i];
      std::int64_t run = 0;
      if (j.start >= 0 && t >= j.start) run = (j.end >= 0 && t >= j.end ? j.end : t) - j.start;
      keyed.emplace_back(desc ? -run : run, i);
    }
    const auto page_begin = keyed.begin() + static_cast<std::ptrdiff_t>(from);
    const auto page_end = keyed.begin() + static_cast<std::ptrdiff_t>(to);
    std::nth_element(keyed.begin(), page_begin, keyed.end());
    if (page_end != keyed.end()) std::nth_element(page_begin, page_end, keyed.end());
    std::sort(page_begin, page_end);
    for (auto it = page_begin; it != page_end; ++it) chosen.push_back(it->second);
  };
  // A walk passes about two jobs per job it skips, each through a permutation (a cache miss): beyond some tens of
  // thousands a sequential pass over the hits and a selection (about 15 ms for a million) is cheaper.
  const std::size_t walk_limit = std::min<std::size_t>(total / 8, 25'000);
  if (skip > walk_limit) {
    select_page();
    return;
  }
  // The jobs running at t (at most what the cluster holds at once), by start, and those not started by t (pending,
  // or ended without starting), in job id order: one sequential pass.
  std::vector<std::uint32_t> running, unstarted;
  for (std::uint32_t i = 0; i < jobs_.size(); ++i) {
    if (!hit[i]) continue;
    const Job& j = jobs_[i];
    if (j.start < 0 || j.start > t) {
      unstarted.push_back(i);
    } else if (j.end < 0 || j.end > t) {
      running.push_back(i);
    }
  }
  std::stable_sort(running.begin(), running.end(), [&](std::uint32_t a, std::uint32_t b) {
    return desc ? jobs_[a].start < jobs_[b].start : jobs_[b].start < jobs_[a].start;
  });
  struct Stream {
    const std::vector<std::uint32_t>* order = nullptr;  // the jobs in the stream's order
    std::size_t left = 0;                               // positions not yet walked
    std::uint32_t job = 0;                              // the job at the cursor (when left > 0)
    std::pair<std::int64_t, std::uint32_t> key{};       // its (run time in the page's direction, index)
  };
  std::array<Stream, 3> streams{Stream{&by_duration}, Stream{&running}, Stream{&unstarted}};
  const auto belongs = [&](std::size_t stream, std::uint32_t i) {  // the other two hold only their own jobs
    return stream != 0 || (hit[i] && jobs_[i].start <= t && jobs_[i].end <= t);
  };
  // Jobs of another kind are passed over on the way (jobs that end after t, in the duration order): past a budget the
  // walk gives way to the selection.
  std::size_t budget = 2 * walk_limit + take;
  const auto settle = [&](std::size_t k) {  // moves stream k's cursor to its next job of its kind
    Stream& s = streams[k];
    for (; s.left > 0 && budget > 0; --s.left, --budget) {
      const std::size_t pos = backward ? s.left - 1 : s.order->size() - s.left;
      s.job = (*s.order)[pos];
      if (!belongs(k, s.job)) continue;
      const Job& j = jobs_[s.job];
      const std::int64_t run = k == 0 ? j.end - j.start : k == 1 ? t - j.start : 0;
      s.key = {desc ? -run : run, s.job};
      return;
    }
    s.left = 0;  // out of budget (or walked to its end)
  };
  for (Stream& stream : streams) stream.left = stream.order->size();
  for (std::size_t k = 0; k < streams.size(); ++k) settle(k);
  const std::size_t first = chosen.size();
  for (std::size_t seen = 0; seen < skip + take; ++seen) {
    std::size_t best = streams.size();
    for (std::size_t k = 0; k < streams.size(); ++k) {
      if (streams[k].left == 0) continue;
      if (best == streams.size() ||
          (backward ? streams[best].key < streams[k].key : streams[k].key < streams[best].key)) {
        best = k;
      }
    }
    if (best == streams.size()) break;
    if (seen >= skip) chosen.push_back(streams[best].job);
    --streams[best].left;
    settle(best);
  }
  if (budget == 0) {
    chosen.resize(first);
    select_page();
    return;
  }
  if (backward) std::reverse(chosen.begin() + static_cast<std::ptrdiff_t>(first), chosen.end());
}

std::shared_ptr<const JobTable::Matches> JobTable::matches(const JobQuery& query) const {
  {
    std::lock_guard lock(matches_mutex_);
    for (const std::shared_ptr<const Matches>& last : last_matches_) {
      if (last->at_s == query.at_s && last->filter == query.filter && last->search == query.search &&
          last->user == query.user) {
        return last;
      }
    }
  }
  auto m = std::make_shared<Matches>();
  m->at_s = query.at_s;
  m->filter = query.filter;
  m->search = query.search;
  m->user = query.user;
  JobPage& page = m->counts;
  const std::string needle = lower(query.search);
  std::int64_t needle_id = -1;
  if (!needle.empty() && needle.size() < 18 &&
      std::all_of(needle.begin(), needle.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    needle_id = std::stoll(needle);
  }
  std::uint32_t user_id = UINT32_MAX;
  bool no_user = false;
  if (!query.user.empty()) {
    if (const std::optional<std::uint32_t> id = strings_.find(query.user)) {
      user_id = *id;
    } else {
      no_user = true;  // no such user: nothing matches
    }
  }
  // Each state's group, computed once per distinct state id.
  std::vector<JobFilter> group_of(strings_.size());
  for (std::size_t s = 0; s < strings_.size(); ++s)
    group_of[s] = job_state_group(strings_.text(static_cast<std::uint32_t>(s)));
  // Interned strings (user, account, partition) are tested once each; names with a plain search of the lowered copy.
  std::vector<std::uint8_t> string_matches(strings_.size(), 0);
  if (!needle.empty()) {
    for (std::size_t s = 0; s < strings_.size(); ++s)
      string_matches[s] = contains_lower(strings_.text(static_cast<std::uint32_t>(s)), needle) ? 1 : 0;
  }
  const std::boyer_moore_horspool_searcher searcher(needle.begin(), needle.end());
  const auto matches_text = [&](const Job& j) {
    if (needle.empty()) return true;
    if (needle_id >= 0 && j.job_id == needle_id) return true;
    if (string_matches[j.user] || string_matches[j.account] || string_matches[j.partition]) return true;
    const char* name = lower_names_.data() + j.name_off;
    return j.name_len >= needle.size() && std::search(name, name + j.name_len, searcher) != name + j.name_len;
  };
  // One pass: which jobs match (a flag per job), and the counts per tab.
  std::vector<std::uint8_t>& hit = m->hit;
  std::vector<std::uint32_t>& state_hits = m->state_hits;  // hits per state id (the sort by state)
  hit.assign(jobs_.size(), 0);
  state_hits.assign(strings_.size(), 0);
  for (std::size_t i = 0; i < jobs_.size() && !no_user; ++i) {
    const Job& j = jobs_[i];
    if (user_id != UINT32_MAX && j.user != user_id) continue;
    const std::int32_t s = state_at(j, query.at_s);
    if (s < 0 || !matches_text(j)) continue;
    const JobFilter g = group_of[static_cast<std::size_t>(s)];
    ++page.counts[static_cast<std::size_t>(JobFilter::kAll)];
    ++page.counts[static_cast<std::size_t>(g)];
    if (query.filter == JobFilter::kAll || query.filter == g) {
      hit[i] = 1;
      ++state_hits[static_cast<std::size_t>(s)];
      ++page.total;
    }
  }
  std::lock_guard lock(matches_mutex_);
  last_matches_.insert(last_matches_.begin(), m);
  if (last_matches_.size() > kKeptMatches) last_matches_.pop_back();
  return m;
}

JobPage JobTable::jobs(const JobQuery& query) const {
  // The counting pass's answer for this second, tab, search and user (the last few are kept: a page following a
  // live run's clock, or paging through one tab, asks the same again with another offset or sort).
  const std::shared_ptr<const Matches> m = matches(query);
  JobPage page;
  page.total = m->counts.total;
  page.counts = m->counts.counts;
  const std::vector<std::uint8_t>& hit = m->hit;
  const std::vector<std::uint32_t>& state_hits = m->state_hits;
  const std::size_t from = std::min(query.offset, page.total);
  const std::size_t to = std::min(page.total, from + std::min<std::size_t>(query.limit, 10000));
  if (from >= to) return page;

  std::vector<std::uint32_t> chosen;
  chosen.reserve(to - from);
  const auto walk = [&](auto&& next_index, std::size_t n) {  // the hits from..to in a given order
    std::size_t seen = 0;
    for (std::size_t k = 0; k < n && seen < to; ++k) {
      const std::uint32_t i = next_index(k);
      if (!hit[i]) continue;
      if (seen >= from) chosen.push_back(i);
      ++seen;
    }
  };
  if (query.sort == JobSort::kJobId) {
    const auto n = static_cast<std::uint32_t>(jobs_.size());
    if (query.descending) {
      walk([&](std::size_t k) { return static_cast<std::uint32_t>(n - 1 - k); }, n);
    } else {
      walk([](std::size_t k) { return static_cast<std::uint32_t>(k); }, n);
    }
  } else if (query.sort != JobSort::kRunTime && query.sort != JobSort::kState) {
    const auto& order = order_by(query.sort, query.descending);
    walk([&](std::size_t k) { return order[k]; }, order.size());
  } else if (query.sort == JobSort::kState) {
    // By state name at the time, ties in job id order: the states' counts place the page; each state on it is then
    // one walk in job id order.
    std::vector<std::uint32_t> states;
    for (std::uint32_t s = 0; s < state_hits.size(); ++s) {
      if (state_hits[s] > 0) states.push_back(s);
    }
    std::sort(states.begin(), states.end(), [&](std::uint32_t a, std::uint32_t b) {
      return query.descending ? text(b) < text(a) : text(a) < text(b);
    });
    std::size_t before = 0;  // hits in the states before this one
    for (const std::uint32_t s : states) {
      const std::size_t count = state_hits[s];
      if (before + count > from && before < to) {
        std::size_t seen = before;
        for (std::uint32_t i = 0; i < jobs_.size() && seen < to; ++i) {
          if (!hit[i] || state_at(jobs_[i], query.at_s) != static_cast<std::int32_t>(s)) continue;
          if (seen >= from) chosen.push_back(i);
          ++seen;
        }
      }
      before += count;
      if (before >= to) break;
    }
  } else {
    run_time_page(query, hit, page.total, from, to, chosen);
  }
  page.rows.reserve(chosen.size());
  for (std::uint32_t i : chosen) page.rows.push_back(row(jobs_[i], query.at_s));
  return page;
}

std::optional<JobRow> JobTable::job(std::int64_t job_id, std::int64_t at_s) const {
  const auto it =
      std::lower_bound(jobs_.begin(), jobs_.end(), job_id, [](const Job& j, std::int64_t id) { return j.job_id < id; });
  if (it == jobs_.end() || it->job_id != job_id) return std::nullopt;
  return row(*it, at_s);
}

std::vector<JobRow> JobTable::controller_jobs(std::int64_t at_s, std::int64_t min_job_age_s) const {
  std::vector<JobRow> rows;
  for (const Job& j : jobs_) {
    if (j.final_state == rejected_id_) continue;  // refused at submit: slurmctld never had it
    if (j.submit > at_s || (j.end >= 0 && j.end <= at_s && at_s - j.end > min_job_age_s)) continue;
    rows.push_back(row(j, at_s));
  }
  return rows;
}

std::vector<JobRow> JobTable::jobs_between(std::int64_t at_s, std::int64_t from_s, std::int64_t to_s,
                                           std::size_t max_jobs) const {
  std::vector<JobRow> rows;
  const std::int64_t last = std::min(at_s, to_s);
  for (const Job& j : jobs_) {
    if (rows.size() >= max_jobs) break;
    if (j.final_state == rejected_id_) continue;  // refused at submit: never in the accounting database
    if (j.submit > last) continue;
    if (j.end >= 0 && j.end <= at_s && j.end < from_s) continue;
    rows.push_back(row(j, at_s));
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> JobTable::account_users() const {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ids;
  ids.reserve(jobs_.size());
  for (const Job& j : jobs_) ids.emplace_back(j.account, j.user);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(ids.size());
  for (const auto& [account, user] : ids) out.emplace_back(text(account), text(user));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> JobTable::qos_names() const {
  std::vector<std::uint32_t> ids;
  for (const Job& j : jobs_) ids.push_back(j.qos);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<std::string> out;
  for (const std::uint32_t id : ids) {
    if (!text(id).empty()) out.emplace_back(text(id));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gputwin
