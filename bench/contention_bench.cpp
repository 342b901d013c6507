// Cost per change (add or remove a job) of the contention models (gpu/contention.hpp) on a 1,024-node two-level
// fat tree: 32 leaves of 32 nodes, 8 spines, 400 GB/s per node and direction (8 NICs x 50 GB/s line rate,
// gpu-domain.md 4.1-4.2), leaf-spine links oversubscribed 2:1 (800 GB/s each instead of 32 x 400 / 8 = 1,600).
// It fills the network with `jobs` concurrent jobs, then replaces a random job by a new one `cycles` times (two
// changes each) and prints changes per second. A multi-node job is a ring (one flow per node to the next, ECMP
// spine by a hash of the pair) over nodes drawn at random ("scattered": most flows cross the spines and all
// share one connected component) or as a block ("packed": most flows stay in a leaf, as Slurm's topology/tree
// placement tries).
//
//   contention_bench [--jobs 1000] [--cycles 2000] [--model analytic|simgrid|both]
//                    [--placement scattered|packed|both] [--nodes exclusive|shared|both]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gpu/contention.hpp"

namespace {

using namespace gputwin;

constexpr int kLeaves = 32, kNodesPerLeaf = 32, kSpines = 8, kNodes = kLeaves * kNodesPerLeaf;
constexpr double kNodeGbps = 400, kUplinkGbps = 800;

struct FatTree {
  FlowNetwork net;
  std::vector<LinkId> node_up, node_down, leaf_up, leaf_down;  // leaf_* indexed leaf * kSpines + spine

  FatTree() {
    for (int n = 0; n < kNodes; ++n) node_up.push_back(net.add_link(kNodeGbps, 0.6));
    for (int n = 0; n < kNodes; ++n) node_down.push_back(net.add_link(kNodeGbps, 0.6));
    for (int i = 0; i < kLeaves * kSpines; ++i) leaf_up.push_back(net.add_link(kUplinkGbps, 0.6));
    for (int i = 0; i < kLeaves * kSpines; ++i) leaf_down.push_back(net.add_link(kUplinkGbps, 0.6));
  }

  Flow route(int a, int b) const {
    int la = a / kNodesPerLeaf, lb = b / kNodesPerLeaf;
    if (la == lb) return Flow{{node_up[a], node_down[b]}};
    int spine = (a * 7 + b * 13) % kSpines;
    return Flow{{node_up[a], leaf_up[la * kSpines + spine], leaf_down[lb * kSpines + spine], node_down[b]}};
  }
};

// Jobs and their node sets. "shared" (stress): every job is a ring over 2-16 nodes and nodes are shared by
// several jobs (about 9 flows per node link with 1,000 jobs). "exclusive" (a Slurm cluster): 1 job in 10 is a
// ring over 2-16 nodes it has to itself, the rest are one-node jobs without network flows.
class Workload {
 public:
  Workload(const FatTree& tree, bool packed, bool exclusive) : tree_(tree), packed_(packed), exclusive_(exclusive) {
    owner_.assign(kNodes, 0);
  }

  std::vector<Flow> next(JobKey job) {
    std::vector<int> nodes;
    int size = std::uniform_int_distribution<int>(2, 16)(rng_);
    if (exclusive_) {
      if (std::uniform_int_distribution<int>(0, 9)(rng_) != 0) return {};
      std::vector<int> free;
      for (int n = 0; n < kNodes; ++n)
        if (owner_[n] == 0) free.push_back(n);
      size = std::min<int>(size, static_cast<int>(free.size()));
      if (size < 2) return {};
      if (packed_) {
        nodes.assign(free.begin(), free.begin() + size);  // lowest free nodes: few leaves
      } else {
        std::shuffle(free.begin(), free.end(), rng_);
        nodes.assign(free.begin(), free.begin() + size);
      }
      for (int n : nodes) owner_[n] = job;
      nodes_of_[job] = nodes;
    } else if (packed_) {
      int first = std::uniform_int_distribution<int>(0, kNodes - size)(rng_);
      for (int i = 0; i < size; ++i) nodes.push_back(first + i);
    } else {
      while (static_cast<int>(nodes.size()) < size) {
        int n = std::uniform_int_distribution<int>(0, kNodes - 1)(rng_);
        if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
      }
    }
    std::vector<Flow> flows;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      flows.push_back(tree_.route(nodes[i], nodes[(i + 1) % nodes.size()]));
    return flows;
  }

