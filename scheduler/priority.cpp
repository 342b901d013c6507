#include "scheduler/priority.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace gputwin {

PriorityEngine::PriorityEngine(const PriorityConfig& config, const ClusterConfig& cluster,
                               const std::vector<QosConfig>& qos, AssociationTree& tree,
                               const std::vector<std::uint32_t>& assoc_priority)
    : config_(config), cluster_(cluster), qos_(qos), tree_(tree), assoc_priority_(assoc_priority) {
  for (std::uint32_t p : assoc_priority_) max_assoc_priority_ = std::max<double>(max_assoc_priority_, p);
  for (const QosConfig& q : qos_) max_qos_priority_ = std::max<double>(max_qos_priority_, q.priority);
  for (const PartitionConfig& p : cluster_.partitions) {  // read_config.c:_reset_part_prio: the max is at least 1
    max_part_factor_ = std::max<double>(max_part_factor_, p.priority_job_factor);
    PartitionTotals t;
    for (NodeIndex n : p.nodes) {
      t.cpus += cluster_.nodes[n].cpus;
      t.mem_mb += static_cast<double>(cluster_.nodes[n].memory_mb);
      t.gpus += cluster_.nodes[n].gpus;
      t.nodes += 1;
    }
    part_totals_.push_back(t);
  }
  total_nodes_ = static_cast<double>(cluster_.nodes.size());
  total_cpus_ = static_cast<double>(cluster_.total_cpus());
  if (config_.decay_half_life_s > 0) decay_per_second_ = 1.0 - 0.693 / static_cast<double>(config_.decay_half_life_s);
}

PriorityFactors PriorityEngine::factors(const JobSpec& spec, const PriorityInputs& in, std::int64_t now_s) const {
  const PriorityConfig& c = config_;
  PriorityFactors f;
  if (in.accrue_s >= 0 && now_s > in.accrue_s) {
    f.age = std::min(1.0, static_cast<double>(now_s - in.accrue_s) / static_cast<double>(c.max_age_s));
  }
  const std::uint32_t ap = in.assoc < assoc_priority_.size() ? assoc_priority_[in.assoc] : 0;
  if (ap > 0) f.assoc = c.no_normal_assoc ? ap : ap / max_assoc_priority_;
  f.fairshare = tree_.fs_factor(in.assoc);

  // Job size (_get_priority_internal / priority_p_set): nodes and CPUs only; GPUs do not count.
  const double n = std::max<std::uint32_t>(spec.nodes, 1);
  const double cpus = spec.cpus;
  if (c.small_relative_to_time) {
    const double minutes = std::max<double>(1.0, static_cast<double>(in.time_limit_s) / 60.0);
    double v = std::max(n * total_cpus_ / total_nodes_, cpus) / minutes / total_cpus_;
    if (c.favor_small) v = 1.0 - v;
    f.job_size = std::clamp(v, 0.0, 1.0);
  } else if (c.favor_small) {
    const double node_term = n >= total_nodes_ ? 0.0 : (total_nodes_ - n) / total_nodes_;
    f.job_size = cpus > 0 ? (node_term + (total_cpus_ - cpus) / total_cpus_) / 2 : node_term;
  } else {
    f.job_size = cpus > 0 ? (n / total_nodes_ + cpus / total_cpus_) / 2 : n / total_nodes_;
  }

  const PartitionConfig& part = cluster_.partitions[in.partition];
  if (part.priority_job_factor != 0) {
    f.partition = c.no_normal_part ? part.priority_job_factor : part.priority_job_factor / max_part_factor_;
  }
  const QosConfig& qos = qos_[in.qos];
  if (qos.priority != 0) f.qos = c.no_normal_qos ? qos.priority : qos.priority / max_qos_priority_;

  // TRES factors (_get_tres_factors): requested TRES over the partition's total, each weighted.
  const PartitionTotals& t = part_totals_[in.partition];
  auto tres = [&](double weight, double job, double total) {
    if (weight == 0 || total <= 0) return 0.0;
    return weight * (c.no_normal_tres ? job : job / total);
  };
  f.tres = tres(c.weight_tres_cpu, cpus, t.cpus) +
           tres(c.weight_tres_mem, static_cast<double>(spec.mem_per_node_mb) * n, t.mem_mb) +
           tres(c.weight_tres_node, n, t.nodes) +
           tres(c.weight_tres_gpu, static_cast<double>(spec.gpus_per_node) * n, t.gpus);
  f.nice = spec.nice;

  const double prio = c.weight_age * f.age + c.weight_assoc * f.assoc + c.weight_fairshare * f.fairshare +
                      c.weight_job_size * f.job_size + c.weight_partition * f.partition + c.weight_qos * f.qos +
                      f.tres - static_cast<double>(spec.nice);
  // 0 is reserved for held jobs; the C cast truncates toward zero.
  if (prio < 1) {
    f.priority = 1;
  } else if (prio > 4294967295.0) {
    f.priority = 0xffffffffu;
  } else {
    f.priority = static_cast<std::uint32_t>(prio);
  }
  return f;
}

