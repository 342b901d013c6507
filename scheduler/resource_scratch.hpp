// A scratch copy of the cluster's free resources for "what if these jobs had ended" questions (backfill's
// will-run, EASY's shadow time). Only touched nodes are restored, so a question costs what it changes, and a
// fit counter answers "would the request fit now?" exactly in O(1) as resources are added back.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/cluster_state.hpp"
#include "scheduler/node_selection.hpp"

namespace gputwin {

/// Free resources that can diverge from the live cluster and be reset cheaply.
class ResourceScratch {
 public:
  /// Scratch over `state` (kept by reference), initially equal to it.
  explicit ResourceScratch(const ClusterState& state);

  /// Restores every touched node from the live cluster.
  void reset();
  /// Gives the resources of `allocation` back (as if that job had ended), updating the fit counter.
  void add_back(std::span<const NodeAllocation> allocation);
  /// Undoes add_back(allocation) (no fit counter: not while tracking).
  void take_back(std::span<const NodeAllocation> allocation);
  /// The scratch resources, for NodeSelector.
  [[nodiscard]] FreeResources view() const;
  /// The scratch resources with a bitmap of the nodes that may be usable for `request` (the live cluster's
  /// candidates plus every node changed here), so selection skips the rest.
  [[nodiscard]] FreeResources view_for(const SelectRequest& request);

  /// Starts tracking whether `request` fits on the nodes of bitmap `nodes` (kept by pointer until reset).
  /// Visits only the nodes that could be usable now (enough free GPUs), so it is cheap on a busy cluster.
  void track(const SelectRequest& request, const NodeSelector& selector, const std::uint64_t* nodes);
  /// True if the tracked request fits the scratch resources now (exact: the selector would succeed).
  [[nodiscard]] bool fits() const;

 private:
  std::int64_t contribution(NodeIndex n) const;
  void touch(NodeIndex n);
  void resync(NodeIndex n);
  /// Re-reads an untouched node whose live resources changed since it was last copied.
  void refresh(NodeIndex n) {
    if (!touched_[n] && version_[n] != state_.node_version(n)) resync(n);
  }

  const ClusterState& state_;
  const NodeSelector* selector_ = nullptr;
  std::vector<std::uint32_t> cpus_, gpus_, jobs_;
  std::vector<std::uint64_t> mem_;
  std::vector<std::uint64_t> superset_;
  // What view_for did since the live cluster last changed (see there); reset() clears view_valid_.
  bool view_valid_ = false;
  std::uint64_t view_updates_ = 0;  // the live cluster's job_update_count then
  bool view_all_fresh_ = false;     // every node refreshed (an exclusive request's view)
  bool superset_valid_ = false;     // superset_ is for superset_gpus_ GPUs per node and superset_touched_ nodes
  std::uint32_t superset_gpus_ = 0;
  std::size_t superset_touched_ = 0;
  std::vector<std::uint32_t> version_;
  std::vector<std::uint8_t> touched_;
  std::vector<NodeIndex> touched_list_;
  const std::uint64_t* tracked_ = nullptr;  // bitmap of the nodes that count for the tracked request
  SelectRequest request_;
  std::int64_t total_ = 0;  // usable nodes (fixed count) or usable CPUs (floating)
};

}  // namespace gputwin
