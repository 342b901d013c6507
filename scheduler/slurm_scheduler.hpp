// The `slurm` policy: slurmctld's main scheduler (sched/builtin logic in job_scheduler.c:_schedule) plus
// sched/backfill (backfill.c:_attempt_backfill) with select/cons_tres's will-run (job_test.c:_will_run_test),
// as described in shared/reference/slurm-semantics.md sections 0, 2 and 5. Priority, eligibility and limits come
// from JobPolicy (priority/basic or multifactor with fair share; holds, dependencies, arrays; acct_policy).
#pragma once

#include <memory>

#include "model/scenario.hpp"
#include "scheduler/scheduler.hpp"

namespace gputwin {

/// Builds the `slurm` policy.
std::unique_ptr<Scheduler> make_slurm_scheduler(const SchedulerConfig& config, const AccountingConfig& accounting,
                                                World& world);

/// When slurmctld's time-limit check (every 30 s, job_mgr.c:job_time_limit) kills a job started at `start` with
/// limit `limit_s`: the first check tick at or after start + limit + OverTimeLimit. Ticks are at
/// -phase_s + k * 30 s.
SimTime slurm_timeout_kill_time(SimTime start, std::int64_t limit_s, const SlurmParameters& params);

}  // namespace gputwin
