// A deterministic, lazy generator of the fault events of one cluster: given the cluster's components (nodes, GPUs
// and NIC links per node, switch and rack groups), a fault profile (fault_profiles.hpp) and a distribution, it
// yields the next fault in time order. Nothing runs per node or per unit of time:
//
// - Exponential inter-failure times: each class is one Poisson process of total rate (rate x summed component
//   weights) by superposition; a fault's component is then drawn in proportion to its weight (lemon nodes weigh
//   `rate_multiplier`): O(1) per fault.
// - Weibull (shape k, scale mean / Gamma(1 + 1/k), so the mean matches the rate; gpu-domain.md 2.6: k ~ 0.7-0.8
//   for HPC nodes): one clock per (class, component) in a per-class min-heap: O(log components) per fault.
//   By default every clock starts in equilibrium (the first interval is the stationary forward-recurrence time,
//   scale x Z^(1/k) with Z ~ Gamma(1/k)), so a fleet's expected fault count over any window is rate x time, as
//   for the exponential; WeibullStart::kNew starts every component new at `start` (infant mortality when k < 1).
//
// The classes (a handful) are merged by time with a scan. Each class draws from its own random stream,
// "faults/<class name>", so adding or removing a class never shifts another's faults; lemon nodes drawn by
// fraction come from "faults/lemons". The same seed, profile, cluster and calls give the same sequence.
//
// Renewal semantics. Each (class, component) pair is a renewal process whose clock restarts when the component
// returns to service. A component is in service unless the caller declares otherwise: after next() returns a
// fault, set_out_of_service(event, return_time) takes the struck scope out until return_time (the GPU for a
// GPU reset; the node, all its GPUs, links and software for anything else; a switch or rack and all its member
// nodes for a group fault). A fault that would fall on an out-of-service component is suppressed, and that
// clock restarts at the return time. For the exponential this is exact thinning (memoryless: the rate is just
// not counted while the component is out). For the Weibull, the struck clock restarts at return_time if
// set_out_of_service is called before the next next(), else at the fault time (a fault the component survives,
// e.g. kRestartApp); other clocks of an out node restart at its return when they next come due. A caller that
// learns the return time only later calls hold(event) before the next next() and renew(event, time) at the return.
//
//   FaultProcess faults(*find_fault_profile("llama3"), cluster, {.seed = 42});
//   for (auto f = faults.next(); f && f->time < horizon; f = faults.next()) {
//     for (std::uint32_t node : faults.affected_nodes(*f)) ...;
//     faults.set_out_of_service(*f, f->time + repair_time);
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "faults/fault_profiles.hpp"
#include "faults/fault_types.hpp"
#include "engine/rng.hpp"
#include "engine/sim_time.hpp"

