// Tests for Slurm hostlist compression and expansion; expected strings are what `scontrol show hostlistsorted` and
// `scontrol show hostnames` print for the same input (src/common/hostlist.c).
#include "model/hostlist.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gputwin {
namespace {

using Names = std::vector<std::string>;

// The message of the std::invalid_argument that expand_hostlist(expr) throws, or "" if it does not throw.
std::string expand_error(std::string_view expr) {
  try {
    expand_hostlist(expr);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FormatHostlist, ContiguousRangeKeepsPadding) {
  EXPECT_EQ(format_hostlist({"n001", "n002", "n003", "n004"}), "n[001-004]");
}

TEST(FormatHostlist, GapsSplitRanges) {
  EXPECT_EQ(format_hostlist({"n001", "n003", "n004"}), "n[001,003-004]");
  EXPECT_EQ(format_hostlist({"n1", "n3", "n5"}), "n[1,3,5]");
}

TEST(FormatHostlist, SingleNameStaysAsIs) {
  EXPECT_EQ(format_hostlist({"gpu01"}), "gpu01");
  EXPECT_EQ(format_hostlist({"login"}), "login");
  EXPECT_EQ(format_hostlist({}), "");
}

TEST(FormatHostlist, DifferentPrefixesJoinWithCommas) {
  EXPECT_EQ(format_hostlist({"a1", "a2", "b3"}), "a[1-2],b3");
  EXPECT_EQ(format_hostlist({"gpu01", "gpu02", "cpu5"}), "cpu5,gpu[01-02]");
}

TEST(FormatHostlist, NamesWithoutNumberListedAsIs) {
  EXPECT_EQ(format_hostlist({"login", "n1", "n2", "head"}), "head,login,n[1-2]");
  // A bare prefix sorts before the numbered hosts sharing it (hostrange_prefix_cmp) and is not bracketed.
  EXPECT_EQ(format_hostlist({"n2", "n", "n1"}), "n,n[1-2]");
  EXPECT_EQ(format_hostlist({"node-a", "node-b"}), "node-a,node-b");
}

TEST(FormatHostlist, SortsByPrefixThenNumber) {
  EXPECT_EQ(format_hostlist({"n10", "n2", "n1", "n3"}), "n[1-3,10]");
  // Prefixes compare naturally: rack2 before rack10.
  EXPECT_EQ(format_hostlist({"rack10n1", "rack2n1", "rack2n2"}), "rack2n[1-2],rack10n1");
}

TEST(FormatHostlist, DropsDuplicates) {
  EXPECT_EQ(format_hostlist({"n1", "n2", "n1", "n2", "n3"}), "n[1-3]");
}

TEST(FormatHostlist, MixedWidthsJoinOnlyWhenOnePaddingFitsAll) {
  EXPECT_EQ(format_hostlist({"n8", "n9", "n10"}), "n[8-10]");
  EXPECT_EQ(format_hostlist({"n08", "n09", "n10"}), "n[08-10]");
  EXPECT_EQ(format_hostlist({"n8", "n09"}), "n[8,09]");
  EXPECT_EQ(format_hostlist({"n98", "n99", "n100", "n101"}), "n[98-101]");
  EXPECT_EQ(format_hostlist({"n098", "n099", "n100"}), "n[098-100]");
}

TEST(FormatHostlist, AllDigitNames) {
  EXPECT_EQ(format_hostlist({"1", "2", "3"}), "[1-3]");
}

std::string fmt_padded(const std::string& prefix, int number, std::size_t width) {
  std::string digits = std::to_string(number);
  return prefix + std::string(width > digits.size() ? width - digits.size() : 0, '0') + digits;
}

// HostlistFormatter gives format_hostlist's answer for random subsets of awkward names: mixed paddings ("n8",
// "n08", "n010"), several prefixes (natural order: "r2" before "r10"), names without a number, all-digit names,
// indices in any order and repeated, names given twice.
TEST(HostlistFormatter, EqualsFormatHostlistOnRandomSubsets) {
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("n" + std::to_string(i));
  for (int i = 0; i < 40; i += 3) names.push_back(fmt_padded("n", i, 3));
  for (int i = 5; i < 15; ++i) names.push_back(fmt_padded("n", i, 2));
  for (int r : {1, 2, 10}) {
    for (int i = 0; i < 6; ++i) names.push_back("r" + std::to_string(r) + "n" + std::to_string(i));
  }
  for (const char* plain : {"login", "gpu", "n", "007", "12", "a-b"}) names.emplace_back(plain);
  for (const char* again : {"n7", "login", "n012", "r2n3"}) names.emplace_back(again);  // one name at two indices
  HostlistFormatter formatter(names);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::uint32_t> pick;
    const std::size_t count = rng() % 12 == 0 ? names.size() : rng() % 10;
    for (std::size_t k = 0; k < count; ++k) pick.push_back(static_cast<std::uint32_t>(rng() % names.size()));
    if (rng() % 2 == 0) std::sort(pick.begin(), pick.end());
    std::vector<std::string> subset;
    for (const std::uint32_t i : pick) subset.push_back(names[i]);
    ASSERT_EQ(formatter.format(pick), format_hostlist(subset)) << "trial " << trial;
  }
  // Moved, it still reads its own copy of the names.
  const HostlistFormatter moved = std::move(formatter);
  const std::uint32_t all[] = {0, 1, 2, 3, 50};
  EXPECT_EQ(moved.format(all), format_hostlist({names[0], names[1], names[2], names[3], names[50]}));
}

TEST(ExpandHostlist, RangesAndLists) {
  EXPECT_EQ(expand_hostlist("n[001-004,010]"), (Names{"n001", "n002", "n003", "n004", "n010"}));
  EXPECT_EQ(expand_hostlist("gpu[01-02],cpu5"), (Names{"gpu01", "gpu02", "cpu5"}));
  EXPECT_EQ(expand_hostlist("gpu01"), (Names{"gpu01"}));
  EXPECT_EQ(expand_hostlist("n[3]"), (Names{"n3"}));
}

TEST(ExpandHostlist, PaddingComesFromTheLowBound) {
  EXPECT_EQ(expand_hostlist("n[8-10]"), (Names{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_hostlist("n[08-10]"), (Names{"n08", "n09", "n10"}));
}

TEST(ExpandHostlist, KeepsExpressionOrderAndDuplicates) {
  EXPECT_EQ(expand_hostlist("n[3,1],n3"), (Names{"n3", "n1", "n3"}));
}

TEST(ExpandHostlist, WhitespaceSeparatesToo) {
  EXPECT_EQ(expand_hostlist("  a1 b[1-2]\tc , d "), (Names{"a1", "b1", "b2", "c", "d"}));
}

TEST(ExpandHostlist, SeveralBracketsAndSuffixes) {
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]"), (Names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_hostlist("n[1-2]-ib"), (Names{"n1-ib", "n2-ib"}));
}

TEST(ExpandHostlist, MalformedInputThrowsWithPosition) {
  EXPECT_EQ(expand_error(""), "invalid hostlist \"\": empty expression");
  EXPECT_EQ(expand_error("   "), "invalid hostlist \"   \": empty expression");
  EXPECT_EQ(expand_error("n[1-3"), "invalid hostlist \"n[1-3\": '[' at character 2 is not closed");
  EXPECT_EQ(expand_error("n1-3]"), "invalid hostlist \"n1-3]\": ']' at character 5 has no matching '['");
  EXPECT_EQ(expand_error("n[1-[2]]"), "invalid hostlist \"n[1-[2]]\": nested '[' at character 5");
  EXPECT_EQ(expand_error("n[4-2]"), "invalid hostlist \"n[4-2]\": reversed range '4-2' at character 3");
  EXPECT_EQ(expand_error("n[]"), "invalid hostlist \"n[]\": empty brackets at character 2");
  EXPECT_EQ(expand_error("n[1,,2]"), "invalid hostlist \"n[1,,2]\": empty range at character 5");
  EXPECT_EQ(expand_error("n[a-b]"), "invalid hostlist \"n[a-b]\": range 'a-b' at character 3 is not a number or lo-hi");
  EXPECT_EQ(expand_error("n[1-]"), "invalid hostlist \"n[1-]\": range '1-' at character 3 is not a number or lo-hi");
  EXPECT_EQ(expand_error("a,,b"), "invalid hostlist \"a,,b\": empty host name at character 3");
  EXPECT_EQ(expand_error("a,"), "invalid hostlist \"a,\": empty host name after the last ','");
  EXPECT_EQ(expand_error("n[0-99999999]"), "invalid hostlist \"n[0-99999999]\": too many hosts in range '0-99999999'");
}

TEST(Hostlist, RoundTrips) {
  const std::vector<Names> cases = {
      {"n001", "n002", "n003", "n004"},
      {"n001", "n003", "n004"},
      {"a1", "a2", "b3"},
      {"n8", "n9", "n10"},
      {"n08", "n09", "n10"},
      {"n8", "n09"},
      {"head", "login", "n1", "n3"},
  };
  for (const auto& names : cases) {
    Names sorted = expand_hostlist(format_hostlist(names));
    EXPECT_EQ(format_hostlist(sorted), format_hostlist(names));
    EXPECT_EQ(sorted.size(), names.size()) << format_hostlist(names);
  }
  for (const std::string expr : {"n[001-004,010]", "gpu[01-02],cpu5", "a[1-2],b3", "n[8-10]", "n[08-10]"}) {
    EXPECT_EQ(format_hostlist(expand_hostlist(expr)), expr == "gpu[01-02],cpu5" ? "cpu5,gpu[01-02]" : expr);
  }
}

TEST(Hostlist, LargeRoundTrip) {
  Names names;
  for (int i = 0; i < 1000; ++i) {
    if (i % 100 != 7) names.push_back("gpu" + std::string(i < 10 ? "00" : i < 100 ? "0" : "") + std::to_string(i));
  }
  const std::string expr = format_hostlist(names);
  EXPECT_EQ(expr.substr(0, 28), "gpu[000-006,008-106,108-206,");
  EXPECT_EQ(expand_hostlist(expr), names);
}

}  // namespace
}  // namespace gputwin
