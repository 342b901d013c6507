// Flow-network validation, the bookkeeping shared by the contention models, the max-min reference used for a job
// alone, and the analytic (equal-split) model.
#include "gpu/contention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "gpu/contention_internal.hpp"

namespace gputwin {

void validate_network(const FlowNetwork& net) {
  for (std::size_t i = 0; i < net.links.size(); ++i) {
    const NetLink& l = net.links[i];
    if (!(l.capacity_gbps > 0) || !std::isfinite(l.capacity_gbps))
      throw FlowNetworkError("link " + std::to_string(i) + ": capacity_gbps must be a finite number > 0, not " +
                             std::to_string(l.capacity_gbps));
    if (!(l.latency_us >= 0) || !std::isfinite(l.latency_us))
      throw FlowNetworkError("link " + std::to_string(i) + ": latency_us must be a finite number >= 0, not " +
                             std::to_string(l.latency_us));
  }
}

void validate_flows(const FlowNetwork& net, JobKey job, std::span<const Flow> flows) {
  for (std::size_t f = 0; f < flows.size(); ++f) {
    const Flow& flow = flows[f];
    auto where = [&] { return "job " + std::to_string(job) + ": flow " + std::to_string(f) + ": "; };
    if (flow.route.empty()) throw FlowNetworkError(where() + "empty route");
    if (!(flow.demand_gbps >= 0) || !std::isfinite(flow.demand_gbps))
      throw FlowNetworkError(where() + "demand_gbps must be a finite number >= 0, not " +
                             std::to_string(flow.demand_gbps));
    for (std::size_t i = 0; i < flow.route.size(); ++i) {
      LinkId l = flow.route[i];
      if (l >= net.links.size())
        throw FlowNetworkError(where() + "link " + std::to_string(l) + " does not exist (the network has " +
                               std::to_string(net.links.size()) + " links)");
      // Routes are a few hops long: the quadratic check is cheaper than a set.
      for (std::size_t j = 0; j < i; ++j)
        if (flow.route[j] == l) throw FlowNetworkError(where() + "link " + std::to_string(l) + " appears twice");
    }
  }
}

double route_latency_us(const FlowNetwork& net, const Flow& flow) {
  double sum = 0;
  for (LinkId l : flow.route) sum += net.links.at(l).latency_us;
  return sum;
}

namespace contention_detail {

FlowTable::FlowTable(FlowNetwork net) : net_(std::move(net)) {
  validate_network(net_);
  on_link_.resize(net_.links.size());
  link_stamp_.assign(net_.links.size(), 0);
}

JobRec& FlowTable::insert_job(JobKey job, std::span<const Flow> flows) {
  if (jobs_.contains(job)) throw FlowNetworkError("job " + std::to_string(job) + " is already in the model");
  validate_flows(net_, job, flows);
  JobRec& rec = jobs_[job];
  rec.key = job;
  rec.flows.reserve(flows.size());
  for (const Flow& f : flows) {
    FlowId id;
    if (!free_flows_.empty()) {
      id = free_flows_.back();
      free_flows_.pop_back();
    } else {
      id = static_cast<FlowId>(flows_.size());
      flows_.emplace_back();
    }
    FlowRec& fr = flows_[id];
    fr.owner = &rec;
    fr.route.assign(f.route.begin(), f.route.end());
    fr.demand_gbps = f.demand_gbps;
    fr.rate_gbps = 0;
    for (LinkId l : fr.route) on_link_[l].push_back(id);
    rec.flows.push_back(id);
  }
  return rec;
}

void FlowTable::erase_job(JobKey job) {
  JobRec& rec = at(job);
  for (FlowId id : rec.flows) {
    FlowRec& fr = flows_[id];
    for (LinkId l : fr.route) {
      std::vector<FlowId>& on = on_link_[l];
      auto it = std::find(on.begin(), on.end(), id);
      *it = on.back();
      on.pop_back();
    }
    fr.owner = nullptr;
    free_flows_.push_back(id);
  }
  jobs_.erase(job);
}

const JobRec& FlowTable::at(JobKey job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) throw FlowNetworkError("job " + std::to_string(job) + " is not in the model");
  return it->second;
}

JobRec& FlowTable::at(JobKey job) {
  return const_cast<JobRec&>(std::as_const(*this).at(job));
}

void FlowTable::collect_links(const JobRec& rec, std::vector<LinkId>& links) {
  ++stamp_;
  for (FlowId id : rec.flows)
    for (LinkId l : flows_[id].route)
      if (link_stamp_[l] != stamp_) {
        link_stamp_[l] = stamp_;
        links.push_back(l);
      }
}

void FlowTable::mark_jobs_on(std::span<const LinkId> links) {
  for (LinkId l : links)
    for (FlowId id : on_link_[l]) mark(*flows_[id].owner);
}

void FlowTable::refresh_marked(JobKey except, double tolerance) {
  changed_.clear();
  for (JobRec* rec : marked_) {
    double rate = 0;
    if (!rec->flows.empty()) {
      rate = flows_[rec->flows.front()].rate_gbps;
      for (FlowId id : rec->flows) rate = std::min(rate, flows_[id].rate_gbps);
    }
    rec->rate_gbps = rate;
    // Max-min and equal split never give a job's slowest flow more than alone; clamp measurement noise.
    double share = rec->alone_gbps > 0 ? std::min(1.0, rate / rec->alone_gbps) : 1.0;
    if (rec->key != except && std::abs(share - rec->share) > tolerance) changed_.push_back(rec->key);
    rec->share = share;
  }
  marked_.clear();
  ++mark_stamp_;
  std::sort(changed_.begin(), changed_.end());
}

std::vector<double> max_min_rates(const FlowNetwork& net, std::span<const Flow> flows) {
  // Progressive filling: raise every unfrozen flow's rate together until a link saturates or a flow reaches its
  // demand, freeze those flows, repeat. At most (links + flows) rounds; used on one job's flows only.
  const std::size_t n = flows.size();
  std::vector<double> rate(n, 0.0);
  std::vector<char> frozen(n, 0);
  std::vector<LinkId> links;
  for (const Flow& f : flows) links.insert(links.end(), f.route.begin(), f.route.end());
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  auto slot = [&](LinkId l) { return std::lower_bound(links.begin(), links.end(), l) - links.begin(); };
  std::vector<double> left(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) left[i] = net.links[links[i]].capacity_gbps;
  std::vector<std::size_t> active(links.size());
  std::size_t unfrozen = n;
  while (unfrozen > 0) {
    std::fill(active.begin(), active.end(), 0);
    for (std::size_t f = 0; f < n; ++f)
      if (!frozen[f])
        for (LinkId l : flows[f].route) ++active[slot(l)];
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < links.size(); ++i)
      if (active[i] > 0) step = std::min(step, left[i] / static_cast<double>(active[i]));
    for (std::size_t f = 0; f < n; ++f)
      if (!frozen[f] && flows[f].demand_gbps > 0) step = std::min(step, flows[f].demand_gbps - rate[f]);
    for (std::size_t f = 0; f < n; ++f)
      if (!frozen[f]) {
        rate[f] += step;
        for (LinkId l : flows[f].route) left[slot(l)] -= step;
      }
    for (std::size_t f = 0; f < n; ++f) {
      if (frozen[f]) continue;
      bool done = flows[f].demand_gbps > 0 && rate[f] >= flows[f].demand_gbps * (1 - 1e-12);
      for (LinkId l : flows[f].route) {
        std::size_t i = slot(l);
        done = done || left[i] <= net.links[l].capacity_gbps * 1e-12;
      }
      if (done) {
        frozen[f] = 1;
        --unfrozen;
      }
    }
  }
  return rate;
}

