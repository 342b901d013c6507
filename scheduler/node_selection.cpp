#include "scheduler/node_selection.hpp"

#include <algorithm>

namespace gputwin {
namespace {

std::uint32_t cpus_per_node(const SelectRequest& r) {
  return r.nodes > 0 ? (r.cpus + r.nodes - 1) / r.nodes : 1;
}

}  // namespace

SelectRequest select_request(const JobSpec& spec) {
  return SelectRequest{spec.nodes, std::max<std::uint32_t>(spec.cpus, 1), spec.gpus_per_node, spec.mem_per_node_mb,
                       spec.exclusive};
}

FreeResources live_resources(const ClusterState& state) {
  return FreeResources{state.free_cpus().data(), state.free_gpus().data(), state.free_mem_mb().data(),
                       state.node_jobs().data(), state.schedulable().data()};
}

bool NodeSelector::usable(const SelectRequest& r, const FreeResources& free, NodeIndex n) const {
  if (!free.schedulable[n]) return false;
  if (r.exclusive)
    return free.jobs[n] == 0 && config_.nodes[n].gpus >= r.gpus_per_node &&
           config_.nodes[n].memory_mb >= r.mem_per_node_mb;
  return free.gpus[n] >= r.gpus_per_node && free.mem_mb[n] >= r.mem_per_node_mb && free.cpus[n] >= cpus_per_node(r);
}

bool NodeSelector::select(const SelectRequest& r, std::span<const NodeIndex> candidates, const std::uint8_t* allowed,
                          const FreeResources& free, std::vector<NodeAllocation>& out) {
  out.clear();
  runs_.clear();
  positions_.clear();
  // Group usable nodes into runs of consecutive indices with equal weight (_eval_nodes_consec "consec sets").
  NodeIndex previous = 0;
  bool in_run = false;
  for (std::uint32_t pos = 0; pos < candidates.size(); ++pos) {
    const NodeIndex n = candidates[pos];
    if ((allowed != nullptr && !allowed[n]) || !usable(r, free, n)) {
      in_run = false;
      continue;
    }
    const std::uint32_t weight = config_.nodes[n].weight;
    const std::uint32_t avail = r.exclusive ? config_.nodes[n].cpus : free.cpus[n];
    if (!in_run || n != previous + 1 || runs_.back().weight != weight) {
      runs_.push_back(Run{static_cast<std::uint32_t>(positions_.size()), 0, 0, weight, false});
    }
    runs_.back().count++;
    runs_.back().cpus += avail;
    positions_.push_back(pos);
    previous = n;
    in_run = true;
  }
  const bool fixed = r.nodes > 0;
  const std::uint32_t cpn = cpus_per_node(r);
  std::int64_t rem_nodes = fixed ? r.nodes : 1;
  std::int64_t rem_cpus = r.cpus;
  auto node_cpus = [&](NodeIndex n) -> std::uint32_t { return r.exclusive ? config_.nodes[n].cpus : free.cpus[n]; };
  auto take = [&](NodeIndex n) {
    std::uint32_t cpus;
    if (r.exclusive)
      cpus = config_.nodes[n].cpus;
    else if (fixed)
      cpus = cpn;
    else
      cpus = static_cast<std::uint32_t>(std::min<std::int64_t>(free.cpus[n], rem_cpus));
    const std::uint32_t gpus = r.exclusive ? config_.nodes[n].gpus : r.gpus_per_node;
    const std::uint64_t mem = r.exclusive ? config_.nodes[n].memory_mb : r.mem_per_node_mb;
    out.push_back(NodeAllocation{n, cpus, gpus, mem});
    rem_nodes -= 1;
    rem_cpus -= fixed ? static_cast<std::int64_t>(cpn) : static_cast<std::int64_t>(cpus);
  };
  auto done = [&] { return rem_nodes <= 0 && rem_cpus <= 0; };

  while (!done()) {
    // Pick the best remaining run: lowest weight; then first sufficient with fewest CPUs; else most CPUs.
    Run* best = nullptr;
    bool best_sufficient = false;
    std::uint32_t lowest_weight = UINT32_MAX;
    for (Run& run : runs_) {
      if (!run.used) lowest_weight = std::min(lowest_weight, run.weight);
    }
    if (lowest_weight == UINT32_MAX) break;
    for (Run& run : runs_) {
      if (run.used || run.weight != lowest_weight) continue;
      const bool sufficient = static_cast<std::int64_t>(run.count) >= (fixed ? rem_nodes : 1) &&
                              static_cast<std::int64_t>(run.cpus) >= (fixed ? 0 : rem_cpus);
      if (sufficient) {
        if (!best_sufficient || run.cpus < best->cpus) {
          best = &run;
          best_sufficient = true;
        }
      } else if (!best_sufficient && (best == nullptr || run.cpus > best->cpus)) {
        best = &run;
      }
    }
    best->used = true;
    const bool one_node_left = fixed ? rem_nodes == 1 : false;
    if (best_sufficient && (one_node_left || !fixed)) {
      // Best fit: when a single node can finish the job, take the one with the fewest available CPUs.
      const std::int64_t need = fixed ? static_cast<std::int64_t>(cpn) : rem_cpus;
      std::int64_t best_pos = -1;
      std::uint32_t best_cpus = UINT32_MAX;
      for (std::uint32_t k = 0; k < best->count; ++k) {
        const NodeIndex n = candidates[positions_[best->first + k]];
        const std::uint32_t c = node_cpus(n);
        if (static_cast<std::int64_t>(c) >= need && c < best_cpus) {
          best_cpus = c;
          best_pos = k;
        }
      }
      if (best_pos >= 0) {
        take(candidates[positions_[best->first + static_cast<std::uint32_t>(best_pos)]]);
        continue;
      }
    }
    for (std::uint32_t k = 0; k < best->count && !done(); ++k) take(candidates[positions_[best->first + k]]);
  }
  if (!done()) {
    out.clear();
    return false;
  }
  std::sort(out.begin(), out.end(), [](const NodeAllocation& a, const NodeAllocation& b) { return a.node < b.node; });
  return true;
}

}  // namespace gputwin
