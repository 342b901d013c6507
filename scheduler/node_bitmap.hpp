// A fixed-size bitmap over node indices (Slurm's bitstr_t for node sets), flat words for fast AND/subset tests.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "model/cluster.hpp"

namespace gputwin {

/// Bits set in a[0, n) (node_bitmap.cpp: uses the POPCNT instruction where the CPU has it).
std::size_t count_words(const std::uint64_t* a, std::size_t n);
/// Bits set in both a[0, n) and b[0, n).
std::size_t count_and_words(const std::uint64_t* a, const std::uint64_t* b, std::size_t n);
/// True if a[0, n) has at least `k` bits set (stops counting early).
bool at_least_words(const std::uint64_t* a, std::size_t n, std::size_t k);
/// a[0, n) &= b[0, n) (the arrays do not overlap; AVX-512 or AVX2 where the CPU has it, as the counts).
void and_words(std::uint64_t* a, const std::uint64_t* b, std::size_t n);
/// out[0, n) = a & b (out overlaps neither).
void assign_and_words(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b, std::size_t n);
/// a[0, n) &= b & c (a overlaps neither).
void and_both_words(std::uint64_t* a, const std::uint64_t* b, const std::uint64_t* c, std::size_t n);
/// Bitmaps of at most this many words are ANDed inline: a call to the vector versions costs more than it saves.
inline constexpr std::size_t kInlineAndWords = 8;
/// out[0, n) = a & b, and returns the number of bits set in it (one pass).
std::size_t assign_and_count_words(std::uint64_t* out, const std::uint64_t* a, const std::uint64_t* b, std::size_t n);

/// A small set of nodes (a job's) as the nonzero words of its bitmap, (word index, bits): testing it against or
/// removing it from a NodeBitmap touches only those words.
class SparseNodeSet {
 public:
  /// Empties the set.
  void clear() { words_.clear(); }
  /// Adds a node (cheapest in ascending order).
  void add(NodeIndex n) {
    const auto w = static_cast<std::uint32_t>(n >> 6);
    if (words_.empty() || words_.back().first != w) words_.emplace_back(w, 0);
    words_.back().second |= 1ULL << (n & 63);
  }
  /// The (word index, bits) pairs; a word index may repeat when nodes were not added in order.
  [[nodiscard]] const std::vector<std::pair<std::uint32_t, std::uint64_t>>& words() const { return words_; }

 private:
  std::vector<std::pair<std::uint32_t, std::uint64_t>> words_;
};

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
    if (n > kInlineAndWords) return and_words(a, b, n);
    for (std::size_t i = 0; i < n; ++i) a[i] &= b[i];
  }
  /// Removes every node of `o`.
  void and_not(const NodeBitmap& o) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= ~o.words_[i];
  }
  /// True if every node of `o` is in this set.
  [[nodiscard]] bool contains_all(const SparseNodeSet& o) const {
    for (const auto& [w, bits] : o.words()) {
      if (bits & ~words_[w]) return false;
    }
    return true;
  }
  /// Removes every node of `o`.
  void remove_all(const SparseNodeSet& o) {
    for (const auto& [w, bits] : o.words()) words_[w] &= ~bits;
  }
  /// this = x & y (all the same size), in one pass.
  void assign_and(const NodeBitmap& x, const NodeBitmap& y) {
    std::uint64_t* __restrict a = words_.data();
    const std::uint64_t* __restrict b = x.words_.data();
    const std::uint64_t* __restrict c = y.words_.data();
    const std::size_t n = words_.size();
    if (n > kInlineAndWords) return assign_and_words(a, b, c, n);
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] & c[i];
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
  /// this = x & y (all the same size), and returns the number of nodes in it (one pass).
  std::size_t assign_and_count(const NodeBitmap& x, const NodeBitmap& y) {
    return assign_and_count_words(words_.data(), x.words_.data(), y.words_.data(), words_.size());
  }
  /// True if at least `n` nodes are in the set (stops counting early).
  [[nodiscard]] bool has_at_least(std::size_t n) const { return at_least_words(words_.data(), words_.size(), n); }
  /// this &= x & y (all the same size), in one pass.
  void and_with_both(const NodeBitmap& x, const NodeBitmap& y) {
    std::uint64_t* __restrict a = words_.data();
    const std::uint64_t* __restrict b = x.words_.data();
    const std::uint64_t* __restrict c = y.words_.data();
    const std::size_t n = words_.size();
    if (n > kInlineAndWords) return and_both_words(a, b, c, n);
    for (std::size_t i = 0; i < n; ++i) a[i] &= b[i] & c[i];
  }
  /// Calls f(n) for every node n in both this set and `o` (same size), ascending.
  template <class F>
  void for_each_and(const NodeBitmap& o, F&& f) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      std::uint64_t bits = words_[w] & o.words_[w];
      while (bits) {
        f(static_cast<NodeIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
        bits &= bits - 1;
      }
    }
  }
  /// Sets every bit of every word (bits past the last node too: AND with a real set before counting).
  void fill() { std::fill(words_.begin(), words_.end(), ~0ULL); }
  /// Number of nodes in both this set and `o` (same size).
  [[nodiscard]] std::size_t count_and(const NodeBitmap& o) const {
    return count_and_words(words_.data(), o.words_.data(), words_.size());
  }
  /// Number of nodes in the set.
  [[nodiscard]] std::size_t count() const { return count_words(words_.data(), words_.size()); }
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
