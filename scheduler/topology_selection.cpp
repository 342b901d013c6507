#include "scheduler/topology_selection.hpp"

#include <algorithm>
#include <limits>

namespace gputwin {
namespace {

constexpr std::uint32_t kInfinite = std::numeric_limits<std::uint32_t>::max();

}  // namespace

bool TopologySelector::feasibility_is_count_based() const {
  if (count_based_ < 0) count_based_ = compute_count_based() ? 1 : 0;
  return count_based_ == 1;
}

bool TopologySelector::compute_count_based() const {
  switch (topology_.kind) {
    case TopologyKind::kFlat:
      return true;
    case TopologyKind::kBlock:
      return false;
    case TopologyKind::kTree: {
      int roots = 0;
      std::size_t covered = 0;
      for (const TopologySwitch& s : topology_.switches) {
        if (s.parent < 0) {
          ++roots;
          covered = s.nodes.size();
        }
      }
      const auto in_tree = static_cast<std::size_t>(
          std::count_if(topology_.leaf_of_node.begin(), topology_.leaf_of_node.end(), [](int l) { return l >= 0; }));
      return roots == 1 && covered == topology_.leaf_of_node.size() && in_tree == covered;
    }
  }
  return true;
}

bool TopologySelector::choose(std::span<const UsableNode> usable, const TopologyNeed& need, std::vector<NodeIndex>& out,
                              std::uint32_t& leaves_used) {
  out.clear();
  leaves_used = 0;
  const std::size_t nodes =
      topology_.kind == TopologyKind::kBlock ? topology_.block_of_node.size() : topology_.leaf_of_node.size();
  // Per-node scratch stays sized to the cluster; only the usable nodes' entries are set and cleared again, so a
  // call costs O(usable nodes x tree depth), not O(cluster).
  if (cpus_of_.size() != nodes) {
    cpus_of_.assign(nodes, 0);
    weight_of_.assign(nodes, 0);
    in_best_.assign(nodes, 0);
    taken_.assign(nodes, 0);
  }
  usable_.clear();
  for (const UsableNode& u : usable) {
    if (u.node >= nodes) continue;  // not in the topology: Slurm cannot reach it
    const int place =
        topology_.kind == TopologyKind::kBlock ? topology_.block_of_node[u.node] : topology_.leaf_of_node[u.node];
    if (place < 0) continue;
    cpus_of_[u.node] = std::max<std::uint32_t>(u.cpus, 1);
    weight_of_[u.node] = u.weight;
    usable_.push_back(u);
  }
  const bool ok = topology_.kind == TopologyKind::kBlock ? choose_block(usable_, need, out, leaves_used)
                                                         : choose_tree(usable_, need, out, leaves_used);
  for (const UsableNode& u : usable_) {
    cpus_of_[u.node] = 0;
    in_best_[u.node] = 0;
    taken_[u.node] = 0;
  }
  if (!ok) out.clear();
  return ok;
}

namespace {

// What is still to cover while nodes are taken (eval_nodes_cpus_to_use, simplified to our request forms).
struct Remaining {
  std::int64_t nodes;
  std::int64_t cpus;
  std::int64_t max_nodes;
  const TopologyNeed& need;
  std::vector<NodeIndex>& out;
  std::vector<std::uint8_t>& taken;

