// The SimGrid contention model (gpu/contention.hpp): SimGrid 3.32's max-min flow solver with the CM02 network
// model, driven from outside any actor.
//
// Platform. SimGrid has one engine per process and freezes the platform (no new hosts or links) at its first
// run, so a process-wide Platform creates, once, a star zone holding a pool of links and a pool of flow hosts
// plus one sink host with no links. A model takes its links from the pool and sets their bandwidth; each active
// flow takes a flow host whose "up" route is set to the flow's links (star zones accept new routes after sealing),
// and runs as a communication from that host to the sink: route = exactly the flow's links.
//
// Model. CM02 with latency 0, no cross traffic (network/crosstraffic:0) and its own factors (latency and bandwidth
// factor 1, weight-S 0) makes every flow one max-min variable of weight 1: plain max-min fairness. A flow's demand
// is a private link of that bandwidth on its route (SimGrid 3.32 ignores Comm::set_rate on one-sided
// communications), which bounds it exactly as a rate bound would. LV08, SimGrid's default, would scale bandwidth by
// 0.97 and share by RTT, which suits TCP on a WAN rather than a lossless fabric.
//
// Reading rates. The public API does not expose a communication's rate, so a change runs the engine for
// kStepS seconds of its clock and reads each flow's progress (get_remaining before and after). Only flows in
// the connected component (flows linked through shared links) of the changed job can change rate under max-min,
// so only those are read. Each flow's payload is flow_life_steps at its bottleneck capacity: the rate reads
// to ~1e-16 x flow_life_steps relative, and a flow about to be measured is restarted (new communication) if half
// of it is used or if it ran out while its component was not read.
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <simgrid/s4u.hpp>
#include <string>

#include "gpu/contention.hpp"
#include "gpu/contention_internal.hpp"
#include "gpu/contention_simgrid_module.hpp"

namespace gputwin {
namespace {

namespace sg = simgrid::s4u;
using contention_detail::FlowId;
using contention_detail::JobRec;

constexpr double kBytesPerGB = 1e9;
constexpr double kStepS = 1.0;            // engine time per change; rates are progress / kStepS
constexpr double kMaxPayload = 1e19;      // below uint64 max
constexpr double kShareTolerance = 1e-7;  // well above the measurement noise (~1e-10), well below real changes

// The process-wide engine and its pools.
class Platform {
 public:
  static Platform& get(const SimGridOptions& sizes) {
    static Platform* platform = new Platform(sizes);  // lives as long as SimGrid's engine: the whole process
    return *platform;
  }

  std::vector<sg::Link*> take_links(std::size_t n) {
    if (n > free_links_.size())
      throw FlowNetworkError("SimGrid model: the network has " + std::to_string(n) + " links but the link pool has " +
                             std::to_string(free_links_.size()) +
                             " left (size the pool with SimGridOptions on the first SimGrid model)");
    std::vector<sg::Link*> out(free_links_.end() - static_cast<std::ptrdiff_t>(n), free_links_.end());
    free_links_.resize(free_links_.size() - n);
    return out;
  }
  void give_links(const std::vector<sg::Link*>& links) {
    free_links_.insert(free_links_.end(), links.begin(), links.end());
  }
  [[nodiscard]] std::size_t free_hosts() const { return free_hosts_.size(); }
  [[nodiscard]] std::size_t free_links() const { return free_links_.size(); }
  sg::Host* take_host() {
    sg::Host* h = free_hosts_.back();
    free_hosts_.pop_back();
    return h;
  }
  void give_host(sg::Host* h) { free_hosts_.push_back(h); }
  void set_route(sg::Host* h, const std::vector<sg::LinkInRoute>& links) {
    zone_->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, links, false);
  }
  [[nodiscard]] sg::Host* sink() const { return sink_; }
  void run_until(double t) { engine_->run_until(t); }
  [[nodiscard]] double now() const { return sg::Engine::get_clock(); }

