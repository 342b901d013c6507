#include "engine/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gputwin {
namespace {

TEST(Rng, SameSeedSameStream) {
  Rng a = Rng::stream(42, "arrivals");
  Rng b = Rng::stream(42, "arrivals");
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, NamedStreamsAreIndependentOfEachOther) {
  Rng a = Rng::stream(42, "arrivals");
  Rng b = Rng::stream(42, "runtimes");
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a.next_u64() == b.next_u64();
  EXPECT_EQ(equal, 0);
}

TEST(Rng, KnownFirstValueIsStableAcrossBuilds) {
  // xoshiro256** seeded by splitmix64(1): fixed by the algorithms, so a change here breaks every golden run.
  Rng r(1);
  const std::uint64_t first = r.next_u64();
  Rng again(1);
  EXPECT_EQ(first, again.next_u64());
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);  // published FNV-1a test vector
}

TEST(Rng, DistributionsHaveTheRightMoments) {
  Rng r(3);
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum_u += u;
    sum_e += r.exponential(5.0);
    const double z = r.normal();
    sum_n += z;
    sum_n2 += z * z;
  }
  EXPECT_NEAR(sum_u / n, 0.5, 0.005);
  EXPECT_NEAR(sum_e / n, 5.0, 0.05);
  EXPECT_NEAR(sum_n / n, 0.0, 0.01);
  EXPECT_NEAR(sum_n2 / n, 1.0, 0.01);
}

TEST(Rng, UniformIntCoversRangeInclusive) {
  Rng r(9);
  int seen[6] = {0};
  for (int i = 0; i < 6000; ++i) {
    const auto v = r.uniform_int(1, 6);
    ASSERT_GE(v, 1);
    ASSERT_LE(v, 6);
    seen[v - 1]++;
  }
  for (int c : seen) EXPECT_GT(c, 800);
}

}  // namespace
}  // namespace gputwin
