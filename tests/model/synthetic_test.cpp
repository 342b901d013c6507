// Tests for the synthetic workload generator: determinism, calibration against the trace statistics it is
// fitted to (InternLM/AcmeTrace data/cluster_summary.csv), job shapes that fit the cluster, and input errors.
#include "model/synthetic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gputwin {
namespace {

// `count` identical nodes in one default partition "gpu".
ClusterConfig make_cluster(std::uint32_t count, std::uint32_t gpus, std::uint32_t cpus = 64,
                           std::uint64_t memory_mb = 512000) {
  ClusterConfig cluster;
  PartitionConfig partition;
  partition.name = "gpu";
  partition.is_default = true;
  for (std::uint32_t i = 0; i < count; ++i) {
    NodeConfig node;
    node.name = "gpu";
    node.name += std::to_string(i + 1);
    node.cpus = cpus;
    node.memory_mb = memory_mb;
    node.gpus = gpus;
    cluster.nodes.push_back(node);
    partition.nodes.push_back(i);
  }
  cluster.partitions.push_back(partition);
  return cluster;
}

std::vector<JobSpec> generate(const std::string& profile, std::uint64_t jobs, const ClusterConfig& cluster,
                              std::uint64_t seed = 42, double load = 0.9) {
  SyntheticWorkload w;
  w.profile = profile;
  w.jobs = jobs;
  w.load = load;
  return generate_synthetic(w, cluster, seed);
}

std::uint64_t gpus_of(const JobSpec& job) {
  return std::uint64_t{job.nodes} * job.gpus_per_node;
}

// Duration as the trace would record it: the run, or the limit for jobs that run into it.
std::int64_t observed_s(const JobSpec& job) {
  return std::min(job.run_time_s, job.time_limit_s);
}

bool same_job(const JobSpec& a, const JobSpec& b) {
  return a.id == b.id && a.name == b.name && a.user == b.user && a.account == b.account && a.partition == b.partition &&
         a.qos == b.qos && a.submit_s == b.submit_s && a.nodes == b.nodes && a.cpus == b.cpus &&
         a.gpus_per_node == b.gpus_per_node && a.mem_per_node_mb == b.mem_per_node_mb && a.exclusive == b.exclusive &&
         a.time_limit_s == b.time_limit_s && a.run_time_s == b.run_time_s && a.outcome == b.outcome;
}

double mean_gpus(const std::vector<JobSpec>& jobs) {
  double sum = 0.0;
  for (const auto& j : jobs) sum += static_cast<double>(gpus_of(j));
  return sum / static_cast<double>(jobs.size());
}

double median_observed_s(const std::vector<JobSpec>& jobs) {
  std::vector<std::int64_t> runs;
  runs.reserve(jobs.size());
  for (const auto& j : jobs) runs.push_back(observed_s(j));
  std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2), runs.end());
  return static_cast<double>(runs[runs.size() / 2]);
}

// GPU-seconds asked over GPU-seconds available between the first and the last submit.
double offered_load(const std::vector<JobSpec>& jobs, std::uint64_t cluster_gpus) {
  double work = 0.0;
  for (const auto& j : jobs) work += static_cast<double>(gpus_of(j)) * static_cast<double>(observed_s(j));
  const double span = static_cast<double>(jobs.back().submit_s - jobs.front().submit_s);
  return work / (span * static_cast<double>(cluster_gpus));
}

// Trace statistics (cluster_summary.csv): mean GPUs, median run, and COMPLETED / CANCELLED / FAILED by count.
struct TraceStats {
  const char* profile;
  double mean_gpus;
  double median_run_s;
  double completed;
  double cancelled;
  double failed;
};
constexpr TraceStats kTraces[] = {
    {"acme-seren", 5.68, 122, 0.497, 0.075, 0.429},
    {"acme-kalos", 26.77, 124, 0.541, 0.062, 0.397},
    {"philly", 1.928, 874, 0.604, 0.090, 0.305},
    {"helios", 3.716, 206, 0.624, 0.221, 0.155},
};

// A Seren-sized cluster: 288 nodes x 8 GPUs (2,304 GPUs), so even 2048-GPU Helios jobs are not capped.
const ClusterConfig& big_cluster() {
  static const ClusterConfig cluster = make_cluster(288, 8);
  return cluster;
}

