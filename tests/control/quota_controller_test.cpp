// quota_controller alone, driven by a scripted world (tests/support/fake_world.hpp): the check timer and admissions
// in, with the users' spend set by hand; the exact actions, timers and quota events out.
#include "control/quota_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <charconv>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/fake_world.hpp"

namespace gputwin {
namespace {

using ::testing::ElementsAre;
using testing::FakeWorld;
using ::testing::IsEmpty;

// A number in its shortest exact form (126, 110.00000000000001), so that text comparisons are exact.
std::string num(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Quota events as text: "600 s alice block job 0 spend 120 projected 126".
std::vector<std::string> texts(const std::vector<QuotaEvent>& events) {
  std::vector<std::string> out;
  for (const QuotaEvent& e : events) {
    out.push_back(num(to_seconds_f(e.time)) + " s " + e.user + " " + e.action + " job " + std::to_string(e.job_id) +
                  " spend " + num(e.spend_usd) + " projected " + num(e.projected_usd));
  }
  return out;
}

// The events recorded since `from` (index), as text.
std::vector<std::string> texts_since(const QuotaController& q, std::size_t from) {
  const std::vector<QuotaEvent>& all = q.events();
  return texts(std::vector<QuotaEvent>(all.begin() + static_cast<std::ptrdiff_t>(from), all.end()));
}

JobSpec job(std::uint64_t id, const std::string& user) {
  JobSpec s;
  s.id = id;
  s.user = user;
  s.gpus_per_node = 1;
  return s;
}

Quota quota(const std::string& user, double limit, double warn_pct, double buffer_pct, QuotaAction action) {
  Quota q;
  q.user = user;
  q.limit_usd = limit;
  q.warn_pct = warn_pct;
  q.buffer_pct = buffer_pct;
  q.action = action;
  return q;
}

// Runs one quota check at `t` seconds as the world would: the controller's timer fires.
void check_at(FakeWorld& w, QuotaController& q, double t) {
  w.set_now_s(t);
  q.on_timer(0);
}

TEST(QuotaController, SetsNoTimerAndRefusesNothingWithoutQuotas) {
  FakeWorld w(1, 8, {job(1, "alice")});
  CostConfig cost;
  QuotaController q(cost, w);
  q.on_start();
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_EQ(q.admit(0), PendingReason::kNone);
  EXPECT_THAT(q.events(), IsEmpty());
}

TEST(QuotaController, ChecksAtTheStartThenEveryQuotaCheckPeriod) {
  // quota_check_s 300: the first check is due at the start (now, 5 s), each check re-arms the timer 300 s after
  // it fires. Another timer id is not the check: no re-arm.
  FakeWorld w(1, 8);
  CostConfig cost;
  cost.quota_check_s = 300;
  cost.quotas.push_back(quota("alice", 100, 80, 0, QuotaAction::kWarn));
  QuotaController q(cost, w);
  w.set_now_s(5);
  q.on_start();
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kQuota, TimerId{0}, 5.0)));
  check_at(w, q, 5);
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kQuota, TimerId{0}, 305.0)));
  check_at(w, q, 305);
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kQuota, TimerId{0}, 605.0)));
  w.set_now_s(400);
  q.on_timer(1);
  EXPECT_THAT(w.take_timers(), IsEmpty());
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

TEST(QuotaController, WarnsOnceWhenSpendReachesWarnPctAndAWarnQuotaNeverBlocks) {
  // limit 1000, warn 80%: warns when spend >= 800 (spend, not the projection). quota_check_s 60.
  // 0 s: spend 700, burn 600/h -> projected 700 + 600 x 60 / 3600 = 710; 700 < 800: nothing.
  // 60 s: spend 799.5 (projected 809.5, above 800: still nothing).
  // 120 s: spend 800, burn 600/h -> warn, projected 810.
  // 180 s: spend 5000, burn 36000/h -> projected 5600, far past the limit: no second warning, and a warn quota
  // neither blocks nor cancels (alice's running job runs on, her jobs are admitted).
  FakeWorld w(1, 8, {job(1, "alice"), job(2, "alice")});
  CostConfig cost;
  cost.quotas.push_back(quota("alice", 1000, 80, 0, QuotaAction::kWarn));
  QuotaController q(cost, w);
  w.run(0, {0}, 8);
  w.set_spend("alice", 700, 600);
  check_at(w, q, 0);
  w.set_spend("alice", 799.5, 600);
  check_at(w, q, 60);
  EXPECT_THAT(q.events(), IsEmpty());
  w.set_spend("alice", 800, 600);
  check_at(w, q, 120);
  EXPECT_THAT(texts(q.events()), ElementsAre("120 s alice warn job 0 spend 800 projected 810"));
  w.set_spend("alice", 5000, 36000);
  check_at(w, q, 180);
  EXPECT_EQ(q.events().size(), 1u);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_EQ(w.state().job(0).state, JobState::kRunning);
  EXPECT_EQ(q.admit(1), PendingReason::kNone);
  EXPECT_EQ(q.events().size(), 1u);
}

