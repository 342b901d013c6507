#include "scheduler/job_queue.hpp"

namespace gputwin {

JobQueue::JobQueue(std::size_t chunk_capacity) : capacity_(std::max<std::size_t>(chunk_capacity, 2)) {
  build_tree();
}

void JobQueue::build_tree() {
  leaves_ = 1;
  while (leaves_ < chunks_.size()) leaves_ *= 2;
  tree_.assign(2 * leaves_, Node{});
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    Node& leaf = tree_[leaves_ + c];
    leaf.count = static_cast<std::uint32_t>(chunks_[c].keys.size());
    leaf.stale = chunks_[c].stale;
    if (!leaf.stale) leaf.least = chunks_[c].least;
  }
  for (std::size_t i = leaves_; i-- > 1;) {
    Node& node = tree_[i];
    node.count = tree_[2 * i].count + tree_[2 * i + 1].count;
    node.stale = tree_[2 * i].stale || tree_[2 * i + 1].stale;
    if (node.stale) continue;
    node.least = tree_[2 * i].least;
    node.least.add(tree_[2 * i + 1].least);
  }
  forget();
}

void JobQueue::changed(std::size_t c, std::int64_t delta, bool chunk_current) {
  if (!chunk_current) chunks_[c].stale = true;
  for (std::size_t i = leaves_ + c; i >= 1; i /= 2) {
    tree_[i].count = static_cast<std::uint32_t>(tree_[i].count + delta);
    tree_[i].stale = true;
  }
}

void JobQueue::refresh(std::size_t node) const {
  Node& n = tree_[node];
  if (!n.stale) return;
  n.stale = false;
  if (node >= leaves_) {
    const std::size_t c = node - leaves_;
    n.least = Least();
    if (c >= chunks_.size()) return;
    if (chunks_[c].stale) chunks_[c].summarise();
    n.least = chunks_[c].least;
    return;
  }
  refresh(2 * node);
  refresh(2 * node + 1);
  n.least = tree_[2 * node].least;
  n.least.add(tree_[2 * node + 1].least);
}

void JobQueue::assign(const std::vector<QueueKey>& sorted) {
  chunks_.clear();
  empty_chunks_ = 0;
  for (std::size_t i = 0; i < sorted.size(); i += capacity_) {
    Chunk& chunk = chunks_.emplace_back();
    chunk.keys.assign(sorted.begin() + static_cast<std::ptrdiff_t>(i),
                      sorted.begin() + static_cast<std::ptrdiff_t>(std::min(sorted.size(), i + capacity_)));
  }
  size_ = sorted.size();
  build_tree();
}

void JobQueue::find_position(std::size_t pos, std::size_t* chunk, std::size_t* begin) const {
  std::size_t node = 1, base = 0;
  while (node < leaves_) {
    const std::size_t left = 2 * node;
    if (pos - base < tree_[left].count) {
      node = left;
    } else {
      base += tree_[left].count;
      node = left + 1;
    }
  }
  *chunk = node - leaves_;
  *begin = base;
}

void JobQueue::locate(std::size_t pos) const {
  std::size_t c = cached_chunk_ + 1, begin = cached_begin_ + cached_size_;
  if (cached_size_ > 0 && pos == begin) {  // the next chunk with entries, as a walk in increasing positions asks
    while (c < chunks_.size() && chunks_[c].keys.empty()) ++c;
  }
  if (cached_size_ == 0 || pos != begin || c >= chunks_.size()) find_position(pos, &c, &begin);
  cached_chunk_ = c;
  cached_begin_ = begin;
  cached_size_ = chunks_[c].keys.size();
}

void JobQueue::insert(const QueueKey& key) {
  forget();
  ++size_;
  // The first chunk whose last entry (or, emptied, the last it had) sorts after the key; the key goes into it, or
  // at the end of the one before when it sorts before the chunk's first, or after every entry.
  const auto it = std::upper_bound(chunks_.begin(), chunks_.end(), key,
                                   [](const QueueKey& k, const Chunk& chunk) { return k < chunk.last(); });
  std::size_t c = static_cast<std::size_t>(it - chunks_.begin());
  if (c < chunks_.size() && chunks_[c].keys.empty()) {
    --empty_chunks_;
  } else if (c > 0 && (c == chunks_.size() || key < chunks_[c].keys.front()) &&
             chunks_[c - 1].keys.size() < capacity_) {
    --c;
    if (chunks_[c].keys.empty()) --empty_chunks_;
  } else if (c == chunks_.size()) {
    // After every entry (or into an empty queue), the last chunk full: a new chunk.
    chunks_.emplace_back().keys.push_back(key);
    if (chunks_.size() > leaves_) {
      build_tree();
    } else {
      changed(c, 1, false);
    }
    return;
  }
  Chunk& chunk = chunks_[c];
  chunk.keys.insert(std::upper_bound(chunk.keys.begin(), chunk.keys.end(), key), key);
  if (!chunk.stale) chunk.least.add_closed(key);
  if (chunk.keys.size() <= capacity_) {
    changed(c, 1, true);
    return;
  }
  // Full: the second half becomes a chunk of its own.
  const std::size_t half = chunk.keys.size() / 2;
  Chunk second;
  second.keys.assign(chunk.keys.begin() + static_cast<std::ptrdiff_t>(half), chunk.keys.end());
  chunk.keys.resize(half);
  chunk.stale = true;
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(c + 1), std::move(second));
  build_tree();
}