TEST(SyntheticTest, ListsProfilesWithSources) {
  const auto profiles = synthetic_profiles();
  std::vector<std::string> names;
  for (const auto& p : profiles) {
    names.emplace_back(p.name);
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_FALSE(p.summary.empty()) << p.name;
  }
  for (const char* expected : {"acme-seren", "philly", "helios"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  for (const auto& trace : kTraces) {
    EXPECT_NE(std::find(names.begin(), names.end(), trace.profile), names.end()) << trace.profile;
  }
}

TEST(SyntheticTest, SameSeedSameJobsDifferentSeedDifferentJobs) {
  const ClusterConfig cluster = make_cluster(32, 8);
  const auto a = generate("acme-seren", 5000, cluster, 7);
  const auto b = generate("acme-seren", 5000, cluster, 7);
  const auto c = generate("acme-seren", 5000, cluster, 8);
  ASSERT_EQ(a.size(), 5000u);
  ASSERT_EQ(b.size(), a.size());
  ASSERT_EQ(c.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_job(a[i], b[i])) << "job " << i;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differing += same_job(a[i], c[i]) ? 0 : 1;
  EXPECT_GT(differing, a.size() / 2);
}

TEST(SyntheticTest, StreamsAreIndependent) {
  // Changing only the user population must not move sizes, run times, limits, outcomes or submit times.
  const ClusterConfig cluster = make_cluster(32, 8);
  SyntheticWorkload w;
  w.profile = "philly";
  w.jobs = 2000;
  const auto a = generate_synthetic(w, cluster, 3);
  w.users = 7;
  w.accounts = 3;
  const auto b = generate_synthetic(w, cluster, 3);
  ASSERT_EQ(a.size(), b.size());
  bool users_differ = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].submit_s, b[i].submit_s);
    EXPECT_EQ(a[i].run_time_s, b[i].run_time_s);
    EXPECT_EQ(a[i].time_limit_s, b[i].time_limit_s);
    EXPECT_EQ(a[i].nodes, b[i].nodes);
    EXPECT_EQ(a[i].outcome, b[i].outcome);
    users_differ = users_differ || a[i].user != b[i].user;
  }
  EXPECT_TRUE(users_differ);
}

TEST(SyntheticTest, OfferedLoadMatchesRequest) {
  const ClusterConfig cluster = make_cluster(32, 8);
  for (const auto& trace : kTraces) {
    for (double load : {0.5, 0.9, 1.3}) {
      const auto jobs = generate(trace.profile, 50000, cluster, 11, load);
      EXPECT_NEAR(offered_load(jobs, cluster.total_gpus()) / load, 1.0, 0.03) << trace.profile << " load " << load;
    }
  }
}

TEST(SyntheticTest, MeanGpusAndMedianRunMatchTraces) {
  for (const auto& trace : kTraces) {
    const auto jobs = generate(trace.profile, 100000, big_cluster(), 5);
    EXPECT_NEAR(mean_gpus(jobs) / trace.mean_gpus, 1.0, 0.20) << trace.profile;
    EXPECT_NEAR(median_observed_s(jobs) / trace.median_run_s, 1.0, 0.20) << trace.profile;
  }
}

TEST(SyntheticTest, OutcomeSharesMatchTraces) {
  for (const auto& trace : kTraces) {
    const auto jobs = generate(trace.profile, 100000, big_cluster(), 9);
    std::map<JobState, double> share;
    std::uint64_t failures = 0;
    std::uint64_t early_failures = 0;
    for (const auto& j : jobs) {
      share[j.outcome] += 1.0 / static_cast<double>(jobs.size());
      if (j.outcome == JobState::kFailed || j.outcome == JobState::kTimeout) {
        ++failures;
        if (observed_s(j) < 600) ++early_failures;
      }
    }
    // The traces count TIMEOUT as FAILED.
    EXPECT_NEAR(share[JobState::kCompleted], trace.completed, 0.02) << trace.profile;
    EXPECT_NEAR(share[JobState::kCancelled], trace.cancelled, 0.02) << trace.profile;
    EXPECT_NEAR(share[JobState::kFailed] + share[JobState::kTimeout], trace.failed, 0.02) << trace.profile;
    EXPECT_NEAR(share[JobState::kTimeout], 0.02, 0.005) << trace.profile;
    EXPECT_NEAR(static_cast<double>(early_failures) / static_cast<double>(failures), 0.73, 0.02) << trace.profile;
  }
}

TEST(SyntheticTest, SubmitTimesOrderedAndIdsSequential) {
  const ClusterConfig cluster = make_cluster(32, 8);
  const auto jobs = generate("helios", 20000, cluster);
  EXPECT_GE(jobs.front().submit_s, 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(jobs[i].id, i + 1);
    if (i > 0) {
      ASSERT_GE(jobs[i].submit_s, jobs[i - 1].submit_s) << "job " << jobs[i].id;
    }
  }
}

