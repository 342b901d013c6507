#include "scheduler/release_index.hpp"

#include <algorithm>

namespace gputwin {
namespace {

std::uint32_t cpus_per_node(const SelectRequest& r) {
  return r.nodes > 0 ? (r.cpus + r.nodes - 1) / r.nodes : 1;
}

/// Sorts nodes[from, end) (one job's (key, node) pairs: by node) if they are not in order already.
void sort_nodes_from(std::vector<std::pair<std::int64_t, NodeIndex>>& nodes, std::size_t from) {
  const auto first = nodes.begin() + static_cast<std::ptrdiff_t>(from);
  if (!std::is_sorted(first, nodes.end())) std::sort(first, nodes.end());
}

}  // namespace

ReleaseIndex::ReleaseIndex(const ClusterState& state) : state_(state), releases_(state.node_count()) {}

bool ReleaseIndex::same_shape(const SelectRequest& a, const SelectRequest& b) {
  return a.gpus_per_node == b.gpus_per_node && a.mem_per_node_mb == b.mem_per_node_mb && a.exclusive == b.exclusive &&
         cpus_per_node(a) == cpus_per_node(b);
}

void ReleaseIndex::rebuild(std::span<const RunningJob> running) {
  for (NodeIndex n : used_nodes_) releases_[n].clear();
  used_nodes_.clear();
  running_nodes_.clear();
  started_nodes_.clear();
  for (const RunningJob& r : running) {
    const std::size_t from = running_nodes_.size();
    for (const NodeAllocation& a : state_.allocation(r.job)) {
      if (releases_[a.node].empty()) used_nodes_.push_back(a.node);
      releases_[a.node].push_back(Release{r.key(), a.cpus, a.gpus, a.mem_mb});
      running_nodes_.emplace_back(r.key(), a.node);
    }
    sort_nodes_from(running_nodes_, from);
  }
  running_.assign(running.begin(), running.end());
  shapes_.clear();
  float_shapes_.clear();
}

void ReleaseIndex::add_started(const RunningJob& job) {
  const std::int64_t key = job.key();
  running_.insert(std::upper_bound(running_.begin(), running_.end(), key,
                                   [](std::int64_t k, const RunningJob& r) { return k < r.key(); }),
                  job);
  float_shapes_.clear();  // rebuilt on demand from the live state, which holds the started job
  const std::size_t from = started_nodes_.size();
  for (const NodeAllocation& a : state_.allocation(job.job)) started_nodes_.emplace_back(key, a.node);
  sort_nodes_from(started_nodes_, from);
  std::inplace_merge(started_nodes_.begin(), started_nodes_.begin() + static_cast<std::ptrdiff_t>(from),
                     started_nodes_.end());
  for (const NodeAllocation& a : state_.allocation(job.job)) {
    auto& list = releases_[a.node];
    if (list.empty()) used_nodes_.push_back(a.node);
    const auto at =
        std::upper_bound(list.begin(), list.end(), key, [](std::int64_t k, const Release& r) { return k < r.key; });
    list.insert(at, Release{key, a.cpus, a.gpus, a.mem_mb});
    for (Shape& s : shapes_) {
      s.keys[a.node] = compute_key(s.request, a.node);
      if (!s.changed_flag[a.node]) {
        s.changed_flag[a.node] = 1;
        s.changed.push_back(a.node);
        // Its `sorted` entry is stale from now on: it leaves every prefix that holds it.
        if (s.rank[a.node] != kNoRank) {
          for (std::size_t c = s.rank[a.node] / kBlock; c < s.prefix.size(); ++c) s.prefix[c].clear(a.node);
        }
      }
    }
  }
}

std::int64_t ReleaseIndex::compute_key(const SelectRequest& r, NodeIndex n) const {
  if (!state_.node_schedulable(n)) return kNeverUsable;
  const NodeConfig& node = state_.config().nodes[n];
  if (node.gpus < r.gpus_per_node || node.memory_mb < r.mem_per_node_mb) return kNeverUsable;
  std::uint64_t cpus = state_.free_cpus()[n], gpus = state_.free_gpus()[n], mem = state_.free_mem_mb()[n];
  std::uint64_t jobs = state_.node_jobs()[n];
  const std::uint32_t cpn = cpus_per_node(r);
  auto usable = [&] {
    if (r.exclusive) return jobs == 0;
    return gpus >= r.gpus_per_node && mem >= r.mem_per_node_mb && cpus >= cpn;
  };
  if (usable()) return kUsableNow;
  for (const Release& rel : releases_[n]) {
    cpus += rel.cpus;
    gpus += rel.gpus;
    mem += rel.mem_mb;
    jobs -= 1;
    if (usable()) return rel.key;
  }
  return kNeverUsable;
}

ReleaseIndex::Shape& ReleaseIndex::shape_for(const SelectRequest& request) {
  // One test asks about one request several times (usable_by, kth_usable_key, apply): try the last one first.
  if (last_shape_ < shapes_.size() && same_shape(shapes_[last_shape_].request, request)) return shapes_[last_shape_];
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    if (same_shape(shapes_[i].request, request)) {
      last_shape_ = i;
      return shapes_[i];
    }
  }
  last_shape_ = shapes_.size();
  Shape shape;
  shape.request = request;
  shape.keys.resize(state_.node_count());
  shape.changed_flag.assign(state_.node_count(), 0);
  for (NodeIndex n = 0; n < state_.node_count(); ++n) {
    shape.keys[n] = compute_key(request, n);
    if (shape.keys[n] == kUsableNow) shape.sorted.emplace_back(kUsableNow, n);
  }
  // Every other usable key is the key of the running job whose release makes the node usable: reading the running
  // jobs' (key, node) pairs in order gives `sorted` without sorting all nodes. They are kept flat (those of the last
  // rebuild, then those started since, each ascending, merged here): walking the jobs' own allocations read every
  // job's record and allocation, scattered in memory (8% of bench-1m's samples).
  const std::size_t now_usable = shape.sorted.size();
  for (const auto& [key, node] : running_nodes_) {
    if (shape.keys[node] == key) shape.sorted.emplace_back(key, node);
  }
  const std::size_t from_started = shape.sorted.size();
  for (const auto& [key, node] : started_nodes_) {
    if (shape.keys[node] == key) shape.sorted.emplace_back(key, node);
  }
  if (from_started > now_usable && from_started < shape.sorted.size()) {
    std::inplace_merge(shape.sorted.begin() + static_cast<std::ptrdiff_t>(now_usable),
                       shape.sorted.begin() + static_cast<std::ptrdiff_t>(from_started), shape.sorted.end());
  }
  shape.rank.assign(state_.node_count(), kNoRank);
  const std::size_t blocks = (shape.sorted.size() + kBlock - 1) / kBlock;
  shape.prefix.resize(blocks);
  for (std::size_t c = 0; c < blocks; ++c) {
    shape.prefix[c] = c > 0 ? shape.prefix[c - 1] : NodeBitmap(state_.node_count());
    for (std::size_t i = c * kBlock; i < std::min(shape.sorted.size(), (c + 1) * kBlock); ++i) {
      const NodeIndex n = shape.sorted[i].second;
      shape.rank[n] = static_cast<std::uint32_t>(i);
      shape.prefix[c].set(n);
    }
  }
  shapes_.push_back(std::move(shape));
  return shapes_.back();
}