TEST(QuotaController, BlockAndKillCancelsTheUsersRunningAndPendingJobsWhenTheProjectionPassesTheBuffer) {
  // limit 100, buffer 25%: blocks when projected > 125; warn 80%: warns at spend >= 80. quota_check_s 300.
  // 0 s: spend 50, burn 120/h -> 50 + 120 x 300 / 3600 = 60: nothing.
  // 300 s: spend 115, burn 120/h -> projected 125, not past 125: warn only (115 >= 80).
  // 600 s: spend 120, burn 72/h -> 120 + 72 x 300 / 3600 = 126 > 125: block. alice's running jobs 11 (n001) and
  // 15 (n001 + n002) are cancelled (event "cancel"), her submitted pending job 13 leaves the queue ("refuse"), in
  // job order; her unsubmitted job 14 and finished job 17, and bob's jobs 12 (running) and 16 (pending), stay.
  FakeWorld w(2, 8,
              {job(11, "alice"), job(12, "bob"), job(13, "alice"), job(14, "alice"), job(15, "alice"), job(16, "bob"),
               job(17, "alice")});
  CostConfig cost;
  cost.quota_check_s = 300;
  cost.quotas.push_back(quota("alice", 100, 80, 25, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  w.run(6, {1}, 1);
  w.finish(6);
  w.run(0, {0}, 2);
  w.run(1, {1}, 2);
  w.submit(2);
  w.run(4, {0, 1}, 2);
  w.submit(5);
  w.set_spend("alice", 50, 120);
  w.set_spend("bob", 1000, 1000);  // bob has no quota
  check_at(w, q, 0);
  EXPECT_THAT(q.events(), IsEmpty());
  w.set_spend("alice", 115, 120);
  check_at(w, q, 300);
  EXPECT_THAT(texts(q.events()), ElementsAre("300 s alice warn job 0 spend 115 projected 125"));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_spend("alice", 120, 72);
  check_at(w, q, 600);
  EXPECT_THAT(w.take_actions(),
              ElementsAre("cancel job 11 AssocGrpBillingMinutes", "cancel job 13 AssocGrpBillingMinutes",
                          "cancel job 15 AssocGrpBillingMinutes"));
  EXPECT_THAT(texts_since(q, 1), ElementsAre("600 s alice block job 0 spend 120 projected 126",
                                             "600 s alice cancel job 11 spend 120 projected 126",
                                             "600 s alice refuse job 13 spend 120 projected 126",
                                             "600 s alice cancel job 15 spend 120 projected 126"));
  EXPECT_EQ(w.state().job(0).state, JobState::kCancelled);
  EXPECT_EQ(w.state().job(1).state, JobState::kRunning);
  EXPECT_EQ(w.state().job(2).state, JobState::kCancelled);
  EXPECT_EQ(w.state().job(3).state, JobState::kPending);
  EXPECT_FALSE(w.state().job(3).submitted);
  EXPECT_EQ(w.state().job(4).state, JobState::kCancelled);
  EXPECT_EQ(w.state().job(5).state, JobState::kPending);
  EXPECT_EQ(w.state().job(6).state, JobState::kCompleted);
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kQuota, TimerId{0}, 300.0),
                                           std::make_tuple(ControllerId::kQuota, TimerId{0}, 600.0),
                                           std::make_tuple(ControllerId::kQuota, TimerId{0}, 900.0)));
}

