// The textbook policies, for policy experiments and comparison with the literature: fcfs, sjf, EASY
// backfilling (Mu'alem and Feitelson, 2001) in two variants, easy (the head keeps the nodes it will get) and
// easy-textbook (the head keeps a count of CPUs and GPUs), and conservative backfilling. They re-plan once at the
// end of every instant at which something happened (submit or job end), or after every event with
// scheduling_point "event", plan on requested time limits, and place jobs with the same cons_tres-style node
// selector as the `slurm` policy. Precise rules: README "Scheduling policies".
#pragma once

#include <memory>

#include "model/scenario.hpp"
#include "scheduler/scheduler.hpp"

namespace gputwin {

/// Builds one of fcfs, sjf, easy, easy-textbook or conservative (config.policy). With config.slurm.shortcuts, passes
/// after instants at which only jobs were submitted look only at the new jobs (the same schedule, less work). They
/// order by multifactor priority when config.priority asks for it, and honour holds, --begin, dependencies and array
/// throttles; association and QOS limits are the `slurm` policy's.
std::unique_ptr<Scheduler> make_classic_scheduler(const SchedulerConfig& config, const AccountingConfig& accounting,
                                                  World& world);

}  // namespace gputwin