double PriorityEngine::billing(std::uint32_t partition, std::uint64_t cpus, std::uint64_t mem_mb, std::uint64_t nodes,
                               std::uint64_t gpus) const {
  const BillingWeights& w = cluster_.partitions[partition].billing;
  if (w.empty()) return static_cast<double>(cpus);
  const double terms[] = {w.cpu * static_cast<double>(cpus), w.mem_gb * static_cast<double>(mem_mb) / 1024.0,
                          w.node * static_cast<double>(nodes), w.gpu * static_cast<double>(gpus)};
  if (config_.max_tres) return *std::max_element(std::begin(terms), std::end(terms));
  return terms[0] + terms[1] + terms[2] + terms[3];
}

void PriorityEngine::charge(const UsageCharge& job, std::int64_t from_s, std::int64_t to_s) {
  const std::int64_t begin = std::max(from_s, job.start_s);
  if (to_s <= begin) return;
  const double run = static_cast<double>(to_s - begin);
  // decay_apply_new_usage: the new chunk is itself decayed as if consumed at the start of the interval.
  double add = run * std::pow(decay_per_second_, run) * job.billing;
  const double factor = qos_[job.qos].usage_factor;
  if (factor >= 0) add *= factor;
  tree_.add_usage(job.assoc, add);
}

bool PriorityEngine::reset_due(std::int64_t prev_s, std::int64_t now_s) const {
  return next_usage_reset_s(config_.usage_reset, prev_s) <= now_s;
}

void PriorityEngine::tick(std::int64_t now_s, std::span<const UsageCharge> running) {
  if (!ticked_) {
    ticked_ = true;
    last_tick_s_ = std::min(last_tick_s_, now_s);
  }
  const std::int64_t delta = now_s - last_tick_s_;
  if (reset_due(last_tick_s_, now_s)) tree_.reset_usage();
  if (delta > 0 && decay_per_second_ < 1.0) {
    tree_.decay(std::max(std::pow(decay_per_second_, static_cast<double>(delta)), std::numeric_limits<double>::min()));
  }
  for (const UsageCharge& job : running) charge(job, last_tick_s_, now_s);
  last_tick_s_ = now_s;
  if (config_.fair_tree) {
    tree_.compute_fair_tree();
  } else {
    tree_.compute_classic(config_.fairshare_dampening);
  }
}

void PriorityEngine::charge_end(const UsageCharge& job, std::int64_t end_s) {
  charge(job, last_tick_s_, end_s);
}

std::int64_t next_usage_reset_s(UsageReset period, std::int64_t t_s) {
  using namespace std::chrono;
  constexpr std::int64_t kDay = 86400;
  const sys_days epoch = sys_days(year{2024} / January / 1);
  const std::int64_t day = (t_s >= 0 ? t_s / kDay : -((-t_s + kDay - 1) / kDay));
  auto to_s = [&](sys_days d) { return static_cast<std::int64_t>((d - epoch).count()) * kDay; };
  const year_month_day today{epoch + days{day}};
  switch (period) {
    case UsageReset::kNone:
    case UsageReset::kNow:
      return std::numeric_limits<std::int64_t>::max();
    case UsageReset::kDaily:
      return (day + 1) * kDay;
    case UsageReset::kWeekly: {  // Sundays: epoch day 6, 13, ...
      const std::int64_t since_sunday = ((day - 6) % 7 + 7) % 7;
      return (day - since_sunday + 7) * kDay;
    }
    case UsageReset::kMonthly:
      return to_s(sys_days((year_month{today.year() / today.month()} + months{1}) / 1));
    case UsageReset::kQuarterly: {
      const unsigned m = static_cast<unsigned>(today.month());
      const year_month first{today.year() / month{(m - 1) / 3 * 3 + 1}};
      return to_s(sys_days((first + months{3}) / 1));
    }
    case UsageReset::kYearly:
      return to_s(sys_days((today.year() + years{1}) / January / 1));
  }
  return std::numeric_limits<std::int64_t>::max();
}

}  // namespace gputwin
