// Placement-aware job speed for SimWorld: the network a placement crosses (Slurm's topology tree as a fabric of
// NIC and switch links with oversubscription and per-switch latency, or one non-blocking switch without a
// topology), the job's communication profile (/performance/profiles) costed by the NCCL model on that path, and
// optionally contention between jobs that share links (gpu/contention.hpp). A job's speed is
// step(reference) / step(actual), the reference being the same job packed on the first nodes of an idle
// cluster; its trace run time is taken at the reference.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "gpu/comm_path.hpp"
#include "gpu/contention.hpp"
#include "gpu/gpu_telemetry.hpp"
#include "model/cluster_state.hpp"
#include "model/performance.hpp"
#include "sim/job_speed_model.hpp"

namespace gputwin {

/// The scale-out network as the speed model sees it: links per node (NIC up and down) and per switch (uplink and
/// downlink to its parent), routes along Slurm's switch tree.
class PlacementNetwork {
 public:
  /// The network of `cluster` (its topology tree; one non-blocking switch when it has none) with `config`'s
  /// oversubscription and latency.
  PlacementNetwork(const ClusterConfig& cluster, const NetworkConfig& config);

  /// The communication path of a job on `nodes` with `gpus_per_node` GPUs each: its share of the NICs, divided,
  /// when `oversubscribed`, by the oversubscription of the highest switch level it crosses (the static rule of
  /// gpu-domain.md 4.6, for runs without a contention model; with one, the links carry the oversubscription).
  [[nodiscard]] CommPath path(std::span<const NodeIndex> nodes, std::uint32_t gpus_per_node,
                              bool oversubscribed = true) const;
  /// The links, for a contention model.
  [[nodiscard]] const FlowNetwork& links() const { return net_; }
  /// A job's ring: one flow from each node to the next (nodes ordered by leaf), routed up to the lowest common
  /// switch and down.
  void ring_flows(std::span<const NodeIndex> nodes, std::vector<Flow>& out) const;
  /// Leaf switches a placement spans (1 for one node or without a topology).
  [[nodiscard]] std::uint32_t leaves(std::span<const NodeIndex> nodes) const;

 private:
  [[nodiscard]] int leaf(NodeIndex n) const;
  [[nodiscard]] int common_switch(std::span<const NodeIndex> nodes) const;

  const ClusterConfig& cluster_;
  NetworkConfig config_;
  std::vector<int> parent_;           // per switch (Slurm's table, plus a virtual root when none is given)
  std::vector<std::uint32_t> level_;  // per switch
  std::vector<int> leaf_of_node_;     // per node
  std::vector<double> nic_gbps_;      // per node: NICs x NCCL's per-NIC GB/s
  std::vector<double> uplink_left_;   // per switch: share of its uplink capacity left (degraded links)
  std::vector<LinkId> node_up_, node_down_, switch_up_, switch_down_;
  FlowNetwork net_;
};

/// JobSpeedModel over a PlacementNetwork and the scenario's profiles.
class PlacementSpeedModel final : public JobSpeedModel {
 public:
  /// Model for the jobs of `state` under `config` (kept by reference).
  PlacementSpeedModel(const ClusterState& state, const PerformanceConfig& config);
  ~PlacementSpeedModel() override;

  double start(JobIndex job, std::span<const NodeAllocation> allocation) override;
  void stop(JobIndex job) override;
  void take_changes(std::vector<std::pair<JobIndex, double>>& out) override;

  /// What each GPU of `job` does on `allocation` at the reference placement (its trace speed): compute share of
  /// a step and NVLink bytes per second; nullopt when no profile applies (telemetry then assumes pure compute).
  [[nodiscard]] std::optional<GpuLoad> reference_load(JobIndex job, std::span<const NodeAllocation> allocation);
  /// The network (for tests and reports).
  [[nodiscard]] const PlacementNetwork& network() const { return network_; }

 private:
  struct Running {
    const JobProfile* profile = nullptr;
    JobProfile resolved;  // the profile with dp filled in
    CommPath path;        // alone on the network
    CommPath reference;
    NcclOptions nccl;
    bool contended = false;
  };
  double speed(const Running& r, double rate_gbps) const;
  bool resolve(JobIndex job, std::span<const NodeAllocation> allocation, Running& r);

  const ClusterState& state_;
  const PerformanceConfig& config_;
  PlacementNetwork network_;
  std::unique_ptr<ContentionModel> contention_;
  std::unordered_map<JobIndex, Running> running_;
  std::vector<std::pair<JobIndex, double>> changes_;
  std::vector<NodeIndex> nodes_;
  std::vector<Flow> flows_;
};

}  // namespace gputwin