TEST(SyntheticTest, ArrivalsFollowTheDay) {
  // The rate multiplier is 0.5 at midnight and 1.5 at noon: the noon hours get about 3x the midnight hours.
  const ClusterConfig cluster = make_cluster(32, 8);
  const auto jobs = generate("philly", 100000, cluster);
  double night = 0.0;
  double noon = 0.0;
  for (const auto& j : jobs) {
    const std::int64_t hour = j.submit_s % 86400 / 3600;
    if (hour == 23 || hour == 0) night += 1.0;
    if (hour == 11 || hour == 12) noon += 1.0;
  }
  EXPECT_NEAR(noon / night, 3.0, 0.3);
}

TEST(SyntheticTest, JobsFitTheCluster) {
  const ClusterConfig cluster = make_cluster(32, 8, 64, 512000);
  for (const auto& trace : kTraces) {
    const auto jobs = generate(trace.profile, 20000, cluster, 13);
    for (const auto& j : jobs) {
      ASSERT_GE(j.nodes, 1u);
      ASSERT_LE(j.nodes, 32u);
      ASSERT_GE(j.gpus_per_node, 1u);
      ASSERT_LE(j.gpus_per_node, 8u);
      if (j.nodes > 1) {
        ASSERT_EQ(j.gpus_per_node, 8u) << "multi-node jobs take whole nodes";
      }
      const std::uint64_t gpus = gpus_of(j);
      ASSERT_EQ(gpus & (gpus - 1), 0u) << "power of two: " << gpus;
      ASSERT_EQ(j.cpus, gpus * 8u);
      ASSERT_EQ(j.mem_per_node_mb, 512000u * j.gpus_per_node / 8u * 9u / 10u);
      ASSERT_GE(j.run_time_s, 1);
      ASSERT_GT(j.time_limit_s, 0);
      ASSERT_EQ(j.time_limit_s % 60, 0);
      if (j.outcome == JobState::kTimeout) {
        ASSERT_GT(j.run_time_s, j.time_limit_s);
      } else {
        ASSERT_LE(j.run_time_s, j.time_limit_s) << job_state_name(j.outcome);
      }
      std::string name = "train-";
      name.append(std::to_string(gpus)).append("g-").append(std::to_string(j.id));
      ASSERT_EQ(j.name, name);
      ASSERT_TRUE(j.partition.empty());
    }
  }
}

TEST(SyntheticTest, SizesAreCappedByClusterAndTrace) {
  // 4 nodes x 8 GPUs: Seren's 64..1024-GPU jobs become whole-cluster 32-GPU jobs.
  const auto small = generate("acme-seren", 20000, make_cluster(4, 8));
  std::uint64_t largest = 0;
  for (const auto& j : small) largest = std::max(largest, gpus_of(j));
  EXPECT_EQ(largest, 32u);
  // Philly's largest job is 128 GPUs, even on a 2,304-GPU cluster.
  const auto philly = generate("philly", 100000, big_cluster());
  largest = 0;
  for (const auto& j : philly) largest = std::max(largest, gpus_of(j));
  EXPECT_EQ(largest, 128u);
}

TEST(SyntheticTest, NodesWithoutPowerOfTwoGpusTakeWholeNodes) {
  const ClusterConfig cluster = make_cluster(64, 6, 48, 384000);
  const auto jobs = generate("acme-kalos", 20000, cluster);
  bool saw_multi_node = false;
  for (const auto& j : jobs) {
    ASSERT_LE(j.nodes, 64u);
    if (j.nodes > 1) {
      saw_multi_node = true;
      ASSERT_EQ(j.gpus_per_node, 6u);
    } else {
      ASSERT_LE(j.gpus_per_node, 4u) << "single-node sizes are powers of two up to the node";
    }
    ASSERT_EQ(j.cpus, gpus_of(j) * 8u);
  }
  EXPECT_TRUE(saw_multi_node);
}

