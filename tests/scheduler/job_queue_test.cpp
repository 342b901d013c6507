// JobQueue against a plain sorted vector: random inserts (at the back, before the head, in the middle), removals
// marked anywhere, rekeying and cancellations give the same entries in the same order, and next_candidate what a
// linear scan finds.
#include "scheduler/job_queue.hpp"

#include <gtest/gtest.h>

#include <random>

namespace gputwin {
namespace {

std::vector<QueueKey> contents(const JobQueue& queue) {
  return {queue.entries().begin(), queue.entries().end()};
}

bool same(const std::vector<QueueKey>& a, const std::vector<QueueKey>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].job != b[i].job || a[i].k1 != b[i].k1 || a[i].submit_s != b[i].submit_s) return false;
  }
  return true;
}

// Chunks of 128 entries (the default), and of 2 and 5 so that splits, merges and emptied chunks happen all the time.
class JobQueueChunks : public ::testing::TestWithParam<std::size_t> {};

TEST_P(JobQueueChunks, MatchesASortedVectorUnderRandomOperations) {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    JobQueue queue(GetParam());
    std::vector<QueueKey> model;
    JobIndex next = 0;
    std::int64_t clock = 0;
    const int steps = 300 + static_cast<int>(rng() % 400);
    for (int step = 0; step < steps; ++step) {
      const unsigned op = rng() % 10;
      if (op < 5 || model.empty()) {  // submissions: mostly appended, some with a higher or lower priority
        const unsigned burst = 1 + rng() % 8;
        for (unsigned b = 0; b < burst; ++b) {
          const std::uint64_t k1 = rng() % 4 == 0 ? rng() % 3 : 1;
          const auto cpus = static_cast<std::uint16_t>(rng() % 5 == 0 ? rng() % 300 : rng() % 8);
          const auto gpus = static_cast<std::uint16_t>(rng() % 3 == 0 ? rng() % 16 : 0);
          const auto limit = static_cast<std::uint32_t>(rng() % 1000);
          const auto part = static_cast<std::uint16_t>((step / 40) % 3 == 0 ? 1 : 0);  // runs of one partition
          const QueueKey key{k1, 0, ++clock, next, next, cpus, gpus, limit, part};
          ++next;
          queue.insert(key);
          model.insert(std::upper_bound(model.begin(), model.end(), key), key);
        }
      } else if (op < 9) {  // a pass removes some positions: the head, a few scattered, or the tail
        const std::size_t n = model.size();
        std::vector<std::size_t> picks;
        const unsigned shape = rng() % 3;
        const std::size_t count = 1 + rng() % std::min<std::size_t>(n, 12);
        for (std::size_t c = 0; c < count; ++c) {
          if (shape == 0) picks.push_back(c);                                            // the head, as fcfs
          if (shape == 1) picks.push_back(rng() % n);                                    // anywhere, as backfilling
          if (shape == 2) picks.push_back(n - 1 - rng() % std::min<std::size_t>(n, 5));  // near the tail
        }
        // Marked in walk order (increasing) as passes do; a position marked twice counts once.
        std::sort(picks.begin(), picks.end());
        const JobQueue::Entries view = queue.entries();
        for (std::size_t p : picks) queue.remove_at(p);
        picks.erase(std::unique(picks.begin(), picks.end()), picks.end());
        for (std::size_t i = picks.size(); i-- > 0;) model.erase(model.begin() + static_cast<std::ptrdiff_t>(picks[i]));
        queue.compact();
        ASSERT_EQ(view.size(), model.size()) << "seed " << seed << " step " << step;  // the view follows the queue
      } else if (rng() % 2 == 0) {                                                    // a cancellation
        const std::size_t p = rng() % model.size();
        ASSERT_TRUE(queue.remove_job(model[p].job));
        model.erase(model.begin() + static_cast<std::ptrdiff_t>(p));
        ASSERT_FALSE(queue.remove_job(next + 1));
      } else {  // priorities change: every key rewritten, both re-sorted
        const auto rekey = [](QueueKey& k) { k.k1 = (k.job * 2654435761U) % 5; };
        queue.rebuild(rekey);
        for (QueueKey& k : model) rekey(k);
        std::sort(model.begin(), model.end());
      }
      ASSERT_TRUE(same(contents(queue), model)) << "seed " << seed << " step " << step;
      // next_candidate finds what a linear scan finds, from anywhere, for any free and spare resources and limit.
      for (int probe = 0; probe < 4; ++probe) {
        const std::size_t from = model.empty() ? 0 : rng() % (model.size() + 1);
        FitFilter filter;
        filter.free_cpus = rng() % 4 == 0 ? rng() % 400 : rng() % 6;
        filter.free_gpus = rng() % 20;
        if (rng() % 2 == 0) {  // textbook EASY's hold on the head's partition
          filter.partition = rng() % 3 == 0 ? FitFilter::kAllPartitions : rng() % 2;  // easy: every job held
          filter.limit_s = rng() % 1200;
          filter.spare_cpus = rng() % 4;
          filter.spare_gpus = rng() % 4;
        }
        const auto admitted = [&](const QueueKey& k) {
          const bool fits = k.least_cpus <= filter.free_cpus && k.least_gpus <= filter.free_gpus;
          const bool held = (filter.partition == FitFilter::kAllPartitions || k.partition == filter.partition) &&
                            k.limit_s > filter.limit_s;
          return fits && (!held || (k.least_cpus <= filter.spare_cpus && k.least_gpus <= filter.spare_gpus));
        };
        std::size_t expected = from;
        while (expected < model.size() && !admitted(model[expected])) ++expected;
        ASSERT_EQ(queue.next_candidate(from, filter), expected) << "seed " << seed << " step " << step;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(JobQueue, JobQueueChunks, ::testing::Values(128, 5, 2));

TEST(JobQueue, RemovingTheHeadOfALongQueueKeepsItsOrderAndGivesBackTheFreedSlots) {
  JobQueue queue;
  for (JobIndex j = 0; j < 10000; ++j) queue.insert(QueueKey{0, 0, j, j, j});
  for (JobIndex j = 0; j < 9990; ++j) {
    queue.remove_at(0);
    queue.compact();
    ASSERT_EQ(queue.entries()[0].job, j + 1);
  }
  ASSERT_EQ(queue.size(), 10u);
  // A key sorting before the head takes a freed slot; one after every entry goes to the back.
  queue.insert(QueueKey{0, 0, -1, 0, 42});
  queue.insert(QueueKey{1, 0, 0, 0, 43});
  const std::vector<QueueKey> all = contents(queue);
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all.front().job, 42u);
  EXPECT_EQ(all[1].job, 9990u);
  EXPECT_EQ(all.back().job, 43u);
}

}  // namespace
}  // namespace gputwin