 private:
  explicit Platform(const SimGridOptions& sizes) {
    xbt_log_control_set("root.thresh:critical");
    int argc = 1;
    static char name[] = "gputwin";
    static char* argv[] = {name, nullptr};
    engine_ = new sg::Engine(&argc, argv);
    sg::Engine::set_config("network/model:CM02");
    sg::Engine::set_config("network/crosstraffic:0");
    sg::Engine::set_config("maxmin/precision:1e-12");
    zone_ = sg::create_star_zone("gputwin");
    free_links_.reserve(sizes.link_pool);
    for (std::size_t i = 0; i < sizes.link_pool; ++i)
      free_links_.push_back(zone_->create_link("l" + std::to_string(i), 1e9)->set_latency(0)->seal());
    sink_ = zone_->create_host("sink", 1.0)->seal();
    zone_->add_route(nullptr, sink_->get_netpoint(), nullptr, nullptr, {}, false);
    zone_->add_route(sink_->get_netpoint(), nullptr, nullptr, nullptr, {}, false);
    free_hosts_.reserve(sizes.flow_pool);
    for (std::size_t i = 0; i < sizes.flow_pool; ++i) {
      sg::Host* h = zone_->create_host("f" + std::to_string(i), 1.0)->seal();
      zone_->add_route(nullptr, h->get_netpoint(), nullptr, nullptr, {}, false);
      zone_->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {}, false);
      free_hosts_.push_back(h);
    }
    std::reverse(free_hosts_.begin(), free_hosts_.end());  // hand out f0 first
    zone_->seal();
  }

  sg::Engine* engine_ = nullptr;
  sg::NetZone* zone_ = nullptr;
  sg::Host* sink_ = nullptr;
  std::vector<sg::Link*> free_links_;
  std::vector<sg::Host*> free_hosts_;
};

class SimGridContention final : public contention_detail::TableModel {
 public:
  SimGridContention(FlowNetwork net, const SimGridOptions& sizes)
      : TableModel(std::move(net)), platform_(Platform::get(sizes)), life_steps_(sizes.flow_life_steps) {
    if (!(life_steps_ >= 4)) throw FlowNetworkError("SimGrid model: flow_life_steps must be >= 4");
    links_ = platform_.take_links(table_.network().links.size());
    for (std::size_t i = 0; i < links_.size(); ++i)
      links_[i]->set_bandwidth(table_.network().links[i].capacity_gbps * kBytesPerGB);
    link_stamp_.assign(links_.size(), 0);
  }

  ~SimGridContention() override {
    for (Slot& s : slots_)
      if (s.comm) {
        cancel(s);
        platform_.give_host(s.host);
        if (s.demand_link) platform_.give_links({s.demand_link});
      }
    platform_.run_until(platform_.now());  // let the engine drop the cancelled communications
    cancelled_.clear();
    platform_.give_links(links_);
  }

  SimGridContention(const SimGridContention&) = delete;
  SimGridContention& operator=(const SimGridContention&) = delete;

  void add_job(JobKey job, std::span<const Flow> flows) override {
    if (flows.size() > platform_.free_hosts())
      throw FlowNetworkError("job " + std::to_string(job) + ": SimGrid model: " + std::to_string(flows.size()) +
                             " flows but the flow pool has " + std::to_string(platform_.free_hosts()) +
                             " left (size it with SimGridOptions on the first SimGrid model)");
    std::size_t capped = 0;
    for (const Flow& f : flows) capped += f.demand_gbps > 0 ? 1 : 0;
    if (capped > platform_.free_links())
      throw FlowNetworkError("job " + std::to_string(job) + ": SimGrid model: " + std::to_string(capped) +
                             " flows with a demand need as many links but the link pool has " +
                             std::to_string(platform_.free_links()) + " left");
    JobRec& rec = table_.insert_job(job, flows);
    std::vector<double> alone = contention_detail::max_min_rates(table_.network(), flows);
    rec.alone_gbps = alone.empty() ? 0 : *std::min_element(alone.begin(), alone.end());
    for (FlowId id : rec.flows) {
      if (id >= slots_.size()) slots_.resize(id + 1);
      Slot& s = slots_[id];
      s.host = platform_.take_host();
      double demand = table_.flow(id).demand_gbps;
      if (demand > 0) {
        s.demand_link = platform_.take_links(1).front();
        s.demand_link->set_bandwidth(demand * kBytesPerGB);
      }
      start(id);
    }
    touched_.clear();
    table_.collect_links(rec, touched_);
    step(job);  // even without flows: sets the job's share
  }

  void remove_job(JobKey job) override {
    const JobRec& rec = table_.at(job);
    touched_.clear();
    table_.collect_links(rec, touched_);
    for (FlowId id : rec.flows) {
      Slot& s = slots_[id];
      cancel(s);
      platform_.give_host(s.host);
      s.host = nullptr;
      if (s.demand_link) platform_.give_links({s.demand_link});
      s.demand_link = nullptr;
    }
    table_.erase_job(job);
    step(job);
  }

 private:
  struct Slot {
    sg::Host* host = nullptr;
    sg::Link* demand_link = nullptr;  // a private link of the flow's demand, if it has one
    sg::CommPtr comm;
    double payload = 0;  // bytes the communication started with
    double before = 0;   // remaining bytes at the start of the measuring step
    std::uint32_t stamp = 0;
  };

