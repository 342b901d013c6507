// The scheduler interface every policy implements, and the factory that builds the scenario's policy.
#pragma once

#include <cstdint>
#include <memory>

#include "model/cluster_state.hpp"
#include "model/scenario.hpp"
#include "world/controller.hpp"
#include "world/world.hpp"

namespace gputwin {

class JobPolicy;

/// Work counters of a scheduler, for benchmarks and the run summary.
struct SchedulerStats {
  std::uint64_t passes = 0;            ///< Main-scheduler (or re-plan) passes.
  std::uint64_t backfill_cycles = 0;   ///< Backfill cycles run.
  std::uint64_t backfill_skipped = 0;  ///< Backfill cycles skipped by a shortcut that cannot change the schedule.
  std::uint64_t jobs_tested = 0;       ///< Job tests (placement attempts) over all passes and cycles.
  std::uint64_t backfill_starts = 0;   ///< Jobs started by backfill.
  std::uint64_t main_starts = 0;       ///< Jobs started by the main scheduler (or the classic policy).
  std::uint64_t preemptions = 0;       ///< Running jobs preempted.
};

/// A scheduling policy: the controller that reacts to submissions, job ends, node changes and its own timers by
/// starting jobs through the World.
class Scheduler : public Controller {
 public:
  /// A job was submitted (its runtime state is PENDING and submitted).
  void on_job_submitted(JobIndex job) override = 0;
  /// A job's resources were released (its epilog completed).
  void on_job_released(JobIndex job) override = 0;
  /// A pending job was cancelled (scancel, a quota): it leaves the queue.
  void on_job_cancelled(JobIndex job) override = 0;
  /// A timer set with World::set_timer(ControllerId::kScheduler, ...) fired.
  void on_timer(TimerId timer) override = 0;
  /// When a run of `job` (time limit `limit_s`) that starts at `start` is killed for its time limit; a job that
  /// waited CONFIGURING for its nodes gets its limit from the start it has once they are up.
  [[nodiscard]] virtual SimTime kill_time(SimTime start, std::int64_t limit_s) const {
    return start + from_seconds(limit_s);
  }
  /// Work counters.
  [[nodiscard]] virtual SchedulerStats stats() const = 0;
  /// The job decisions (priority, fair share, limits) for views such as sprio and sshare.
  [[nodiscard]] virtual const JobPolicy* job_policy() const = 0;
};

/// Builds the policy `config.policy` acting on `world`, with the scenario's accounting.
std::unique_ptr<Scheduler> make_scheduler(const SchedulerConfig& config, const AccountingConfig& accounting,
                                          World& world);

/// Effective time limit of a job at submit, seconds: its --time, else the partition's DefaultTime, else MaxTime,
/// else one year (Slurm's INFINITE for planning).
std::int64_t effective_time_limit_s(const JobSpec& spec, const PartitionConfig& partition);

}  // namespace gputwin
