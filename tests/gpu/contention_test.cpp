// The contention models (gpu/contention.hpp) on hand-worked networks: where the equal split and SimGrid's max-min
// agree, where they differ, where contention matters, and that shares and changed_jobs() stay exact over many
// changes. Capacities: 400 GB/s is a node's 8 NDR NICs at 50 GB/s line rate each (gpu-domain.md 4.1-4.2).
#include "gpu/contention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gputwin {
namespace {

enum class Kind { kAnalytic, kSimGrid };

std::unique_ptr<ContentionModel> make(Kind kind, FlowNetwork net, double life_steps = 1e6) {
  if (kind == Kind::kAnalytic) return make_analytic_contention(std::move(net));
  // Pools: the first SimGrid model of the process sizes them; every test here fits in the defaults.
  SimGridOptions options;
  options.flow_life_steps = life_steps;
  return make_simgrid_contention(std::move(net), options);
}

using Keys = std::vector<JobKey>;
Keys changed(const ContentionModel& m) {
  return {m.changed_jobs().begin(), m.changed_jobs().end()};
}

constexpr double kEps = 1e-6;  // SimGrid's rates are measured from progress (~1e-10 relative noise)

class BothModels : public ::testing::TestWithParam<Kind> {};

INSTANTIATE_TEST_SUITE_P(Models, BothModels, ::testing::Values(Kind::kAnalytic, Kind::kSimGrid),
                         [](const auto& info) { return info.param == Kind::kAnalytic ? "Analytic" : "SimGrid"; });

// Two jobs, each a node NIC (400) into one shared uplink of capacity C = 400: each gets C / 2 = 200, share
// 200 / 400 = 0.5, in both models (one bottleneck, nothing left unused).
TEST_P(BothModels, TwoJobsSplitASharedUplink) {
  FlowNetwork net;
  LinkId nic_a = net.add_link(400), nic_b = net.add_link(400), uplink = net.add_link(400);
  auto m = make(GetParam(), net);
  m->add_job(1, std::vector<Flow>{{{nic_a, uplink}}});
  EXPECT_NEAR(m->share(1), 1.0, kEps);
  EXPECT_NEAR(m->alone_rate_gbps(1), 400, 400 * kEps);
  EXPECT_EQ(changed(*m), Keys{});
  m->add_job(2, std::vector<Flow>{{{nic_b, uplink}}});
  EXPECT_NEAR(m->rate_gbps(1), 200, 400 * kEps);
  EXPECT_NEAR(m->rate_gbps(2), 200, 400 * kEps);
  EXPECT_NEAR(m->share(1), 0.5, kEps);
  EXPECT_NEAR(m->share(2), 0.5, kEps);
  EXPECT_EQ(changed(*m), Keys{1});
}

// Two leaves of 4 nodes (nodes 0-3 and 4-7), one spine; every link 400, so each leaf's uplink is 4:1
// oversubscribed. Job 1 is a ring over nodes 0,1,4,5: 0->1 and 4->5 stay in their leaf, 1->4 and 5->0 cross the
// spine (leaf 0 up, leaf 1 down; leaf 1 up, leaf 0 down). Alone every link carries one of its flows: 400 each,
// share 1. Job 2, the same ring over nodes 2,3,6,7, puts a second flow on each leaf-spine link: the crossing
// flows get 400 / 2 = 200, job 1's slowest flow 200, share 200 / 400 = 0.5 (same in both models: the crossing
// flows are bottlenecked on the same links). Removing job 2 restores 1.
struct TwoLeaves {
  FlowNetwork net;
  std::vector<LinkId> up, down;
  LinkId up0, down0, up1, down1;  // leaf 0 -> spine, spine -> leaf 0, leaf 1 -> spine, spine -> leaf 1