  /// Everything `need` asks, nothing taken yet.
  static Remaining of(const TopologyNeed& need, std::vector<NodeIndex>& out, std::vector<std::uint8_t>& taken) {
    const std::int64_t max_nodes =
        need.fixed ? static_cast<std::int64_t>(need.nodes) : std::numeric_limits<std::int64_t>::max();
    return Remaining{need.nodes, static_cast<std::int64_t>(need.cpus), max_nodes, need, out, taken};
  }
  [[nodiscard]] bool done() const { return nodes <= 0 && cpus <= 0; }
  void take(NodeIndex n, std::uint32_t avail) {
    const std::int64_t give = need.fixed ? need.cpus_per_node : std::min<std::int64_t>(avail, cpus);
    out.push_back(n);
    taken[n] = 1;
    --nodes;
    --max_nodes;
    cpus -= give;
  }
};

// The distinct weights of the usable nodes, ascending (the node weight list, sorted).
std::vector<std::uint32_t> weight_groups(std::span<const UsableNode> usable) {
  std::vector<std::uint32_t> weights;
  for (const UsableNode& u : usable) {
    if (weights.empty() || weights.back() != u.weight) weights.push_back(u.weight);
  }
  std::sort(weights.begin(), weights.end());
  weights.erase(std::unique(weights.begin(), weights.end()), weights.end());
  return weights;
}

}  // namespace

bool TopologySelector::choose_tree(std::span<const UsableNode> usable, const TopologyNeed& need,
                                   std::vector<NodeIndex>& out, std::uint32_t& leaves_used) {
  const auto& sw = topology_.switches;
  const std::size_t count = sw.size();
  if (count == 0) return false;
  Remaining rem = Remaining::of(need, out, taken_);
  const std::vector<std::uint32_t> weights = weight_groups(usable);
  auto leaf_of = [&](NodeIndex n) { return static_cast<std::size_t>(topology_.leaf_of_node[n]); };
  // Calls f(switch) for the leaf of node n and each switch above it.
  auto up_from = [&](NodeIndex n, auto&& f) {
    for (int i = static_cast<int>(leaf_of(n)); i >= 0; i = sw[static_cast<std::size_t>(i)].parent) {
      f(static_cast<std::size_t>(i));
    }
  };

  // Usable nodes and CPUs under each switch; the top switch: the highest level switch with enough of both that
  // holds nodes of the lowest weight it can (a later switch of the same level and no higher weight wins).
  switch_nodes_.assign(count, 0);
  switch_cpus_.assign(count, 0);
  switch_required_.assign(count, 0);
  lowest_weight_.assign(count, kInfinite);
  for (const UsableNode& u : usable) {
    up_from(u.node, [&](std::size_t i) {
      ++switch_nodes_[i];
      switch_cpus_[i] += cpus_of_[u.node];
      lowest_weight_[i] = std::min(lowest_weight_[i], u.weight);
    });
  }
  int top = -1;
  std::uint32_t top_weight = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (switch_nodes_[i] < rem.nodes || static_cast<std::int64_t>(switch_cpus_[i]) < rem.cpus) continue;
    if (top == -1 || (sw[i].level >= sw[static_cast<std::size_t>(top)].level && lowest_weight_[i] <= top_weight)) {
      top = static_cast<int>(i);
      top_weight = lowest_weight_[i];
    }
  }
  if (top == -1) return false;
  // Switches under (or equal to) the top switch.
  under_top_.assign(count, 0);
  for (std::size_t i = 0; i < count; ++i) {
    for (int a = static_cast<int>(i); a >= 0; a = sw[static_cast<std::size_t>(a)].parent) {
      if (a == top) {
        under_top_[i] = 1;
        break;
      }
    }
  }
  auto node_under_top = [&](NodeIndex n) { return under_top_[leaf_of(n)] != 0; };

  // Best nodes: whole weight groups under the top switch until the request is covered; every group before the
  // last is required (req2), the last is drawn from as needed.
  std::int64_t best_nodes = 0;
  std::int64_t best_cpus = 0;
  bool sufficient = false;
  bool requested = false;
  std::vector<NodeIndex> required;
  for (std::uint32_t w : weights) {
    if (requested) break;
    if (best_nodes > 0) {
      required.clear();
      for (const UsableNode& u : usable) {
        if (in_best_[u.node]) required.push_back(u.node);
      }
    }
    for (const UsableNode& u : usable) {
      if (u.weight != w || !node_under_top(u.node)) continue;
      in_best_[u.node] = 1;
      ++best_nodes;
      best_cpus += cpus_of_[u.node];
    }
    sufficient = sufficient || (best_cpus >= rem.cpus && best_nodes >= rem.nodes);
    requested = best_nodes >= rem.nodes && best_cpus >= rem.cpus;
  }
  if (!sufficient) return false;
  for (NodeIndex n : required) {
    if (rem.max_nodes <= 0) break;
    rem.take(n, cpus_of_[n]);
    up_from(n, [&](std::size_t i) { switch_required_[i] = 1; });
  }
  auto count_leaves = [&] {
    std::vector<std::size_t> distinct;
    for (NodeIndex n : out) distinct.push_back(leaf_of(n));
    std::sort(distinct.begin(), distinct.end());
    return static_cast<std::uint32_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  };
  if (!required.empty() && rem.done()) {
    leaves_used = count_leaves();
    return true;
  }
  if (!required.empty() && rem.max_nodes <= 0) return false;