bool JobQueue::remove_job(JobIndex job) {
  compact();
  std::size_t begin = 0;
  for (const Chunk& chunk : chunks_) {
    for (std::size_t i = 0; i < chunk.keys.size(); ++i) {
      if (chunk.keys[i].job != job) continue;
      remove_at(begin + i);
      compact();
      return true;
    }
    begin += chunk.keys.size();
  }
  return false;
}

void JobQueue::compact() {
  if (removed_.empty()) return;
  std::sort(removed_.begin(), removed_.end());
  removed_.erase(std::unique(removed_.begin(), removed_.end()), removed_.end());
  forget();
  // Positions are the ones before this compaction, and so are the tree's counts until the erasures are counted.
  touched_.clear();
  std::size_t i = 0;
  while (i < removed_.size()) {
    std::size_t c = 0, begin = 0;
    find_position(removed_[i], &c, &begin);
    std::vector<QueueKey>& keys = chunks_[c].keys;
    // Every marked position in this chunk is consumed here (they are sorted): the next lies in a later chunk.
    std::size_t write = removed_[i] - begin;
    for (std::size_t read = write; read < keys.size(); ++read) {
      if (i < removed_.size() && removed_[i] == begin + read) {
        ++i;
        continue;
      }
      keys[write++] = keys[read];
    }
    touched_.push_back({c, keys.size() - write});
    size_ -= keys.size() - write;
    if (write == 0) chunks_[c].bound = keys.back();  // emptied: where it sat in the order, for insert
    keys.resize(write);
  }
  removed_.clear();
  for (const auto& [c, erased] : touched_) {
    changed(c, -static_cast<std::int64_t>(erased), false);
    if (chunks_[c].keys.empty()) ++empty_chunks_;
  }
  // An emptied chunk stays (count 0, passed over) until a quarter of the chunks are empty; then they go, small
  // neighbours are merged, and the tree is rebuilt: O(chunks) once in at least chunks / 4 emptied chunks.
  if (empty_chunks_ * 4 <= chunks_.size()) return;
  const std::size_t small = capacity_ / 4;
  std::vector<Chunk> kept;
  kept.reserve(chunks_.size() - empty_chunks_);
  for (Chunk& chunk : chunks_) {
    if (chunk.keys.empty()) continue;
    if (!kept.empty() && (chunk.keys.size() < small || kept.back().keys.size() < small) &&
        kept.back().keys.size() + chunk.keys.size() <= capacity_) {
      kept.back().keys.insert(kept.back().keys.end(), chunk.keys.begin(), chunk.keys.end());
      if (!kept.back().stale && !chunk.stale) {
        kept.back().least.add(chunk.least);
      } else {
        kept.back().stale = true;
      }
      continue;
    }
    kept.push_back(std::move(chunk));
  }
  chunks_.swap(kept);
  empty_chunks_ = 0;
  build_tree();
}

std::size_t JobQueue::find_chunk(std::size_t node, std::size_t lo, std::size_t hi, std::size_t base, std::size_t from,
                                 const FitFilter& filter, std::size_t* begin) const {
  if (hi <= from || tree_[node].count == 0 || !tree_[node].least.may_admit(filter)) return kNone;
  if (node >= leaves_) {
    *begin = base;
    return node - leaves_;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  const std::size_t left = 2 * node;
  const std::size_t found = find_chunk(left, lo, mid, base, from, filter, begin);
  if (found != kNone) return found;
  return find_chunk(left + 1, mid, hi, base + tree_[left].count, from, filter, begin);
}

std::size_t JobQueue::next_candidate(std::size_t pos, const FitFilter& filter) const {
  if (pos >= size_) return size_;
  refresh(1);
  std::size_t c = 0, begin = 0;
  if (pos - cached_begin_ < cached_size_) {
    c = cached_chunk_;
    begin = cached_begin_;
  } else {
    find_position(pos, &c, &begin);
  }
  std::size_t offset = pos - begin;
  while (true) {
    const std::vector<QueueKey>& keys = chunks_[c].keys;
    if (!chunks_[c].least.may_admit(filter)) offset = keys.size();  // (found chunks may admit; the first maybe not)
    for (; offset < keys.size(); ++offset) {
      const QueueKey& k = keys[offset];
      if (filter.admits(k.least_cpus, k.least_gpus, k.limit_s, k.partition)) {
        cached_chunk_ = c;  // the caller reads this entry next
        cached_begin_ = begin;
        cached_size_ = keys.size();
        return begin + offset;
      }
    }
    c = find_chunk(1, 0, leaves_, 0, c + 1, filter, &begin);
    if (c == kNone) return size_;
    offset = 0;
  }
}

}  // namespace gputwin