  TwoLeaves() {
    for (int n = 0; n < 8; ++n) up.push_back(net.add_link(400, 0.6));
    for (int n = 0; n < 8; ++n) down.push_back(net.add_link(400, 0.6));
    up0 = net.add_link(400, 0.6);
    down0 = net.add_link(400, 0.6);
    up1 = net.add_link(400, 0.6);
    down1 = net.add_link(400, 0.6);
  }
  Flow route(int a, int b) const {
    if (a / 4 == b / 4) return Flow{{up[a], down[b]}};
    return a / 4 == 0 ? Flow{{up[a], up0, down1, down[b]}} : Flow{{up[a], up1, down0, down[b]}};
  }
  std::vector<Flow> ring(const std::vector<int>& nodes) const {
    std::vector<Flow> flows;
    for (std::size_t i = 0; i < nodes.size(); ++i) flows.push_back(route(nodes[i], nodes[(i + 1) % nodes.size()]));
    return flows;
  }
};

TEST_P(BothModels, OversubscribedSpineHalvesAJobAndRemovalRestoresIt) {
  TwoLeaves tree;
  auto m = make(GetParam(), tree.net);
  m->add_job(1, tree.ring({0, 1, 4, 5}));
  EXPECT_NEAR(m->share(1), 1.0, kEps);
  EXPECT_NEAR(m->rate_gbps(1), 400, 400 * kEps);
  m->add_job(2, tree.ring({2, 3, 6, 7}));
  EXPECT_NEAR(m->share(1), 0.5, kEps);
  EXPECT_NEAR(m->share(2), 0.5, kEps);
  EXPECT_NEAR(m->flow_rate_gbps(1, 0), 400, 400 * kEps);  // 0->1 stays in leaf 0: alone on its links
  EXPECT_NEAR(m->flow_rate_gbps(1, 1), 200, 400 * kEps);  // 1->4 crosses the spine
  EXPECT_EQ(changed(*m), Keys{1});
  m->remove_job(2);
  EXPECT_NEAR(m->share(1), 1.0, kEps);
  EXPECT_EQ(changed(*m), Keys{1});
  EXPECT_FALSE(m->contains(2));
  EXPECT_EQ(m->job_count(), 1u);
}

// changed_jobs() names exactly the jobs whose share moved: with jobs 1 and 2 as above (0.5 each), job 3 on its
// own link changes nobody; job 4 puts two flows on node 3's down link, which carries job 2's flow 2->3: three
// flows at 400 / 3 = 133.3, job 2's slowest flow drops from 200 to 133.3 (share 133.3 / 400 = 1/3), job 1 is
// untouched. Removing job 4 gives job 2 back 0.5; removing job 2 gives job 1 back 1. A job without flows (one
// node) has share 1 and changes nobody.
TEST_P(BothModels, ChangedJobsListsExactlyTheAffectedJobs) {
  TwoLeaves tree;
  LinkId storage = tree.net.add_link(50);
  auto m = make(GetParam(), tree.net);
  m->add_job(1, tree.ring({0, 1, 4, 5}));
  m->add_job(2, tree.ring({2, 3, 6, 7}));
  EXPECT_EQ(changed(*m), Keys{1});
  m->add_job(3, std::vector<Flow>{{{storage}}});
  EXPECT_EQ(changed(*m), Keys{});
  EXPECT_NEAR(m->share(3), 1.0, kEps);
  m->add_job(4, std::vector<Flow>{{{tree.down[3]}}, {{tree.down[3]}}});
  EXPECT_EQ(changed(*m), Keys{2});
  EXPECT_NEAR(m->share(2), 1.0 / 3, kEps);
  EXPECT_NEAR(m->share(1), 0.5, kEps);
  EXPECT_NEAR(m->alone_rate_gbps(4), 200, 400 * kEps);  // its two flows split node 3's link: 400 / 2
  EXPECT_NEAR(m->share(4), 133.333333 / 200, kEps);     // 400 / 3 of 200
  m->add_job(5, {});
  EXPECT_EQ(changed(*m), Keys{});
  EXPECT_EQ(m->share(5), 1.0);
  EXPECT_EQ(m->rate_gbps(5), 0.0);
  m->remove_job(5);
  EXPECT_EQ(changed(*m), Keys{});
  m->remove_job(4);
  EXPECT_EQ(changed(*m), Keys{2});
  EXPECT_NEAR(m->share(2), 0.5, kEps);
  m->remove_job(2);
  EXPECT_EQ(changed(*m), Keys{1});
  EXPECT_NEAR(m->share(1), 1.0, kEps);
}

// Many add/remove cycles leave no drift: after 300 random replacements on the two-leaf network (with SimGrid
// flows short-lived, so communications are restarted along the way), every share and flow rate equals that of a
// fresh model given only the surviving jobs.
TEST_P(BothModels, ManyCyclesGiveTheSharesOfAFreshModel) {
  TwoLeaves tree;
  auto m = make(GetParam(), tree.net, 6);
  std::uint64_t seed = 12345;
  auto rnd = [&](int n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((seed >> 33) % static_cast<std::uint64_t>(n));
  };
  auto random_ring = [&] {
    std::vector<int> nodes;
    int size = 2 + rnd(4);
    while (static_cast<int>(nodes.size()) < size) {
      int n = rnd(8);
      if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    }
    return tree.ring(nodes);
  };
  std::vector<std::pair<JobKey, std::vector<Flow>>> live;
  JobKey next = 1;
  for (int i = 0; i < 6; ++i) {
    live.emplace_back(next, random_ring());
    m->add_job(next++, live.back().second);
  }
  for (int c = 0; c < 300; ++c) {
    auto& victim = live[static_cast<std::size_t>(rnd(static_cast<int>(live.size())))];
    m->remove_job(victim.first);
    victim = {next, random_ring()};
    m->add_job(next++, victim.second);
  }
  auto fresh = make(GetParam(), tree.net);
  for (const auto& [key, flows] : live) fresh->add_job(key, flows);
  ASSERT_EQ(m->job_count(), 6u);
  for (const auto& [key, flows] : live) {
    EXPECT_NEAR(m->share(key), fresh->share(key), kEps) << "job " << key;
    for (std::size_t f = 0; f < flows.size(); ++f)
      EXPECT_NEAR(m->flow_rate_gbps(key, f), fresh->flow_rate_gbps(key, f), 400 * kEps) << key << "/" << f;
  }
}

// Parking lot, where the models differ. L1 = 400 carries job 1 (X) and job 2 (Y); L2 = 160 carries X and job 3
// (Z). Equal split: X = min(400/2, 160/2) = 80, Y = 400/2 = 200, Z = 80: L1 carries 280 of 400, 120 unused.
// Max-min (SimGrid): L2 is the bottleneck, X = Z = 160/2 = 80; Y takes what X leaves on L1: 400 - 80 = 320.
// Shares: Y 200/400 = 0.5 (analytic) vs 320/400 = 0.8 (SimGrid); X and Z 80/160 = 0.5 in both.
TEST(ContentionModels, ParkingLotMaxMinGivesTheUnusedCapacityToTheFreeFlow) {
  FlowNetwork net;
  LinkId l1 = net.add_link(400), l2 = net.add_link(160);
  auto analytic = make_analytic_contention(net);
  auto simgrid = make_simgrid_contention(net);
  for (ContentionModel* m : {analytic.get(), simgrid.get()}) {
    m->add_job(1, std::vector<Flow>{{{l1, l2}}});
    m->add_job(2, std::vector<Flow>{{{l1}}});
    m->add_job(3, std::vector<Flow>{{{l2}}});
    EXPECT_NEAR(m->rate_gbps(1), 80, 400 * kEps);
    EXPECT_NEAR(m->rate_gbps(3), 80, 400 * kEps);
    EXPECT_NEAR(m->share(1), 0.5, kEps);
    EXPECT_NEAR(m->share(3), 0.5, kEps);
  }
  EXPECT_NEAR(analytic->rate_gbps(2), 200, 400 * kEps);
  EXPECT_NEAR(analytic->share(2), 0.5, kEps);
  EXPECT_NEAR(simgrid->rate_gbps(2), 320, 400 * kEps);
  EXPECT_NEAR(simgrid->share(2), 0.8, kEps);
}

// The same three flows as one job, alone: max-min gives X 80, Y 320, Z 80 and the equal split X 80, Y 200, Z 80;
// the job's slowest flow is 80 either way, so it is not slowed by itself: share 1 (SimGrid's measured rate and the
// progressive-filling reference for "alone" agree).
TEST(ContentionModels, AJobAloneHasShareOneEvenWithItsOwnFlowsSharingLinks) {
  FlowNetwork net;
  LinkId l1 = net.add_link(400), l2 = net.add_link(160);
  std::vector<Flow> flows{{{l1, l2}}, {{l1}}, {{l2}}};
  auto analytic = make_analytic_contention(net);
  auto simgrid = make_simgrid_contention(net);
  analytic->add_job(1, flows);
  simgrid->add_job(1, flows);
  EXPECT_NEAR(simgrid->share(1), 1.0, kEps);
  EXPECT_NEAR(analytic->share(1), 1.0, kEps);
  EXPECT_NEAR(simgrid->alone_rate_gbps(1), 80, 400 * kEps);
  EXPECT_NEAR(simgrid->flow_rate_gbps(1, 1), 320, 400 * kEps);
  EXPECT_NEAR(analytic->flow_rate_gbps(1, 1), 200, 400 * kEps);
}

// A demand caps a flow (e.g. a job whose compute leaves the network idle 3/4 of the time): job 1 wants 100 of a
// 400 link shared with job 2. Max-min: job 1 gets its 100, job 2 the remaining 300 (share 300/400 = 0.75).
// Equal split: job 2 gets 400/2 = 200 (share 0.5); job 1 gets min(100, 200) = 100 in both (share 1).
TEST(ContentionModels, DemandCapsAFlowAndMaxMinHandsOnTheRest) {
  FlowNetwork net;
  LinkId l = net.add_link(400);
  auto analytic = make_analytic_contention(net);
  auto simgrid = make_simgrid_contention(net);
  for (ContentionModel* m : {analytic.get(), simgrid.get()}) {
    m->add_job(1, std::vector<Flow>{{{l}, 100}});
    m->add_job(2, std::vector<Flow>{{{l}}});
    EXPECT_NEAR(m->rate_gbps(1), 100, 400 * kEps);
    EXPECT_NEAR(m->share(1), 1.0, kEps);
  }
  EXPECT_NEAR(simgrid->rate_gbps(2), 300, 400 * kEps);
  EXPECT_NEAR(simgrid->share(2), 0.75, kEps);
  EXPECT_NEAR(analytic->share(2), 0.5, kEps);
}

// SimGrid communications that run out while their component is not read are restarted when it is read again:
// flow life 4 steps; jobs 1 and 2 share link a (200 each); 10 jobs added and removed on the separate link b run
// the engine 20 steps, long enough for both communications to run out unread. Removing job 1 then gives job 2
// the whole link (share 1); after 20 more steps job 2 has run out again, and adding job 20 on link a must read
// both at 400 / 2 = 200 (share 0.5 each).
TEST(ContentionModels, SimGridRestartsFlowsThatRanOutUnread) {
  FlowNetwork net;
  LinkId a = net.add_link(400), b = net.add_link(400);
  auto m = make_simgrid_contention(net, SimGridOptions{.flow_life_steps = 4});
  m->add_job(1, std::vector<Flow>{{{a}}});
  m->add_job(2, std::vector<Flow>{{{a}}});
  auto churn_elsewhere = [&] {
    for (JobKey j = 3; j < 13; ++j) {
      m->add_job(j, std::vector<Flow>{{{b}}});
      EXPECT_EQ(changed(*m), Keys{});
      m->remove_job(j);
    }
  };
  churn_elsewhere();
  m->remove_job(1);
  EXPECT_EQ(changed(*m), Keys{2});
  EXPECT_NEAR(m->share(2), 1.0, kEps);
  churn_elsewhere();
  m->add_job(20, std::vector<Flow>{{{a}}});
  EXPECT_EQ(changed(*m), Keys{2});
  for (JobKey j : {2, 20}) EXPECT_NEAR(m->share(j), 0.5, kEps) << j;
}

TEST(ContentionModels, SimGridModelsCoexistOnTheSharedEngine) {
  FlowNetwork net;
  LinkId l = net.add_link(400);
  auto first = make_simgrid_contention(net);
  auto second = make_simgrid_contention(net);
  first->add_job(1, std::vector<Flow>{{{l}}});
  second->add_job(1, std::vector<Flow>{{{l}}});
  second->add_job(2, std::vector<Flow>{{{l}}});
  EXPECT_NEAR(first->share(1), 1.0, kEps);  // its link is its own, not the second model's
  EXPECT_NEAR(second->share(1), 0.5, kEps);
  EXPECT_THROW(make_simgrid_contention(net, SimGridOptions{.flow_life_steps = 2}), FlowNetworkError);
}

TEST_P(BothModels, MalformedInputIsATypedErrorNamingJobFlowAndLink) {
  FlowNetwork net;
  net.add_link(400);
  auto m = make(GetParam(), net);
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const FlowNetworkError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] {
              m->add_job(7, std::vector<Flow>{{{0}}, {{99}}});
            }),
            "job 7: flow 1: link 99 does not exist (the network has 1 links)");
  EXPECT_FALSE(m->contains(7));  // nothing was added
  EXPECT_EQ(message([&] { m->add_job(7, std::vector<Flow>{{{0, 0}}}); }), "job 7: flow 0: link 0 appears twice");
  EXPECT_EQ(message([&] { m->add_job(7, std::vector<Flow>{{{}}}); }), "job 7: flow 0: empty route");
  EXPECT_EQ(message([&] {
              m->add_job(7, std::vector<Flow>{{{0}, -1}});
            }),
            "job 7: flow 0: demand_gbps must be a finite number >= 0, not -1.000000");
  m->add_job(7, std::vector<Flow>{{{0}}});
  EXPECT_EQ(message([&] { m->add_job(7, std::vector<Flow>{{{0}}}); }), "job 7 is already in the model");
  EXPECT_EQ(message([&] { m->remove_job(8); }), "job 8 is not in the model");
  EXPECT_EQ(message([&] { (void)m->share(8); }), "job 8 is not in the model");
  EXPECT_EQ(message([&] { (void)m->flow_rate_gbps(7, 1); }), "job 7: no flow 1 (it has 1)");
  FlowNetwork bad;
  bad.add_link(0);
  EXPECT_EQ(message([&] { make(GetParam(), bad); }), "link 0: capacity_gbps must be a finite number > 0, not 0.000000");
}

TEST(FlowNetwork, RouteLatencyAddsTheLinksLatencies) {
  FlowNetwork net;
  LinkId a = net.add_link(400, 0.6), b = net.add_link(800, 1.5);
  EXPECT_DOUBLE_EQ(route_latency_us(net, Flow{{a, b}}), 2.1);  // 0.6 + 1.5
}

}  // namespace
}  // namespace gputwin