std::span<const std::int64_t> ReleaseIndex::usable_keys(const SelectRequest& request) {
  return shape_for(request).keys;
}

std::int64_t ReleaseIndex::kth_usable_key(const SelectRequest& request, const NodeBitmap& nodes, std::uint32_t count) {
  if (count == 0) return kUsableNow;
  const Shape& shape = shape_for(request);
  // Nodes whose key changed during the cycle, with their current keys, merged with the (stale-skipping) sorted
  // list: equal keys order by node index in both, as in `sorted`.
  merge_buffer_.clear();
  for (NodeIndex n : shape.changed) {
    if (nodes.test(n) && shape.keys[n] != kNeverUsable) merge_buffer_.emplace_back(shape.keys[n], n);
  }
  std::sort(merge_buffer_.begin(), merge_buffer_.end());
  // Entries of the merged order up to and including sorted[end - 1]: the prefix's nodes in `nodes`, plus the
  // changed nodes ordered before it. Non-decreasing in the block, so the first block reaching `count` holds the key.
  std::size_t below = 0;  // merge entries up to the last block boundary below the answer
  auto merged_through = [&](std::size_t c, std::size_t& merged) {
    const auto& last = shape.sorted[std::min(shape.sorted.size(), (c + 1) * kBlock) - 1];
    merged = static_cast<std::size_t>(std::upper_bound(merge_buffer_.begin(), merge_buffer_.end(), last) -
                                      merge_buffer_.begin());
    return shape.prefix[c].count_and(nodes) + merged;
  };
  std::size_t lo = 0, hi = shape.prefix.size();  // the answer's block is in [lo, hi]; blocks before lo are short
  std::size_t seen_before = 0;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    std::size_t merged = 0;
    const std::size_t through = merged_through(mid, merged);
    if (through >= count) {
      hi = mid;
    } else {
      lo = mid + 1;
      seen_before = through;
      below = merged;
    }
  }
  // Walk the merged order from the start of block lo, as if every entry before it had been seen.
  std::size_t i = lo * kBlock, j = below;
  auto seen = static_cast<std::uint32_t>(seen_before);
  while (true) {
    while (i < shape.sorted.size() &&
           (shape.changed_flag[shape.sorted[i].second] || !nodes.test(shape.sorted[i].second))) {
      ++i;
    }
    const bool have_i = i < shape.sorted.size();
    const bool have_j = j < merge_buffer_.size();
    if (!have_i && !have_j) return kNeverUsable;
    std::int64_t key;
    if (have_j && (!have_i || merge_buffer_[j] < shape.sorted[i])) {
      key = merge_buffer_[j++].first;
    } else {
      key = shape.sorted[i++].first;
    }
    if (++seen == count) return key;
  }
}

