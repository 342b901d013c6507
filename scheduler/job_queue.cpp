#include "scheduler/job_queue.hpp"

namespace gputwin {

void JobQueue::insert(const QueueKey& key) {
  std::size_t slot = 0;
  if (empty() || buf_.back() < key) {
    buf_.push_back(key);
    slot = buf_.size() - 1;
  } else if (head_ > 0 && key < buf_[head_]) {
    slot = --head_;
    buf_[slot] = key;
  } else {
    const auto live = buf_.begin() + static_cast<std::ptrdiff_t>(head_);
    const auto at = buf_.insert(std::upper_bound(live, buf_.end(), key), key);
    refresh_blocks(static_cast<std::size_t>(at - buf_.begin()), buf_.size());  // the entries after it moved
    return;
  }
  if (blocks_.size() <= slot / kBlock) blocks_.resize(slot / kBlock + 1);
  blocks_[slot / kBlock].add(key);
}

void JobQueue::compact() {
  if (removed_.empty()) return;
  std::sort(removed_.begin(), removed_.end());
  removed_.erase(std::unique(removed_.begin(), removed_.end()), removed_.end());
  const auto at = [this](std::size_t pos) { return buf_.begin() + static_cast<std::ptrdiff_t>(head_ + pos); };
  const std::size_t first = removed_.front();
  const std::size_t last = removed_.back();
  const std::size_t m = removed_.size();
  if (last + 1 - m <= size() - first - m) {
    // Fewer entries before the last gap than after the first: move those to the right, from the back.
    auto dst_end = at(last + 1);
    for (std::size_t i = m; i-- > 0;) {
      const std::size_t seg_begin = i > 0 ? removed_[i - 1] + 1 : 0;
      dst_end = std::move_backward(at(seg_begin), at(removed_[i]), dst_end);
    }
    const std::size_t moved_from = head_;
    head_ += m;
    refresh_blocks(moved_from, head_ + last + 1 - m);
  } else {
    auto dst = at(first);
    for (std::size_t i = 0; i < m; ++i) {
      const auto seg_end = i + 1 < m ? at(removed_[i + 1]) : buf_.end();
      dst = std::move(at(removed_[i] + 1), seg_end, dst);
    }
    buf_.erase(dst, buf_.end());
    refresh_blocks(head_ + first, buf_.size());
  }
  removed_.clear();
  // The free slots before the head are given back once they outnumber the entries (amortized O(1) a removal).
  if (head_ > 1024 && head_ > size()) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
    refresh_blocks(0, buf_.size());
  }
}

void JobQueue::refresh_blocks(std::size_t from, std::size_t to) {
  blocks_.resize((buf_.size() + kBlock - 1) / kBlock);
  if (from >= to) return;
  for (std::size_t b = from / kBlock; b < blocks_.size() && b * kBlock < to; ++b) {
    BlockLeast least;
    const std::size_t end = std::min(buf_.size(), (b + 1) * kBlock);
    for (std::size_t i = std::max(b * kBlock, head_); i < end; ++i) least.add(buf_[i]);
    blocks_[b] = least;
  }
}

std::size_t JobQueue::next_candidate(std::size_t pos, const FitFilter& filter) const {
  std::size_t i = head_ + pos;
  while (i < buf_.size()) {
    if (!blocks_[i / kBlock].may_admit(filter)) {
      i = (i / kBlock + 1) * kBlock;  // nothing in this block passes
      continue;
    }
    const std::size_t end = std::min(buf_.size(), (i / kBlock + 1) * kBlock);
    for (; i < end; ++i) {
      const QueueKey& k = buf_[i];
      if (filter.admits(k.least_cpus, k.least_gpus, k.limit_s, k.partition)) return i - head_;
    }
  }
  return size();
}

}  // namespace gputwin
