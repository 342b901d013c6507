// SimWorld under a job-speed model: remaining work drains at the current speed, and a speed change moves the end.
#include <gtest/gtest.h>

#include <map>

#include "tests/support/test_cluster.hpp"

namespace gputwin {
namespace {

using testing::make_job;
using testing::make_scenario;

// A made-up contention rule: a job alone runs at 0.5; while two run, both run at 0.25.
class TwoJobContention final : public JobSpeedModel {
 public:
  double start(JobIndex job, std::span<const NodeAllocation>) override {
    running_.push_back(job);
    const double speed = running_.size() > 1 ? 0.25 : 0.5;
    for (JobIndex other : running_) {
      if (other != job) changes_.emplace_back(other, speed);
    }
    return speed;
  }
  void stop(JobIndex job) override {
    std::erase(running_, job);
    for (JobIndex other : running_) changes_.emplace_back(other, running_.size() > 1 ? 0.25 : 0.5);
  }
  void take_changes(std::vector<std::pair<JobIndex, double>>& out) override {
    out.insert(out.end(), changes_.begin(), changes_.end());
    changes_.clear();
  }

 private:
  std::vector<JobIndex> running_;
  std::vector<std::pair<JobIndex, double>> changes_;
};

TEST(SpeedModel, RemainingWorkDrainsAtTheCurrentSpeed) {
  // A (100 s of work) starts at 0 alone at 0.5. B (40 s of work) starts at 50: by then A did 50 x 0.5 = 25 s,
  // 75 s are left. Both run at 0.25: B needs 40 / 0.25 = 160 s and ends at 210; A does 160 x 0.25 = 40 s more
  // (35 left) and, alone again at 0.5, needs 35 / 0.5 = 70 s: A ends at 280.
  TwoJobContention model;
  RunOptions options;
  options.speed_model = &model;
  auto o = run_jobs(make_scenario(2, 1, 0, SchedulerPolicy::kFcfs),
                    {make_job(1, 0, 1, 1, 0, 1000, 100), make_job(2, 50, 1, 1, 0, 1000, 40)}, options);
  std::map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> times;
  for (JobIndex j = 0; j < o.state->job_count(); ++j) {
    times[o.state->spec(j).id] = {to_seconds(o.state->job(j).start), to_seconds(o.state->job(j).end)};
    EXPECT_EQ(o.state->job(j).state, JobState::kCompleted);
  }
  EXPECT_EQ(times[1], std::make_pair(std::int64_t{0}, std::int64_t{280}));
  EXPECT_EQ(times[2], std::make_pair(std::int64_t{50}, std::int64_t{210}));
}

TEST(SpeedModel, ASlowedJobHitsItsTimeLimit) {
  // 100 s of work at 0.5 needs 200 s; with a 150 s limit the job times out at 150.
  TwoJobContention model;
  RunOptions options;
  options.speed_model = &model;
  auto o = run_jobs(make_scenario(1, 1, 0, SchedulerPolicy::kFcfs), {make_job(1, 0, 1, 1, 0, 150, 100)}, options);
  EXPECT_EQ(o.state->job(0).state, JobState::kTimeout);
  EXPECT_EQ(to_seconds(o.state->job(0).end), 150);
}

}  // namespace
}  // namespace gputwin