ReleaseIndex::FloatShape& ReleaseIndex::float_shape_for(const SelectRequest& request) {
  for (FloatShape& s : float_shapes_) {
    if (s.request.gpus_per_node == request.gpus_per_node && s.request.mem_per_node_mb == request.mem_per_node_mb &&
        s.request.exclusive == request.exclusive) {
      return s;
    }
  }
  FloatShape shape;
  shape.request = request;
  const SelectRequest& r = request;
  for (NodeIndex n = 0; n < state_.node_count(); ++n) {
    if (!state_.node_schedulable(n)) continue;
    const NodeConfig& node = state_.config().nodes[n];
    if (node.gpus < r.gpus_per_node || node.memory_mb < r.mem_per_node_mb) continue;
    std::uint64_t cpus = state_.free_cpus()[n], gpus = state_.free_gpus()[n], mem = state_.free_mem_mb()[n];
    std::uint64_t jobs = state_.node_jobs()[n];
    // ResourceScratch::contribution for a floating request (one CPU per node at least).
    auto contribution = [&]() -> std::uint64_t {
      if (r.exclusive) return jobs == 0 ? node.cpus : 0;
      return gpus >= r.gpus_per_node && mem >= r.mem_per_node_mb && cpus >= 1 ? cpus : 0;
    };
    std::uint64_t had = contribution();
    if (had > 0) shape.events.push_back(FloatEvent{kUsableNow, n, static_cast<std::uint32_t>(had)});
    for (const Release& rel : releases_[n]) {
      cpus += rel.cpus;
      gpus += rel.gpus;
      mem += rel.mem_mb;
      jobs -= 1;
      const std::uint64_t now = contribution();
      if (now > had) shape.events.push_back(FloatEvent{rel.key, n, static_cast<std::uint32_t>(now - had)});
      had = now;
    }
  }
  std::stable_sort(shape.events.begin(), shape.events.end(),
                   [](const FloatEvent& a, const FloatEvent& b) { return a.key < b.key; });
  const std::size_t count = shape.events.size();
  shape.blocks.resize(count / kFloatBlock);  // whole blocks only; the tail is walked
  for (std::size_t b = 0; b < shape.blocks.size(); ++b) {
    FloatBlock& block = shape.blocks[b];
    block.nodes = NodeBitmap(state_.node_count());
    block.weight = shape.events[b * kFloatBlock].cpus;
    for (std::size_t i = b * kFloatBlock; i < (b + 1) * kFloatBlock; ++i) {
      const FloatEvent& e = shape.events[i];
      if (e.cpus != block.weight || block.nodes.test(e.node)) block.weight = 0;
      block.nodes.set(e.node);
    }
  }
  float_shapes_.push_back(std::move(shape));
  return float_shapes_.back();
}

