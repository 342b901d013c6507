// A scripted World for controller unit tests: no event engine. A test builds the cluster and its jobs, sets the
// state a controller should see (time, node conditions, running jobs, spend), delivers observations to the
// controller by hand, and compares the actions it took, as text, with the exact list expected.
//
//   FakeWorld w(4, 8);  // four nodes n001-n004 of 8 GPUs
//   HealthController h(faults, w);
//   h.on_health_event(event);
//   EXPECT_THAT(w.take_actions(), ElementsAre("drain n003 'xid 79 gpu 2 (health_check)'", "reboot n003"));
//
// Actions that change what the controller reads are applied to the state as a world would (a drain sets DRAIN,
// a power-up POWERING_UP, a cancel ends the job); their delayed ends (a reboot finishing) are the test's to
// deliver. Timers are recorded, never fired: the test calls on_timer.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "model/cluster.hpp"
#include "model/cluster_state.hpp"
#include "world/world.hpp"

namespace gputwin::testing {

/// The scripted world (see the file comment).
class FakeWorld final : public World {
 public:
  /// `nodes` nodes n001.. of 64 CPUs and `gpus` GPUs in partition "batch", and `jobs` (none submitted yet).
  FakeWorld(std::uint32_t nodes, std::uint32_t gpus, std::vector<JobSpec> jobs = {}) {
    for (std::uint32_t i = 0; i < nodes; ++i) {
      NodeConfig n;
      n.name = node_name(i);
      n.cpus = 64;
      n.gpus = gpus;
      n.memory_mb = 512ULL * 1024;
      config_.nodes.push_back(n);
    }
    PartitionConfig p;
    p.name = "batch";
    p.is_default = true;
    for (NodeIndex i = 0; i < nodes; ++i) p.nodes.push_back(i);
    config_.partitions.push_back(p);
    state_ = std::make_unique<ClusterState>(config_, std::move(jobs));
  }

  /// Name of node `n` ("n001").
  static std::string node_name(NodeIndex n) {
    const std::string digits = std::to_string(n + 1);
    return "n" + std::string(3 - std::min<std::size_t>(3, digits.size()), '0') + digits;
  }

  // ---- Scripting ----
  /// The state, to set up what the controller sees.
  ClusterState& mutable_state() { return *state_; }
  /// Moves the clock to `seconds`.
  void set_now_s(double seconds) { now_ = from_seconds_f(seconds); }
  /// Sets node `n`'s condition directly (no action recorded).
  void set_condition(NodeIndex n, NodeCondition c) {
    state_->set_node_condition(n, c, {});
    state_->set_node_schedulable(n, c == NodeCondition::kNone);
  }
  /// Submits job `j` (PENDING) without telling anyone.
  void submit(JobIndex j) { state_->job_mut(j).submitted = true; }
  /// Starts job `j` on `gpus` GPUs (and 1 CPU) of each of `nodes`, as the scheduler would have.
  void run(JobIndex j, std::vector<NodeIndex> nodes, std::uint32_t gpus) {
    submit(j);
    std::vector<NodeAllocation> alloc;
    for (NodeIndex n : nodes) alloc.push_back({n, 1, gpus, 0});
    state_->allocate(j, alloc, now_);
  }
  /// Ends job `j` and releases its nodes.
  void finish(JobIndex j) {
    state_->finish(j, JobState::kCompleted, now_);
    state_->release(j);
  }
  /// Sets what user_spend returns for `user`.
  void set_spend(const std::string& user, double usd, double usd_per_hour) { spend_[user] = {usd, usd_per_hour}; }
  /// Actions taken since the last call, in order, as text.
  std::vector<std::string> take_actions() { return std::exchange(actions_, {}); }
  /// Timers set since the last call: (controller, timer, time in seconds).
  std::vector<std::tuple<ControllerId, TimerId, double>> take_timers() { return std::exchange(timers_, {}); }
  /// Latest expect_node_return time, seconds.
  [[nodiscard]] double expected_return_s() const { return to_seconds_f(expected_return_); }

