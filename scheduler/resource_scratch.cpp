#include "scheduler/resource_scratch.hpp"

#include <algorithm>

namespace gputwin {

ResourceScratch::ResourceScratch(const ClusterState& state)
    : state_(state),
      cpus_(state.free_cpus().begin(), state.free_cpus().end()),
      gpus_(state.free_gpus().begin(), state.free_gpus().end()),
      jobs_(state.node_jobs().begin(), state.node_jobs().end()),
      mem_(state.free_mem_mb().begin(), state.free_mem_mb().end()),
      version_(state.node_count()),
      touched_(state.node_count(), 0),
      tracked_(state.node_count(), 0) {
  for (NodeIndex n = 0; n < state.node_count(); ++n) version_[n] = state.node_version(n);
}

void ResourceScratch::resync(NodeIndex n) {
  cpus_[n] = state_.free_cpus()[n];
  gpus_[n] = state_.free_gpus()[n];
  jobs_[n] = state_.node_jobs()[n];
  mem_[n] = state_.free_mem_mb()[n];
  version_[n] = state_.node_version(n);
}

void ResourceScratch::reset() {
  for (NodeIndex n : touched_list_) {
    resync(n);
    touched_[n] = 0;
  }
  touched_list_.clear();
  for (NodeIndex n : tracked_list_) tracked_[n] = 0;
  tracked_list_.clear();
  total_ = 0;
  selector_ = nullptr;
}

void ResourceScratch::touch(NodeIndex n) {
  if (!touched_[n]) {
    refresh(n);
    touched_[n] = 1;
    touched_list_.push_back(n);
  }
}

FreeResources ResourceScratch::view() const {
  return FreeResources{cpus_.data(), gpus_.data(), mem_.data(), jobs_.data(), state_.schedulable().data()};
}

std::int64_t ResourceScratch::contribution(NodeIndex n) const {
  if (!selector_->usable(request_, view(), n)) return 0;
  if (request_.nodes > 0) return 1;
  return request_.exclusive ? state_.config().nodes[n].cpus : cpus_[n];
}

void ResourceScratch::track(const SelectRequest& request, const NodeSelector& selector,
                            std::span<const NodeIndex> candidates, const std::uint8_t* allowed) {
  for (NodeIndex n : tracked_list_) tracked_[n] = 0;
  tracked_list_.clear();
  selector_ = &selector;
  request_ = request;
  total_ = 0;
  for (NodeIndex n : candidates) {
    if (allowed != nullptr && !allowed[n]) continue;
    refresh(n);
    tracked_[n] = 1;
    tracked_list_.push_back(n);
    total_ += contribution(n);
  }
}

bool ResourceScratch::fits() const {
  if (request_.nodes > 0) return total_ >= request_.nodes;
  return total_ >= request_.cpus;
}

void ResourceScratch::add_back(std::span<const NodeAllocation> allocation) {
  for (const NodeAllocation& a : allocation) {
    refresh(a.node);
    const bool tracked = selector_ != nullptr && tracked_[a.node];
    const std::int64_t before = tracked ? contribution(a.node) : 0;
    touch(a.node);
    cpus_[a.node] += a.cpus;
    gpus_[a.node] += a.gpus;
    mem_[a.node] += a.mem_mb;
    jobs_[a.node] -= 1;
    if (tracked) total_ += contribution(a.node) - before;
  }
}

}  // namespace gputwin