  // Routes the flow's host over its links and starts its communication.
  void start(FlowId id) {
    const contention_detail::FlowRec& f = table_.flow(id);
    Slot& s = slots_[id];
    route_.clear();
    double bottleneck = f.demand_gbps > 0 ? f.demand_gbps : std::numeric_limits<double>::infinity();
    for (LinkId l : f.route) {
      route_.emplace_back(links_[l]);
      bottleneck = std::min(bottleneck, table_.network().links[l].capacity_gbps);
    }
    if (s.demand_link) route_.emplace_back(s.demand_link);
    platform_.set_route(s.host, route_);
    s.payload = std::min(kMaxPayload, std::floor(bottleneck * kBytesPerGB * kStepS * life_steps_));
    sg::CommPtr comm = sg::Comm::sendto_init();  // starts once it has both ends
    comm->set_payload_size(static_cast<std::uint64_t>(s.payload));
    comm->set_source(s.host);
    comm->set_destination(platform_.sink());
    if (comm->get_state() == sg::Activity::State::INITED) comm->start();
    s.comm = std::move(comm);
  }

  // Cancels the slot's communication. Suspending first takes it out of the max-min system at once (weight 0);
  // the cancellation itself is processed at the next engine run, which needs the handle alive until then.
  void cancel(Slot& s) {
    if (s.comm->get_state() != sg::Activity::State::FINISHED) {  // it may have run out unread
      s.comm->suspend();
      s.comm->cancel();
    }
    cancelled_.push_back(std::move(s.comm));
    s.comm = nullptr;
  }

  // After flows were started or cancelled on touched_: solve, measure the component, refresh shares.
  void step(JobKey job) {
    if (touched_.empty()) {  // a job without flows changes nobody's rate: no need to run the engine
      if (table_.contains(job)) table_.mark_job(job);
      table_.refresh_marked(job, kShareTolerance);
      return;
    }
    collect_component();
    for (FlowId id : component_) {
      // Restart a communication that is half used (so it cannot run out during the step) or that ran out while
      // its component was not read (the component changed without it then, and is read again now with it).
      Slot& slot = slots_[id];
      if (slot.comm->get_state() == sg::Activity::State::FINISHED) {
        slot.comm = nullptr;
        start(id);
      } else if (slot.comm->get_remaining() < slot.payload / 2) {
        cancel(slot);
        start(id);
      }
      slot.before = slot.comm->get_remaining();
    }
    platform_.run_until(platform_.now() + kStepS);
    cancelled_.clear();  // processed by that run
    for (FlowId id : component_) {
      Slot& slot = slots_[id];
      table_.flow(id).rate_gbps = (slot.before - slot.comm->get_remaining()) / kStepS / kBytesPerGB;
    }
    for (FlowId id : component_) table_.mark(*table_.flow(id).owner);
    if (table_.contains(job)) table_.mark_job(job);
    table_.refresh_marked(job, kShareTolerance);
  }

  // component_ = flows reachable from touched_ through shared links.
  void collect_component() {
    ++stamp_;
    component_.clear();
    frontier_.assign(touched_.begin(), touched_.end());
    for (LinkId l : frontier_) link_stamp_[l] = stamp_;
    while (!frontier_.empty()) {
      LinkId l = frontier_.back();
      frontier_.pop_back();
      for (FlowId id : table_.flows_on(l)) {
        if (slots_[id].stamp == stamp_) continue;
        slots_[id].stamp = stamp_;
        component_.push_back(id);
        for (LinkId m : table_.flow(id).route)
          if (link_stamp_[m] != stamp_) {
            link_stamp_[m] = stamp_;
            frontier_.push_back(m);
          }
      }
    }
  }

  Platform& platform_;
  double life_steps_;
  std::vector<sg::Link*> links_;  // our pool links, by LinkId
  std::vector<Slot> slots_;       // by FlowId
  std::vector<LinkId> touched_, frontier_;
  std::vector<FlowId> component_;
  std::vector<sg::LinkInRoute> route_;
  std::vector<sg::CommPtr> cancelled_;
  std::vector<std::uint32_t> link_stamp_;
  std::uint32_t stamp_ = 0;
};

}  // namespace

}  // namespace gputwin

// The module's one entry point (contention_simgrid_module.hpp), looked up by make_simgrid_contention.
extern "C" gputwin::ContentionModel* gputwin_make_simgrid_contention(gputwin::FlowNetwork* net,
                                                                     const gputwin::SimGridOptions* pools) {
  return new gputwin::SimGridContention(std::move(*net), *pools);
}
