// The fault generator (fault_process.hpp): per-class superposed Poisson processes or per-component Weibull
// clocks, merged by time, with lemon weights, group (switch/rack) faults and out-of-service suppression.
#include "faults/fault_process.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include "faults/fault_error.hpp"

namespace gputwin {
namespace {

constexpr double kSecondsPerHour = 3600;

// Seconds since the epoch as SimTime, or kNever when beyond any horizon (or not finite).
SimTime clamped_time(double seconds) {
  if (!(seconds < to_seconds_f(kNever))) return kNever;
  return from_seconds_f(seconds);
}

// Gamma(shape a, scale 1) by Marsaglia and Tsang (ACM TOMS 26(3), 2000), from the portable uniform and normal
// of Rng; a < 1 uses Gamma(a + 1) x U^(1/a).
double gamma_draw(Rng& rng, double a) {
  if (a < 1) {
    double u = rng.uniform();
    while (u <= 0) u = rng.uniform();
    return gamma_draw(rng, a + 1) * std::pow(u, 1.0 / a);
  }
  const double d = a - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = rng.uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (u > 0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

bool node_attached(ComponentKind kind) {
  return kind != ComponentKind::kSwitch && kind != ComponentKind::kRack;
}

// Hardware on a node: a lemon node's components weigh `rate_multiplier`. Software faults (the job's stack) and
// switch/rack faults do not depend on the node's hardware.
bool lemon_weighted(ComponentKind kind) {
  return kind == ComponentKind::kGpu || kind == ComponentKind::kNvlink || kind == ComponentKind::kNicLink ||
         kind == ComponentKind::kNode;
}

void check_groups(const std::vector<std::vector<std::uint32_t>>& groups, std::uint32_t nodes, const char* field) {
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::uint32_t n : groups[g])
      if (n >= nodes)
        throw FaultConfigError(std::string(field) + "[" + std::to_string(g) + "]",
                               "node " + std::to_string(n) + " is outside 0.." + std::to_string(nodes - 1));
}

}  // namespace

std::vector<std::vector<std::uint32_t>> contiguous_groups(std::uint32_t nodes, std::uint32_t group_size) {
  std::vector<std::vector<std::uint32_t>> groups;
  if (group_size == 0) return groups;
  for (std::uint32_t first = 0; first < nodes; first += group_size) {
    auto& g = groups.emplace_back();
    for (std::uint32_t n = first; n < std::min(nodes, first + group_size); ++n) g.push_back(n);
  }
  return groups;
}

FaultProcess::FaultProcess(FaultProfile profile, ClusterShape cluster, FaultProcessConfig config)
    : profile_(std::move(profile)), cluster_(std::move(cluster)), config_(std::move(config)) {
  const std::uint32_t n = cluster_.nodes;
  if (n == 0) throw FaultConfigError("cluster.nodes", "must be positive");
  if (static_cast<std::uint64_t>(n) * std::max({cluster_.gpus_per_node, cluster_.links_per_node, 1u}) >= kNoIndex)
    throw FaultConfigError("cluster", "more than 2^32 - 1 GPUs or links");
  check_groups(cluster_.switch_groups, n, "cluster.switch_groups");
  check_groups(cluster_.rack_groups, n, "cluster.rack_groups");
  const double k = config_.weibull_shape;
  if (config_.distribution == InterFailure::kWeibull && !(k > 0 && std::isfinite(k)))
    throw FaultConfigError("weibull_shape", "must be a positive number, got " + std::to_string(k));
  const LemonNodes& lemon = config_.lemons;
  if (!(lemon.rate_multiplier >= 0 && std::isfinite(lemon.rate_multiplier)))
    throw FaultConfigError("lemons.rate_multiplier", "must be a non-negative number");
  if (!(lemon.fraction >= 0 && lemon.fraction <= 1)) throw FaultConfigError("lemons.fraction", "must be in [0, 1]");
  if (lemon.fraction > 0 && !lemon.nodes.empty())
    throw FaultConfigError("lemons", "give lemon nodes or a fraction, not both");
  std::set<std::string> names;
  for (std::size_t i = 0; i < profile_.classes.size(); ++i) {
    const FaultClass& c = profile_.classes[i];
    const std::string field = "profile.classes[" + std::to_string(i) + "]";
    if (!(c.rate_per_component_hour >= 0 && std::isfinite(c.rate_per_component_hour)))
      throw FaultConfigError(field + ".rate_per_component_hour", "must be a non-negative number");
    if (!names.insert(c.name).second)
      throw FaultConfigError(field + ".name", "'" + c.name + "' is used twice (each class names a random stream)");
  }

  // Lemon nodes: explicit, or a fraction drawn by a partial Fisher-Yates shuffle from their own stream.
  lemon_flag_.assign(n, 0);
  if (!lemon.nodes.empty()) {
    for (std::uint32_t node : lemon.nodes) {
      if (node >= n)
        throw FaultConfigError("lemons.nodes",
                               "node " + std::to_string(node) + " is outside 0.." + std::to_string(n - 1));
      lemon_flag_[node] = 1;
    }
  } else if (lemon.fraction > 0) {
    const auto count = static_cast<std::uint32_t>(std::llround(lemon.fraction * n));
    std::vector<std::uint32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0u);
    Rng rng = Rng::stream(config_.seed, "faults/lemons");
    for (std::uint32_t i = 0; i < count; ++i) {
      const auto j = static_cast<std::uint32_t>(rng.uniform_int(i, n - 1));
      std::swap(ids[i], ids[j]);
      lemon_flag_[ids[i]] = 1;
    }
  }
  for (std::uint32_t node = 0; node < n; ++node) (lemon_flag_[node] ? lemons_ : normals_).push_back(node);
  const double lemons = static_cast<double>(lemons_.size());
  const double m = lemons_.empty() ? 1.0 : lemon.rate_multiplier;
  weight_base_ = lemon.preserve_fleet_rate && lemons > 0 ? n / (n - lemons + lemons * m) : 1.0;
  weight_lemon_ = m * weight_base_;

