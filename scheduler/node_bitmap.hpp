// A fixed-size bitmap over node indices (Slurm's bitstr_t for node sets), flat words for fast AND/subset tests.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "model/cluster.hpp"

namespace gputwin {

/// Bits set in one word. Without -mpopcnt, std::popcount is a call into libgcc per word; this form inlines (and
/// vectorises in counting loops), which matters when will-run counts bitmaps millions of times.
inline std::size_t popcount_word(std::uint64_t x) {
#if defined(__POPCNT__)
  return static_cast<std::size_t>(std::popcount(x));
#else
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<std::size_t>((x * 0x0101010101010101ULL) >> 56);
#endif
}

/// Set of nodes as bits.
class NodeBitmap {
 public:
  NodeBitmap() = default;
  /// An empty bitmap over `nodes` nodes.
  explicit NodeBitmap(std::size_t nodes) : words_((nodes + 63) / 64, 0) {}
  /// Adds a node.
  void set(NodeIndex n) { words_[n >> 6] |= (1ULL << (n & 63)); }
  /// Removes a node.
  void clear(NodeIndex n) { words_[n >> 6] &= ~(1ULL << (n & 63)); }
  /// True if the node is in the set.
  [[nodiscard]] bool test(NodeIndex n) const { return (words_[n >> 6] >> (n & 63)) & 1ULL; }
  /// Intersects with another bitmap of the same size.
  void and_with(const NodeBitmap& o) {
    std::uint64_t* __restrict a = words_.data();
    const std::uint64_t* __restrict b = o.words_.data();
    const std::size_t n = words_.size();
    for (std::size_t i = 0; i < n; ++i) a[i] &= b[i];
  }
  /// Removes every node of `o`.
  void and_not(const NodeBitmap& o) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= ~o.words_[i];
  }
  /// True if every node of this set is in `o`.
  [[nodiscard]] bool subset_of(const NodeBitmap& o) const {
    for (std::size_t i = 0; i < words_.size(); ++i) {
      if (words_[i] & ~o.words_[i]) return false;
    }
    return true;
  }
  /// True if (base AND next) has a node outside (this AND slice): backfill's "more candidate nodes become free
  /// after this slice" test, in one pass.
  [[nodiscard]] bool grows_after(const NodeBitmap& slice, const NodeBitmap& base, const NodeBitmap& next) const {
    for (std::size_t i = 0; i < words_.size(); ++i) {
      if (base.words_[i] & next.words_[i] & ~(words_[i] & slice.words_[i])) return true;
    }
    return false;
  }
  /// this &= slice, and returns grows_after(slice, base, next) computed on the way (one pass).
  bool and_with_growth(const NodeBitmap& slice, const NodeBitmap& base, const NodeBitmap& next) {
    std::uint64_t* __restrict a = words_.data();
    const std::uint64_t* __restrict s = slice.words_.data();
    const std::uint64_t* __restrict b = base.words_.data();
    const std::uint64_t* __restrict x = next.words_.data();
    const std::size_t n = words_.size();
    std::uint64_t grows = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t cur = a[i] & s[i];
      grows |= b[i] & x[i] & ~cur;
      a[i] = cur;
    }
    return grows != 0;
  }
  /// True if at least `n` nodes are in the set (stops counting early).
  [[nodiscard]] bool has_at_least(std::size_t n) const {
    std::size_t c = 0;
    for (auto w : words_) {
      c += popcount_word(w);
      if (c >= n) return true;
    }
    return c >= n;
  }
  /// Sets every bit of every word (bits past the last node too: AND with a real set before counting).
  void fill() { std::fill(words_.begin(), words_.end(), ~0ULL); }
  /// Number of nodes in both this set and `o` (same size).
  [[nodiscard]] std::size_t count_and(const NodeBitmap& o) const {
    const std::uint64_t* __restrict a = words_.data();
    const std::uint64_t* __restrict b = o.words_.data();
    const std::size_t n = words_.size();
    std::size_t c = 0;
    for (std::size_t i = 0; i < n; ++i) c += popcount_word(a[i] & b[i]);
    return c;
  }
  /// Number of nodes in the set.
  [[nodiscard]] std::size_t count() const {
    std::size_t c = 0;
    for (auto w : words_) c += popcount_word(w);
    return c;
  }
  /// Equality.
  friend bool operator==(const NodeBitmap& a, const NodeBitmap& b) { return a.words_ == b.words_; }
  /// Raw words (64 nodes each).
  [[nodiscard]] const std::vector<std::uint64_t>& words() const { return words_; }
  /// Copies another bitmap's bits (same size) without reallocating.
  void assign(const NodeBitmap& o) { std::copy(o.words_.begin(), o.words_.end(), words_.begin()); }

 private:
  std::vector<std::uint64_t> words_;
};

}  // namespace gputwin
