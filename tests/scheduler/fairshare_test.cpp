// Association tree, usage and fair share (scheduler/fairshare.hpp): Fair Tree (fair_tree.c) and classic
// (priority_multifactor.c), checked against Slurm's own regression tests and hand-worked trees.
#include "scheduler/fairshare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gputwin {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNoVal = 4294967294.0;  // Slurm's NO_VAL: LevelFS of root and of Fairshare=parent accounts.

std::string f6(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", x);  // sshare's "%.6f" (infinity prints "inf")
  return buf;
}

/// One `sshare -lP` row as Slurm's testsuite prints it (sshare/process.c): Account|User|RawShares|NormShares|
/// RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins|. Fair Tree leaves FairShare blank for
/// accounts and LevelFS blank for Fairshare=parent; root shows only NormShares, RawUsage and EffectvUsage. Classic
/// rows (test24.1) stop after FairShare. Nothing runs, so the TRES columns are "" and "cpu=0".
std::string sshare_row(const AssociationTree& t, AssocId id, bool fair_tree) {
  const AssociationView v = t.view(id);
  const std::string usage = std::to_string(static_cast<std::uint64_t>(v.raw_usage));
  if (id == 0) return "root|||" + f6(v.norm_shares) + "|" + usage + "||" + f6(v.effective_usage) + "||||cpu=0|";
  std::string row = v.account + "|" + v.user + "|" + (v.shares_parent ? "parent" : std::to_string(v.raw_shares)) + "|" +
                    f6(v.norm_shares) + "|" + usage + "|" + f6(v.norm_usage) + "|" + f6(v.effective_usage) + "|";
  if (!fair_tree) return row + f6(v.fs_factor) + "|";
  row += (v.user.empty() ? "" : f6(v.fs_factor)) + "|";
  row += (v.shares_parent ? "" : f6(v.level_fs)) + "|";
  return row + "|cpu=0|";
}

AssocId user_id(const AssociationTree& t, const std::string& user, const std::string& account) {
  const std::int64_t acct = t.find_account(account);
  EXPECT_GE(acct, 0) << account;
  const std::int64_t id = t.find_user(user, static_cast<AssocId>(acct));
  EXPECT_GE(id, 0) << user << " in " << account;
  return static_cast<AssocId>(id);
}