TEST(QuotaController, ABlockedUserIsRefusedAtAdmissionAndOthersAreAdmitted) {
  // limit 100, buffer 0: blocks when projected > 100. quota_check_s 60. At 0 s spend 90, burn 720/h ->
  // 90 + 720 x 60 / 3600 = 102 > 100: block (and warn: 90 >= 80); no jobs run yet, so no action.
  // At 30 s alice's job 21 asks to run (spend now 96, burn 720/h -> projected 96 + 12 = 108): refused with
  // AssocGrpBillingMinutes and a "refuse" event; bob's job 22 is admitted, no event; alice's requeued job 23 too
  // is refused (at 45 s, spend 99, projected 111). Admission takes no action itself (the world rejects).
  FakeWorld w(1, 8, {job(21, "alice"), job(22, "bob"), job(23, "alice")});
  CostConfig cost;
  cost.quotas.push_back(quota("alice", 100, 80, 0, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  EXPECT_EQ(q.admit(0), PendingReason::kNone);  // not blocked yet
  w.set_spend("alice", 90, 720);
  check_at(w, q, 0);
  EXPECT_THAT(texts(q.events()), ElementsAre("0 s alice warn job 0 spend 90 projected 102",
                                             "0 s alice block job 0 spend 90 projected 102"));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_now_s(30);
  w.set_spend("alice", 96, 720);
  EXPECT_EQ(q.admit(0), PendingReason::kAssocGrpBillingMinutes);
  EXPECT_EQ(q.admit(1), PendingReason::kNone);
  w.set_now_s(45);
  w.set_spend("alice", 99, 720);
  EXPECT_EQ(q.admit(2), PendingReason::kAssocGrpBillingMinutes);
  EXPECT_THAT(texts_since(q, 2), ElementsAre("30 s alice refuse job 21 spend 96 projected 108",
                                             "45 s alice refuse job 23 spend 99 projected 111"));
  EXPECT_THAT(w.take_actions(), IsEmpty());
}

TEST(QuotaController, ABlockedQuotaIsNotCheckedAgain) {
  // Blocked at 0 s (spend 200 > limit 100, burn 0: projected 200). Later checks, with spend still rising, record
  // nothing and take no action, though the timer keeps being re-armed (60 s, 120 s, 180 s).
  FakeWorld w(1, 8, {job(31, "alice")});
  CostConfig cost;
  cost.quotas.push_back(quota("alice", 100, 80, 0, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  w.run(0, {0}, 8);
  w.set_spend("alice", 200, 0);
  check_at(w, q, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("cancel job 31 AssocGrpBillingMinutes"));
  EXPECT_THAT(texts(q.events()), ElementsAre("0 s alice warn job 0 spend 200 projected 200",
                                             "0 s alice block job 0 spend 200 projected 200",
                                             "0 s alice cancel job 31 spend 200 projected 200"));
  w.set_spend("alice", 300, 6000);
  check_at(w, q, 60);
  check_at(w, q, 120);
  EXPECT_EQ(q.events().size(), 3u);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kQuota, TimerId{0}, 60.0),
                                           std::make_tuple(ControllerId::kQuota, TimerId{0}, 120.0),
                                           std::make_tuple(ControllerId::kQuota, TimerId{0}, 180.0)));
}

TEST(QuotaController, BlocksOnTheProjectionBeforeAnyWarning) {
  // The warning looks at spend, the block at the projection: limit 100, warn 80%, buffer 0, quota_check_s 600.
  // Spend 70, burn 300/h -> projected 70 + 300 x 600 / 3600 = 120 > 100: block, but 70 < 80: no warning.
  FakeWorld w(1, 8, {job(41, "alice")});
  CostConfig cost;
  cost.quota_check_s = 600;
  cost.quotas.push_back(quota("alice", 100, 80, 0, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  w.run(0, {0}, 4);
  w.set_spend("alice", 70, 300);
  check_at(w, q, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("cancel job 41 AssocGrpBillingMinutes"));
  EXPECT_THAT(texts(q.events()), ElementsAre("0 s alice block job 0 spend 70 projected 120",
                                             "0 s alice cancel job 41 spend 70 projected 120"));
}

TEST(QuotaController, TwoQuotasOnTheSameUserEachWarnAndTheBlockingOneBlocks) {
  // alice has a warn quota (limit 100, warn 50%: at spend >= 50) and a block_and_kill one (limit 200, warn 90%:
  // at >= 180, buffer 0: blocks when projected > 200). quota_check_s 60.
  // 0 s: spend 60, burn 0: the first warns (60 >= 50); the second: 60 < 180, 60 <= 200: nothing.
  // 60 s: spend 190, burn 1200/h -> projected 190 + 20 = 210: the first already warned (and never blocks); the
  // second warns (190 >= 180) and blocks, cancelling job 51. Both quotas act on the one user: job 52 is refused.
  FakeWorld w(1, 8, {job(51, "alice"), job(52, "alice")});
  CostConfig cost;
  cost.quotas.push_back(quota("alice", 100, 50, 0, QuotaAction::kWarn));
  cost.quotas.push_back(quota("alice", 200, 90, 0, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  q.on_start();
  EXPECT_THAT(w.take_timers(), ElementsAre(std::make_tuple(ControllerId::kQuota, TimerId{0}, 0.0)));
  w.run(0, {0}, 4);
  w.set_spend("alice", 60, 0);
  check_at(w, q, 0);
  EXPECT_THAT(texts(q.events()), ElementsAre("0 s alice warn job 0 spend 60 projected 60"));
  EXPECT_THAT(w.take_actions(), IsEmpty());
  w.set_spend("alice", 190, 1200);
  check_at(w, q, 60);
  EXPECT_THAT(w.take_actions(), ElementsAre("cancel job 51 AssocGrpBillingMinutes"));
  EXPECT_THAT(texts_since(q, 1), ElementsAre("60 s alice warn job 0 spend 190 projected 210",
                                             "60 s alice block job 0 spend 190 projected 210",
                                             "60 s alice cancel job 51 spend 190 projected 210"));
  EXPECT_EQ(q.admit(1), PendingReason::kAssocGrpBillingMinutes);
  EXPECT_THAT(texts_since(q, 4), ElementsAre("60 s alice refuse job 52 spend 190 projected 210"));
}

TEST(QuotaController, TwoBlockingQuotasOnTheSameUserEachRecordTheirBlockAndCancelOnce) {
  // alice: block_and_kill at limit 100 and at limit 150 (buffer 0, warn 80%: at >= 80 and >= 120). quota_check_s
  // 60, burn 0 (projected = spend).
  // 0 s: spend 120: the first warns and blocks (120 > 100), cancelling job 61; the second warns (120 >= 120) but
  // 120 <= 150. 60 s: spend 160: the first is blocked, not checked; the second passes 150 and records its own
  // block, with nothing left to cancel (any later job of alice's was refused at admission). 120 s: both blocked.
  FakeWorld w(1, 8, {job(61, "alice")});
  CostConfig cost;
  cost.quotas.push_back(quota("alice", 100, 80, 0, QuotaAction::kBlockAndKill));
  cost.quotas.push_back(quota("alice", 150, 80, 0, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  w.run(0, {0}, 4);
  w.set_spend("alice", 120, 0);
  check_at(w, q, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("cancel job 61 AssocGrpBillingMinutes"));
  EXPECT_THAT(
      texts(q.events()),
      ElementsAre("0 s alice warn job 0 spend 120 projected 120", "0 s alice block job 0 spend 120 projected 120",
                  "0 s alice cancel job 61 spend 120 projected 120", "0 s alice warn job 0 spend 120 projected 120"));
  w.set_spend("alice", 160, 0);
  check_at(w, q, 60);
  EXPECT_THAT(w.take_actions(), IsEmpty());
  EXPECT_THAT(texts_since(q, 4), ElementsAre("60 s alice block job 0 spend 160 projected 160"));
  check_at(w, q, 120);
  EXPECT_EQ(q.events().size(), 5u);
}

TEST(QuotaController, QuotasOfDifferentUsersAreIndependent) {
  // alice (limit 100) and bob (limit 1000), both block_and_kill, buffer 10%, quota_check_s 60, burn 0.
  // alice spends 120 > 110: blocked, her job 71 cancelled; bob spends 500 (< 800 warn, < 1100): nothing, his job
  // 72 runs on and he is admitted; carol has no quota (spend unknown to the world: 0).
  FakeWorld w(2, 8, {job(71, "alice"), job(72, "bob"), job(73, "bob"), job(74, "carol")});
  CostConfig cost;
  cost.quotas.push_back(quota("alice", 100, 80, 10, QuotaAction::kBlockAndKill));
  cost.quotas.push_back(quota("bob", 1000, 80, 10, QuotaAction::kBlockAndKill));
  QuotaController q(cost, w);
  w.run(0, {0}, 4);
  w.run(1, {1}, 4);
  w.set_spend("alice", 120, 0);
  w.set_spend("bob", 500, 0);
  check_at(w, q, 0);
  EXPECT_THAT(w.take_actions(), ElementsAre("cancel job 71 AssocGrpBillingMinutes"));
  EXPECT_THAT(texts(q.events()), ElementsAre("0 s alice warn job 0 spend 120 projected 120",
                                             "0 s alice block job 0 spend 120 projected 120",
                                             "0 s alice cancel job 71 spend 120 projected 120"));
  EXPECT_EQ(w.state().job(1).state, JobState::kRunning);
  EXPECT_EQ(q.admit(2), PendingReason::kNone);
  EXPECT_EQ(q.admit(3), PendingReason::kNone);
  EXPECT_EQ(q.events().size(), 3u);
}

}  // namespace
}  // namespace gputwin
