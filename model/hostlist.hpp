// Slurm hostlist expressions ("gpu[001-004,010],login1"): compressing host names into one and expanding it back,
// as `scontrol show hostlistsorted` and `scontrol show hostnames` do (src/common/hostlist.c).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gputwin {

/// Compresses host names into a Slurm hostlist expression, e.g. {n001,n002,n003,n010} -> "n[001-003,010]".
/// Like hostlist_sort() + hostlist_ranged_string() (`scontrol show hostlistsorted`), the input order is ignored:
/// names are grouped by prefix (natural order, names without a numeric suffix first), then ordered by numeric
/// suffix; duplicates are dropped. Consecutive numbers join into a range only when one zero-padding width
/// reproduces every name in it ("n8,n9,n10" -> "n[8-10]", "n08,n09,n10" -> "n[08-10]", "n8,n09" -> "n[8,09]").
/// Names without a numeric suffix are listed as is. An empty input gives "".
std::string format_hostlist(const std::vector<std::string>& names);

/// A host name split as hostname_create() splits it: prefix plus numeric suffix (value and written width).
struct HostName {
  std::string_view prefix;  ///< Everything before the numeric suffix (the whole name without one).
  std::uint64_t number = 0;
  std::size_t width = 0;  ///< Digits of the suffix as written; 0: no numeric suffix.
};

/// format_hostlist over subsets of one list of names (a cluster's nodes, formatted for each job's node list): the
/// names are split and put in hostlist order once, so formatting a subset sorts small integers, not strings.
/// format(indices) is format_hostlist of those names (tests/model/hostlist_test.cpp checks it on random subsets).
class HostlistFormatter {
 public:
  /// Keeps a copy of `names`; indices given to format() refer to it.
  explicit HostlistFormatter(std::vector<std::string> names);
  HostlistFormatter(const HostlistFormatter&) = delete;  // sorted_ views names_' characters: not copied
  HostlistFormatter& operator=(const HostlistFormatter&) = delete;
  HostlistFormatter(HostlistFormatter&&) = default;  ///< Moving the vectors keeps every string where it was.
  HostlistFormatter& operator=(HostlistFormatter&&) = default;
  /// format_hostlist of names[i] for each i in `indices` (any order; an index repeated counts once).
  [[nodiscard]] std::string format(std::span<const std::uint32_t> indices) const;

 private:
  std::vector<std::string> names_;
  std::vector<HostName> sorted_;           // every name split, in hostlist order
  std::vector<std::uint32_t> rank_;        // names_[i] is sorted_[rank_[i]]
  std::vector<std::uint32_t> group_;       // per rank: first rank of its numbered prefix (its own rank if unnumbered)
  std::vector<std::uint32_t> host_class_;  // per rank: first rank of the same host (equal prefix, number, width)
};

/// Expands a Slurm hostlist expression into host names, in the expression's order (duplicates kept), e.g.
/// "n[001-003,010],gpu5" -> n001 n002 n003 n010 gpu5. Hosts are separated by commas or whitespace outside
/// brackets; a range's zero padding is the width of its low bound ("n[08-10]" -> n08 n09 n10, "n[8-10]" -> n8 n9
/// n10). Several bracket groups in one host expand as a product ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2), and text
/// may follow a bracket ("n[1-2]-ib"). Throws std::invalid_argument naming the problem and its position on an empty
/// expression or host, unbalanced or nested brackets, an empty or non-numeric range, a reversed range, or a range of
/// more than 1,048,576 hosts.
std::vector<std::string> expand_hostlist(std::string_view expr);

}  // namespace gputwin
