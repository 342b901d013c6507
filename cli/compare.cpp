#include "cli/compare.hpp"

#include <fmt/core.h>

#include <cmath>
#include <string>

#include "results/run_comparison.hpp"

namespace gputwin {
namespace {

/// A number as people read it: integers plain, small values with three decimals, others with one.
std::string number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return fmt::format("{:.0f}", v);
  return std::abs(v) < 10 ? fmt::format("{:.3f}", v) : fmt::format("{:.1f}", v);
}

void print_group(const char* title, const std::vector<ComparisonRow>& rows) {
  fmt::print("\n{:<28} {:>14} {:>14} {:>10}\n", title, "A", "B", "change");
  for (const ComparisonRow& row : rows) {
    const auto& a = row.values[0];
    const auto& b = row.values[1];
    const std::string va = a ? fmt::format("{:.0f}", *a) : "-";
    const std::string vb = b ? fmt::format("{:.0f}", *b) : "-";
    fmt::print("{:<28} {:>14} {:>14} {:>10}\n", row.key, va, vb, a && b ? comparison_change(*a, *b) : "");
  }
}

}  // namespace

int print_comparison(const std::filesystem::path& a_dir, const std::filesystem::path& b_dir) {
  // Both are opened and checked whole (results/run_comparison.hpp) before anything is printed; errors are
  // InputErrors naming the file, which main reports with exit status 2.
  const RunComparison c = compare_runs({a_dir, b_dir});
  fmt::print("A: {}\nB: {}\n", a_dir.string(), b_dir.string());
  fmt::print("\n{:<28} {:>14} {:>14} {:>10}\n", "summary", "A", "B", "change");
  for (const ComparisonRow& row : c.summary) {
    // A key only one run has counts as 0 in the other.
    const double va = row.values[0].value_or(0), vb = row.values[1].value_or(0);
    fmt::print("{:<28} {:>14} {:>14} {:>10}\n", row.label, number(va), number(vb), comparison_change(va, vb));
  }
  print_group("mean wait by account (s)", c.wait_by_account);
  print_group("mean wait by partition (s)", c.wait_by_partition);
  return 0;
}

}  // namespace gputwin