AssocId account_id(const AssociationTree& t, const std::string& account) {
  const std::int64_t id = t.find_account(account);
  EXPECT_GE(id, 0) << account;
  return static_cast<AssocId>(id);
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Fair Tree against Slurm's published behaviour.
//
// https://slurm.schedmd.com/fair_tree.html (doc/html/fair_tree.shtml, read at SchedMD/slurm master and at the
// BYU 2014 original) has no numeric worked example: only the qualitative UserA/UserB example, reproduced with our own
// numbers in FairTreeDocExample below. The numeric reference is therefore Slurm's own Fair Tree regression test,
// testsuite/expect/test24.4 (expected `sshare -lP` rows) with the tree built in testsuite/expect/test24.4.prog.c.
// ---------------------------------------------------------------------------------------------------------------

/// The tree of test24.4.prog.c, in its insertion order. The program sets usage_raw on every association, but
/// assoc_mgr only keeps the users' usage and sums it up the tree (aC is given 30 and its user 30; sshare shows 30),
/// so usage is added on users only. Fairshare=parent associations are given raw shares 1 to show they are ignored.
AssociationTree make_test24_4_tree() {
  AssociationTree t;
  auto use = [&t](AssocId id, double usage) { t.add_usage(id, usage); };
  const AssocId aA = t.add_account("aA", 0, 40);
  const AssocId aAA = t.add_account("aAA", aA, 30);
  use(t.add_user("uAA1", aAA, 1), 20);
  const AssocId aAB = t.add_account("aAB", aA, 10);
  use(t.add_user("uAB1", aAB, 1), 25);
  t.add_user("uAB2", aAB, 1);
  const AssocId aB = t.add_account("aB", 0, 60);
  const AssocId aBA = t.add_account("aBA", aB, 25);
  use(t.add_user("uBA1", aBA, 1), 25);
  const AssocId aBB = t.add_account("aBB", aB, 35);
  t.add_user("uBB1", aBB, 1);
  const AssocId aC = t.add_account("aC", 0, 0);
  use(t.add_user("uC1", aC, 0), 30);
  const AssocId aD = t.add_account("aD", 0, 50);
  const AssocId aDA = t.add_account("aDA", aD, 1, /*shares_parent=*/true);
  use(t.add_user("uDA1", aDA, 1, /*shares_parent=*/true), 10);
  use(t.add_user("uDA2", aDA, 30), 10);
  use(t.add_user("uDA3", aDA, 50), 25);
  use(t.add_user("uD1", aD, 1, /*shares_parent=*/true), 20);
  use(t.add_user("uD2", aD, 40), 20);
  use(t.add_user("uD3", aD, 50), 25);
  const AssocId aE = t.add_account("aE", 0, 10);
  t.add_user("aE1", aE, 10);
  t.add_user("aE2", aE, 10);
  t.add_user("u1", 0, 10);
  const AssocId aF = t.add_account("aF", 0, 20);
  t.add_user("uF1", aF, 10);
  t.add_user("uF2", aF, 20);
  const AssocId aG = t.add_account("aG", 0, 8);
  use(t.add_user("uG1", aG, 10), 10);
  const AssocId aGA = t.add_account("aGA", aG, 10);
  use(t.add_user("uGA1", aGA, 20), 4);
  use(t.add_user("uGA2", aGA, 20), 6);
  use(t.add_user("u2", 0, 10), 10);
  return t;
}

TEST(FairTreeTest, ReproducesSlurmTest24_4SshareRows) {
  AssociationTree t = make_test24_4_tree();
  t.compute_fair_tree();
  ASSERT_EQ(t.size(), 35u);
  ASSERT_EQ(t.user_count(), 21u);
  // Verbatim from testsuite/expect/test24.4 (SchedMD/slurm), one row per association.
  const std::vector<std::string> expected{
      "root|||0.000000|240||1.000000||||cpu=0|",
      "root|u1|10|0.048077|0|0.000000|0.000000|1.000000|inf||cpu=0|",
      "root|u2|10|0.048077|10|0.041667|0.041667|0.666667|1.153846||cpu=0|",
      "aA||40|0.192308|45|0.187500|0.187500||1.025641||cpu=0|",
      "aAA||30|0.750000|20|0.083333|0.444444||1.687500||cpu=0|",
      "aAA|uAA1|1|1.000000|20|0.083333|1.000000|0.619048|1.000000||cpu=0|",
      "aAB||10|0.250000|25|0.104167|0.555556||0.450000||cpu=0|",
      "aAB|uAB1|1|0.500000|25|0.104167|1.000000|0.523810|0.500000||cpu=0|",
      "aAB|uAB2|1|0.500000|0|0.000000|0.000000|0.571429|inf||cpu=0|",
      "aB||60|0.288462|25|0.104167|0.104167||2.769231||cpu=0|",
      "aBA||25|0.416667|25|0.104167|1.000000||0.416667||cpu=0|",
      "aBA|uBA1|1|1.000000|25|0.104167|1.000000|0.714286|1.000000||cpu=0|",
      "aBB||35|0.583333|0|0.000000|0.000000||inf||cpu=0|",
      "aBB|uBB1|1|1.000000|0|0.000000|0.000000|0.761905|inf||cpu=0|",
      "aC||0|0.000000|30|0.125000|0.125000||0.000000||cpu=0|",
      "aC|uC1|0|0.000000|30|0.125000|1.000000|0.047619|0.000000||cpu=0|",
      "aD||50|0.240385|110|0.458333|0.458333||0.524476||cpu=0|",
      "aD|uD1|parent|0.240385|20|0.083333|0.181818|0.476190|||cpu=0|",
      "aD|uD2|40|0.235294|20|0.083333|0.181818|0.238095|1.294118||cpu=0|",
      "aD|uD3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118||cpu=0|",
      "aDA||parent|0.240385|45|0.187500|0.409091||||cpu=0|",
      "aDA|uDA1|parent|0.240385|10|0.041667|0.090909|0.476190|||cpu=0|",
      "aDA|uDA2|30|0.176471|10|0.041667|0.090909|0.380952|1.941176||cpu=0|",
      "aDA|uDA3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118||cpu=0|",
      "aE||10|0.048077|0|0.000000|0.000000||inf||cpu=0|",
      "aE|aE1|10|0.500000|0|0.000000|0.000000|1.000000|inf||cpu=0|",
      "aE|aE2|10|0.500000|0|0.000000|0.000000|1.000000|inf||cpu=0|",
      "aF||20|0.096154|0|0.000000|0.000000||inf||cpu=0|",
      "aF|uF1|10|0.333333|0|0.000000|0.000000|1.000000|inf||cpu=0|",
      "aF|uF2|20|0.666667|0|0.000000|0.000000|1.000000|inf||cpu=0|",
      "aG||8|0.038462|20|0.083333|0.083333||0.461538||cpu=0|",
      "aG|uG1|10|0.500000|10|0.041667|0.500000|0.190476|1.000000||cpu=0|",
      "aGA||10|0.500000|10|0.041667|0.500000||1.000000||cpu=0|",
      "aGA|uGA1|20|0.500000|4|0.016667|0.400000|0.190476|1.250000||cpu=0|",
      "aGA|uGA2|20|0.500000|6|0.025000|0.600000|0.095238|0.833333||cpu=0|",
  };
  std::vector<std::string> actual;
  for (AssocId id : t.display_order()) actual.push_back(sshare_row(t, id, /*fair_tree=*/true));
  // sshare orders each level users first, then by name; our display order is insertion order. Compare as sets.
  std::sort(actual.begin(), actual.end());
  std::vector<std::string> sorted_expected = expected;
  std::sort(sorted_expected.begin(), sorted_expected.end());
  EXPECT_EQ(actual, sorted_expected);
}

TEST(FairTreeTest, ReproducesSlurmTest24_4RanksExactly) {
  AssociationTree t = make_test24_4_tree();
  t.compute_fair_tree();
  // rank = rnt = 21 user associations; fs_factor = rank / 21. Root level sorted by LF (root usage 240, level
  // shares 40+60+0+50+10+10+20+8+10 = 208): u1 inf (user first), aE inf, aF inf, aB (60/208)/(25/240) = 2.769,
  // u2 (10/208)/(10/240) = 1.154, aA (40/208)/(45/240) = 1.026, aD (50/208)/(110/240) = 0.524,
  // aG (8/208)/(20/240) = 0.462, aC 0 (S = 0).
  //   u1 21 (rnt 20); aE ties u1 (inf): its first user aE1 inherits 21, aE2 ties: 21 (rnt 18); aF ties aE: 21, 21
  //   (rnt 16); aB: aBB (inf) -> uBB1 16, aBA (0.417) -> uBA1 15; u2 14; aA: aAA (0.75/(20/45) = 1.6875) -> uAA1 13,
  //   aAB (0.25/(25/45) = 0.45) -> uAB2 (inf) 12, uAB1 (0.5/1) 11; aD (aDA is transparent; level shares
  //   30+50+40+50 = 170, usage 110): uDA1 (parent: inf) 10, uD1 (parent: inf, tie) 10, aDA (NO_VAL, nothing below),
  //   uDA2 (30/170)/(10/110) = 1.941 -> 8, uDA3 and uD3 (50/170)/(25/110) = 1.294 (same operands: tie) -> 7, 7,
  //   uD2 (40/170)/(20/110): equal on paper, a hair lower in long double (as in slurmctld) -> 5; aG: uG1
  //   (0.5/(10/20) = 1.0) 4, aGA (0.5/(10/20) = 1.0) ties uG1: uGA1 (0.5/0.4 = 1.25) inherits 4, uGA2 (0.5/0.6) 2;
  //   aC: uC1 (S = 0) 1.
  const std::vector<std::pair<const char*, const char*>> users{
      {"u1", "root"},  {"aE1", "aE"},   {"aE2", "aE"},   {"uF1", "aF"},   {"uF2", "aF"},   {"uBB1", "aBB"},
      {"uBA1", "aBA"}, {"u2", "root"},  {"uAA1", "aAA"}, {"uAB2", "aAB"}, {"uAB1", "aAB"}, {"uDA1", "aDA"},
      {"uD1", "aD"},   {"uDA2", "aDA"}, {"uDA3", "aDA"}, {"uD3", "aD"},   {"uD2", "aD"},   {"uG1", "aG"},
      {"uGA1", "aGA"}, {"uGA2", "aGA"}, {"uC1", "aC"}};
  const std::vector<int> ranks{21, 21, 21, 21, 21, 16, 15, 14, 13, 12, 11, 10, 10, 8, 7, 7, 5, 4, 4, 2, 1};
  ASSERT_EQ(users.size(), ranks.size());
  for (std::size_t i = 0; i < users.size(); ++i) {
    EXPECT_EQ(t.fs_factor(user_id(t, users[i].first, users[i].second)), ranks[i] / 21.0) << users[i].first;
  }
  // LevelFS as fractions (the page's "LF = S / U").
  EXPECT_DOUBLE_EQ(t.view(account_id(t, "aB")).level_fs, (60.0 / 208) / (25.0 / 240));
  EXPECT_DOUBLE_EQ(t.view(user_id(t, "u2", "root")).level_fs, (10.0 / 208) / (10.0 / 240));
  EXPECT_DOUBLE_EQ(t.view(account_id(t, "aA")).level_fs, (40.0 / 208) / (45.0 / 240));
  EXPECT_DOUBLE_EQ(t.view(account_id(t, "aAA")).level_fs, 0.75 / (20.0 / 45));
  EXPECT_DOUBLE_EQ(t.view(user_id(t, "uDA2", "aDA")).level_fs, (30.0 / 170) / (10.0 / 110));
  EXPECT_DOUBLE_EQ(t.view(user_id(t, "uGA1", "aGA")).level_fs, 1.25);
  EXPECT_EQ(t.view(user_id(t, "uAB2", "aAB")).level_fs, kInf);
  EXPECT_EQ(t.view(user_id(t, "uD1", "aD")).level_fs, kInf);  // Fairshare=parent user
  EXPECT_EQ(t.view(account_id(t, "aDA")).level_fs, kNoVal);   // Fairshare=parent account
  EXPECT_EQ(t.view(account_id(t, "aC")).level_fs, 0.0);       // S = 0
  EXPECT_EQ(t.view(0).level_fs, kNoVal);                      // root
  EXPECT_EQ(t.fs_factor(account_id(t, "aA")), 0.0);           // accounts carry no factor
}

TEST(FairTreeTest, FairTreeDocExample) {
  // fair_tree.html "Overview for End Users": root => Acct1 => Acct12 => UserA and root => Acct1 => Acct16 => UserB;
  // UserB has the higher FairShare exactly when Acct16 has the higher Level FS. The page gives no numbers; ours:
  // all shares 1, UserA used 30, UserB 10. Acct1 usage 40: Acct12 LF = 0.5 / (30/40) = 2/3, Acct16 LF =
  // 0.5 / (10/40) = 2. Acct1 = 1 / (40/40) = 1. Two users: UserB rank 2 -> 1.0, UserA rank 1 -> 0.5.
  AssociationTree t;
  const AssocId acct1 = t.add_account("Acct1", 0, 1);
  const AssocId acct12 = t.add_account("Acct12", acct1, 1);
  const AssocId acct16 = t.add_account("Acct16", acct1, 1);
  const AssocId user_a = t.add_user("UserA", acct12, 1);
  const AssocId user_b = t.add_user("UserB", acct16, 1);
  t.add_usage(user_a, 30);
  t.add_usage(user_b, 10);
  t.compute_fair_tree();
  EXPECT_DOUBLE_EQ(t.view(acct12).level_fs, 2.0 / 3.0);
  EXPECT_EQ(t.view(acct16).level_fs, 2.0);
  EXPECT_EQ(t.view(acct1).level_fs, 1.0);
  EXPECT_EQ(t.fs_factor(user_b), 1.0);
  EXPECT_EQ(t.fs_factor(user_a), 0.5);
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Fair Tree ties, zero usage, zero shares, Fairshare=parent.
// ---------------------------------------------------------------------------------------------------------------

TEST(FairTreeTest, SiblingUsersWithEqualLevelFsShareARankCompetitionStyle) {
  // Four users with 1 share each (S = 0.25), usage a1 10, a2 10, a3 20, a4 0 (account 40):
  // LF a4 inf, a1 = a2 = 0.25 / 0.25 = 1, a3 = 0.25 / 0.5 = 0.5. Ranks 4, 3, 3, then rnt = 1: "1224" ranking.
  AssociationTree t;
  const AssocId a = t.add_account("a", 0, 1);
  const AssocId a1 = t.add_user("a1", a, 1);
  const AssocId a2 = t.add_user("a2", a, 1);
  const AssocId a3 = t.add_user("a3", a, 1);
  const AssocId a4 = t.add_user("a4", a, 1);
  t.add_usage(a1, 10);
  t.add_usage(a2, 10);
  t.add_usage(a3, 20);
  t.compute_fair_tree();
  EXPECT_EQ(t.fs_factor(a4), 4 / 4.0);
  EXPECT_EQ(t.fs_factor(a1), 3 / 4.0);
  EXPECT_EQ(t.fs_factor(a2), 3 / 4.0);
  EXPECT_EQ(t.fs_factor(a3), 1 / 4.0);
}

TEST(FairTreeTest, UserSortsBeforeAccountWithEqualLevelFsAndTheAccountsFirstUserInheritsItsRank) {
  // Account A is added before user u, both 1 share (S = 0.5) and 10 usage (U = 0.5): LF 1 each; u sorts first
  // anyway (_cmp_level_fs). u: rank 3 (rnt 2). A ties u, so its first user keeps rank 3 ("a user with the same LF as
  // a sibling account receives the same rank as its highest ranked user"): y (no usage, inf) 3 (rnt 1), then
  // x (0.5 / 1) 1.
  AssociationTree t;
  const AssocId acct = t.add_account("A", 0, 1);
  const AssocId x = t.add_user("x", acct, 1);
  const AssocId y = t.add_user("y", acct, 1);
  const AssocId u = t.add_user("u", 0, 1);
  t.add_usage(x, 10);
  t.add_usage(u, 10);
  t.compute_fair_tree();
  EXPECT_EQ(t.view(acct).level_fs, 1.0);
  EXPECT_EQ(t.view(u).level_fs, 1.0);
  EXPECT_EQ(t.fs_factor(u), 3 / 3.0);
  EXPECT_EQ(t.fs_factor(y), 3 / 3.0);
  EXPECT_EQ(t.fs_factor(x), 1 / 3.0);
}

TEST(FairTreeTest, SecondOfTwoTiedAccountsLetsItsFirstUserInheritTheCurrentRank) {
  // slurm-semantics.md 1.5 "Tie merging": tied sibling accounts are walked one after the other, not merged; the
  // second recurses with account_tied, so its first user keeps the rank of the last user ranked in the first.
  // P and Q: 1 share each (S = 0.5), usage 10 each of 20: LF 1 and 1. In P: p1 used 2 (0.5/0.2 = 2.5), p2 8
  // (0.5/0.8 = 0.625); in Q: q1 used 1 (0.5/0.1 = 5), q2 9 (0.5/0.9 = 0.556). Four users:
  // p1 4 (rnt 3), p2 3 (rnt 2), q1 tied on entry -> 3 (rnt 1), q2 1.
  AssociationTree t;
  const AssocId p = t.add_account("P", 0, 1);
  const AssocId q = t.add_account("Q", 0, 1);
  const AssocId p1 = t.add_user("p1", p, 1);
  const AssocId p2 = t.add_user("p2", p, 1);
  const AssocId q1 = t.add_user("q1", q, 1);
  const AssocId q2 = t.add_user("q2", q, 1);
  t.add_usage(p1, 2);
  t.add_usage(p2, 8);
  t.add_usage(q1, 1);
  t.add_usage(q2, 9);
  t.compute_fair_tree();
  EXPECT_EQ(t.view(p).level_fs, t.view(q).level_fs);
  EXPECT_EQ(t.fs_factor(p1), 4 / 4.0);
  EXPECT_EQ(t.fs_factor(p2), 3 / 4.0);
  EXPECT_EQ(t.fs_factor(q1), 3 / 4.0);
  EXPECT_EQ(t.fs_factor(q2), 1 / 4.0);
}

TEST(FairTreeTest, ZeroUsageAccountsHaveInfiniteLevelFsAndTheirUsersAllTieAtTheTop) {
  // A and B have no usage (LF inf), C has all of it (S = 1/3, U = 1: LF 1/3). Five users:
  // A (not tied with the initial NO_VAL): a1 inf -> 5 (rnt 4), a2 tie -> 5 (rnt 3); B ties A: b1 inherits 5, b2 tie
  // 5 (rnt 1); C: c1 (1 / 1) -> 1.
  AssociationTree t;
  const AssocId a = t.add_account("A", 0, 1);
  const AssocId b = t.add_account("B", 0, 1);
  const AssocId c = t.add_account("C", 0, 1);
  const AssocId a1 = t.add_user("a1", a, 1);
  const AssocId a2 = t.add_user("a2", a, 1);
  const AssocId b1 = t.add_user("b1", b, 2);
  const AssocId b2 = t.add_user("b2", b, 1);
  const AssocId c1 = t.add_user("c1", c, 1);
  t.add_usage(c1, 100);
  t.compute_fair_tree();
  EXPECT_EQ(t.view(a).level_fs, kInf);
  EXPECT_EQ(t.view(b).level_fs, kInf);
  EXPECT_DOUBLE_EQ(t.view(c).level_fs, 1.0 / 3.0);
  for (AssocId id : {a1, a2, b1, b2}) EXPECT_EQ(t.fs_factor(id), 5 / 5.0) << id;
  EXPECT_EQ(t.fs_factor(c1), 1 / 5.0);
}

TEST(FairTreeTest, ZeroSharesRankLowestEvenWithoutUsage) {
  // z has 0 shares and no usage: LF 0 (S == 0 wins over U == 0), below w (S = 1/2, U = 5/5: LF 0.5) and v (inf).
  AssociationTree t;
  const AssocId a = t.add_account("a", 0, 1);
  const AssocId z = t.add_user("z", a, 0);
  const AssocId w = t.add_user("w", a, 1);
  const AssocId v = t.add_user("v", a, 1);
  t.add_usage(w, 5);
  t.compute_fair_tree();
  EXPECT_EQ(t.view(z).level_fs, 0.0);
  EXPECT_EQ(t.view(w).level_fs, 0.5);
  EXPECT_EQ(t.fs_factor(v), 3 / 3.0);
  EXPECT_EQ(t.fs_factor(w), 2 / 3.0);
  EXPECT_EQ(t.fs_factor(z), 1 / 3.0);
}

TEST(FairTreeTest, FairshareParentUserRanksFirstAndParentAccountIsTransparent) {
  // A (only child of root: S = 1) holds account P with Fairshare=parent (users p1: 1 share, 30 usage; p2: 3 shares,
  // 10 usage), its own user a1 (2 shares, 20 usage) and ap with Fairshare=parent (40 usage). P is transparent:
  // p1 and p2 compete with a1 and ap under A. Level shares of A = 1 + 3 + 2 = 6 (P and ap add nothing); A usage 100.
  //   ap: inf; P: NO_VAL (nothing below it); p2: (3/6)/(10/100) = 5; a1: (2/6)/(20/100) = 5/3;
  //   p1: (1/6)/(30/100) = 5/9. Four users: ap 4, p2 3, a1 2, p1 1.
  AssociationTree t;
  const AssocId acct_a = t.add_account("A", 0, 1);
  const AssocId acct_p = t.add_account("P", acct_a, 5, /*shares_parent=*/true);
  const AssocId p1 = t.add_user("p1", acct_p, 1);
  const AssocId p2 = t.add_user("p2", acct_p, 3);
  const AssocId a1 = t.add_user("a1", acct_a, 2);
  const AssocId ap = t.add_user("ap", acct_a, 9, /*shares_parent=*/true);
  t.add_usage(p1, 30);
  t.add_usage(p2, 10);
  t.add_usage(a1, 20);
  t.add_usage(ap, 40);
  t.compute_fair_tree();
  EXPECT_EQ(t.view(ap).level_fs, kInf);
  EXPECT_EQ(t.view(acct_p).level_fs, kNoVal);
  EXPECT_DOUBLE_EQ(t.view(p2).level_fs, 5.0);
  EXPECT_DOUBLE_EQ(t.view(a1).level_fs, 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(t.view(p1).level_fs, 5.0 / 9.0);
  EXPECT_EQ(t.fs_factor(ap), 4 / 4.0);
  EXPECT_EQ(t.fs_factor(p2), 3 / 4.0);
  EXPECT_EQ(t.fs_factor(a1), 2 / 4.0);
  EXPECT_EQ(t.fs_factor(p1), 1 / 4.0);
  // sshare view: S of a Fairshare=parent association is its fs parent's (A: 1/1); U is against the fs parent.
  EXPECT_EQ(t.view(ap).norm_shares, 1.0);
  EXPECT_EQ(t.view(acct_p).norm_shares, 1.0);
  EXPECT_EQ(t.view(p2).norm_shares, 0.5);
  EXPECT_DOUBLE_EQ(t.view(p1).effective_usage, 0.3);      // 30 / 100
  EXPECT_DOUBLE_EQ(t.view(acct_p).effective_usage, 0.4);  // 40 / 100
  // The real parent is unchanged for usage: P's raw usage is its users' 40.
  EXPECT_EQ(t.raw_usage(acct_p), 40.0);
  EXPECT_EQ(t.parent(p1), acct_p);
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Classic fair share.
// ---------------------------------------------------------------------------------------------------------------

TEST(ClassicFairShareTest, TwoLevelTreeByHandWithDampeningFactor2) {
  // root: A (3 shares), B (1). A: a1 (1), a2 (3). B: b1 (1). Usage a1 30, a2 10, b1 60 (root 100, A 40).
  //   A:  S = 3/4 = 0.75, U_A = 0.4, U_E = U_A (child of root) = 0.4, F = 2^-((0.4/0.75)/2) = 2^(-4/15) = 0.831238
  //   B:  S = 0.25, U_E = 0.6, F = 2^-((0.6/0.25)/2) = 2^(-6/5) = 0.435275
  //   a1: S = 0.75 * 1/4 = 0.1875, U_A = 0.3, U_E = 0.3 + (0.4 - 0.3) * 1/4 = 0.325,
  //       F = 2^-((0.325/0.1875)/2) = 2^(-13/15) = 0.548412
  //   a2: S = 0.75 * 3/4 = 0.5625, U_A = 0.1, U_E = 0.1 + (0.4 - 0.1) * 3/4 = 0.325,
  //       F = 2^-((0.325/0.5625)/2) = 2^(-13/45) = 0.818532
  //   b1: S = 0.25 * 1/1 = 0.25, U_E = 0.6 + (0.6 - 0.6) * 1 = 0.6, F = 2^(-6/5) = 0.435275
  AssociationTree t;
  const AssocId a = t.add_account("A", 0, 3);
  const AssocId b = t.add_account("B", 0, 1);
  const AssocId a1 = t.add_user("a1", a, 1);
  const AssocId a2 = t.add_user("a2", a, 3);
  const AssocId b1 = t.add_user("b1", b, 1);
  t.add_usage(a1, 30);
  t.add_usage(a2, 10);
  t.add_usage(b1, 60);
  t.compute_classic(2.0);
  EXPECT_EQ(t.view(a).norm_shares, 0.75);
  EXPECT_EQ(t.view(a1).norm_shares, 0.1875);
  EXPECT_EQ(t.view(a2).norm_shares, 0.5625);
  EXPECT_EQ(t.view(b1).norm_shares, 0.25);
  EXPECT_EQ(t.view(a).norm_usage, 0.4);
  EXPECT_EQ(t.view(a1).norm_usage, 0.3);
  EXPECT_EQ(t.view(a).effective_usage, 0.4);
  EXPECT_DOUBLE_EQ(t.view(a1).effective_usage, 0.325);
  EXPECT_DOUBLE_EQ(t.view(a2).effective_usage, 0.325);
  EXPECT_DOUBLE_EQ(t.view(b1).effective_usage, 0.6);
  EXPECT_DOUBLE_EQ(t.fs_factor(a), std::pow(2.0, -4.0 / 15));
  EXPECT_DOUBLE_EQ(t.fs_factor(b), std::pow(2.0, -6.0 / 5));
  EXPECT_DOUBLE_EQ(t.fs_factor(a1), std::pow(2.0, -13.0 / 15));
  EXPECT_DOUBLE_EQ(t.fs_factor(a2), std::pow(2.0, -13.0 / 45));
  EXPECT_DOUBLE_EQ(t.fs_factor(b1), std::pow(2.0, -6.0 / 5));
  EXPECT_EQ(f6(t.fs_factor(a1)), "0.548412");
  EXPECT_EQ(f6(t.fs_factor(a2)), "0.818532");
  // Without dampening (factor 1) the exponent doubles: a1 = 2^(-26/15).
  t.compute_classic(1.0);
  EXPECT_DOUBLE_EQ(t.fs_factor(a1), std::pow(2.0, -26.0 / 15));
  EXPECT_THROW(t.compute_classic(0.0), std::invalid_argument);
}

TEST(ClassicFairShareTest, ReproducesSlurmTest24_1SshareRows) {
  // testsuite/expect/test24.1 (SchedMD/slurm) with the tree of test24.1.prog.c plus the AccountG/User6 rows the
  // current expect file checks (0 shares, 30 usage). Root usage 100, root level shares 40 + 60 + 0 = 100.
  // E.g. AccountB: S = 0.4 * 30/40 = 0.3, U_E = 0.2 + (0.45 - 0.2) * 30/40 = 0.3875, F = 2^(-0.3875/0.3);
  // AccountF: U_E = 0 + (0.25 - 0) * 35/60 = 0.145833; AccountG: S = 0 -> F = 0.
  AssociationTree t;
  const AssocId acct_a = t.add_account("AccountA", 0, 40);
  const AssocId acct_b = t.add_account("AccountB", acct_a, 30);
  t.add_usage(t.add_user("User1", acct_b, 1), 20);
  const AssocId acct_c = t.add_account("AccountC", acct_a, 10);
  t.add_usage(t.add_user("User2", acct_c, 1), 25);
  t.add_user("User3", acct_c, 1);
  const AssocId acct_d = t.add_account("AccountD", 0, 60);
  const AssocId acct_e = t.add_account("AccountE", acct_d, 25);
  t.add_usage(t.add_user("User4", acct_e, 1), 25);
  const AssocId acct_f = t.add_account("AccountF", acct_d, 35);
  t.add_user("User5", acct_f, 1);
  const AssocId acct_g = t.add_account("AccountG", 0, 0);
  const AssocId user6 = t.add_user("User6", acct_g, 0);
  t.add_usage(user6, 30);
  t.compute_classic(1.0);
  const std::vector<std::pair<AssocId, std::string>> expected{
      {acct_a, "AccountA||40|0.400000|45|0.450000|0.450000|0.458502|"},
      {acct_b, "AccountB||30|0.300000|20|0.200000|0.387500|0.408479|"},
      {user_id(t, "User1", "AccountB"), "AccountB|User1|1|0.300000|20|0.200000|0.387500|0.408479|"},
      {acct_c, "AccountC||10|0.100000|25|0.250000|0.300000|0.125000|"},
      {user_id(t, "User2", "AccountC"), "AccountC|User2|1|0.050000|25|0.250000|0.275000|0.022097|"},
      {user_id(t, "User3", "AccountC"), "AccountC|User3|1|0.050000|0|0.000000|0.150000|0.125000|"},
      {acct_d, "AccountD||60|0.600000|25|0.250000|0.250000|0.749154|"},
      {acct_e, "AccountE||25|0.250000|25|0.250000|0.250000|0.500000|"},
      {user_id(t, "User4", "AccountE"), "AccountE|User4|1|0.250000|25|0.250000|0.250000|0.500000|"},
      {acct_f, "AccountF||35|0.350000|0|0.000000|0.145833|0.749154|"},
      {user_id(t, "User5", "AccountF"), "AccountF|User5|1|0.350000|0|0.000000|0.145833|0.749154|"},
      {acct_g, "AccountG||0|0.000000|30|0.300000|0.300000|0.000000|"},
  };
  for (const auto& [id, row] : expected) EXPECT_EQ(sshare_row(t, id, /*fair_tree=*/false), row);
  EXPECT_EQ(sshare_row(t, user6, false).rfind("AccountG|User6|0|", 0), 0u);  // the expect file checks this prefix
  EXPECT_EQ(t.fs_factor(user6), 0.0);
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Usage: add_usage, decay, reset.
// ---------------------------------------------------------------------------------------------------------------

TEST(UsageTest, AddUsagePropagatesToEveryAncestorIncludingRoot) {
  AssociationTree t;
  const AssocId a = t.add_account("a", 0, 1);
  const AssocId b = t.add_account("b", a, 1);
  const AssocId u = t.add_user("u", b, 1);
  const AssocId v = t.add_user("v", a, 1);
  t.add_usage(u, 100);  // u, b, a, root
  t.add_usage(v, 20);   // v, a, root
  t.add_usage(b, 5);    // b, a, root (usage charged to an account directly)
  EXPECT_EQ(t.raw_usage(u), 100.0);
  EXPECT_EQ(t.raw_usage(v), 20.0);
  EXPECT_EQ(t.raw_usage(b), 105.0);
  EXPECT_EQ(t.raw_usage(a), 125.0);
  EXPECT_EQ(t.raw_usage(0), 125.0);
}

TEST(UsageTest, DecayMultipliesEveryAssociationAndFloorsTheFactorAtDblMin) {
  AssociationTree t;
  const AssocId a = t.add_account("a", 0, 1);
  const AssocId u = t.add_user("u", a, 1);
  t.add_usage(u, 100);
  t.decay(0.5);  // 100 * 0.5
  EXPECT_EQ(t.raw_usage(u), 50.0);
  EXPECT_EQ(t.raw_usage(a), 50.0);
  EXPECT_EQ(t.raw_usage(0), 50.0);
  t.decay(1.0);  // _apply_decay skips 1
  EXPECT_EQ(t.raw_usage(u), 50.0);
  // A half-life of 7 days over a 5-minute tick: D = 1 - 0.693/604800, real_decay = D^300.
  const double d = std::pow(1.0 - 0.693 / 604800.0, 300.0);
  t.decay(d);
  EXPECT_EQ(t.raw_usage(u), 50.0 * d);
  // real_decay underflowing to 0 is floored at DBL_MIN: usage shrinks but never reaches 0 by decay.
  t.decay(0.0);
  EXPECT_EQ(t.raw_usage(u), 50.0 * d * DBL_MIN);
  EXPECT_GT(t.raw_usage(u), 0.0);
}

TEST(UsageTest, ResetZeroesAllUsageAndFairTreeThenTiesEveryone) {
  AssociationTree t;
  const AssocId a = t.add_account("a", 0, 1);
  const AssocId b = t.add_account("b", 0, 1);
  const AssocId u = t.add_user("u", a, 1);
  const AssocId v = t.add_user("v", b, 1);
  t.add_usage(u, 10);
  t.compute_fair_tree();
  EXPECT_EQ(t.fs_factor(v), 1.0);  // b unused (inf) ranks first
  EXPECT_EQ(t.fs_factor(u), 0.5);
  t.reset_usage();
  for (AssocId id : {AssocId{0}, a, b, u, v}) EXPECT_EQ(t.raw_usage(id), 0.0);
  t.compute_fair_tree();  // everything is inf: all users tie at the top
  EXPECT_EQ(t.fs_factor(u), 1.0);
  EXPECT_EQ(t.fs_factor(v), 1.0);
  EXPECT_EQ(t.view(u).norm_usage, 0.0);
  EXPECT_EQ(t.view(u).effective_usage, 0.0);
}

// ---------------------------------------------------------------------------------------------------------------
// 5. Structure: ids, lookup, display order, errors.
// ---------------------------------------------------------------------------------------------------------------

TEST(AssociationTreeTest, LookupAndDisplayOrder) {
  AssociationTree t;
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.find_account("root"), 0);
  const AssocId phys = t.add_account("phys", 0, 1);         // 1
  const AssocId alice = t.add_user("alice", phys, 1);       // 2
  const AssocId bio = t.add_account("bio", 0, 1);           // 3
  const AssocId carol = t.add_user("carol", 0, 1);          // 4: a user directly under root
  const AssocId theory = t.add_account("theory", phys, 1);  // 5
  const AssocId bob = t.add_user("bob", theory, 1);         // 6
  const AssocId alice_bio = t.add_user("alice", bio, 1);    // 7: same user, another account
  const AssocId dave = t.add_user("dave", phys, 1);         // 8
  EXPECT_EQ(t.size(), 9u);
  EXPECT_EQ(t.user_count(), 5u);
  EXPECT_EQ(t.find_account("phys"), phys);
  EXPECT_EQ(t.find_account("theory"), theory);
  EXPECT_EQ(t.find_account("nope"), -1);
  EXPECT_EQ(t.find_account("alice"), -1);  // a user is not an account
  EXPECT_EQ(t.find_user("alice", phys), alice);
  EXPECT_EQ(t.find_user("alice", bio), alice_bio);
  EXPECT_EQ(t.find_user("alice", theory), -1);
  EXPECT_EQ(t.find_user("carol", 0), carol);
  EXPECT_EQ(t.find_user("bob", theory), bob);
  EXPECT_TRUE(t.is_user(dave));
  EXPECT_FALSE(t.is_user(theory));
  EXPECT_FALSE(t.is_user(0));
  EXPECT_EQ(t.parent(bob), theory);
  EXPECT_EQ(t.parent(theory), phys);
  EXPECT_EQ(t.parent(0), 0u);
  EXPECT_EQ(t.view(alice_bio).account, "bio");
  EXPECT_EQ(t.view(alice_bio).user, "alice");
  EXPECT_EQ(t.view(theory).user, "");
  // Depth-first from root, children in insertion order, users and accounts interleaved.
  EXPECT_EQ(t.display_order(), (std::vector<AssocId>{0, phys, alice, theory, bob, dave, bio, alice_bio, carol}));
  EXPECT_EQ(t.fs_factor(alice), 0.0);  // before any compute
}

TEST(AssociationTreeTest, RejectsDuplicatesAndUnknownParents) {
  AssociationTree t;
  const AssocId phys = t.add_account("phys", 0, 1);
  const AssocId alice = t.add_user("alice", phys, 1);
  EXPECT_THROW(t.add_account("phys", 0, 1), std::invalid_argument);   // duplicate account (anywhere)
  EXPECT_THROW(t.add_account("root", 0, 1), std::invalid_argument);   // root exists
  EXPECT_THROW(t.add_account("x", 42, 1), std::invalid_argument);     // unknown parent
  EXPECT_THROW(t.add_account("x", alice, 1), std::invalid_argument);  // a user cannot be a parent
  EXPECT_THROW(t.add_account("", 0, 1), std::invalid_argument);
  EXPECT_THROW(t.add_user("alice", phys, 1), std::invalid_argument);  // duplicate association
  EXPECT_THROW(t.add_user("bob", 42, 1), std::invalid_argument);      // unknown account
  EXPECT_THROW(t.add_user("bob", alice, 1), std::invalid_argument);   // a user is not an account
  EXPECT_THROW(t.add_user("", phys, 1), std::invalid_argument);
  // Failed additions leave the tree unchanged.
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.user_count(), 1u);
  EXPECT_EQ(t.find_account("x"), -1);
}

TEST(AssociationTreeTest, AddingAssociationsAfterAComputeRebuildsTheLevels) {
  // Fair-share topology is cached: a user added later must join its level's shares and the rank count.
  AssociationTree t;
  const AssocId a = t.add_account("a", 0, 1);
  const AssocId u = t.add_user("u", a, 1);
  t.add_usage(u, 10);
  t.compute_fair_tree();
  EXPECT_EQ(t.fs_factor(u), 1.0);
  EXPECT_EQ(t.view(u).norm_shares, 1.0);
  const AssocId v = t.add_user("v", a, 3);  // S: u 1/4, v 3/4; v unused (inf) ranks first
  t.compute_fair_tree();
  EXPECT_EQ(t.view(u).norm_shares, 0.25);
  EXPECT_EQ(t.fs_factor(v), 1.0);
  EXPECT_EQ(t.fs_factor(u), 0.5);
}

}  // namespace
}  // namespace gputwin
