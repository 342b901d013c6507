// Synthetic workload profiles (parameters fitted to public GPU traces) and the generator described in
// synthetic.hpp.
#include "model/synthetic.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "engine/rng.hpp"
#include "model/input_limits.hpp"

namespace gputwin {
namespace {

constexpr double kDayS = 86400.0;
// Runs shorter than this count as early: Aegis's "first 10 min".
constexpr std::int64_t kEarlyS = 600;
// Share of failures that end within kEarlyS (Aegis, NSDI'25, via gpu-domain.md section 2.4 [S]).
constexpr double kEarlyFailureShare = 0.73;
// Share of all jobs that run into their limit. The trace summaries fold TIMEOUT into FAILED, so this is a choice.
constexpr double kTimeoutShare = 0.02;
// Diurnal swing of the arrival rate around its mean.
constexpr double kDiurnalAmplitude = 0.5;
// Users ask for a limit of at least the intended run times 1 + lognormal(kOverestimateMu, kOverestimateSigma).
constexpr double kOverestimateMu = 0.0;
constexpr double kOverestimateSigma = 1.0;
// Exponent of the Zipf law over users (user k submits in proportion to 1 / k^s).
constexpr double kZipfExponent = 1.0;
// A whole-node job asks for this share of the node's memory, in percent.
constexpr std::uint64_t kMemoryPercent = 90;
// Common requested walltimes: 10, 15, 30 min; 1, 2, 4, 6, 8, 12 h; 1, 2, 3, 5, 7, 14 d. Beyond: whole days.
constexpr std::array<std::int64_t, 15> kCommonLimitsS{600,   900,   1800,   3600,   7200,   14400,  21600,  28800,
                                                      43200, 86400, 172800, 259200, 432000, 604800, 1209600};

constexpr std::size_t kMaxSizes = 12;

struct SizeWeight {
  std::uint32_t gpus = 0;  // 0 marks an unused slot
  double weight = 0.0;
};

// One profile's parameters. Run times: lognormal(run_mu + shift, run_sigma) with
// shift = shift_per_doubling * max(0, log2(gpus / shift_above_gpus)), capped at max_run_s.
struct Profile {
  std::string_view name;
  std::array<SizeWeight, kMaxSizes> sizes;
  std::uint32_t max_gpus;
  double run_mu;
  double run_sigma;
  std::uint32_t shift_above_gpus;
  double shift_per_doubling;
  std::int64_t max_run_s;
  double cancelled_share;
  double failed_share;
  std::uint32_t users;
  std::uint32_t accounts;
};

// Targets are from InternLM/AcmeTrace data/cluster_summary.csv (= Hu et al., NSDI'24, Table 2; gpu-domain.md 6.1):
// mean GPUs, median and mean run, max GPUs, max run, count-based outcome shares, and GPU-seconds per job
// (total GPU time / GPU jobs). The size categoricals were tuned by hand for the mean GPUs and the paper's
// size-skew facts; then k (shift_per_doubling) was fitted to GPU-seconds per job, and mu and sigma to the
// median and the capped mean run of the size mixture (numerically, from the lognormal CDF). The fitted
// mu/sigma differ slightly from section 6.2's per-trace fit because that one ignores size and cap. Users and
// accounts defaults are not from the traces. The "model" values below are what the fit predicts.
constexpr std::array<Profile, 4> kProfiles{{
    // Seren: mean GPUs 5.68, run median 122 s / mean 1414 s, 32,405 GPU-s per job, max 1024 GPUs, 14 d.
    // Model: mean 5.67 GPUs; 6.2% of jobs above 8 GPUs (paper: < 7%); GPU time: 1-GPU 2.4% (paper: < 2%),
    // 256+ GPUs 61%; 31,860 GPU-s per job. Section 6.2 fit: mu 4.80, sigma 2.21.
    {"acme-seren",
     {{{1, 0.615},
       {2, 0.058},
       {4, 0.08},
       {8, 0.185},
       {16, 0.032},
       {32, 0.015},
       {64, 0.008},
       {128, 0.004},
       {256, 0.002},
       {512, 0.0008},
       {1024, 0.0002}}},
     1024,
     4.752,
     2.191,
     8,
     0.47,
     1209604,
     0.075,
     0.429,
     100,
     10},
    // Kalos: mean GPUs 26.77, run median 124 s / mean 1260 s, 267,905 GPU-s per job, max 1024 GPUs, 7.2 d.
    // Model: mean 26.9 GPUs; 256+ GPU jobs hold 96.5% of GPU time (paper: > 96%); 269,000 GPU-s per job.
    // Section 6.2 fit: mu 4.82, sigma 2.15.
    {"acme-kalos",
     {{{1, 0.597},
       {2, 0.05},
       {4, 0.08},
       {8, 0.19},
       {16, 0.02},
       {32, 0.015},
       {64, 0.01},
       {128, 0.007},
       {256, 0.008},
       {512, 0.007},
       {1024, 0.016}}},
     1024,
     4.716,
     2.044,
     8,
     0.40,
     625740,
     0.062,
     0.397,
     100,
     10},
    // Philly: mean GPUs 1.93, run median 874 s / mean 18,006 s, 61,039 GPU-s per job, max 128 GPUs, 49 d.
    // Model: mean 1.94 GPUs; 61,800 GPU-s per job (the size effect starts at 2 GPUs: few jobs exceed 8).
    // Section 6.2 fit: mu 6.77, sigma 2.46.
    {"philly",
     {{{1, 0.76}, {2, 0.10}, {4, 0.08}, {8, 0.05}, {16, 0.007}, {32, 0.002}, {64, 0.0007}, {128, 0.0003}}},
     128,
     6.603,
     2.478,
     1,
     0.38,
     4240676,
     0.090,
     0.305,
     100,
     10},
    // Helios: mean GPUs 3.72, run median 206 s / mean 6652 s, 49,351 GPU-s per job, max 2048 GPUs, 50 d.
    // Model: mean 3.70 GPUs; 256+ GPU jobs hold 41% of GPU time; 49,000 GPU-s per job.
    // Section 6.2 fit: mu 5.33, sigma 2.64.
    {"helios",
     {{{1, 0.64},
       {2, 0.08},
       {4, 0.08},
       {8, 0.17},
       {16, 0.018},
       {32, 0.007},
       {64, 0.003},
       {128, 0.0012},
       {256, 0.0005},
       {512, 0.0002},
       {1024, 0.00007},
       {2048, 0.00003}}},
     2048,
     5.309,
     2.666,
     8,
     0.38,
     4320009,
     0.221,
     0.155,
     100,
     10},
}};

constexpr std::array<SyntheticProfileInfo, 4> kProfileInfos{{
    {"acme-seren", "Acme Seren, Shanghai AI Lab, 2023, 2,288 A100, Slurm (Hu et al., NSDI'24; InternLM/AcmeTrace)",
     "LLM lab: mostly 1-8 GPU evaluation and debug jobs (median run 2 min); rare 128-1024 GPU pretraining jobs "
     "hold most GPU time; 43% of jobs fail"},
    {"acme-kalos", "Acme Kalos, Shanghai AI Lab, 2023, 2,416 A100, Kubernetes (Hu et al., NSDI'24; InternLM/AcmeTrace)",
     "LLM pretraining cluster: mean 27 GPUs per job; jobs of 256+ GPUs hold over 96% of GPU time"},
    {"philly", "Microsoft Philly, 2017 (Jeon et al., USENIX ATC'19; statistics from InternLM/AcmeTrace)",
     "Early deep-learning cluster: small jobs (mean 1.9 GPUs, max 128), long runs (median 15 min, mean 5 h), "
     "31% failed"},
    {"helios",
     "SenseTime Helios, 2020, 4 clusters (Hu et al., SC'21; S-Lab-System-Group/HeliosData; statistics from "
     "InternLM/AcmeTrace)",
     "Mixed research clusters: mean 3.7 GPUs per job, up to 2048; median run 3.4 min, mean 1.8 h; 22% cancelled"},
}};

constexpr bool profile_tables_match() {
  for (std::size_t i = 0; i < kProfiles.size(); ++i) {
    if (kProfiles[i].name != kProfileInfos[i].name) return false;
  }
  return true;
}
static_assert(kProfiles.size() == kProfileInfos.size() && profile_tables_match(),
              "kProfiles and kProfileInfos must list the same profiles in the same order");

const Profile& find_profile(std::string_view name) {
  for (const auto& p : kProfiles) {
    if (p.name == name) return p;
  }
  std::string message = "unknown synthetic profile '";
  message.append(name).append("' (valid:");
  for (const auto& p : kProfiles) message.append(" ").append(p.name);
  message.append(")");
  throw std::invalid_argument(message);
}

// The nodes jobs are shaped for: the partition's largest-GPU node, and how many nodes of that shape it has.
struct Target {
  std::uint32_t node_gpus = 0;       // g_n
  std::uint32_t node_cpus = 0;       // CPUs of that node
  std::uint64_t node_memory_mb = 0;  // memory of that node
  std::uint32_t whole_nodes = 0;     // nodes that can hold a whole-node share (g_n GPUs, CPUs, memory)
  std::uint64_t gpus = 0;            // GPU capacity of the partition (the load's denominator)
  std::int64_t max_time_s = -1;      // partition MaxTime, -1 when unlimited
};

Target resolve_target(const ClusterConfig& cluster, const std::string& partition, std::string_view profile) {
  const int index = partition.empty() ? cluster.default_partition() : cluster.partition_index(partition);
  if (!partition.empty() && index < 0) {
    std::string message = "synthetic workload: unknown partition '";
    message.append(partition).append("' (valid:");
    for (const auto& p : cluster.partitions) message.append(" ").append(p.name);
    message.append(")");
    throw std::invalid_argument(message);
  }
  std::vector<NodeIndex> members;
  if (index >= 0) {
    for (NodeIndex n : cluster.partitions[static_cast<std::size_t>(index)].nodes) {
      if (n < cluster.nodes.size()) members.push_back(n);
    }
  } else {
    for (NodeIndex n = 0; n < cluster.nodes.size(); ++n) members.push_back(n);
  }

  Target t;
  const NodeConfig* reference = nullptr;
  for (NodeIndex n : members) {
    const NodeConfig& node = cluster.nodes[n];
    t.gpus += node.gpus;
    if (reference == nullptr || node.gpus > reference->gpus) reference = &node;
  }
  if (reference == nullptr || reference->gpus == 0) {
    std::string message = "synthetic profile '";
    message.append(profile).append("' needs GPUs, but ");
    if (index >= 0) {
      message.append("partition '").append(cluster.partitions[static_cast<std::size_t>(index)].name).append("'");
    } else {
      message.append("the cluster");
    }
    throw std::invalid_argument(message.append(" has no GPU nodes"));
  }
  t.node_gpus = reference->gpus;
  t.node_cpus = reference->cpus;
  t.node_memory_mb = reference->memory_mb;
  const std::uint64_t whole_memory_mb = t.node_memory_mb * kMemoryPercent / 100;
  for (NodeIndex n : members) {
    const NodeConfig& node = cluster.nodes[n];
    if (node.gpus >= t.node_gpus && node.cpus >= t.node_cpus && node.memory_mb >= whole_memory_mb) ++t.whole_nodes;
  }
  if (index >= 0) t.max_time_s = cluster.partitions[static_cast<std::size_t>(index)].max_time_s;
  return t;
}

// One size of the categorical, shaped for the target nodes.
struct SizeClass {
  double cumulative_weight = 0.0;
  std::uint32_t gpus = 0;
  std::uint32_t nodes = 0;
  std::uint32_t gpus_per_node = 0;
  std::uint32_t cpus = 0;
  std::uint64_t mem_per_node_mb = 0;
  double run_mu = 0.0;
};

std::vector<SizeClass> size_classes(const Profile& p, const Target& t) {
  const std::uint32_t max_nodes = std::max<std::uint32_t>(1, std::min(t.whole_nodes, p.max_gpus / t.node_gpus));
  std::vector<SizeClass> classes;
  double cumulative = 0.0;
  for (const SizeWeight& s : p.sizes) {
    if (s.gpus == 0 || s.gpus > p.max_gpus) continue;
    SizeClass c;
    if (s.gpus <= t.node_gpus) {
      c.nodes = 1;
      c.gpus_per_node = s.gpus;
    } else {
      c.nodes = std::min((s.gpus + t.node_gpus - 1) / t.node_gpus, max_nodes);
      c.gpus_per_node = t.node_gpus;
    }
    c.gpus = c.nodes * c.gpus_per_node;
    const std::uint32_t cpus_per_node =
        static_cast<std::uint32_t>(std::uint64_t{c.gpus_per_node} * t.node_cpus / t.node_gpus);
    c.cpus = std::max(c.nodes, c.nodes * cpus_per_node);
    c.mem_per_node_mb = t.node_memory_mb * c.gpus_per_node * kMemoryPercent / (std::uint64_t{t.node_gpus} * 100);
    const double doublings = std::log2(static_cast<double>(c.gpus) / p.shift_above_gpus);
    c.run_mu = p.run_mu + p.shift_per_doubling * std::max(0.0, doublings);
    cumulative += s.weight;
    c.cumulative_weight = cumulative;
    classes.push_back(c);
  }
  return classes;
}

std::int64_t draw_run_s(Rng& rng, double mu, double sigma, std::int64_t max_run_s) {
  const double run = std::min(rng.lognormal(mu, sigma), static_cast<double>(max_run_s));
  return std::max<std::int64_t>(1, std::llround(run));
}

// Smallest common walltime >= seconds (whole days beyond the table).
std::int64_t common_limit_at_least(double seconds) {
  for (std::int64_t limit : kCommonLimitsS) {
    if (static_cast<double>(limit) >= seconds) return limit;
  }
  return static_cast<std::int64_t>(std::ceil(seconds / kDayS) * kDayS);
}

// Largest whole number of minutes < seconds, in seconds.
std::int64_t whole_minutes_below(std::int64_t seconds) {
  return (seconds - 1) / 60 * 60;
}

// One job between passes.
struct Draft {
  std::int64_t run_s = 0;
  std::int64_t time_limit_s = 0;
  std::int64_t submit_s = 0;
  std::uint8_t size_class = 0;
  JobState outcome = JobState::kCompleted;
};

// Cumulative arrival intensity over [0, t] in units of mean-rate seconds: the integral of the diurnal rate
// multiplier 1 + A sin(2 pi (t / 1 d - 0.25)), which averages 1 over a day, is lowest at midnight (t = 0) and
// highest at noon.
double diurnal_integral(double t) {
  return t - kDiurnalAmplitude * kDayS / (2.0 * std::numbers::pi) * std::sin(2.0 * std::numbers::pi * t / kDayS);
}

// The inverse of diurnal_integral over one day, sampled at whole seconds: entry k is the time of day at which the
// cumulative intensity reaches k. Built once by walking forward samples and interpolating linearly.
const std::vector<double>& diurnal_inverse() {
  static const std::vector<double> table = [] {
    constexpr std::size_t kSteps = 86400;
    std::vector<double> inverse(kSteps + 1);
    double x = 0.0;
    double at_x = 0.0;
    double next = diurnal_integral(1.0);
    for (std::size_t k = 0; k <= kSteps; ++k) {
      const double target = static_cast<double>(k);
      while (next < target && x + 1.0 < static_cast<double>(kSteps)) {
        x += 1.0;
        at_x = next;
        next = diurnal_integral(x + 1.0);
      }
      inverse[k] = x + std::clamp((target - at_x) / (next - at_x), 0.0, 1.0);
    }
    inverse[kSteps] = static_cast<double>(kSteps);
    return inverse;
  }();
  return table;
}

// Time at which the cumulative intensity reaches `intensity` (the inverse of diurnal_integral).
double diurnal_time(double intensity, const std::vector<double>& inverse) {
  const double day = std::floor(intensity / kDayS);
  const double within = std::max(0.0, intensity - day * kDayS);
  const std::size_t k = std::min(static_cast<std::size_t>(within), inverse.size() - 2);
  const double frac = within - static_cast<double>(k);
  return day * kDayS + inverse[k] + frac * (inverse[k + 1] - inverse[k]);
}

// "<prefix><value>" with value zero-padded to `width` digits.
std::string numbered(std::string_view prefix, std::uint64_t value, int width) {
  std::array<char, 24> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
  const int length = static_cast<int>(end - digits.data());
  std::string out(prefix);
  out.append(static_cast<std::size_t>(std::max(0, width - length)), '0');
  out.append(digits.data(), end);
  return out;
}

int digit_count(std::uint64_t value) {
  int count = 1;
  while (value >= 10) {
    value /= 10;
    ++count;
  }
  return count;
}

}  // namespace

std::span<const SyntheticProfileInfo> synthetic_profiles() {
  return kProfileInfos;
}

std::vector<JobSpec> generate_synthetic(const SyntheticWorkload& w, const ClusterConfig& cluster, std::uint64_t seed) {
  const Profile& p = find_profile(w.profile);
  if (w.jobs == 0) throw std::invalid_argument("synthetic workload: jobs must be at least 1");
  if (!std::isfinite(w.load) || w.load <= 0.0) {
    std::string message = "synthetic workload: load must be a positive number, got ";
    throw std::invalid_argument(message.append(std::to_string(w.load)));
  }
  const Target target = resolve_target(cluster, w.partition, p.name);
  const std::vector<SizeClass> classes = size_classes(p, target);
  const std::size_t n = w.jobs;
  // Three passes over compact drafts (sizes and runs; outcomes and limits; arrivals), then one over the JobSpecs.
  std::vector<Draft> drafts(n);

  // Sizes and run times (observed durations).
  Rng size_rng = Rng::stream(seed, "workload/sizes");
  Rng run_rng = Rng::stream(seed, "workload/runtimes");
  const double total_weight = classes.back().cumulative_weight;
  const std::int64_t max_run_s = target.max_time_s > 0 ? std::min(p.max_run_s, target.max_time_s) : p.max_run_s;
  std::uint64_t early_runs = 0;
  for (Draft& d : drafts) {
    const double u = size_rng.uniform() * total_weight;
    std::size_t c = 0;
    while (c + 1 < classes.size() && u >= classes[c].cumulative_weight) ++c;
    d.size_class = static_cast<std::uint8_t>(c);
    d.run_s = draw_run_s(run_rng, classes[c].run_mu, p.run_sigma, max_run_s);
    if (d.run_s < kEarlyS) ++early_runs;
  }

  // Outcomes: P(failed | early run) and P(failed | late run) such that failures are failed_share of all jobs and
  // kEarlyFailureShare of them are early (both as shares of all jobs below, clipped to what the runs allow).
  const double early = static_cast<double>(early_runs) / static_cast<double>(n);
  double early_failures = kEarlyFailureShare * p.failed_share;
  double late_failures = p.failed_share - early_failures;
  if (late_failures > 1.0 - early) {
    late_failures = 1.0 - early;
    early_failures = p.failed_share - late_failures;
  }
  if (early_failures > early) {
    early_failures = early;
    late_failures = std::min(1.0 - early, p.failed_share - early);
  }
  const double fail_if_early = early > 0.0 ? early_failures / early : 0.0;
  const double fail_if_late = early < 1.0 ? late_failures / (1.0 - early) : 0.0;
  const double timeout_if_late_failure = late_failures > 0.0 ? std::min(1.0, kTimeoutShare / late_failures) : 0.0;
  const double cancel_if_not_failed = p.cancelled_share / (1.0 - p.failed_share);

  // Outcomes and time limits, and the GPU-seconds they ask for.
  Rng outcome_rng = Rng::stream(seed, "workload/outcomes");
  Rng limit_rng = Rng::stream(seed, "workload/limits");
  double work_gpu_s = 0.0;
  for (Draft& d : drafts) {
    const double u = outcome_rng.uniform();
    const double v = outcome_rng.uniform();
    const bool is_early = d.run_s < kEarlyS;
    if (u < (is_early ? fail_if_early : fail_if_late)) {
      const bool timeout = !is_early && v < timeout_if_late_failure && whole_minutes_below(d.run_s) >= kEarlyS;
      d.outcome = timeout ? JobState::kTimeout : JobState::kFailed;
    } else {
      d.outcome = v < cancel_if_not_failed ? JobState::kCancelled : JobState::kCompleted;
    }

    const double factor = 1.0 + limit_rng.lognormal(kOverestimateMu, kOverestimateSigma);
    if (d.outcome == JobState::kTimeout) {
      d.time_limit_s = whole_minutes_below(d.run_s);
      d.run_s += limit_rng.uniform_int(1, d.run_s);
    } else {
      std::int64_t intended_s = d.run_s;
      if (d.outcome != JobState::kCompleted) {
        intended_s = std::max(intended_s, draw_run_s(limit_rng, classes[d.size_class].run_mu, p.run_sigma, max_run_s));
      }
      d.time_limit_s = common_limit_at_least(static_cast<double>(intended_s) * factor);
      if (target.max_time_s > 0) d.time_limit_s = std::min(d.time_limit_s, target.max_time_s);
    }
    work_gpu_s +=
        static_cast<double>(classes[d.size_class].gpus) * static_cast<double>(std::min(d.run_s, d.time_limit_s));
  }

  // Arrivals over the span that gives the requested load: a Poisson process with the diurnal rate, drawn as a
  // unit-rate process in cumulative intensity and mapped back to time (time-rescaling theorem). The mean gap
  // in intensity makes the expected number of arrivals in [0, span) equal to the number of jobs.
  const double span_s = work_gpu_s / (w.load * static_cast<double>(target.gpus));
  if (!(span_s <= static_cast<double>(kMaxTimeSeconds) / 2)) {
    throw std::invalid_argument("synthetic workload: load " + std::to_string(w.load) + " spreads the jobs over about " +
                                std::to_string(span_s) + " s, beyond the bound on submit times (1e10 s, about 317 " +
                                "years); raise the load");
  }
  const double mean_gap = diurnal_integral(span_s) / static_cast<double>(n);
  const std::vector<double>& inverse = diurnal_inverse();
  Rng arrival_rng = Rng::stream(seed, "workload/arrivals");
  double intensity = 0.0;
  for (Draft& d : drafts) {
    intensity += arrival_rng.exponential(mean_gap);
    const double submit_s = std::floor(diurnal_time(intensity, inverse));
    if (!(submit_s <= static_cast<double>(kMaxTimeSeconds))) {
      throw std::invalid_argument("synthetic workload: a submit time beyond the bound of 1e10 s; raise the load");
    }
    d.submit_s = static_cast<std::int64_t>(submit_s);
  }

  // Users (Zipf) and their accounts.
  const std::uint32_t users = w.users > 0 ? w.users : p.users;
  const std::uint32_t accounts = w.accounts > 0 ? w.accounts : p.accounts;
  std::vector<std::string> user_names(users);
  std::vector<double> user_cdf(users);
  double cumulative = 0.0;
  for (std::uint32_t k = 0; k < users; ++k) {
    user_names[k] = numbered("user", k + 1, std::max(3, digit_count(users)));
    cumulative += 1.0 / std::pow(static_cast<double>(k + 1), kZipfExponent);
    user_cdf[k] = cumulative;
  }
  std::vector<std::string> account_names(accounts);
  for (std::uint32_t a = 0; a < accounts; ++a) {
    account_names[a] = numbered("acct", a + 1, std::max(2, digit_count(accounts)));
  }
  Rng user_rng = Rng::stream(seed, "workload/users");

  std::vector<JobSpec> jobs;
  jobs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Draft& d = drafts[i];
    const SizeClass& c = classes[d.size_class];
    JobSpec& job = jobs.emplace_back();
    job.id = i + 1;
    std::array<char, 48> name{};
    char* out = std::copy_n("train-", 6, name.data());
    out = std::to_chars(out, name.data() + name.size(), c.gpus).ptr;
    out = std::copy_n("g-", 2, out);
    out = std::to_chars(out, name.data() + name.size(), job.id).ptr;
    job.name.assign(name.data(), out);
    const double u = user_rng.uniform() * cumulative;
    const auto it = std::upper_bound(user_cdf.begin(), user_cdf.end(), u);
    const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(it - user_cdf.begin()), users - 1);
    job.user = user_names[k];
    job.account = account_names[k % accounts];
    job.partition = w.partition;
    job.submit_s = d.submit_s;
    job.nodes = c.nodes;
    job.cpus = c.cpus;
    job.gpus_per_node = c.gpus_per_node;
    job.mem_per_node_mb = c.mem_per_node_mb;
    job.time_limit_s = d.time_limit_s;
    job.run_time_s = d.run_s;
    job.outcome = d.outcome;
  }
  return jobs;
}

}  // namespace gputwin