  // Switch node counts over the best nodes only (their CPU counts stay as first computed, as in Slurm).
  std::fill(switch_nodes_.begin(), switch_nodes_.end(), 0);
  for (const UsableNode& u : usable) {
    if (in_best_[u.node]) up_from(u.node, [&](std::size_t i) { ++switch_nodes_[i]; });
  }
  // Take from one leaf's best nodes in index order; true once the request is covered.
  auto fill_from = [&](std::size_t i, std::int64_t& taken_here) {
    for (NodeIndex n : sw[i].nodes) {
      if (rem.max_nodes <= 0) break;
      if (n >= in_best_.size() || !in_best_[n] || taken_[n]) continue;
      rem.take(n, cpus_of_[n]);
      ++taken_here;
      if (rem.done()) return true;
    }
    return false;
  };

  // Leaves that already hold required nodes are filled first (the count taken is cumulative, as in Slurm).
  std::int64_t taken_so_far = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!switch_required_[i] || sw[i].level != 0) continue;
    if (fill_from(i, taken_so_far)) {
      leaves_used = count_leaves();
      return true;
    }
    decrement_up(taken_so_far, i);
  }

  // Further leaves: the closest to those in use (summed switch distance); at equal distance the tightest fit.
  dist_.assign(count, 0);
  for (std::size_t i = 0; i < count; ++i) {
    if (switch_required_[i]) add_distance(i);
  }
  std::int64_t previous = rem.nodes + 1;
  while (previous != rem.nodes) {
    previous = rem.nodes;
    const int best = best_leaf(rem.nodes, rem.cpus);
    if (best == -1) break;
    const auto b = static_cast<std::size_t>(best);
    add_distance(b);
    std::int64_t taken_here = 0;
    if (fill_from(b, taken_here)) {
      leaves_used = count_leaves();
      return true;
    }
    decrement_up(switch_nodes_[b], b);
    switch_nodes_[b] = 0;
  }
  if (rem.done()) {
    leaves_used = count_leaves();
    return true;
  }
  return false;
}

void TopologySelector::decrement_up(std::int64_t taken, std::size_t from) {
  const auto& sw = topology_.switches;
  for (int i = static_cast<int>(from); i >= 0; i = sw[static_cast<std::size_t>(i)].parent) {
    auto& c = switch_nodes_[static_cast<std::size_t>(i)];
    c = c <= taken ? 0 : c - taken;
  }
}

void TopologySelector::add_distance(std::size_t from) {
  for (std::size_t i = 0; i < dist_.size(); ++i) {
    const std::uint32_t d = from < topology_.switch_distance.size() && i < topology_.switch_distance[from].size()
                                ? topology_.switch_distance[from][i]
                                : kInfinite;
    dist_[i] = (d == kInfinite || dist_[i] == kInfinite) ? kInfinite : dist_[i] + d;
  }
}

int TopologySelector::compare_switches(std::size_t i, std::size_t j, std::int64_t rem_nodes, std::int64_t rem_cpus,
                                       bool& i_fit) const {
  const auto& sw = topology_.switches;
  auto fits = [&](std::size_t k) {
    return switch_nodes_[k] >= rem_nodes && static_cast<std::int64_t>(switch_cpus_[k]) >= rem_cpus;
  };
  while (true) {
    i_fit = fits(i);
    const bool j_fit = fits(j);
    if (i_fit && j_fit) {
      if (switch_nodes_[i] < switch_nodes_[j]) return 1;
      if (switch_nodes_[i] > switch_nodes_[j]) return -1;
      break;
    }
    if (i_fit) return 1;
    if (j_fit) return -1;
    const int pi = sw[i].parent;
    const int pj = sw[j].parent;
    if (pi >= 0 && pj >= 0 && pi != pj) {
      i = static_cast<std::size_t>(pi);
      j = static_cast<std::size_t>(pj);
      continue;
    }
    break;
  }
  if (switch_nodes_[i] > switch_nodes_[j]) return 1;
  if (switch_nodes_[i] < switch_nodes_[j]) return -1;
  if (sw[i].level < sw[j].level) return 1;
  if (sw[i].level > sw[j].level) return -1;
  return 0;
}

