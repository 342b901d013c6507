// StringPool: distinct strings numbered in the order first seen, so that rows of a large table (a run's jobs, its
// node events) hold a 4-byte id for a user, partition or state instead of the text. Id 0 is the empty string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gputwin {

/// Interned strings: each distinct text once, by id.
class StringPool {
 public:
  StringPool() {
    strings_.reserve(64);
    intern("");
  }
  /// The id of `s`, added if it is new.
  std::uint32_t intern(std::string_view s) {
    auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(strings_.size());
    strings_.emplace_back(s);
    ids_.emplace(std::string(s), id);
    return id;
  }
  /// The id of `s` if it was interned.
  [[nodiscard]] std::optional<std::uint32_t> find(const std::string& s) const {
    const auto it = ids_.find(s);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  /// The text of id `id`.
  [[nodiscard]] std::string_view text(std::uint32_t id) const { return strings_[id]; }
  /// Number of ids (every id is below it).
  [[nodiscard]] std::size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

}  // namespace gputwin