std::int64_t ReleaseIndex::fit_key(const SelectRequest& request, const NodeBitmap& nodes, std::int64_t max_key) {
  if (request.nodes > 0) {
    if (max_key != kNeverUsable && !usable_by(request, nodes, request.nodes, max_key)) return kNeverUsable;
    return kth_usable_key(request, nodes, request.nodes);
  }
  const FloatShape& shape = float_shape_for(request);
  const std::uint64_t need = std::max<std::uint32_t>(request.cpus, 1);
  const std::uint64_t* bits = nodes.words().data();
  std::uint64_t sum = 0;
  const std::size_t count = shape.events.size();
  for (std::size_t i = 0; i < count;) {
    if (shape.events[i].key > max_key) break;
    if (i % kFloatBlock == 0 && i / kFloatBlock < shape.blocks.size()) {
      const FloatBlock& block = shape.blocks[i / kFloatBlock];
      // The whole block falls short of the request (and ends at or before max_key, or does not reach it anyway).
      if (block.weight != 0) {
        const std::uint64_t adds = std::uint64_t{block.weight} * block.nodes.count_and(nodes);
        if (sum + adds < need) {
          sum += adds;
          i += kFloatBlock;
          continue;
        }
      }
    }
    const FloatEvent& e = shape.events[i++];
    if (((bits[e.node >> 6] >> (e.node & 63)) & 1ULL) == 0) continue;
    sum += e.cpus;
    if (sum >= need) return e.key;
  }
  return kNeverUsable;
}

std::size_t ReleaseIndex::sorted_end(const Shape& shape, std::int64_t key) {
  return static_cast<std::size_t>(
      std::upper_bound(shape.sorted.begin(), shape.sorted.end(), key,
                       [](std::int64_t k, const std::pair<std::int64_t, NodeIndex>& e) { return k < e.first; }) -
      shape.sorted.begin());
}

bool ReleaseIndex::usable_by(const SelectRequest& request, const NodeBitmap& nodes, std::uint32_t count,
                             std::int64_t key) {
  if (count == 0) return true;
  const Shape& shape = shape_for(request);
  // sorted[0, end) holds the entries with keys <= key; whole blocks are counted from their prefix bitmap.
  const std::size_t end = sorted_end(shape, key);
  const std::size_t blocks = end / kBlock;
  std::size_t usable = blocks > 0 ? shape.prefix[blocks - 1].count_and(nodes) : 0;
  for (std::size_t i = blocks * kBlock; i < end; ++i) {
    const NodeIndex n = shape.sorted[i].second;
    if (!shape.changed_flag[n] && nodes.test(n)) ++usable;
  }
  for (NodeIndex n : shape.changed) {
    if (shape.keys[n] <= key && nodes.test(n)) ++usable;
  }
  return usable >= count;
}

void ReleaseIndex::apply(ResourceScratch& scratch, const SelectRequest& request, const NodeBitmap& nodes,
                         std::int64_t key) {
  const Shape& shape = shape_for(request);
  auto give_back = [&](NodeIndex n) {
    for (const Release& rel : releases_[n]) {
      if (rel.key > key) break;
      const NodeAllocation one{n, rel.cpus, rel.gpus, rel.mem_mb};
      scratch.add_back(std::span<const NodeAllocation>(&one, 1));
    }
  };
  // Nodes usable by `key` (the scratch sums releases, so their order does not matter): whole blocks from their
  // prefix bitmap, then the rest of the last block, then the nodes whose key changed this cycle.
  const std::size_t end = sorted_end(shape, key);
  const std::size_t blocks = end / kBlock;
  if (blocks > 0) shape.prefix[blocks - 1].for_each_and(nodes, give_back);
  for (std::size_t i = blocks * kBlock; i < end; ++i) {
    const NodeIndex n = shape.sorted[i].second;
    if (!shape.changed_flag[n] && nodes.test(n)) give_back(n);
  }
  for (NodeIndex n : shape.changed) {
    if (shape.keys[n] <= key && nodes.test(n)) give_back(n);
  }
}

}  // namespace gputwin
