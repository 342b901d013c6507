// Deterministic event queue: a binary heap of small POD events ordered by (time, sequence).
// Cancellation is by generation counters held by the owner of the target, never by searching the heap.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sim_time.hpp"

namespace gputwin {

/// One scheduled event. `kind` and `target` are interpreted by whoever scheduled it; `generation`
/// lets the owner of `target` ignore events that were cancelled after they were pushed.
struct Event {
  SimTime time = 0;              ///< When the event fires.
  std::uint64_t sequence = 0;    ///< Push order; breaks ties between events at the same time.
  std::uint32_t kind = 0;        ///< Event type, defined by the world that pushed it.
  std::uint32_t generation = 0;  ///< Generation of the target when pushed (for cancellation).
  std::uint64_t target = 0;      ///< Index of the job, node or activity the event concerns.
};

/// Min-heap of events by (time, sequence): events at equal times fire in push order.
class EventQueue {
 public:
  /// Schedules an event; returns its sequence number.
  std::uint64_t push(SimTime time, std::uint32_t kind, std::uint64_t target, std::uint32_t generation = 0);
  /// Removes and returns the earliest event. The queue must not be empty.
  Event pop();
  /// The earliest event without removing it. The queue must not be empty.
  [[nodiscard]] const Event& top() const { return heap_.front(); }
  /// True when no event is scheduled.
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  /// Number of scheduled events (including cancelled ones not yet popped).
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  /// Total events ever pushed.
  [[nodiscard]] std::uint64_t pushed() const { return next_sequence_; }
  /// Reserves room for `n` pending events.
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace gputwin
