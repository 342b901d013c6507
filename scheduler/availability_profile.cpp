#include "scheduler/availability_profile.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

#include "scheduler/node_bitmap.hpp"

namespace gputwin {
namespace {

bool same_request(const SelectRequest& a, const SelectRequest& b) {
  return a.nodes == b.nodes && a.cpus == b.cpus && a.gpus_per_node == b.gpus_per_node &&
         a.mem_per_node_mb == b.mem_per_node_mb && a.exclusive == b.exclusive && a.switches == b.switches &&
         a.switch_wait_over == b.switch_wait_over;
}

}  // namespace

AvailabilityProfile::AvailabilityProfile(const ClusterConfig& config)
    : config_(config),
      nodes_(config.nodes.size()),
      words_((config.nodes.size() + 63) / 64),
      reset_gpus_(nodes_),
      reset_mem_(nodes_),
      capable_(words_),
      window_(words_),
      back_(words_),
      usable_(words_),
      view_cpus_(nodes_),
      view_gpus_(nodes_),
      view_jobs_(nodes_),
      view_mem_(nodes_),
      one_cpu_(words_) {
  for (std::size_t n = 0; n < nodes_; ++n) {
    if (config.nodes[n].cpus == 1) one_cpu_[n >> 6] |= 1ULL << (n & 63);
  }
}

void AvailabilityProfile::reset(SimTime now, const FreeResources& live) {
  totals_memo_.clear();
  capable_keys_.clear();
  capable_cache_.clear();
  for (const Slice& s : slices_) spare_rows_.push_back(s.row);
  slices_.clear();
  const std::uint32_t row = take_row();
  const std::size_t base = row * nodes_;
  std::int64_t cpus = 0, gpus = 0;
  std::fill_n(with_cpu_.begin() + static_cast<std::ptrdiff_t>(row * words_), words_, 0ULL);
  gpus_vary_ = mem_vary_ = false;
  for (std::size_t n = 0; n < nodes_; ++n) {
    cpus_[base + n] = live.cpus[n];
    reset_gpus_[n] = live.gpus[n];
    jobs_[base + n] = live.jobs[n];
    reset_mem_[n] = live.mem_mb[n];
    cpus += live.cpus[n];
    gpus += live.gpus[n];
    if (live.cpus[n] > 0) with_cpu_[row * words_ + (n >> 6)] |= 1ULL << (n & 63);
  }
  total_cpus_[row] = cpus;
  total_gpus_[row] = gpus;
  slices_.push_back(Slice{now, row});
}

void AvailabilityProfile::rebuild(SimTime now, const FreeResources& live, std::vector<ProfileStep>& steps) {
  reset(now, live);
  std::sort(steps.begin(), steps.end(), [](const ProfileStep& a, const ProfileStep& b) { return a.at < b.at; });
  // Each slice's state is the one before it plus the steps at its begin (they add up in any order); a step at
  // now changes the first slice, which reserve(now, ...) takes in place too.
  for (std::size_t i = 0; i < steps.size();) {
    const SimTime at = steps[i].at;
    assert(at >= now);
    std::size_t s = 0;
    if (at > now) {
      const std::uint32_t row = copy_row(slices_.back().row);
      slices_.push_back(Slice{at, row});
      s = slices_.size() - 1;
    }
    for (; i < steps.size() && steps[i].at == at; ++i) apply(s, s + 1, steps[i].allocation, steps[i].take);
  }
}

void AvailabilityProfile::add_release(SimTime at, std::span<const NodeAllocation> allocation) {
  totals_memo_.clear();
  const std::size_t s = split(at);  // before reading slices_.size(): split may add a slice
  apply(s, slices_.size(), allocation, false);
}

void AvailabilityProfile::reserve(SimTime begin, SimTime end, std::span<const NodeAllocation> allocation) {
  const std::size_t first = split(begin);
  const std::size_t last = split(end);
  apply(first, last, allocation, true);
}

bool AvailabilityProfile::is_boundary(SimTime t) const {
  const std::size_t s = slice_holding(t);
  return slices_[s].begin == t;
}

std::uint32_t AvailabilityProfile::free_cpus_at(SimTime t, NodeIndex n) const {
  return cpus_[slices_[slice_holding(t)].row * nodes_ + n];
}

std::size_t AvailabilityProfile::slice_holding(SimTime t) const {
  auto it = std::upper_bound(slices_.begin(), slices_.end(), t, [](SimTime v, const Slice& s) { return v < s.begin; });
  return it == slices_.begin() ? 0 : static_cast<std::size_t>(it - slices_.begin()) - 1;
}

std::size_t AvailabilityProfile::split(SimTime t) {
  const std::size_t s = slice_holding(t);
  if (slices_[s].begin == t) return s;
  assert(t > slices_[s].begin);
  const std::uint32_t row = copy_row(slices_[s].row);
  slices_.insert(slices_.begin() + static_cast<std::ptrdiff_t>(s) + 1, Slice{t, row});
  return s + 1;
}

// A row for a new slice: a spare one, or one more at the end of the per-node arrays (contents undefined).
std::uint32_t AvailabilityProfile::take_row() {
  if (!spare_rows_.empty()) {
    const std::uint32_t row = spare_rows_.back();
    spare_rows_.pop_back();
    return row;
  }
  const auto row = static_cast<std::uint32_t>(total_cpus_.size());
  cpus_.resize(cpus_.size() + nodes_);
  gpus_.resize(gpus_.size() + nodes_);
  jobs_.resize(jobs_.size() + nodes_);
  mem_.resize(mem_.size() + nodes_);
  with_cpu_.resize(with_cpu_.size() + words_);
  total_cpus_.push_back(0);
  total_gpus_.push_back(0);
  return row;
}

std::uint32_t AvailabilityProfile::copy_row(std::uint32_t from) {
  const std::uint32_t row = take_row();
  const auto n = static_cast<std::ptrdiff_t>(nodes_);
  const auto src = static_cast<std::ptrdiff_t>(from) * n, dst = static_cast<std::ptrdiff_t>(row) * n;
  std::copy_n(cpus_.begin() + src, n, cpus_.begin() + dst);
  std::copy_n(jobs_.begin() + src, n, jobs_.begin() + dst);
  if (gpus_vary_) std::copy_n(gpus_.begin() + src, n, gpus_.begin() + dst);
  if (mem_vary_) std::copy_n(mem_.begin() + src, n, mem_.begin() + dst);
  const auto w = static_cast<std::ptrdiff_t>(words_);
  std::copy_n(with_cpu_.begin() + static_cast<std::ptrdiff_t>(from) * w, w,
              with_cpu_.begin() + static_cast<std::ptrdiff_t>(row) * w);
  total_cpus_[row] = total_cpus_[from];
  total_gpus_[row] = total_gpus_[from];
  return row;
}

// Takes (take) or gives back `allocation` in slices [first, last).
void AvailabilityProfile::apply(std::size_t first, std::size_t last, std::span<const NodeAllocation> allocation,
                                bool take) {
  std::int64_t cpus = 0, gpus = 0;
  bool has_mem = false;
  for (const NodeAllocation& a : allocation) {
    cpus += a.cpus;
    gpus += a.gpus;
    has_mem |= a.mem_mb != 0;
  }
  if ((gpus != 0 && !gpus_vary_) || (has_mem && !mem_vary_)) make_columns_vary(gpus != 0, has_mem);
  for (std::size_t k = first; k < last; ++k) {
    const std::size_t row = slices_[k].row;
    const std::size_t base = row * nodes_;
    std::uint64_t* bits = with_cpu_.data() + row * words_;
    for (const NodeAllocation& a : allocation) {
      const std::size_t i = base + a.node;
      if (take) {
        cpus_[i] -= a.cpus;
        jobs_[i] += 1;
      } else {
        cpus_[i] += a.cpus;
        jobs_[i] -= 1;
      }
      if (gpus_vary_) gpus_[i] = take ? gpus_[i] - a.gpus : gpus_[i] + a.gpus;
      if (mem_vary_) mem_[i] = take ? mem_[i] - a.mem_mb : mem_[i] + a.mem_mb;
      const std::uint64_t bit = 1ULL << (a.node & 63);
      if (cpus_[i] > 0)
        bits[a.node >> 6] |= bit;
      else
        bits[a.node >> 6] &= ~bit;
    }
    total_cpus_[row] += take ? -cpus : cpus;
    total_gpus_[row] += take ? -gpus : gpus;
  }
}

// From now on the GPUs (`gpus`) or memory (`mem`) column varies between slices: every row gets the reset's
// values, which it held until now.
void AvailabilityProfile::make_columns_vary(bool gpus, bool mem) {
  for (const Slice& s : slices_) {
    const auto base = static_cast<std::ptrdiff_t>(s.row * nodes_);
    if (gpus && !gpus_vary_) std::copy(reset_gpus_.begin(), reset_gpus_.end(), gpus_.begin() + base);
    if (mem && !mem_vary_) std::copy(reset_mem_.begin(), reset_mem_.end(), mem_.begin() + base);
  }
  gpus_vary_ |= gpus;
  mem_vary_ |= mem;
}

// Nodes among `candidates` that are schedulable and big enough for the request on an empty cluster. Kept for the
// last few request shapes until reset() (which a change of a node's state precedes).
void AvailabilityProfile::build_capable_mask(const SelectRequest& r, const NodeSet& candidates,
                                             const std::uint8_t* schedulable) {
  const std::uint32_t cpn = r.nodes > 0 ? (r.cpus + r.nodes - 1) / r.nodes : 1;
  const CapableKey key{candidates.nodes.data(), candidates.nodes.size(), r.exclusive ? 0 : cpn,
                       r.gpus_per_node,         r.mem_per_node_mb,       r.exclusive};
  for (std::size_t e = 0; e < capable_keys_.size(); ++e) {
    if (capable_keys_[e] == key) {
      std::copy_n(capable_cache_.begin() + static_cast<std::ptrdiff_t>(e * words_), words_, capable_.begin());
      return;
    }
  }
  std::fill(capable_.begin(), capable_.end(), 0ULL);
  for (const NodeIndex n : candidates.nodes) {
    const NodeConfig& c = config_.nodes[n];
    if (!schedulable[n] || (!r.exclusive && c.cpus < cpn) || c.gpus < r.gpus_per_node ||
        c.memory_mb < r.mem_per_node_mb)
      continue;
    capable_[n >> 6] |= 1ULL << (n & 63);
  }
  if (capable_keys_.size() < kCapableCacheSize) {
    capable_keys_.push_back(key);
    capable_cache_.insert(capable_cache_.end(), capable_.begin(), capable_.end());
  }
}

SimTime AvailabilityProfile::earliest_start(NodeSelector& selector, const SelectRequest& r, const NodeSet& candidates,
                                            const std::uint8_t* schedulable, SimTime length,
                                            std::vector<NodeAllocation>& out) {
  build_capable_mask(r, candidates, schedulable);
  const std::size_t need_nodes = r.nodes > 0 ? r.nodes : 1;
  // An exclusive job on a fixed node count takes whole nodes, which may hold fewer CPUs than it asked for.
  const std::int64_t need_cpus = r.exclusive && r.nodes > 0 ? std::int64_t{r.nodes} : std::int64_t{r.cpus};
  const std::int64_t need_gpus = std::int64_t{r.gpus_per_node} * static_cast<std::int64_t>(need_nodes);
  if (count_words(capable_.data(), words_) < need_nodes) return kNever;
  // The window's AND of nodes with a free CPU holds every node usable for a request of at least one CPU per
  // node: the selector then visits only those (a node left out is unusable, as NodeSelector::select requires).
  const bool superset = !r.exclusive && r.cpus > 0 && candidates.bits != nullptr;
  // The jobs column is read only for exclusive requests (NodeSelector::usable), so only they get its minimum.
  const bool need_jobs = r.exclusive;
  const FreeResources view{view_cpus_.data(),
                           gpus_vary_ ? view_gpus_.data() : reset_gpus_.data(),
                           mem_vary_ ? view_mem_.data() : reset_mem_.data(),
                           view_jobs_.data(),
                           schedulable,
                           nullptr,
                           superset ? window_.data() : nullptr};
  // Windows [s, k) slide forward: k only grows, and the AND over the window is kept as a queue of two stacks
  // (front_: suffix ANDs of slices [s, m), back_: the AND of slices [m, k)), so each slice is ANDed in a bounded
  // number of times per query instead of once per window holding it.
  const std::size_t count = slices_.size();
  if (front_.size() < count * words_) front_.resize(count * words_);
  // Windows before the first whose slices all had the CPUs and GPUs in total for a request needing no more, for
  // no longer, failed then and fail now (the profile has only lost free resources since): start there.
  // The same request (the same candidates) for no longer fits nowhere before where it last fitted either.
  SimTime totals_from = start(), from = start();
  for (const TotalsMemo& e : totals_memo_) {
    if (e.cpus <= need_cpus && e.gpus <= need_gpus && e.length <= length) {
      totals_from = std::max(totals_from, e.first_window);
      if (same_request(e.request, r) && e.candidates == candidates.nodes.data()) from = std::max(from, e.first_fit);
    }
  }
  from = std::max(from, totals_from);
  if (from == kNever) {
    out.clear();
    return kNever;
  }
  std::size_t s = slice_holding(from), k = 0, m = 0;
  assert(slices_[s].begin == from);
  SimTime first_window = kNever;  // the first window start whose slices all pass the totals test
  auto remember = [&](SimTime first_fit) {
    // Started past the totals bound on the strength of an earlier fit: the windows in between were not tested.
    if (from > totals_from) first_window = totals_from;
    const TotalsMemo e{need_cpus, need_gpus, length, first_window, first_fit, r, candidates.nodes.data()};
    if (totals_memo_.size() < kTotalsMemoSize) {
      totals_memo_.push_back(e);
    } else {
      totals_memo_[memo_next_] = e;
      memo_next_ = (memo_next_ + 1) % kTotalsMemoSize;
    }
  };
  std::copy(capable_.begin(), capable_.end(), back_.begin());
  while (s < count) {
    const SimTime begin = slices_[s].begin;
    const SimTime end = begin + length;
    if (k <= s) {  // an empty window
      k = m = s;
      std::copy(capable_.begin(), capable_.end(), back_.begin());
    }
    bool short_in_total = false;
    for (; k < count && (k == s || slices_[k].begin < end); ++k) {
      const std::size_t row = slices_[k].row;
      // A slice short of CPUs or GPUs in total fails every window holding it: the next start to try is after it.
      if (total_cpus_[row] < need_cpus || total_gpus_[row] < need_gpus) {
        short_in_total = true;
        break;
      }
      const std::uint64_t* bits = with_cpu_.data() + row * words_;
      for (std::size_t w = 0; w < words_; ++w) back_[w] &= bits[w];
    }
    if (short_in_total) {
      s = k + 1;
      k = s;
      continue;
    }
    if (first_window == kNever) first_window = begin;
    // The window's AND: front (slices [s, m)) and back (slices [m, k)).
    if (s < m) {
      const std::uint64_t* f = front_.data() + s * words_;
      for (std::size_t w = 0; w < words_; ++w) window_[w] = f[w] & back_[w];
    } else {
      std::copy(back_.begin(), back_.end(), window_.begin());
    }
    if (count_words(window_.data(), words_) >= need_nodes) {
      // The window's view: per-node minimum of free resources (maximum of jobs) over slices [s, k), as a
      // rebuilt profile's window_min gives it, for the nodes the selector reads.
      const std::size_t row0 = slices_[s].row * nodes_;
      // one_cpu: a node of one CPU with a free CPU in every slice of the window (superset) has exactly one.
      auto min_over_window = [&](NodeIndex n, bool one_cpu) {
        if (one_cpu) {
          view_cpus_[n] = 1;
        } else {
          std::uint32_t c = cpus_[row0 + n];
          for (std::size_t q = s + 1; q < k; ++q) c = std::min(c, cpus_[slices_[q].row * nodes_ + n]);
          view_cpus_[n] = c;
        }
        if (need_jobs) {
          std::uint32_t j = jobs_[row0 + n];
          for (std::size_t q = s + 1; q < k; ++q) j = std::max(j, jobs_[slices_[q].row * nodes_ + n]);
          view_jobs_[n] = j;
        }
        if (gpus_vary_) {
          std::uint32_t g = gpus_[row0 + n];
          for (std::size_t q = s + 1; q < k; ++q) g = std::min(g, gpus_[slices_[q].row * nodes_ + n]);
          view_gpus_[n] = g;
        }
        if (mem_vary_) {
          std::uint64_t m = mem_[row0 + n];
          for (std::size_t q = s + 1; q < k; ++q) m = std::min(m, mem_[slices_[q].row * nodes_ + n]);
          view_mem_[n] = m;
        }
      };
      if (superset) {
        for (std::size_t w = 0; w < words_; ++w) {
          for (std::uint64_t bits = window_[w]; bits != 0; bits &= bits - 1) {
            const auto b = static_cast<std::size_t>(std::countr_zero(bits));
            min_over_window(static_cast<NodeIndex>(w * 64 + b), ((one_cpu_[w] >> b) & 1ULL) != 0);
          }
        }
      } else {
        for (const NodeIndex n : candidates.nodes) min_over_window(n, false);
      }
      if (selector.select(r, candidates, nullptr, view, out)) {
        // The nodes usable in the chosen window: with the same usable nodes (and the same free resources on
        // them) the selector chooses the same nodes again.
        std::fill(usable_.begin(), usable_.end(), 0ULL);
        auto note = [&](NodeIndex n) {
          if (selector.usable(r, view, n)) usable_[n >> 6] |= 1ULL << (n & 63);
        };
        if (superset) {
          for (std::size_t w = 0; w < words_; ++w) {
            for (std::uint64_t bits = window_[w]; bits != 0; bits &= bits - 1)
              note(static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
          }
        } else {
          for (const NodeIndex n : candidates.nodes) note(n);
        }
        remember(begin);
        return begin;
      }
    }
    // Slide: drop slice s from the front, refilling the front stack from the back when it is empty.
    ++s;
    if (s > m && s < k) {
      m = k;
      std::uint64_t* f = front_.data() + (k - 1) * words_;
      const std::uint64_t* last = with_cpu_.data() + slices_[k - 1].row * words_;
      for (std::size_t w = 0; w < words_; ++w) f[w] = capable_[w] & last[w];
      for (std::size_t q = k - 1; q-- > s;) {
        std::uint64_t* fq = front_.data() + q * words_;
        const std::uint64_t* bits = with_cpu_.data() + slices_[q].row * words_;
        for (std::size_t w = 0; w < words_; ++w) fq[w] = fq[w + words_] & bits[w];
      }
      std::copy(capable_.begin(), capable_.end(), back_.begin());
    }
  }
  remember(kNever);
  out.clear();
  return kNever;
}

}  // namespace gputwin