  // ---- World ----
  [[nodiscard]] SimTime now() const override { return now_; }
  [[nodiscard]] const ClusterState& state() const override { return *state_; }
  [[nodiscard]] Spend user_spend(std::string_view user) const override {
    const auto it = spend_.find(std::string(user));
    return it == spend_.end() ? Spend{} : it->second;
  }
  void set_timer(ControllerId controller, TimerId timer, SimTime at) override {
    timers_.emplace_back(controller, timer, to_seconds_f(at));
  }
  void expect_activity(SimTime at) override { (void)at; }
  void expect_node_return(SimTime at) override { expected_return_ = std::max(expected_return_, at); }
  void start_job(JobIndex job, std::span<const NodeAllocation> allocation, SimTime kill_at) override {
    (void)kill_at;
    state_->allocate(job, allocation, now_);
    actions_.push_back("start " + id(job));
  }
  void annotate_job(JobIndex job, std::uint32_t priority, PendingReason reason) override {
    state_->job_mut(job).priority = priority;
    state_->job_mut(job).reason = reason;
  }
  void reject_job(JobIndex job, PendingReason reason) override {
    state_->end_pending(job, JobState::kCancelled, now_);
    actions_.push_back("reject " + id(job) + " " + std::string(pending_reason_name(reason)));
  }
  void preempt_job(JobIndex job, SimTime at, bool requeue, JobIndex preemptor) override {
    (void)at;
    (void)requeue;
    actions_.push_back("preempt " + id(job) + " for " + id(preemptor));
  }
  void cancel_job(JobIndex job, PendingReason reason) override {
    if (state_->job(job).state == JobState::kRunning) {
      finish_as(job, JobState::kCancelled);
    } else {
      state_->end_pending(job, JobState::kCancelled, now_);
    }
    actions_.push_back("cancel " + id(job) + " " + std::string(pending_reason_name(reason)));
  }
  void hold_job(JobIndex job) override { actions_.push_back("hold " + id(job)); }
  void release_job(JobIndex job) override { actions_.push_back("release " + id(job)); }
  void set_job_priority(JobIndex job, std::uint32_t priority) override {
    actions_.push_back("priority " + id(job) + " " + std::to_string(priority));
  }
  void drain_node(NodeIndex n, std::string_view reason) override {
    set_condition(n, NodeCondition::kDrain);
    actions_.push_back("drain " + node_name(n) + " '" + std::string(reason) + "'");
  }
  void fail_node(NodeIndex n, std::string_view reason) override {
    set_condition(n, NodeCondition::kFail);
    actions_.push_back("fail " + node_name(n) + " '" + std::string(reason) + "'");
  }
  std::uint32_t down_nodes(std::span<const NodeIndex> nodes, InterruptionCause cause,
                           std::string_view reason) override {
    for (NodeIndex n : nodes) {
      set_condition(n, NodeCondition::kDown);
      actions_.push_back("down " + node_name(n) + " '" + std::string(reason) + "' (" + std::string(to_string(cause)) +
                         ")");
    }
    std::uint32_t ended = 0;
    for (NodeIndex n : nodes) ended += end_jobs_on(n);
    return ended;
  }
  using World::down_node;
  void resume_node(NodeIndex n) override {
    set_condition(n, NodeCondition::kNone);
    actions_.push_back("resume " + node_name(n));
  }
  std::uint32_t requeue_jobs_on(NodeIndex n, InterruptionCause cause, std::string_view reason) override {
    actions_.push_back("requeue jobs on " + node_name(n) + " '" + std::string(reason) + "' (" +
                       std::string(to_string(cause)) + ")");
    return end_jobs_on(n);
  }
  std::uint32_t reboot_nodes(std::span<const NodeIndex> nodes, std::string_view reason,
                             const RebootOptions& options) override {
    for (NodeIndex n : nodes) {
      set_condition(n, NodeCondition::kRebooting);
      std::string text = "reboot " + node_name(n) + " '" + std::string(reason) + "'";
      if (options.kill_jobs) text += " killing jobs";
      if (options.duration_s) text += " for " + seconds(*options.duration_s);
      actions_.push_back(text);
    }
    std::uint32_t ended = 0;
    if (options.kill_jobs) {
      for (NodeIndex n : nodes) ended += end_jobs_on(n);
    }
    return ended;
  }
  using World::reboot_node;
  void reset_gpus(NodeIndex n, std::string_view reason) override {
    actions_.push_back("reset gpus " + node_name(n) + " '" + std::string(reason) + "'");
  }
  void send_to_repair(NodeIndex n, std::string_view reason) override {
    actions_.push_back("repair " + node_name(n) + " '" + std::string(reason) + "'");
  }
  void power_up_node(NodeIndex n, std::optional<double> duration_s) override {
    set_condition(n, NodeCondition::kPoweringUp);
    actions_.push_back("power up " + node_name(n) + (duration_s ? " for " + seconds(*duration_s) : std::string()));
  }
  void power_down_node(NodeIndex n) override {
    set_condition(n, NodeCondition::kPoweringDown);
    actions_.push_back("power down " + node_name(n));
  }
  void delete_node(NodeIndex n, std::string_view reason) override {
    set_condition(n, NodeCondition::kPoweredDown);
    actions_.push_back("delete " + node_name(n) + " '" + std::string(reason) + "'");
  }

 private:
  std::string id(JobIndex job) const { return "job " + std::to_string(state_->spec(job).id); }
  static std::string seconds(double s) {
    std::string t = std::to_string(s);
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t + " s";
  }
  void finish_as(JobIndex job, JobState state) {
    state_->finish(job, state, now_);
    state_->release(job);
  }
  // Ends the running jobs on node `n` NODE_FAIL (released at once); returns how many.
  std::uint32_t end_jobs_on(NodeIndex n) {
    std::uint32_t ended = 0;
    for (JobIndex j = 0; j < state_->job_count(); ++j) {
      if (state_->job(j).state != JobState::kRunning) continue;
      for (const NodeAllocation& a : state_->allocation(j)) {
        if (a.node != n) continue;
        finish_as(j, JobState::kNodeFail);
        ++ended;
        break;
      }
    }
    return ended;
  }

  ClusterConfig config_;
  std::unique_ptr<ClusterState> state_;
  SimTime now_ = 0;
  SimTime expected_return_ = 0;
  std::map<std::string, Spend> spend_;
  std::vector<std::string> actions_;
  std::vector<std::tuple<ControllerId, TimerId, double>> timers_;
};

}  // namespace gputwin::testing
