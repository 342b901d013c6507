// Named fault-rate profiles from measured fleets: each a list of fault classes (component kind, rate per
// component-hour, XID or cause, effect, symptom, share) with the source. Figures: gpu-domain.md 2.1 (Llama 3,
// arXiv 2407.21783 Table 5), 2.2 (Meta research clusters, arXiv 2410.21680), 1.3 (NCSA Delta, arXiv 2503.11901),
// 2.4 (Alibaba HPN, SIGCOMM'24). Where the source gives counts over a fleet, the class keeps the count and the
// rate is count / (components of its kind in that fleet x hours) [D]; where it gives rates, the rate is kept.
//
//   auto p = find_fault_profile("llama3");  // 18 classes, 419 faults over 16,384 GPUs x 54 days
//   double per_gpu_hour = p->classes[0].rate_per_component_hour;  // faulty GPU: 148 / (16,384 x 1,296 h)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faults/fault_types.hpp"

namespace gputwin {

/// One class of faults in a profile.
struct FaultClass {
  std::string name{};                              ///< Stable id (snake_case); names the class's random stream.
  std::string cause{};                             ///< The cause as the source words it ("GPU HBM3 memory").
  ComponentKind component = ComponentKind::kNode;  ///< What fails; the rate is per component of this kind.
  double rate_per_component_hour = 0;              ///< Faults per component of kind `component` per hour.
  std::uint32_t xid = 0;                           ///< The XID it is reported as (0: none, or no single XID).
  FaultEffect effect = FaultEffect::kNone;         ///< What the simulator does (from the XID catalogue when xid != 0).
  Symptom symptom = Symptom::kNone;                ///< How it shows itself (from the XID catalogue when xid != 0).
  std::optional<double> share{};  ///< Fraction of the profile's faults in the source fleet (counts or rates).
  std::optional<std::uint32_t> source_count{};  ///< Faults counted in the source fleet, if the source counts.
  std::optional<double> printed_share_pct{};    ///< The share the source prints, if it prints one (may disagree).
  std::string note{};                           ///< How the class was mapped (XID, effect), where that is our reading.
};

/// The fleet a profile's counts were observed on.
struct ObservedFleet {
  std::uint32_t gpus = 0;           ///< GPUs observed.
  std::uint32_t gpus_per_node = 0;  ///< GPUs per node (0: unknown; no per-node classes then).
  std::uint32_t nics_per_node = 0;  ///< Scale-out NICs per node (0: unknown).
  double hours = 0;                 ///< Observation window, hours.
  double gpu_hours = 0;             ///< GPU-hours as the source states them (may round gpus x hours).
};

/// A named set of fault classes with its source.
struct FaultProfile {
  std::string name{};                 ///< Profile id ("llama3", "meta-rsc", ...).
  std::string description{};          ///< One line: fleet, window, what is counted.
  std::string source{};               ///< Reference section and primary source.
  ObservedFleet fleet{};              ///< The fleet its counts come from (zeros for rate-only sources).
  std::vector<FaultClass> classes{};  ///< The fault classes.
};

/// All built-in profiles: llama3, meta-rsc, meta-rsc-infra, meta-rsc-2, delta-a100, delta-h100, alibaba-hpn.
std::span<const FaultProfile> fault_profiles();

/// The built-in profile named `name` (exact, lower case), if any.
std::optional<FaultProfile> find_fault_profile(std::string_view name);

/// Comma-separated list of built-in profile names, for error messages.
std::string fault_profile_names();

/// Component-hours of `kind` in the profile's observed fleet (GPU-hours as stated for GPU and NVLink kinds);
/// 0 when the fleet does not say.
double source_component_hours(const ObservedFleet& fleet, ComponentKind kind);

/// Faults per hour the profile predicts for its own observed fleet: sum of rate x components (per kind).
double source_faults_per_hour(const FaultProfile& profile);

/// The classes of several profiles in one (e.g. "llama3" + "alibaba-hpn" for switch faults). Class names must
/// stay distinct (each names a random stream); FaultProcess rejects duplicates. The fleet is the first's.
FaultProfile merge_profiles(std::string name, std::span<const FaultProfile> profiles);

}  // namespace gputwin
