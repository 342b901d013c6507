// QuotaController: spend quotas per user (gpu-domain.md 5.2), the decisions of a managed cloud's budget guard.
// Every `quota_check_s` it reads each quota user's spend and burn rate from the world (World::user_spend):
// spend passing warn_pct of the limit records a warning; with block_and_kill, spend projected to the next check
// (spend + burn x period) passing limit x (1 + buffer%) blocks the user: their running jobs are cancelled, their
// pending ones leave the queue, and their later submissions and requeues are refused (AssocGrpBillingMinutes,
// Slurm's reason for a billing limit). Every warning, block, cancel and refusal is a QuotaEvent.
//
// On a real cluster the same decisions cancel through slurmrestd (DELETE job/{id}); what the simulator cannot do
// there is refuse a submission before slurmctld takes it: the twin cancels it on sight instead.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/cloud_config.hpp"
#include "model/cloud_log.hpp"
#include "world/controller.hpp"

namespace gputwin {

/// The quota controller (see the file comment).
class QuotaController final : public Controller {
 public:
  /// Controller of `config`'s quotas, acting on `world` (whose state must hold the run's jobs).
  QuotaController(const CostConfig& config, World& world);

  void on_start() override;
  void on_timer(TimerId timer) override;
  /// Refuses a job of a blocked user (recorded as a "refuse" event) with AssocGrpBillingMinutes.
  [[nodiscard]] PendingReason admit(JobIndex job) override;

  /// Quota actions so far, in time order.
  [[nodiscard]] const std::vector<QuotaEvent>& events() const { return events_; }

 private:
  struct QuotaState {
    const Quota* quota = nullptr;
    std::uint32_t user = 0;  // index in users_
    bool warned = false;
    bool blocked = false;
  };
  void check();
  // Learns the users of jobs the world added since (a live cluster's job table grows).
  void note_jobs();

  const CostConfig& config_;
  World& world_;
  std::vector<std::string> users_;                        // the quota users
  std::vector<QuotaState> quotas_;                        // in configuration order
  std::unordered_map<std::string, std::uint32_t> index_;  // quota user -> index in users_
  std::vector<std::int32_t> job_user_;                    // per job: index in users_, -1 for users without a quota
  std::vector<std::uint8_t> user_blocked_;                // per quota user
  std::vector<QuotaEvent> events_;
};

}  // namespace gputwin