double TableModel::flow_rate_gbps(JobKey job, std::size_t index) const {
  const JobRec& rec = table_.at(job);
  if (index >= rec.flows.size())
    throw FlowNetworkError("job " + std::to_string(job) + ": no flow " + std::to_string(index) + " (it has " +
                           std::to_string(rec.flows.size()) + ")");
  return table_.flow(rec.flows[index]).rate_gbps;
}

}  // namespace contention_detail

namespace {

using contention_detail::FlowId;
using contention_detail::JobRec;

// Equal split: a flow gets min over its links of capacity / flows on the link, capped by its demand.
class AnalyticContention final : public contention_detail::TableModel {
 public:
  explicit AnalyticContention(FlowNetwork net) : TableModel(std::move(net)) {
    own_count_.assign(table_.network().links.size(), 0);
  }

  void add_job(JobKey job, std::span<const Flow> flows) override {
    JobRec& rec = table_.insert_job(job, flows);
    links_.clear();
    table_.collect_links(rec, links_);
    // Alone: the same split counting only this job's own flows.
    for (FlowId id : rec.flows)
      for (LinkId l : table_.flow(id).route) ++own_count_[l];
    double alone = std::numeric_limits<double>::infinity();
    for (FlowId id : rec.flows) alone = std::min(alone, split(table_.flow(id), own_count_));
    rec.alone_gbps = rec.flows.empty() ? 0 : alone;
    for (LinkId l : links_) own_count_[l] = 0;
    update_links(job);
  }

  void remove_job(JobKey job) override {
    links_.clear();
    table_.collect_links(table_.at(job), links_);
    table_.erase_job(job);
    update_links(job);
  }

 private:
  // Recomputes the flows on links_ (the only ones whose split moved) and the shares of their jobs.
  void update_links(JobKey job) {
    for (LinkId l : links_)
      for (FlowId id : table_.flows_on(l)) table_.flow(id).rate_gbps = split(table_.flow(id));
    table_.mark_jobs_on(links_);
    if (table_.contains(job)) table_.mark_job(job);
    table_.refresh_marked(job, kTolerance);
  }

  double split(const contention_detail::FlowRec& f) const {
    double r = f.demand_gbps > 0 ? f.demand_gbps : std::numeric_limits<double>::infinity();
    for (LinkId l : f.route)
      r = std::min(r, table_.network().links[l].capacity_gbps / static_cast<double>(table_.flows_on(l).size()));
    return r;
  }

  double split(const contention_detail::FlowRec& f, const std::vector<std::uint32_t>& count) const {
    double r = f.demand_gbps > 0 ? f.demand_gbps : std::numeric_limits<double>::infinity();
    for (LinkId l : f.route) r = std::min(r, table_.network().links[l].capacity_gbps / count[l]);
    return r;
  }

  // Same counts give bit-identical splits; anything above rounding is a real change.
  static constexpr double kTolerance = 1e-12;
  std::vector<LinkId> links_;
  std::vector<std::uint32_t> own_count_;
};

}  // namespace

std::unique_ptr<ContentionModel> make_analytic_contention(FlowNetwork net) {
  return std::make_unique<AnalyticContention>(std::move(net));
}

}  // namespace gputwin