  void release(JobKey job) {
    auto it = nodes_of_.find(job);
    if (it == nodes_of_.end()) return;
    for (int n : it->second) owner_[n] = 0;
    nodes_of_.erase(it);
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  const FatTree& tree_;
  bool packed_, exclusive_;
  std::mt19937_64 rng_{42};
  std::vector<JobKey> owner_;
  std::map<JobKey, std::vector<int>> nodes_of_;
};

void run(const char* name, ContentionModel& model, const FatTree& tree, int jobs, int cycles, bool packed,
         bool exclusive) {
  Workload work(tree, packed, exclusive);
  std::vector<JobKey> live;
  JobKey next = 1;
  std::size_t flows = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < jobs; ++i) {
    auto f = work.next(next);
    flows += f.size();
    model.add_job(next, f);
    live.push_back(next++);
  }
  auto t1 = std::chrono::steady_clock::now();
  std::size_t changed = 0;
  for (int c = 0; c < cycles; ++c) {
    std::size_t victim = std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(work.rng());
    model.remove_job(live[victim]);
    work.release(live[victim]);
    changed += model.changed_jobs().size();
    model.add_job(next, work.next(next));
    changed += model.changed_jobs().size();
    live[victim] = next++;
  }
  auto t2 = std::chrono::steady_clock::now();
  double fill_s = std::chrono::duration<double>(t1 - t0).count();
  double cycle_s = std::chrono::duration<double>(t2 - t1).count();
  double per_s = 2.0 * cycles / cycle_s;
  double mean_share = 0;
  for (JobKey j : live) mean_share += model.share(j);
  std::printf(
      "%-8s %-9s %-9s %d jobs, %zu flows at fill (%.3f s); %d changes in %.3f s: %.0f changes/s = %.1f us/change, "
      "%.2f changed jobs/change, mean share %.3f; 200,000 changes: %.1f s\n",
      name, exclusive ? "exclusive" : "shared", packed ? "packed" : "scattered", jobs, flows, fill_s, 2 * cycles,
      cycle_s, per_s, 1e6 / per_s, static_cast<double>(changed) / (2.0 * cycles),
      mean_share / static_cast<double>(live.size()), 200000 / per_s);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 1000, cycles = 2000;
  std::string which = "both", placement = "both", nodes = "both";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--jobs"))
      jobs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--cycles"))
      cycles = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--model"))
      which = argv[i + 1];
    else if (!std::strcmp(argv[i], "--placement"))
      placement = argv[i + 1];
    else if (!std::strcmp(argv[i], "--nodes"))
      nodes = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: %s [--jobs N] [--cycles N] [--model analytic|simgrid|both] "
                   "[--placement scattered|packed|both] [--nodes exclusive|shared|both]\n",
                   argv[0]);
      return 2;
    }
  }
  if (jobs < 1 || cycles < 1) {
    std::fprintf(stderr, "--jobs and --cycles must be >= 1\n");
    return 2;
  }
  FatTree tree;
  for (bool exclusive : {true, false})
    for (bool packed : {true, false}) {
      if (nodes != "both" && nodes != (exclusive ? "exclusive" : "shared")) continue;
      if (placement != "both" && placement != (packed ? "packed" : "scattered")) continue;
      if (which == "analytic" || which == "both") {
        auto m = make_analytic_contention(tree.net);
        run("analytic", *m, tree, jobs, cycles, packed, exclusive);
      }
      if (which == "simgrid" || which == "both") {
        auto m = make_simgrid_contention(tree.net, SimGridOptions{.link_pool = tree.net.links.size(),
                                                                  .flow_pool = static_cast<std::size_t>(jobs) * 17});
        run("simgrid", *m, tree, jobs, cycles, packed, exclusive);
      }
    }
  return 0;
}