int TopologySelector::best_leaf(std::int64_t rem_nodes, std::int64_t rem_cpus) {
  if (!leaves_indexed_) index_leaves();
  int best = -1;
  for (const std::uint32_t i : leaves_in_order_) {
    if (switch_required_[i]) continue;
    if (best == -1 || dist_[i] == kInfinite || switch_nodes_[i] == 0) {
      if (switch_nodes_[i] != 0 && dist_[i] != kInfinite) best = static_cast<int>(i);
      continue;
    }
    const auto b = static_cast<std::size_t>(best);
    bool i_fit = false;
    const int better = compare_switches(i, b, rem_nodes, rem_cpus, i_fit);
    if ((dist_[i] < dist_[b] && i_fit) || (dist_[i] == dist_[b] && better > 0)) best = static_cast<int>(i);
  }
  return best;
}

void TopologySelector::index_leaves() {
  leaves_indexed_ = true;
  leaves_are_ranges_ = topology_.kind == TopologyKind::kTree && !topology_.switches.empty();
  const auto& sw = topology_.switches;
  for (std::size_t i = 0; i < sw.size() && leaves_are_ranges_; ++i) {
    if (sw[i].level != 0) continue;
    const auto& nodes = sw[i].nodes;
    if (nodes.empty() || nodes.back() - nodes.front() + 1 != nodes.size()) {
      leaves_are_ranges_ = false;
      break;
    }
    leaf_spans_.push_back({nodes.front(), nodes.back(), static_cast<std::uint32_t>(i)});
  }
  std::sort(leaf_spans_.begin(), leaf_spans_.end());
  for (std::size_t i = 1; i < leaf_spans_.size(); ++i) {
    if (leaf_spans_[i][0] <= leaf_spans_[i - 1][1]) leaves_are_ranges_ = false;
  }
  for (std::uint32_t i = 0; i < sw.size(); ++i) {
    by_level_.push_back(i);
    if (sw[i].level == 0) leaves_in_order_.push_back(i);
  }
  std::stable_sort(by_level_.begin(), by_level_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return sw[a].level < sw[b].level; });
}

std::optional<bool> TopologySelector::choose_ranges(std::span<const UsableRange> usable, const TopologyNeed& need,
                                                    std::vector<NodeIndex>& out, std::uint32_t& leaves_used) {
  if (!leaves_indexed_) index_leaves();
  if (!leaves_are_ranges_ || !need.fixed) return std::nullopt;
  for (const UsableRange& r : usable) {
    if (r.weight != usable.front().weight) return std::nullopt;
  }
  out.clear();
  leaves_used = 0;
  const auto& sw = topology_.switches;
  const std::size_t count = sw.size();
  // Usable nodes per leaf from the runs (two pointers over runs and leaf spans, both ascending).
  switch_nodes_.assign(count, 0);
  std::size_t span = 0;
  for (const UsableRange& r : usable) {
    const std::uint64_t end = std::uint64_t{r.first} + r.count;  // exclusive
    while (span < leaf_spans_.size() && leaf_spans_[span][1] < r.first) ++span;
    for (std::size_t k = span; k < leaf_spans_.size() && leaf_spans_[k][0] < end; ++k) {
      const std::uint64_t lo = std::max<std::uint64_t>(r.first, leaf_spans_[k][0]);
      const std::uint64_t hi = std::min<std::uint64_t>(end, std::uint64_t{leaf_spans_[k][1]} + 1);
      if (hi > lo) switch_nodes_[leaf_spans_[k][2]] += static_cast<std::int64_t>(hi - lo);
    }
  }
  auto propagate = [&] {
    for (std::uint32_t i : by_level_) {
      if (sw[i].level != 0) switch_nodes_[i] = 0;
    }
    for (std::uint32_t i : by_level_) {
      if (sw[i].parent >= 0) switch_nodes_[static_cast<std::size_t>(sw[i].parent)] += switch_nodes_[i];
    }
  };
  propagate();
  // With one weight and a fixed node count, enough nodes means enough CPUs: each usable node gives cpus_per_node.
  const auto rem_nodes_at_start = static_cast<std::int64_t>(need.nodes);
  int top = -1;
  for (std::size_t i = 0; i < count; ++i) {
    if (switch_nodes_[i] < rem_nodes_at_start) continue;
    if (top == -1 || sw[i].level >= sw[static_cast<std::size_t>(top)].level) top = static_cast<int>(i);
  }
  if (top == -1) return false;
  // Best nodes: every usable node under the top switch (all of them when the top switch is the only root).
  if (!(sw[static_cast<std::size_t>(top)].parent < 0 && feasibility_is_count_based())) {
    for (const auto& [first, last, leaf] : leaf_spans_) {
      (void)first;
      (void)last;
      bool under = false;
      for (int a = static_cast<int>(leaf); a >= 0; a = sw[static_cast<std::size_t>(a)].parent) {
        if (a == top) {
          under = true;
          break;
        }
      }
      if (!under) switch_nodes_[leaf] = 0;
    }
    propagate();
  }
  std::int64_t rem = rem_nodes_at_start;
  // Usable nodes of a leaf in index order, up to `rem` of them.
  auto fill_from = [&](std::size_t leaf) {
    const auto& nodes = sw[leaf].nodes;
    const NodeIndex lo = nodes.front();
    const NodeIndex hi = nodes.back();
    auto it = std::lower_bound(usable.begin(), usable.end(), lo,
                               [](const UsableRange& r, NodeIndex n) { return std::uint64_t{r.first} + r.count <= n; });
    for (; it != usable.end() && it->first <= hi && rem > 0; ++it) {
      for (NodeIndex n = std::max(lo, it->first); n < it->first + it->count && n <= hi && rem > 0; ++n) {
        out.push_back(n);
        --rem;
      }
    }
  };
  dist_.assign(count, 0);  // no leaf is required here: all distances start at 0
  switch_required_.assign(count, 0);
  switch_cpus_.assign(count, 0);
  std::int64_t previous = rem + 1;
  while (previous != rem && rem > 0) {
    previous = rem;
    const int best = best_leaf(rem, 0);  // enough nodes means enough CPUs here
    if (best == -1) break;
    const auto b = static_cast<std::size_t>(best);
    fill_from(b);
    ++leaves_used;
    if (rem <= 0) return true;
    add_distance(b);  // only the next leaf's choice reads it
    decrement_up(switch_nodes_[b], b);
    switch_nodes_[b] = 0;
  }
  if (rem > 0) {
    out.clear();
    leaves_used = 0;
    return false;
  }
  return true;
}

