// Binary heap with hand-written sift operations: no std::function, no per-event allocation.
#include "engine/event_queue.hpp"

#include <cassert>
#include <utility>

namespace gputwin {
namespace {

bool earlier(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.sequence < b.sequence);
}

}  // namespace

std::uint64_t EventQueue::push(SimTime time, std::uint32_t kind, std::uint64_t target, std::uint32_t generation) {
  const std::uint64_t seq = next_sequence_++;
  heap_.push_back(Event{time, seq, kind, generation, target});
  std::size_t i = heap_.size() - 1;
  Event moving = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(moving, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = moving;
  return seq;
}

Event EventQueue::pop() {
  assert(!heap_.empty());
  Event result = heap_.front();
  Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return result;
  std::size_t i = 0;
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], last)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = last;
  return result;
}

}  // namespace gputwin