  node_ids_.resize(n);
  std::iota(node_ids_.begin(), node_ids_.end(), 0u);
  node_out_until_.assign(n, 0);
  gpu_out_until_.assign(static_cast<std::size_t>(n) * cluster_.gpus_per_node, 0);
  switch_out_until_.assign(cluster_.switch_groups.size(), 0);
  rack_out_until_.assign(cluster_.rack_groups.size(), 0);
  node_gone_.assign(n, 0);
  gpus_gone_on_node_.assign(n, 0);
  gpu_gone_.assign(gpu_out_until_.size(), 0);

  const double start_s = to_seconds_f(config_.start);
  const bool weibull = config_.distribution == InterFailure::kWeibull;
  const double gamma_1_1k = weibull ? std::tgamma(1.0 + 1.0 / k) : 1.0;
  classes_.reserve(profile_.classes.size());
  for (const FaultClass& fc : profile_.classes) {
    ClassState c{.kind = fc.component,
                 .per_node = 0,
                 .components = 0,
                 .lemon_weighted = lemon_weighted(fc.component) && !lemons_.empty(),
                 .weight_lemon_total = 0,
                 .weight_total = 0,
                 .rate_per_hour = fc.rate_per_component_hour,
                 .rng = Rng::stream(config_.seed, "faults/" + fc.name),
                 .next_s = 0,
                 .heap = {},
                 .scale_normal_h = 0,
                 .scale_lemon_h = 0};
    switch (fc.component) {
      case ComponentKind::kGpu:
      case ComponentKind::kNvlink:
        c.per_node = cluster_.gpus_per_node;
        break;
      case ComponentKind::kNicLink:
        c.per_node = cluster_.links_per_node;
        break;
      case ComponentKind::kNode:
      case ComponentKind::kSoftware:
        c.per_node = 1;
        break;
      case ComponentKind::kSwitch:
      case ComponentKind::kRack:
        c.per_node = 0;
        break;
    }
    c.components = node_attached(fc.component)              ? static_cast<std::uint64_t>(n) * c.per_node
                   : fc.component == ComponentKind::kSwitch ? cluster_.switch_groups.size()
                                                            : cluster_.rack_groups.size();
    if (c.lemon_weighted) {
      c.weight_lemon_total = lemons * c.per_node * weight_lemon_;
      c.weight_total = c.weight_lemon_total + static_cast<double>(normals_.size()) * c.per_node * weight_base_;
    } else {
      c.weight_total = static_cast<double>(c.components);
    }
    const double base_weight = c.lemon_weighted ? weight_base_ : 1.0;
    if (weibull) {
      const double rate_normal = c.rate_per_hour * base_weight;
      const double rate_lemon = c.rate_per_hour * weight_lemon_;
      c.scale_normal_h = rate_normal > 0 ? 1.0 / rate_normal / gamma_1_1k : 0;
      c.scale_lemon_h = rate_lemon > 0 ? 1.0 / rate_lemon / gamma_1_1k : 0;
      classes_.push_back(std::move(c));
      ClassState& placed = classes_.back();
      placed.heap.reserve(placed.components);
      const bool stationary = config_.weibull_start == WeibullStart::kStationary;
      for (std::uint64_t i = 0; i < placed.components; ++i)
        arm(placed, static_cast<std::uint32_t>(i), config_.start, stationary);
    } else {
      const double per_hour = c.rate_per_hour * c.weight_total;
      c.next_s = per_hour > 0 ? start_s + c.rng.exponential(kSecondsPerHour / per_hour) : HUGE_VAL;
      classes_.push_back(std::move(c));
    }
  }
}

void FaultProcess::arm(ClassState& c, std::uint32_t component, SimTime from, bool stationary) {
  const bool lemon = c.lemon_weighted && lemon_flag_[component / c.per_node];
  const double scale_h = lemon ? c.scale_lemon_h : c.scale_normal_h;
  if (scale_h <= 0 || from >= kNever) return;  // never fails
  const double k = config_.weibull_shape;
  double draw_h = 0;
  if (stationary) {
    // Forward-recurrence time of a stationary Weibull renewal process: P(R > x) = Q(1/k, (x/scale)^k), i.e.
    // R = scale * Z^(1/k) with Z ~ Gamma(1/k).
    draw_h = scale_h * std::pow(gamma_draw(c.rng, 1.0 / k), 1.0 / k);
  } else {
    // Inversion: F(x) = 1 - exp(-(x/scale)^k)  =>  x = scale * (-ln(1 - u))^(1/k).
    draw_h = scale_h * std::pow(-std::log1p(-c.rng.uniform()), 1.0 / k);
  }
  c.heap.push_back({clamped_time(to_seconds_f(from) + draw_h * kSecondsPerHour), component});
  std::push_heap(c.heap.begin(), c.heap.end(), [](const Clock& a, const Clock& b) {
    return a.time != b.time ? a.time > b.time : a.component > b.component;
  });
}

SimTime FaultProcess::class_next_time(const ClassState& c) const {
  if (config_.distribution == InterFailure::kWeibull) return c.heap.empty() ? kNever : c.heap.front().time;
  if (c.gone_weight >= c.weight_total * (1 - 1e-12)) return kNever;  // nothing left to strike: thinning would spin
  return clamped_time(c.next_s);
}

double FaultProcess::weight_of_node(const ClassState& c, std::uint32_t node) const {
  return c.lemon_weighted ? (lemon_flag_[node] ? weight_lemon_ : weight_base_) : 1.0;
}

void FaultProcess::retire_node(std::uint32_t node) {
  if (node_gone_[node]) return;
  node_gone_[node] = 1;
  for (ClassState& c : classes_) {
    if (!node_attached(c.kind)) continue;
    const bool per_gpu = c.kind == ComponentKind::kGpu || c.kind == ComponentKind::kNvlink;
    const std::uint32_t left = per_gpu ? c.per_node - gpus_gone_on_node_[node] : c.per_node;
    c.gone_weight += left * weight_of_node(c, node);
  }
}

void FaultProcess::retire_gpu(std::uint32_t node, std::uint32_t gpu) {
  const std::size_t index = static_cast<std::size_t>(node) * cluster_.gpus_per_node + gpu;
  if (node_gone_[node] || gpu_gone_[index]) return;
  gpu_gone_[index] = 1;
  ++gpus_gone_on_node_[node];
  for (ClassState& c : classes_)
    if (c.kind == ComponentKind::kGpu || c.kind == ComponentKind::kNvlink) c.gone_weight += weight_of_node(c, node);
}

std::uint32_t FaultProcess::pick_component(ClassState& c) {
  if (c.lemon_weighted) {
    const double u = c.rng.uniform() * c.weight_total;
    const std::vector<std::uint32_t>& pool = u < c.weight_lemon_total || normals_.empty() ? lemons_ : normals_;
    const std::uint32_t node = pool[static_cast<std::size_t>(c.rng.uniform_int(0, std::int64_t(pool.size()) - 1))];
    const auto sub = c.per_node > 1 ? static_cast<std::uint32_t>(c.rng.uniform_int(0, c.per_node - 1)) : 0u;
    return node * c.per_node + sub;
  }
  return static_cast<std::uint32_t>(c.rng.uniform_int(0, static_cast<std::int64_t>(c.components) - 1));
}

void FaultProcess::fill_event(std::uint32_t class_index, std::uint32_t component, SimTime t, FaultEvent& e) const {
  const FaultClass& fc = profile_.classes[class_index];
  const ClassState& c = classes_[class_index];
  e = FaultEvent{};
  e.time = t;
  e.class_index = class_index;
  e.component = c.kind;
  e.component_index = component;
  switch (c.kind) {
    case ComponentKind::kGpu:
    case ComponentKind::kNvlink:
      e.node = component / c.per_node;
      e.gpu = component % c.per_node;
      break;
    case ComponentKind::kNicLink:
      e.node = component / c.per_node;
      e.link = component % c.per_node;
      break;
    case ComponentKind::kNode:
    case ComponentKind::kSoftware:
      e.node = component;
      break;
    case ComponentKind::kSwitch:
    case ComponentKind::kRack:
      e.group = component;
      break;
  }
  e.xid = fc.xid;
  e.effect = fc.effect;
  e.symptom = fc.symptom;
}

SimTime FaultProcess::out_until(const FaultEvent& e) const {
  if (e.component == ComponentKind::kSwitch) return switch_out_until_[e.group];
  if (e.component == ComponentKind::kRack) return rack_out_until_[e.group];
  SimTime until = node_out_until_[e.node];
  if (e.gpu != kNoIndex)
    until = std::max(until, gpu_out_until_[static_cast<std::size_t>(e.node) * cluster_.gpus_per_node + e.gpu]);
  return until;
}

void FaultProcess::rearm_pending(SimTime from) {
  if (!pending_.valid) return;
  pending_.valid = false;
  arm(classes_[pending_.class_index], pending_.component, from, false);
}

std::optional<FaultEvent> FaultProcess::next() {
  rearm_pending(pending_.time);  // the last fault left its component in service: renew at the fault time
  const bool weibull = config_.distribution == InterFailure::kWeibull;
  const auto later = [](const Clock& a, const Clock& b) {
    return a.time != b.time ? a.time > b.time : a.component > b.component;
  };
  for (;;) {
    std::size_t best = classes_.size();
    SimTime best_time = kNever;
    for (std::size_t i = 0; i < classes_.size(); ++i) {
      const SimTime t = class_next_time(classes_[i]);
      if (t < best_time) {
        best_time = t;
        best = i;
      }
    }
    if (best == classes_.size()) return std::nullopt;
    ClassState& c = classes_[best];
    std::uint32_t component = 0;
    if (weibull) {
      std::pop_heap(c.heap.begin(), c.heap.end(), later);
      component = c.heap.back().component;
      c.heap.pop_back();
    } else {
      component = pick_component(c);
      c.next_s += c.rng.exponential(kSecondsPerHour / (c.rate_per_hour * c.weight_total));
    }
    FaultEvent e;
    fill_event(static_cast<std::uint32_t>(best), component, best_time, e);
    const SimTime until = out_until(e);
    if (until > best_time) {  // the component is out of service: no fault; its clock restarts at its return
      ++suppressed_;
      if (weibull) arm(c, component, until, false);
      continue;
    }
    if (weibull) pending_ = {true, static_cast<std::uint32_t>(best), component, best_time};
    return e;
  }
}

void FaultProcess::set_out_of_service(const FaultEvent& e, SimTime return_time) {
  const auto extend = [return_time](SimTime& until) { until = std::max(until, return_time); };
  const bool for_good = return_time >= kNever;
  if (e.component == ComponentKind::kSwitch || e.component == ComponentKind::kRack) {
    SimTime& until = e.component == ComponentKind::kSwitch ? switch_out_until_[e.group] : rack_out_until_[e.group];
    if (for_good && until < kNever) {  // the group is gone: every class striking groups of this kind loses it
      for (ClassState& c : classes_)
        if (c.kind == e.component) c.gone_weight += 1;
    }
    extend(until);
    for (std::uint32_t node : affected_nodes(e)) {
      extend(node_out_until_[node]);
      if (for_good) retire_node(node);
    }
  } else if (e.gpu != kNoIndex && e.effect == FaultEffect::kResetGpu) {
    extend(gpu_out_until_[static_cast<std::size_t>(e.node) * cluster_.gpus_per_node + e.gpu]);
    if (for_good) retire_gpu(e.node, e.gpu);
  } else {
    extend(node_out_until_[e.node]);
    if (for_good) retire_node(e.node);
  }
  if (pending_.valid && pending_.class_index == e.class_index && pending_.component == e.component_index &&
      pending_.time == e.time)
    rearm_pending(return_time);
}

void FaultProcess::hold(const FaultEvent& e) {
  if (pending_.valid && pending_.class_index == e.class_index && pending_.component == e.component_index &&
      pending_.time == e.time)
    pending_.valid = false;  // not rearmed at the fault time by next()
}

void FaultProcess::renew(const FaultEvent& e, SimTime return_time) {
  if (config_.distribution != InterFailure::kWeibull) return;
  arm(classes_[e.class_index], e.component_index, return_time, false);
}

void FaultProcess::unget(const FaultEvent& e) {
  if (config_.distribution != InterFailure::kWeibull) return;
  hold(e);
  ClassState& c = classes_[e.class_index];
  c.heap.push_back({e.time, e.component_index});
  std::push_heap(c.heap.begin(), c.heap.end(), [](const Clock& a, const Clock& b) {
    return a.time != b.time ? a.time > b.time : a.component > b.component;
  });
}

bool FaultProcess::node_out_of_service(std::uint32_t node, SimTime t) const {
  return node < node_out_until_.size() && node_out_until_[node] > t;
}

std::span<const std::uint32_t> FaultProcess::affected_nodes(const FaultEvent& e) const {
  if (e.component == ComponentKind::kSwitch) return cluster_.switch_groups[e.group];
  if (e.component == ComponentKind::kRack) return cluster_.rack_groups[e.group];
  return std::span<const std::uint32_t>(node_ids_).subspan(e.node, 1);
}

const FaultClass& FaultProcess::fault_class(const FaultEvent& event) const {
  return profile_.classes[event.class_index];
}

bool FaultProcess::is_lemon(std::uint32_t node) const {
  return node < lemon_flag_.size() && lemon_flag_[node];
}

std::uint64_t FaultProcess::component_count(ComponentKind kind) const {
  const std::uint64_t n = cluster_.nodes;
  switch (kind) {
    case ComponentKind::kGpu:
    case ComponentKind::kNvlink:
      return n * cluster_.gpus_per_node;
    case ComponentKind::kNicLink:
      return n * cluster_.links_per_node;
    case ComponentKind::kNode:
    case ComponentKind::kSoftware:
      return n;
    case ComponentKind::kSwitch:
      return cluster_.switch_groups.size();
    case ComponentKind::kRack:
      return cluster_.rack_groups.size();
  }
  return 0;
}

double FaultProcess::class_faults_per_hour(std::size_t class_index) const {
  const ClassState& c = classes_.at(class_index);
  return c.rate_per_hour * c.weight_total;
}

double FaultProcess::expected_faults_per_hour() const {
  double total = 0;
  for (std::size_t i = 0; i < classes_.size(); ++i) total += class_faults_per_hour(i);
  return total;
}

}  // namespace gputwin
