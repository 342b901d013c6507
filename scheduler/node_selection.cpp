#include "scheduler/node_selection.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "scheduler/cpu_versions.hpp"

// The node walk (NodeSelector::runs_from_bits, with its tests of 64 nodes and sums of free CPUs inlined) is
// vectorised and built for AVX2 too (scheduler/cpu_versions.hpp).

namespace gputwin {
namespace {

std::uint32_t cpus_per_node(const SelectRequest& r) {
  return r.nodes > 0 ? (r.cpus + r.nodes - 1) / r.nodes : 1;
}

// What the node walk tests of a node that a bitmap left in: CPUs and memory, and when `all` also GPUs and state.
struct NodeTest {
  std::uint32_t cpus = 1;    // Free CPUs needed.
  std::uint64_t mem_mb = 0;  // Free memory needed.
  std::uint32_t gpus = 0;    // Free GPUs needed (tested when `all`).
  bool all = false;          // Test GPUs and schedulability too (the bitmap does not promise them).
  // True if node `n` of `free` passes.
  [[nodiscard]] bool passes(const FreeResources& free, std::size_t n) const {
    return (!all || ((free.schedulable[n] != 0) & (free.gpus[n] >= gpus))) & (free.cpus[n] >= cpus) &
           (free.mem_mb[n] >= mem_mb);
  }
};

// A run's free CPUs: their sum and the most on one node.
struct CpuSum {
  std::uint64_t total = 0;  // Sum over the nodes.
  std::uint32_t most = 0;   // Most on one node.
};

// 64 nodes from `base`, all in the cluster: bit k set when node base + k passes `test`. The tests go into bytes, a
// loop the compiler vectorises, and 8 bytes of 0 or 1 become 8 bits by one multiplication (byte k lands in bit 56 + k).
GPUTWIN_INLINE std::uint64_t passing_nodes64(const FreeResources& free, std::size_t base, NodeTest test) {
  alignas(8) std::uint8_t ok[64];
  const std::uint32_t* cpus = free.cpus + base;
  const std::uint64_t* mem = free.mem_mb + base;
  const std::uint32_t* gpus = free.gpus + base;
  const std::uint8_t* schedulable = free.schedulable + base;
  if (test.all) {
    for (int k = 0; k < 64; ++k) {
      ok[k] = static_cast<std::uint8_t>((cpus[k] >= test.cpus) & (mem[k] >= test.mem_mb) & (gpus[k] >= test.gpus) &
                                        (schedulable[k] != 0));
    }
  } else {
    for (int k = 0; k < 64; ++k) ok[k] = static_cast<std::uint8_t>((cpus[k] >= test.cpus) & (mem[k] >= test.mem_mb));
  }
  std::uint64_t mask = 0;
  for (int i = 0; i < 8; ++i) {
    std::uint64_t bytes;
    std::memcpy(&bytes, ok + 8 * i, 8);
    mask |= ((bytes * 0x0102040810204080ULL) >> 56) << (8 * i);
  }
  return mask;
}

// Free CPUs of nodes [from, end): their sum and the most on one node.
GPUTWIN_INLINE CpuSum sum_cpus(const std::uint32_t* free_cpus, NodeIndex from, NodeIndex end) {
  std::uint64_t total = 0;
  std::uint32_t most = 0;
  for (NodeIndex k = from; k < end; ++k) {
    total += free_cpus[k];
    most = std::max(most, free_cpus[k]);
  }
  return {total, most};
}

}  // namespace

SelectRequest select_request(const JobSpec& spec) {
  return SelectRequest{spec.nodes,
                       std::max<std::uint32_t>(spec.cpus, 1),
                       spec.gpus_per_node,
                       spec.mem_per_node_mb,
                       spec.exclusive,
                       spec.switches,
                       true};
}

FreeResources live_resources(const ClusterState& state) {
  return FreeResources{state.free_cpus().data(),
                       state.free_gpus().data(),
                       state.free_mem_mb().data(),
                       state.node_jobs().data(),
                       state.schedulable().data(),
                       &state,
                       nullptr,
                       state.untouched_bits()};
}

bool may_fit_now(const ClusterState& state, const JobSpec& spec, std::uint32_t p) {
  if (spec.nodes > 0) return state.nodes_with_free_gpus(p, spec.gpus_per_node) >= spec.nodes;
  return state.partition_free_cpus(p) >= spec.cpus && state.nodes_with_free_gpus(p, spec.gpus_per_node) >= 1;
}

bool can_ever_fit(const JobSpec& spec, const PartitionConfig& part, const ClusterConfig& cluster) {
  const SelectRequest r = select_request(spec);
  const std::uint32_t cpn = cpus_per_node(r);
  std::uint64_t usable = 0, cpus = 0;
  for (NodeIndex n : part.nodes) {
    const NodeConfig& node = cluster.nodes[n];
    if (!node.available || node.gpus < r.gpus_per_node || node.memory_mb < r.mem_per_node_mb || node.cpus < cpn)
      continue;
    ++usable;
    cpus += node.cpus;
  }
  return r.nodes > 0 ? usable >= r.nodes : (usable > 0 && cpus >= r.cpus);
}

bool partition_admits(const ClusterState& state, JobIndex j) {
  const JobRuntime& rt = state.job(j);
  const PartitionConfig& part = state.config().partitions[rt.partition];
  return part.state == PartitionState::kUp && (part.max_time_s < 0 || rt.time_limit_s <= part.max_time_s);
}

NodeSet partition_nodes(const ClusterState& state, std::uint32_t p) {
  return NodeSet{state.config().partitions[p].nodes, state.partition_bits(p)};
}

const std::vector<std::uint32_t>& NodeSelector::current_weights() {
  if (live_ == nullptr && weights_.empty()) {
    for (const NodeConfig& n : config_.nodes) weights_.push_back(n.weight);
  }
  const std::vector<std::uint32_t>& weights = live_ != nullptr ? live_->node_weights() : weights_;
  // Weights change only with a node update (ClusterState::set_node_weight), so the breaks are made again only then.
  const std::uint64_t version = live_ != nullptr ? live_->node_update_count() : 0;
  if (version != breaks_version_ || weight_breaks_.empty()) {
    weight_breaks_.assign((weights.size() + 63) / 64, 0);
    for (std::size_t n = 0; n < weights.size(); ++n) {
      if (n == 0 || weights[n] != weights[n - 1]) weight_breaks_[n >> 6] |= 1ULL << (n & 63);
    }
    breaks_version_ = version;
  }
  return weights;
}

GPUTWIN_AVX2_CLONES void NodeSelector::runs_from_bits(const SelectRequest& r, const FreeResources& free,
                                                      const std::uint64_t* filter, const std::uint64_t* candidates,
                                                      const std::uint64_t* allowed,
                                                      const std::vector<std::uint32_t>& weights) {
  // What the filter does not already promise is tested: the live cluster's bits promise a schedulable node with the
  // GPUs and a free CPU; a scratch's superset only that the node may be usable.
  const NodeTest test{cpus_per_node(r), r.mem_per_node_mb, r.gpus_per_node, free.superset != nullptr};
  const bool test_any = test.all || test.cpus > 1 || test.mem_mb > 0;
  const std::size_t node_count = config_.nodes.size();
  const std::size_t words = (node_count + 63) / 64;
  // A word of equal nodes whose candidates are all untouched (every resource free, here) needs no node read: each
  // candidate has the configuration's resources, so one test decides them all and a stretch's CPUs are its length times
  // the nodes' CPUs. Lightly loaded clusters are mostly such words.
  const std::uint64_t* untouched = free.untouched;
  if (untouched != nullptr && uniform_words_.size() != words) find_uniform_words();
  std::uint32_t uniform_cpus = 0;  // the current word's nodes' CPUs when it takes the shortcut, else 0
  // Adds the usable nodes [begin, end), all of weight `weight`, as a new run, or onto the last run when `continues`
  // (it ends at begin - 1 with the same weight).
  const auto add_piece = [&](NodeIndex begin, NodeIndex end, bool continues, std::uint32_t weight) {
    if (!continues) runs_.push_back(Run{begin, 0, 0, 0, weight, false});
    Run& run = runs_.back();
    const CpuSum sum = uniform_cpus != 0 ? CpuSum{std::uint64_t{uniform_cpus} * (end - begin), uniform_cpus}
                                         : sum_cpus(free.cpus, begin, end);
    run.count += end - begin;
    run.cpus += sum.total;
    run.max_cpus = std::max(run.max_cpus, sum.most);
  };
  bool open = false;  // the last run ends at the previous word's last node
  for (std::size_t w = 0; w < words; ++w) {
    const bool carried = open;
    open = false;
    std::uint64_t bits = filter[w] & candidates[w] & (allowed != nullptr ? allowed[w] : ~0ULL);
    if (bits == 0) continue;
    const std::size_t base = w * 64;
    uniform_cpus = 0;
    if (untouched != nullptr && uniform_words_[w] != 0 && (bits & ~untouched[w]) == 0) {
      const NodeConfig& c = config_.nodes[base];
      if (c.cpus < test.cpus || c.memory_mb < test.mem_mb || (test.all && c.gpus < test.gpus)) continue;
      uniform_cpus = c.cpus;  // 0 only for nodes without CPUs: then the stretches are summed node by node
    } else if (test_any) {
      if (base + 64 <= node_count && std::popcount(bits) >= kWholeWordTestFrom) {
        bits &= passing_nodes64(free, base, test);
      } else {
        for (std::uint64_t rest = bits; rest != 0; rest &= rest - 1) {
          const std::size_t n = base + static_cast<std::size_t>(std::countr_zero(rest));
          if (!test.passes(free, n)) bits &= ~(1ULL << (n - base));
        }
      }
    }
    // Each stretch of consecutive usable nodes is one run per weight: it is cut where the weight changes, and one
    // that begins at bit 0 goes on the run the previous word ended with unless the weight changes there.
    const std::uint64_t breaks = weight_breaks_[w];
    while (bits != 0) {
      const int first = std::countr_zero(bits);
      const int end = first + std::countr_one(bits >> first);
      const std::uint64_t inside = end == 64 ? ~0ULL << first : (~0ULL << first) & ~(~0ULL << end);
      std::uint64_t cuts = breaks & inside & ~(1ULL << first);
      bool continues = carried && first == 0 && (breaks & 1ULL) == 0;
      for (int from = first; from < end;) {
        const int to = cuts != 0 ? std::countr_zero(cuts) : end;
        const auto begin = static_cast<NodeIndex>(base + static_cast<std::size_t>(from));
        add_piece(begin, static_cast<NodeIndex>(base + static_cast<std::size_t>(to)), continues, weights[begin]);
        cuts &= cuts - 1;
        continues = false;
        from = to;
      }
      open = end == 64;
      bits = end == 64 ? 0 : bits & (~0ULL << end);
    }
  }
}

void NodeSelector::find_uniform_words() {
  const std::size_t node_count = config_.nodes.size();
  uniform_words_.assign((node_count + 63) / 64, 0);
  for (std::size_t w = 0; (w + 1) * 64 <= node_count; ++w) {
    const NodeConfig& first = config_.nodes[w * 64];
    bool equal = true;
    for (std::size_t n = w * 64 + 1; n < (w + 1) * 64 && equal; ++n) {
      const NodeConfig& c = config_.nodes[n];
      equal = c.cpus == first.cpus && c.gpus == first.gpus && c.memory_mb == first.memory_mb;
    }
    uniform_words_[w] = equal ? 1 : 0;
  }
}

bool NodeSelector::select(const SelectRequest& r, const NodeSet& candidates, const std::uint64_t* allowed,
                          const FreeResources& free, std::vector<NodeAllocation>& out) {
  out.clear();
  runs_.clear();
  const std::vector<std::uint32_t>& weights = current_weights();
  // Group usable nodes into runs of consecutive indices with equal weight (_eval_nodes_consec "consec sets").
  // A run is an index range [first, first + count): its nodes need not be listed.
  NodeIndex previous = 0;
  bool in_run = false;
  auto visit = [&](NodeIndex n) {
    if ((allowed != nullptr && !((allowed[n >> 6] >> (n & 63)) & 1ULL)) || !usable(r, free, n)) {
      in_run = false;
      return;
    }
    const std::uint32_t avail = r.exclusive ? config_.nodes[n].cpus : free.cpus[n];
    if (in_run && n == previous + 1 && runs_.back().weight == weights[n]) {
      Run& run = runs_.back();
      ++run.count;
      run.cpus += avail;
      run.max_cpus = std::max(run.max_cpus, avail);
    } else {
      runs_.push_back(Run{n, 1, avail, avail, weights[n], false});
    }
    previous = n;
    in_run = true;
  };
  const std::uint64_t* filter = nullptr;
  if (candidates.bits != nullptr && !r.exclusive) {
    if (free.superset != nullptr)
      filter = free.superset;
    else if (free.live != nullptr)
      filter = free.live->free_gpu_bits(r.gpus_per_node);
  }
  if (filter != nullptr && !reference_walk_) {
    runs_from_bits(r, free, filter, candidates.bits, allowed, weights);
  } else if (filter != nullptr) {
    // Only nodes with >= gpus_per_node free GPUs and a free CPU can be usable: walk their bits. Nodes left out
    // are not consecutive with their neighbours, which ends runs just as an unusable node does.
    const std::size_t words = (config_.nodes.size() + 63) / 64;
    for (std::size_t w = 0; w < words; ++w) {
      std::uint64_t bits = filter[w] & candidates.bits[w] & (allowed != nullptr ? allowed[w] : ~0ULL);
      while (bits) {
        visit(static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
        bits &= bits - 1;
      }
    }
  } else {
    for (const NodeIndex n : candidates.nodes) visit(n);
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

  if (uses_topology(r)) {
    const TopologyNeed need{static_cast<std::uint32_t>(rem_nodes), static_cast<std::uint64_t>(rem_cpus), fixed, cpn};
    std::uint32_t leaves = 0;
    std::optional<bool> chosen;
    if (fast_topology_) {  // runs of usable nodes are enough for fixed requests on range-shaped leaves
      ranges_.clear();
      for (const Run& run : runs_) ranges_.push_back({run.first, run.count, run.weight});
      chosen = topology_.choose_ranges(ranges_, need, topo_order_, leaves);
    }
    if (!chosen) {
      usable_.clear();
      for (const Run& run : runs_) {
        for (NodeIndex n = run.first; n < run.first + run.count; ++n) usable_.push_back({n, node_cpus(n), run.weight});
      }
      chosen = topology_.choose(usable_, need, topo_order_, leaves);
    }
    if (!*chosen || (r.switches > 0 && leaves > r.switches && !r.switch_wait_over)) {
      return false;
    }
    for (NodeIndex n : topo_order_) {
      if (done()) break;
      take(n);
    }
    if (!done()) {
      out.clear();
      return false;
    }
    last_leaves_ = leaves;
    std::sort(out.begin(), out.end(), [](const NodeAllocation& a, const NodeAllocation& b) { return a.node < b.node; });
    return true;
  }

  // Takes run `best` (marked used): when it is sufficient and a single node can finish the job, the node with the
  // fewest available CPUs that can; else its nodes in order until the job is done.
  auto take_run = [&](Run* best, bool best_sufficient) {
    best->used = true;
    const bool one_node_left = fixed ? rem_nodes == 1 : false;
    const std::int64_t need = fixed ? static_cast<std::int64_t>(cpn) : rem_cpus;
    if (best_sufficient && (one_node_left || !fixed) && static_cast<std::int64_t>(best->max_cpus) >= need) {
      std::int64_t best_node = -1;
      std::uint32_t best_cpus = UINT32_MAX;
      for (NodeIndex n = best->first; n < best->first + best->count; ++n) {
        const std::uint32_t c = node_cpus(n);
        if (static_cast<std::int64_t>(c) >= need && c < best_cpus) {
          best_cpus = c;
          best_node = n;
          if (static_cast<std::int64_t>(c) == need) break;  // nothing can fit tighter
        }
      }
      if (best_node >= 0) {
        take(static_cast<NodeIndex>(best_node));
        return;
      }
    }
    for (NodeIndex n = best->first; n < best->first + best->count && !done(); ++n) take(n);
  };
  auto sufficient = [&](const Run& run) {
    return static_cast<std::int64_t>(run.count) >= (fixed ? rem_nodes : 1) &&
           static_cast<std::int64_t>(run.cpus) >= (fixed ? 0 : rem_cpus);
  };
  // The picks after the first (see below): per weight, lowest first, the unused runs by most CPUs, then visit order;
  // while no unused run of the weight is sufficient (a CPU count: the next has fewer CPUs than remain; a node
  // count: none has as many nodes as remain) the next is taken whole; then the sufficient one with the fewest CPUs
  // (first in visit order among equals) finishes the job.
  auto pick_sorted = [&] {
    order_.clear();
    for (std::uint32_t i = 0; i < runs_.size(); ++i) {
      if (!runs_[i].used) order_.push_back(i);
    }
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Run& x = runs_[a];
      const Run& y = runs_[b];
      if (x.weight != y.weight) return x.weight < y.weight;
      if (x.cpus != y.cpus) return x.cpus > y.cpus;
      return a < b;
    });
    for (std::size_t cls = 0; cls < order_.size() && !done();) {
      std::size_t end = cls;
      while (end < order_.size() && runs_[order_[end]].weight == runs_[order_[cls]].weight) ++end;
      if (fixed) {
        by_count_.assign(order_.begin() + static_cast<std::ptrdiff_t>(cls),
                         order_.begin() + static_cast<std::ptrdiff_t>(end));
        std::sort(by_count_.begin(), by_count_.end(),
                  [&](std::uint32_t a, std::uint32_t b) { return runs_[a].count > runs_[b].count; });
      }
      std::size_t next = cls, most_nodes = 0;
      while (!done()) {
        while (next < end && runs_[order_[next]].used) ++next;
        if (next == end) break;
        bool any_sufficient = false;
        if (fixed) {
          while (most_nodes < by_count_.size() && runs_[by_count_[most_nodes]].used) ++most_nodes;
          any_sufficient = most_nodes < by_count_.size() && sufficient(runs_[by_count_[most_nodes]]);
        } else {
          any_sufficient = sufficient(runs_[order_[next]]);
        }
        if (!any_sufficient) {
          take_run(&runs_[order_[next]], false);
          continue;
        }
        std::uint32_t best = UINT32_MAX;
        for (std::size_t k = next; k < end; ++k) {
          const std::uint32_t i = order_[k];
          if (runs_[i].used || !sufficient(runs_[i])) continue;
          if (best == UINT32_MAX || runs_[i].cpus < runs_[best].cpus || (runs_[i].cpus == runs_[best].cpus && i < best))
            best = i;
        }
        take_run(&runs_[best], true);
      }
      cls = end;
    }
  };
  // Slurm's pick (_eval_nodes_consec), one run at a time: the lowest weight; in it the first sufficient run with the
  // fewest CPUs, else the first with the most CPUs. A sufficient run finishes the job, so every pick but the last
  // takes the unused run with the most CPUs: after the first such pick the rest go by one sort (pick_sorted) rather
  // than a walk over all runs per pick, unless `reference_picks_` (tests).
  bool first_pick = true;
  while (!done()) {
    if (!first_pick && !reference_picks_ && runs_.size() > kSortedPicksFrom) {
      pick_sorted();
      break;
    }
    first_pick = false;
    Run* best = nullptr;
    bool best_sufficient = false;
    std::uint32_t lowest_weight = UINT32_MAX;
    for (Run& run : runs_) {
      if (!run.used) lowest_weight = std::min(lowest_weight, run.weight);
    }
    if (lowest_weight == UINT32_MAX) break;
    for (Run& run : runs_) {
      if (run.used || run.weight != lowest_weight) continue;
      if (sufficient(run)) {
        if (!best_sufficient || run.cpus < best->cpus) {
          best = &run;
          best_sufficient = true;
        }
      } else if (!best_sufficient && (best == nullptr || run.cpus > best->cpus)) {
        best = &run;
      }
    }
    take_run(best, best_sufficient);
  }
  if (!done()) {
    out.clear();
    return false;
  }
  std::sort(out.begin(), out.end(), [](const NodeAllocation& a, const NodeAllocation& b) { return a.node < b.node; });
  return true;
}

}  // namespace gputwin