TEST(SyntheticTest, PartitionShapesJobsAndMaxTimeCapsLimits) {
  // Nodes 0-3: CPU only ("cpu"); nodes 4-19: 4 GPUs ("small", MaxTime 1 d); nodes 20-27: 8 GPUs (default).
  ClusterConfig cluster;
  for (std::uint32_t i = 0; i < 28; ++i) {
    NodeConfig node;
    node.name = "n";
    node.name += std::to_string(i);
    node.cpus = 32;
    node.memory_mb = 256000;
    node.gpus = i < 4 ? 0 : (i < 20 ? 4 : 8);
    cluster.nodes.push_back(node);
  }
  PartitionConfig cpu;
  cpu.name = "cpu";
  cpu.nodes = {0, 1, 2, 3};
  PartitionConfig small;
  small.name = "small";
  small.max_time_s = 86400;
  for (NodeIndex i = 4; i < 20; ++i) small.nodes.push_back(i);
  PartitionConfig big;
  big.name = "big";
  big.is_default = true;
  for (NodeIndex i = 20; i < 28; ++i) big.nodes.push_back(i);
  cluster.partitions = {cpu, small, big};

  SyntheticWorkload w;
  w.profile = "philly";
  w.jobs = 20000;
  w.partition = "small";
  const auto jobs = generate_synthetic(w, cluster, 1);
  double work = 0.0;
  for (const auto& j : jobs) {
    ASSERT_EQ(j.partition, "small");
    ASSERT_LE(j.gpus_per_node, 4u);
    ASSERT_LE(j.nodes, 16u);
    ASSERT_LE(j.time_limit_s, 86400);
    ASSERT_EQ(j.cpus, gpus_of(j) * 8u);
    if (j.outcome != JobState::kTimeout) {
      ASSERT_LE(j.run_time_s, j.time_limit_s);
    }
    work += static_cast<double>(gpus_of(j)) * static_cast<double>(observed_s(j));
  }
  // The load is relative to the partition's 64 GPUs.
  EXPECT_NEAR(work / (static_cast<double>(jobs.back().submit_s) * 64.0), 0.9, 0.03);

  w.partition.clear();  // default partition "big": 8-GPU nodes
  std::uint32_t widest = 0;
  for (const auto& j : generate_synthetic(w, cluster, 1)) widest = std::max(widest, j.gpus_per_node);
  EXPECT_EQ(widest, 8u);
}

TEST(SyntheticTest, UsersFollowZipfAndMapToAccounts) {
  const ClusterConfig cluster = make_cluster(32, 8);
  const auto jobs = generate("acme-seren", 50000, cluster);
  std::map<std::string, double> per_user;
  for (const auto& j : jobs) {
    ASSERT_EQ(j.user.size(), 7u);
    ASSERT_EQ(j.user.substr(0, 4), "user");
    const int index = std::stoi(j.user.substr(4)) - 1;
    ASSERT_GE(index, 0);
    ASSERT_LT(index, 100);
    char account[8];
    std::snprintf(account, sizeof account, "acct%02d", index % 10 + 1);
    ASSERT_EQ(j.account, account);
    per_user[j.user] += 1.0;
  }
  // Zipf s = 1: user001 submits about twice as often as user002 and 1 / H(100) = 19.3% of all jobs.
  EXPECT_NEAR(per_user["user001"] / per_user["user002"], 2.0, 0.15);
  EXPECT_NEAR(per_user["user001"] / static_cast<double>(jobs.size()), 0.193, 0.01);

  SyntheticWorkload w;
  w.profile = "philly";
  w.jobs = 1000;
  w.users = 1500;
  w.accounts = 120;
  for (const auto& j : generate_synthetic(w, cluster, 2)) {
    ASSERT_EQ(j.user.size(), 8u) << j.user;  // "user0001"
    const int index = std::stoi(j.user.substr(4)) - 1;
    char account[16];
    std::snprintf(account, sizeof account, "acct%03d", index % 120 + 1);
    ASSERT_EQ(j.account, account);
  }
}

TEST(SyntheticTest, RejectsBadInput) {
  const ClusterConfig cluster = make_cluster(4, 8);
  SyntheticWorkload w;
  w.profile = "no-such-trace";
  w.jobs = 10;
  try {
    generate_synthetic(w, cluster, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no-such-trace"), std::string::npos) << message;
    for (const auto& p : synthetic_profiles()) EXPECT_NE(message.find(p.name), std::string::npos) << message;
  }

  w.profile = "philly";
  w.jobs = 0;
  EXPECT_THROW(generate_synthetic(w, cluster, 1), std::invalid_argument);
  w.jobs = 10;
  for (double load : {0.0, -0.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    w.load = load;
    EXPECT_THROW(generate_synthetic(w, cluster, 1), std::invalid_argument) << load;
  }
  w.load = 0.9;
  EXPECT_THROW(generate_synthetic(w, make_cluster(4, 0), 1), std::invalid_argument);
  EXPECT_THROW(generate_synthetic(w, ClusterConfig{}, 1), std::invalid_argument);
  w.partition = "nope";
  try {
    generate_synthetic(w, cluster, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gputwin
