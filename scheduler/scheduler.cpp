#include "scheduler/scheduler.hpp"

#include "scheduler/classic_schedulers.hpp"
#include "scheduler/slurm_scheduler.hpp"

namespace gputwin {

namespace {
constexpr std::int64_t kOneYearS = 365LL * 24 * 3600;  // Slurm plans INFINITE limits as one year
}

std::unique_ptr<Scheduler> make_scheduler(const SchedulerConfig& config, const AccountingConfig& accounting,
                                          World& world) {
  if (config.policy == SchedulerPolicy::kSlurm) return make_slurm_scheduler(config, accounting, world);
  return make_classic_scheduler(config, accounting, world);
}

std::int64_t effective_time_limit_s(const JobSpec& spec, const PartitionConfig& partition) {
  if (spec.time_limit_s != kNoTimeLimit) return spec.time_limit_s;
  if (partition.default_time_s >= 0) return partition.default_time_s;
  if (partition.max_time_s >= 0) return partition.max_time_s;
  return kOneYearS;
}

}  // namespace gputwin
