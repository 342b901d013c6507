#include "scheduler/release_index.hpp"

#include <algorithm>

namespace gputwin {
namespace {

std::uint32_t cpus_per_node(const SelectRequest& r) { return r.nodes > 0 ? (r.cpus + r.nodes - 1) / r.nodes : 1; }

}  // namespace

ReleaseIndex::ReleaseIndex(const ClusterState& state) : state_(state), releases_(state.node_count()) {}

bool ReleaseIndex::same_shape(const SelectRequest& a, const SelectRequest& b) {
  return a.gpus_per_node == b.gpus_per_node && a.mem_per_node_mb == b.mem_per_node_mb &&
         a.exclusive == b.exclusive && cpus_per_node(a) == cpus_per_node(b);
}

void ReleaseIndex::rebuild(std::span<const RunningJob> running) {
  for (NodeIndex n : used_nodes_) releases_[n].clear();
  used_nodes_.clear();
  for (const RunningJob& r : running) {
    for (const NodeAllocation& a : state_.allocation(r.job)) {
      if (releases_[a.node].empty()) used_nodes_.push_back(a.node);
      releases_[a.node].push_back(Release{r.key(), a.cpus, a.gpus, a.mem_mb});
    }
  }
  shapes_.clear();
  ++version_;
}

void ReleaseIndex::add_started(const RunningJob& job) {
  const std::int64_t key = job.key();
  for (const NodeAllocation& a : state_.allocation(job.job)) {
    auto& list = releases_[a.node];
    if (list.empty()) used_nodes_.push_back(a.node);
    const auto at = std::upper_bound(list.begin(), list.end(), key,
                                     [](std::int64_t k, const Release& r) { return k < r.key; });
    list.insert(at, Release{key, a.cpus, a.gpus, a.mem_mb});
    for (Shape& s : shapes_) s.keys[a.node] = compute_key(s.request, a.node);
  }
  ++version_;
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

std::span<const std::int64_t> ReleaseIndex::usable_keys(const SelectRequest& request) {
  for (const Shape& s : shapes_) {
    if (same_shape(s.request, request)) return s.keys;
  }
  Shape shape{request, std::vector<std::int64_t>(state_.node_count())};
  for (NodeIndex n = 0; n < state_.node_count(); ++n) shape.keys[n] = compute_key(request, n);
  shapes_.push_back(std::move(shape));
  return shapes_.back().keys;
}

void ReleaseIndex::apply(ResourceScratch& scratch, const SelectRequest& request, const NodeBitmap& nodes,
                         std::int64_t key) {
  const std::span<const std::int64_t> keys = usable_keys(request);
  NodeAllocation one;
  for (std::size_t w = 0; w < nodes.words().size(); ++w) {
    std::uint64_t bits = nodes.words()[w];
    while (bits) {
      const auto n = static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
      bits &= bits - 1;
      if (keys[n] > key) continue;
      for (const Release& rel : releases_[n]) {
        if (rel.key > key) break;
        one = NodeAllocation{n, rel.cpus, rel.gpus, rel.mem_mb};
        scratch.add_back(std::span<const NodeAllocation>(&one, 1));
      }
    }
  }
}

}  // namespace gputwin