namespace gputwin {

/// "No such index" in a FaultEvent (no GPU for a node fault, no group for a single-node fault).
inline constexpr std::uint32_t kNoIndex = UINT32_MAX;

/// The components of a cluster, for fault generation.
struct ClusterShape {
  std::uint32_t nodes = 0;           ///< Nodes, numbered 0..nodes-1.
  std::uint32_t gpus_per_node = 8;   ///< GPUs (and NVLink port sets) per node.
  std::uint32_t links_per_node = 8;  ///< Scale-out NIC links per node (8 x 400G on HGX H100, gpu-domain.md 4.1).
  std::vector<std::vector<std::uint32_t>> switch_groups{};  ///< Member nodes of each switch (its fault takes all).
  std::vector<std::vector<std::uint32_t>> rack_groups{};    ///< Member nodes of each rack (its fault takes all).
};

/// Groups of `group_size` consecutive nodes (the last may be smaller): racks of 2, leaf switches of 32, ...
std::vector<std::vector<std::uint32_t>> contiguous_groups(std::uint32_t nodes, std::uint32_t group_size);

/// The inter-failure time distribution of every (class, component) clock.
enum class InterFailure : std::uint8_t {
  kExponential,  ///< Memoryless; the industry's series-system model (gpu-domain.md 2.6).
  kWeibull,      ///< Weibull with shape `weibull_shape`, scale set so the mean is 1 / rate.
};

/// How Weibull clocks start.
enum class WeibullStart : std::uint8_t {
  kStationary,  ///< In equilibrium: expected faults over any window = rate x time (the default).
  kNew,         ///< Every component new at `start` (burn-in; more early faults when k < 1).
};

/// Lemon nodes: nodes whose hardware fails more often (gpu-domain.md 2.2 Meta's lemon detector, 2.6).
struct LemonNodes {
  std::vector<std::uint32_t> nodes{};  ///< Explicit lemon nodes (or use `fraction`, not both).
  double fraction = 0;                 ///< Fraction of nodes drawn as lemons from stream "faults/lemons".
  double rate_multiplier = 1;          ///< Hazard multiplier of a lemon (AIReSim's illustrative value: 5).
  bool preserve_fleet_rate = false;    ///< Scale all weights so the fleet's mean rate stays the profile's (2.6).
};

/// Settings of a fault process.
struct FaultProcessConfig {
  std::uint64_t seed = 1;                                  ///< Scenario seed; streams derive from it.
  InterFailure distribution = InterFailure::kExponential;  ///< Inter-failure distribution.
  double weibull_shape = 0.8;                              ///< Weibull shape k (gpu-domain.md 2.6: 0.7-0.8).
  WeibullStart weibull_start = WeibullStart::kStationary;  ///< How Weibull clocks start.
  LemonNodes lemons{};                                     ///< Lemon nodes and their multiplier.
  SimTime start = 0;                                       ///< Time the process starts.
};

/// One fault.
struct FaultEvent {
  SimTime time = kNever;                           ///< When it happens.
  std::uint32_t class_index = kNoIndex;            ///< Index of its class in the profile.
  ComponentKind component = ComponentKind::kNode;  ///< Kind of the struck component.
  std::uint32_t component_index = kNoIndex;        ///< Index of the struck component among those of its kind.
  std::uint32_t node = kNoIndex;                   ///< Struck node (kNoIndex for switch and rack faults).
  std::uint32_t gpu = kNoIndex;                    ///< GPU index within the node for GPU/NVLink faults.
  std::uint32_t link = kNoIndex;                   ///< NIC link index within the node for NIC-link faults.
  std::uint32_t group = kNoIndex;                  ///< Switch or rack index for group faults.
  std::uint32_t xid = 0;                           ///< XID it is reported as (0: none).
  FaultEffect effect = FaultEffect::kNone;         ///< What the simulator does.
  Symptom symptom = Symptom::kNone;                ///< How it shows itself.
};

/// The lazy fault generator of one cluster (see the file comment for the semantics).
class FaultProcess {
 public:
  /// Validates and sets up. Throws FaultConfigError for a bad profile, cluster or config.
  FaultProcess(FaultProfile profile, ClusterShape cluster, FaultProcessConfig config);

  /// The next fault in time order, or nullopt if no class can ever fire. Never throws.
  std::optional<FaultEvent> next();
  /// Takes the fault's scope out of service until `return_time` (kNever: for good, and a class whose components
  /// are all gone stops); see the file comment.
  void set_out_of_service(const FaultEvent& event, SimTime return_time);
  /// The struck component of the fault next() just returned is out until a time not known yet: its clock is held
  /// (Weibull; no effect on the memoryless exponential) until renew(). Call before the next next().
  void hold(const FaultEvent& event);
  /// The held component of `event` is back in service at `return_time`: its clock restarts there (Weibull).
  void renew(const FaultEvent& event, SimTime return_time);
  /// Puts back the fault next() just returned, not yet happened (Weibull): the next next() returns it again, or an
  /// earlier one renew() armed since. The exponential's faults cannot be put back (renew() never changes them).
  void unget(const FaultEvent& event);
  /// Whether `node` is out of service at time `t` (by set_out_of_service).
  [[nodiscard]] bool node_out_of_service(std::uint32_t node, SimTime t) const;