bool TopologySelector::choose_block(std::span<const UsableNode> usable, const TopologyNeed& need,
                                    std::vector<NodeIndex>& out, std::uint32_t& leaves_used) {
  const auto& blocks = topology_.blocks;
  const std::size_t bblocks = blocks.size();
  if (bblocks == 0) return false;
  Remaining rem = Remaining::of(need, out, taken_);
  const std::uint32_t base = topology_.block_sizes.empty() ? static_cast<std::uint32_t>(blocks.front().nodes.size())
                                                           : topology_.block_sizes.front();
  // Enabled levels: BlockSizes as powers of two of the base size (levels 0-4 when none are given).
  std::vector<std::uint32_t> levels;
  if (topology_.block_sizes.empty()) {
    levels = {0, 1, 2, 3, 4};
  } else {
    for (std::uint32_t size : topology_.block_sizes) {
      std::uint32_t level = 0;
      while ((base << level) < size) ++level;
      levels.push_back(level);
    }
  }
  // _get_block_level: the smallest enabled level with 2^level base blocks >= ceil(nodes / base).
  const std::uint32_t wanted = (static_cast<std::uint32_t>(std::max<std::int64_t>(rem.nodes, 1)) + base - 1) / base;
  std::uint32_t need_level = 0;
  while ((1U << need_level) < wanted) ++need_level;
  int level = -1;
  for (std::uint32_t l : levels) {
    if (l >= need_level && (level == -1 || l < static_cast<std::uint32_t>(level))) level = static_cast<int>(l);
  }
  const std::size_t per_block = level < 0 ? bblocks : (std::size_t{1} << level);
  const std::size_t block_count = (bblocks + per_block - 1) / per_block;

  // Usable nodes, CPUs and lowest weight per base block.
  std::vector<std::int64_t> bb_nodes(bblocks, 0);
  std::vector<std::uint64_t> bb_cpus(bblocks, 0);
  std::vector<std::uint32_t> bb_lowest(bblocks, kInfinite);
  auto block_of = [&](NodeIndex n) { return static_cast<std::size_t>(topology_.block_of_node[n]); };
  for (const UsableNode& u : usable) {
    const std::size_t b = block_of(u.node);
    ++bb_nodes[b];
    bb_cpus[b] += cpus_of_[u.node];
    bb_lowest[b] = std::min(bb_lowest[b], u.weight);
  }
  // One block at that level: sufficient, lowest weight, then fewest available nodes; ties to the later block.
  int chosen = -1;
  std::int64_t chosen_nodes = 0;
  std::uint32_t chosen_weight = kInfinite;
  for (std::size_t k = 0; k < block_count; ++k) {
    std::int64_t nodes = 0;
    std::uint64_t cpus = 0;
    std::uint32_t lowest = kInfinite;
    for (std::size_t b = k * per_block; b < std::min(bblocks, (k + 1) * per_block); ++b) {
      nodes += bb_nodes[b];
      cpus += bb_cpus[b];
      lowest = std::min(lowest, bb_lowest[b]);
    }
    if (nodes < rem.nodes || static_cast<std::int64_t>(cpus) < rem.cpus) continue;
    if (chosen == -1 || lowest < chosen_weight || (lowest == chosen_weight && nodes <= chosen_nodes)) {
      chosen = static_cast<int>(k);
      chosen_nodes = nodes;
      chosen_weight = lowest;
    }
  }
  if (chosen == -1) return false;
  const std::size_t first = static_cast<std::size_t>(chosen) * per_block;
  const std::size_t last = std::min(bblocks, first + per_block);

  // Best nodes inside the block by weight groups, as in the tree plugin; lower groups are required.
  auto in_block = [&](NodeIndex n) { return block_of(n) >= first && block_of(n) < last; };
  std::int64_t best_nodes = 0;
  std::int64_t best_cpus = 0;
  std::vector<NodeIndex> required;
  for (std::uint32_t w : weight_groups(usable)) {
    if (best_nodes >= rem.nodes && best_cpus >= rem.cpus) break;
    if (best_nodes > 0) {
      required.clear();
      for (const UsableNode& u : usable) {
        if (u.node < in_best_.size() && in_best_[u.node]) required.push_back(u.node);
      }
    }
    for (const UsableNode& u : usable) {
      if (u.weight != w || !in_block(u.node)) continue;
      in_best_[u.node] = 1;
      ++best_nodes;
      best_cpus += cpus_of_[u.node];
    }
  }
  if (best_nodes < rem.nodes || best_cpus < rem.cpus) return false;
  for (NodeIndex n : required) {
    if (rem.max_nodes <= 0) break;
    rem.take(n, cpus_of_[n]);
  }
  // Base blocks: those holding required nodes first, then the fewest that cover the rest (a block that holds
  // the remainder with the fewest nodes, else the one with the most), nodes within in index order.
  std::vector<std::uint8_t> used(bblocks, 0);
  auto available = [&](std::size_t b) {
    std::int64_t c = 0;
    for (NodeIndex n : blocks[b].nodes) {
      if (n < in_best_.size() && in_best_[n] && !taken_[n]) ++c;
    }
    return c;
  };
  auto fill = [&](std::size_t b) {
    used[b] = 1;
    for (NodeIndex n : blocks[b].nodes) {
      if (rem.done() || rem.max_nodes <= 0) break;
      if (n < in_best_.size() && in_best_[n] && !taken_[n]) rem.take(n, cpus_of_[n]);
    }
  };
  for (std::size_t b = first; b < last; ++b) {
    for (NodeIndex n : blocks[b].nodes) {
      if (n < taken_.size() && taken_[n]) {
        used[b] = 1;
        break;
      }
    }
    if (used[b] && !rem.done()) fill(b);
  }
  while (!rem.done() && rem.max_nodes > 0) {
    int best = -1;
    bool best_fit = false;
    std::int64_t best_count = 0;
    for (std::size_t b = first; b < last; ++b) {
      if (used[b]) continue;
      const std::int64_t c = available(b);
      if (c == 0) continue;
      const bool fit = c >= rem.nodes;
      if (best == -1 || (fit && !best_fit) || (!fit && !best_fit && c >= best_count) ||
          (fit && best_fit && c <= best_count)) {
        best = static_cast<int>(b);
        best_fit = fit;
        best_count = c;
      }
    }
    if (best == -1) break;
    fill(static_cast<std::size_t>(best));
  }
  for (std::size_t b = first; b < last; ++b) {
    for (NodeIndex n : blocks[b].nodes) {
      if (n < taken_.size() && taken_[n]) {
        ++leaves_used;
        break;
      }
    }
  }
  return rem.done();
}

}  // namespace gputwin
