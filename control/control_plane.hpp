// ControlPlane: the controllers of one cluster (the scheduler, and the health, scaling, quota and operations
// controllers the scenario turns on) as a world sees them. A world hands every observation to the plane, which
// tells the controllers in a fixed order: health, scaling, quota, operations, then the scheduler, so a node's
// recovery or a pool's bookkeeping is settled before the scheduler looks at the cluster again.
//
//   ControlPlane plane;
//   plane.add(ControllerId::kScheduler, scheduler.get());
//   plane.add(ControllerId::kHealth, health.get());
//   world.set_control_plane(&plane);  // SimWorld or SlurmWorld
#pragma once

#include <array>
#include <cstdint>

#include "world/controller.hpp"

namespace gputwin {

/// The controllers of a cluster and the order in which they hear of things.
class ControlPlane {
 public:
  /// Adds `controller` as `id` (replacing any before it); null removes it. Not owned.
  void add(ControllerId id, Controller* controller);
  /// The controller added as `id`, or null.
  [[nodiscard]] Controller* get(ControllerId id) const { return by_id_[static_cast<std::size_t>(id)]; }

  /// Starts controller `id` (worlds start them one by one, in the order their first actions must take).
  void start(ControllerId id) {
    if (Controller* c = get(id)) c->on_start();
  }
  /// Routes a timer to its controller.
  void on_timer(ControllerId id, TimerId timer) {
    if (Controller* c = get(id)) c->on_timer(timer);
  }
  /// kNone if every controller admits the job, else the first refusal's reason.
  [[nodiscard]] PendingReason admit(JobIndex job) {
    for (std::size_t i = 0; i < count_; ++i) {
      const PendingReason r = ordered_[i]->admit(job);
      if (r != PendingReason::kNone) return r;
    }
    return PendingReason::kNone;
  }
  /// Tells every controller, in order.
  void on_instant_end() {
    each([](Controller& c) { c.on_instant_end(); });
  }
  void on_job_submitted(JobIndex job) {
    each([job](Controller& c) { c.on_job_submitted(job); });
  }
  void on_job_adopted(JobIndex job) {
    each([job](Controller& c) { c.on_job_adopted(job); });
  }
  void on_job_started(JobIndex job) {
    each([job](Controller& c) { c.on_job_started(job); });
  }
  void on_job_released(JobIndex job) {
    each([job](Controller& c) { c.on_job_released(job); });
  }
  void on_job_requeued(JobIndex job) {
    each([job](Controller& c) { c.on_job_requeued(job); });
  }
  void on_job_cancelled(JobIndex job) {
    each([job](Controller& c) { c.on_job_cancelled(job); });
  }
  void on_job_updated(JobIndex job, const JobUpdate& update) {
    each([&](Controller& c) { c.on_job_updated(job, update); });
  }
  void on_node_changed(NodeIndex n, NodeCondition before, NodeCondition after) {
    each([&](Controller& c) { c.on_node_changed(n, before, after); });
  }
  void on_health_event(const HealthEvent& event) {
    each([&](Controller& c) { c.on_health_event(event); });
  }
  void on_node_recovered(NodeIndex n) {
    each([n](Controller& c) { c.on_node_recovered(n); });
  }
  void on_node_booted(NodeIndex n, bool ok) {
    each([n, ok](Controller& c) { c.on_node_booted(n, ok); });
  }
  void on_node_powered_down(NodeIndex n) {
    each([n](Controller& c) { c.on_node_powered_down(n); });
  }
  void on_node_deleted(NodeIndex n) {
    each([n](Controller& c) { c.on_node_deleted(n); });
  }
  void on_node_reclaimed(NodeIndex n) {
    each([n](Controller& c) { c.on_node_reclaimed(n); });
  }

 private:
  template <typename F>
  void each(F&& f) {
    for (std::size_t i = 0; i < count_; ++i) f(*ordered_[i]);
  }

  std::array<Controller*, kControllerCount> by_id_{};
  std::array<Controller*, kControllerCount> ordered_{};  // the added controllers in notification order
  std::size_t count_ = 0;
};

}  // namespace gputwin
