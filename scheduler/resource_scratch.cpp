#include "scheduler/resource_scratch.hpp"

#include <algorithm>
#include <bit>

namespace gputwin {

ResourceScratch::ResourceScratch(const ClusterState& state)
    : state_(state),
      cpus_(state.free_cpus().begin(), state.free_cpus().end()),
      gpus_(state.free_gpus().begin(), state.free_gpus().end()),
      jobs_(state.node_jobs().begin(), state.node_jobs().end()),
      mem_(state.free_mem_mb().begin(), state.free_mem_mb().end()),
      version_(state.node_count()),
      touched_(state.node_count(), 0) {
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
  view_valid_ = false;
  tracked_ = nullptr;
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

FreeResources ResourceScratch::view_for(const SelectRequest& request) {
  FreeResources v = view();
  // While the live cluster does not change (every change of a node's resources, state or weight counts as a job
  // update) and reset() is not called, a refreshed untouched node stays fresh, and the superset changes only when
  // more nodes are touched: the last view's work need not be done again.
  if (!view_valid_ || view_updates_ != state_.job_update_count()) {
    view_all_fresh_ = false;
    superset_valid_ = false;
  }
  view_valid_ = true;
  view_updates_ = state_.job_update_count();
  if (request.exclusive) {
    if (view_all_fresh_) return v;
    // The selector visits every candidate node: bring every stale one up to date.
    for (NodeIndex n = 0; n < state_.node_count(); ++n) refresh(n);
    view_all_fresh_ = true;
    return v;
  }
  const std::uint64_t* live = state_.free_gpu_bits(request.gpus_per_node);
  if (live == nullptr) return v;
  if (superset_valid_ && superset_gpus_ == request.gpus_per_node && superset_touched_ == touched_list_.size()) {
    v.superset = superset_.data();
    return v;
  }
  superset_valid_ = true;
  superset_gpus_ = request.gpus_per_node;
  superset_touched_ = touched_list_.size();
  superset_.assign(live, live + state_.bitmap_words());
  // The selector reads the superset's nodes: refresh the untouched ones that the live cluster changed.
  for (std::size_t w = 0; w < superset_.size(); ++w) {
    std::uint64_t bits = superset_[w];
    while (bits) {
      refresh(static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
      bits &= bits - 1;
    }
  }
  for (NodeIndex n : touched_list_) superset_[n >> 6] |= 1ULL << (n & 63);
  v.superset = superset_.data();
  return v;
}

std::int64_t ResourceScratch::contribution(NodeIndex n) const {
  if (!selector_->usable(request_, view(), n)) return 0;
  if (request_.nodes > 0) return 1;
  return request_.exclusive ? state_.config().nodes[n].cpus : cpus_[n];
}

void ResourceScratch::track(const SelectRequest& request, const NodeSelector& selector, const std::uint64_t* nodes) {
  selector_ = &selector;
  request_ = request;
  tracked_ = nodes;
  total_ = 0;
  // Nodes outside free_gpu_bits are unusable on the live cluster, and an untouched scratch node equals the live
  // one once refreshed, so they contribute 0 until add_back changes them.
  const std::uint64_t* filter = request.exclusive ? nullptr : state_.free_gpu_bits(request.gpus_per_node);
  if (!request.exclusive && filter == nullptr) return;  // more GPUs per node than any node has
  for (std::size_t w = 0; w < state_.bitmap_words(); ++w) {
    std::uint64_t bits = nodes[w] & (filter != nullptr ? filter[w] : ~0ULL);
    while (bits) {
      const auto n = static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      bits &= bits - 1;
      refresh(n);
      total_ += contribution(n);
    }
  }
}

bool ResourceScratch::fits() const {
  if (request_.nodes > 0) return total_ >= request_.nodes;
  return total_ >= request_.cpus;
}

void ResourceScratch::add_back(std::span<const NodeAllocation> allocation) {
  for (const NodeAllocation& a : allocation) {
    refresh(a.node);
    const bool tracked = tracked_ != nullptr && ((tracked_[a.node >> 6] >> (a.node & 63)) & 1ULL);
    const std::int64_t before = tracked ? contribution(a.node) : 0;
    touch(a.node);
    cpus_[a.node] += a.cpus;
    gpus_[a.node] += a.gpus;
    mem_[a.node] += a.mem_mb;
    jobs_[a.node] -= 1;
    if (tracked) total_ += contribution(a.node) - before;
  }
}

void ResourceScratch::take_back(std::span<const NodeAllocation> allocation) {
  for (const NodeAllocation& a : allocation) {
    touch(a.node);
    cpus_[a.node] -= a.cpus;
    gpus_[a.node] -= a.gpus;
    mem_[a.node] -= a.mem_mb;
    jobs_[a.node] += 1;
  }
}

}  // namespace gputwin