  /// The nodes a fault takes down: the struck node, or every member of the struck switch or rack.
  [[nodiscard]] std::span<const std::uint32_t> affected_nodes(const FaultEvent& event) const;
  /// The class of a fault.
  [[nodiscard]] const FaultClass& fault_class(const FaultEvent& event) const;
  /// The profile in use.
  [[nodiscard]] const FaultProfile& profile() const { return profile_; }
  /// The cluster in use.
  [[nodiscard]] const ClusterShape& cluster() const { return cluster_; }

  /// Whether `node` is a lemon.
  [[nodiscard]] bool is_lemon(std::uint32_t node) const;
  /// The lemon nodes, in increasing order.
  [[nodiscard]] std::span<const std::uint32_t> lemon_nodes() const { return lemons_; }
  /// Components of `kind` in the cluster.
  [[nodiscard]] std::uint64_t component_count(ComponentKind kind) const;
  /// Expected faults per hour of class `class_index` with every component in service.
  [[nodiscard]] double class_faults_per_hour(std::size_t class_index) const;
  /// Expected faults per hour of all classes with every component in service.
  [[nodiscard]] double expected_faults_per_hour() const;
  /// Faults suppressed so far because their component was out of service.
  [[nodiscard]] std::uint64_t suppressed() const { return suppressed_; }

 private:
  struct Clock {
    SimTime time;
    std::uint32_t component;
  };
  struct ClassState {
    ComponentKind kind;
    std::uint32_t per_node;     // components per node for node-attached kinds; 0 for switch/rack
    std::uint64_t components;   // components of this kind
    bool lemon_weighted;        // hardware on a node: lemons weigh more
    double weight_lemon_total;  // summed weights of the lemon nodes' components
    double weight_total;        // summed weights of all components
    double rate_per_hour;       // per component of weight 1
    Rng rng;
    double next_s;            // exponential: absolute time of the next candidate, seconds
    std::vector<Clock> heap;  // Weibull: min-heap of clocks
    double scale_normal_h;    // Weibull scale of a weight-b component, hours
    double scale_lemon_h;     // Weibull scale of a lemon component, hours
    double gone_weight = 0;   // weight of components out for good (return kNever); all gone: the class stops
  };
  struct Pending {
    bool valid = false;
    std::uint32_t class_index = 0;
    std::uint32_t component = 0;
    SimTime time = 0;
  };

  SimTime class_next_time(const ClassState& c) const;
  void fill_event(std::uint32_t class_index, std::uint32_t component, SimTime t, FaultEvent& e) const;
  SimTime out_until(const FaultEvent& e) const;
  std::uint32_t pick_component(ClassState& c);
  void arm(ClassState& c, std::uint32_t component, SimTime from, bool stationary);
  void rearm_pending(SimTime from);
  double weight_of_node(const ClassState& c, std::uint32_t node) const;
  void retire_node(std::uint32_t node);
  void retire_gpu(std::uint32_t node, std::uint32_t gpu);

  FaultProfile profile_;
  ClusterShape cluster_;
  FaultProcessConfig config_;
  std::vector<ClassState> classes_;
  std::vector<std::uint32_t> lemons_;     // sorted
  std::vector<std::uint32_t> normals_;    // non-lemon nodes, sorted
  std::vector<std::uint8_t> lemon_flag_;  // per node
  std::vector<std::uint32_t> node_ids_;   // 0..nodes-1, for affected_nodes of single-node faults
  double weight_base_ = 1;                // weight of a normal node's component
  double weight_lemon_ = 1;               // weight of a lemon node's component
  std::vector<SimTime> node_out_until_;
  std::vector<SimTime> gpu_out_until_;
  std::vector<SimTime> switch_out_until_;
  std::vector<SimTime> rack_out_until_;
  std::vector<std::uint8_t> node_gone_;           // out for good
  std::vector<std::uint32_t> gpus_gone_on_node_;  // GPUs of the node out for good (node itself not gone)
  std::vector<std::uint8_t> gpu_gone_;
  Pending pending_;
  std::uint64_t suppressed_ = 0;
};

}  // namespace gputwin
