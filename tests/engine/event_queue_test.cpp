#include "engine/event_queue.hpp"

#include <gtest/gtest.h>

#include "engine/rng.hpp"

namespace gputwin {
namespace {

TEST(EventQueue, PopsInTimeOrderAndEqualTimesInPushOrder) {
  EventQueue q;
  q.push(30, 1, 100);
  q.push(10, 1, 101);
  q.push(20, 1, 102);
  q.push(10, 2, 103);  // same time as 101, pushed later
  EXPECT_EQ(q.pop().target, 101u);
  EXPECT_EQ(q.pop().target, 103u);
  EXPECT_EQ(q.pop().target, 102u);
  EXPECT_EQ(q.pop().target, 100u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, ManyRandomEventsComeOutSorted) {
  EventQueue q;
  Rng rng(7);
  for (int i = 0; i < 10000; ++i) q.push(rng.uniform_int(0, 1000), 0, static_cast<std::uint64_t>(i));
  Event prev = q.pop();
  while (!q.empty()) {
    Event e = q.pop();
    ASSERT_TRUE(prev.time < e.time || (prev.time == e.time && prev.sequence < e.sequence));
    prev = e;
  }
  EXPECT_EQ(q.pushed(), 10000u);
}

TEST(SimTime, TicksAndConversions) {
  EXPECT_EQ(from_seconds(3), 3'000'000);
  EXPECT_EQ(to_seconds(from_seconds(-1) + 1), -1);  // floor toward -inf
  EXPECT_EQ(next_tick_at_or_after(611 * kMicrosPerSecond, 0, 30 * kMicrosPerSecond), 630 * kMicrosPerSecond);
  EXPECT_EQ(next_tick_at_or_after(630 * kMicrosPerSecond, 0, 30 * kMicrosPerSecond), 630 * kMicrosPerSecond);
  EXPECT_EQ(next_tick_at_or_after(0, -5 * kMicrosPerSecond, 30 * kMicrosPerSecond), 25 * kMicrosPerSecond);
}

}  // namespace
}  // namespace gputwin
