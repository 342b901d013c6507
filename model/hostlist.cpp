// Slurm hostlist compression and expansion; see hostlist.hpp. Follows src/common/hostlist.c: hostname_create()
// splits a name into prefix and numeric suffix, hostrange_cmp() orders ranges, _width_equiv() decides which
// zero-padding widths can share a range, _get_bracketed_list() prints "prefix[lo-hi,...]".
#include "model/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <stdexcept>

namespace gputwin {
namespace {

// Longest numeric suffix we treat as a number; longer digit runs stay part of the name (no uint64 overflow).
constexpr std::size_t kMaxDigits = 18;
// Largest expansion we accept: Slurm caps one range at 64K hosts; this only guards against runaway input.
constexpr std::size_t kMaxHosts = std::size_t{1} << 20;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::size_t digit_count(std::uint64_t value) {
  std::size_t n = 1;
  while (value >= 10) {
    value /= 10;
    ++n;
  }
  return n;
}

// Appends `value` zero-padded to `width` digits (printf's "%0*lu").
void append_number(std::string& out, std::uint64_t value, std::size_t width) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof(buf), value).ptr;
  const auto digits = static_cast<std::size_t>(end - buf);
  if (width > digits) out.append(width - digits, '0');
  out.append(buf, end);
}

// Natural order of prefixes (Slurm compares them with strnatcmp): digit runs compare by value.
int natural_compare(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
      std::size_t is = i;
      std::size_t js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js ? -1 : 1;
      if (const int c = a.substr(is, ie - is).compare(b.substr(js, je - js)); c != 0) return c;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
      ++i;
      ++j;
    }
  }
  if (i == a.size() && j == b.size()) return 0;
  return i == a.size() ? -1 : 1;
}

HostName split_host(std::string_view name) {
  std::size_t start = name.size();
  while (start > 0 && is_digit(name[start - 1])) --start;
  const std::size_t width = name.size() - start;
  if (width == 0 || width > kMaxDigits) return {name, 0, 0};
  HostName host{name.substr(0, start), 0, width};
  std::from_chars(name.data() + start, name.data() + name.size(), host.number);
  return host;
}

bool host_less(const HostName& a, const HostName& b) {
  if (const int c = natural_compare(a.prefix, b.prefix); c != 0) return c < 0;
  if (const int c = a.prefix.compare(b.prefix); c != 0) return c < 0;
  if ((a.width == 0) != (b.width == 0)) return a.width == 0;  // hostrange_prefix_cmp: single hosts first.
  if (a.number != b.number) return a.number < b.number;
  return a.width < b.width;
}

bool same_host(const HostName& a, const HostName& b) {
  return a.prefix == b.prefix && a.width == b.width && a.number == b.number;
}

// Whether `number`, written with `width` digits, prints the same under a range's "%0*lu" width `range_width`.
bool fits_width(std::uint64_t number, std::size_t width, std::size_t range_width) {
  return std::max(range_width, digit_count(number)) == width;
}

[[noreturn]] void fail(std::string_view expr, const std::string& problem) {
  throw std::invalid_argument("invalid hostlist \"" + std::string(expr) + "\": " + problem);
}

std::string at(std::size_t offset) {
  return " at character " + std::to_string(offset + 1);
}

// Parses one bracket body ("001-004,010") at `offset` in `expr` into the numbers it names, zero-padded.
std::vector<std::string> expand_ranges(std::string_view expr, std::string_view body, std::size_t offset) {
  std::vector<std::string> out;
  if (body.empty()) fail(expr, "empty brackets" + at(offset - 1));
  std::size_t pos = 0;
  while (pos <= body.size()) {
    const std::size_t comma = std::min(body.find(',', pos), body.size());
    const std::string_view item = body.substr(pos, comma - pos);
    const std::size_t item_at = offset + pos;
    if (item.empty()) fail(expr, "empty range" + at(item_at));
    const std::size_t dash = item.find('-');
    const std::string_view lo_text = item.substr(0, dash);
    const std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
    for (const std::string_view text : {lo_text, hi_text}) {
      if (text.empty() || text.size() > kMaxDigits || !std::all_of(text.begin(), text.end(), is_digit)) {
        fail(expr, "range '" + std::string(item) + "'" + at(item_at) + " is not a number or lo-hi");
      }
    }
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::from_chars(lo_text.data(), lo_text.data() + lo_text.size(), lo);
    std::from_chars(hi_text.data(), hi_text.data() + hi_text.size(), hi);
    if (lo > hi) fail(expr, "reversed range '" + std::string(item) + "'" + at(item_at));
    if (hi - lo >= kMaxHosts - out.size()) fail(expr, "too many hosts in range '" + std::string(item) + "'");
    for (std::uint64_t n = lo; n <= hi; ++n) {
      out.emplace_back();
      append_number(out.back(), n, lo_text.size());  // _parse_single_range: width = strlen(lo).
    }
    pos = comma + 1;
  }
  return out;
}

// Expands one host token (no top-level separators) starting at `offset` in `expr`, appending to `hosts`.
void expand_token(std::string_view expr, std::string_view token, std::size_t offset, std::vector<std::string>& hosts) {
  const std::size_t first = hosts.size();
  hosts.emplace_back();
  std::size_t pos = 0;
  while (pos < token.size()) {
    const std::size_t open = std::min(token.find('[', pos), token.size());
    const std::string_view literal = token.substr(pos, open - pos);
    for (std::size_t h = first; h < hosts.size(); ++h) hosts[h].append(literal);
    if (open == token.size()) break;
    const std::size_t close = token.find(']', open);  // Brackets were checked to balance by the caller.
    const auto numbers = expand_ranges(expr, token.substr(open + 1, close - open - 1), offset + open + 1);
    const std::size_t count = hosts.size() - first;
    if (count * numbers.size() > kMaxHosts) fail(expr, "expands to more than " + std::to_string(kMaxHosts) + " hosts");
    std::vector<std::string> product;
    product.reserve(count * numbers.size());
    for (std::size_t h = first; h < hosts.size(); ++h) {
      for (const auto& number : numbers) product.push_back(hosts[h] + number);
    }
    hosts.resize(first);
    std::move(product.begin(), product.end(), std::back_inserter(hosts));
    pos = close + 1;
  }
}

// The hostlist expression of hosts already in hostlist order without duplicates (`host(i)` for i < count);
// `same_group(i, k)`: host k is numbered and has host i's prefix (host i is numbered).
template <typename HostAt, typename SameGroup>
std::string format_sorted(std::size_t count, HostAt host, SameGroup same_group) {
  std::string out;
  std::size_t i = 0;
  while (i < count) {
    if (!out.empty()) out += ',';
    out.append(host(i).prefix);
    if (host(i).width == 0) {
      ++i;
      continue;
    }
    // One bracketed group: every numbered host with this prefix.
    std::size_t end = i + 1;
    while (end < count && same_group(i, end)) ++end;
    const bool bracket = end - i > 1;
    if (bracket) out += '[';
    bool first_range = true;
    while (i < end) {
      const std::uint64_t lo = host(i).number;
      const std::size_t width = host(i).width;
      std::uint64_t hi = lo;
      ++i;
      while (i < end && host(i).number == hi + 1 && fits_width(host(i).number, host(i).width, width)) {
        hi = host(i).number;
        ++i;
      }
      if (!first_range) out += ',';
      first_range = false;
      append_number(out, lo, width);
      if (hi != lo) {
        out += '-';
        append_number(out, hi, width);
      }
    }
    if (bracket) out += ']';
  }
  return out;
}

}  // namespace

std::string format_hostlist(const std::vector<std::string>& names) {
  std::vector<HostName> hosts;
  hosts.reserve(names.size());
  for (const auto& name : names) hosts.push_back(split_host(name));
  std::sort(hosts.begin(), hosts.end(), host_less);
  hosts.erase(std::unique(hosts.begin(), hosts.end(), same_host), hosts.end());
  return format_sorted(
      hosts.size(), [&](std::size_t i) -> const HostName& { return hosts[i]; },
      [&](std::size_t i, std::size_t k) { return hosts[k].width != 0 && hosts[k].prefix == hosts[i].prefix; });
}

HostlistFormatter::HostlistFormatter(std::vector<std::string> names) : names_(std::move(names)) {
  std::vector<std::uint32_t> order(names_.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  sorted_.reserve(names_.size());
  for (const std::string& name : names_) sorted_.push_back(split_host(name));  // views into names_, kept
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return host_less(sorted_[a], sorted_[b]); });
  std::vector<HostName> by_rank(order.size());
  rank_.resize(order.size());
  for (std::uint32_t r = 0; r < order.size(); ++r) {
    by_rank[r] = sorted_[order[r]];
    rank_[order[r]] = r;
  }
  sorted_ = std::move(by_rank);
  // Both kinds of class are runs of ranks (hostlist order groups by prefix, then suffix value, then width).
  group_.resize(sorted_.size());
  host_class_.resize(sorted_.size());
  for (std::uint32_t r = 0; r < sorted_.size(); ++r) {
    const HostName& h = sorted_[r];
    const bool joins_group = r > 0 && h.width != 0 && sorted_[r - 1].width != 0 && sorted_[r - 1].prefix == h.prefix;
    group_[r] = joins_group ? group_[r - 1] : r;
    host_class_[r] = r > 0 && same_host(sorted_[r - 1], h) ? host_class_[r - 1] : r;
  }
}

std::string HostlistFormatter::format(std::span<const std::uint32_t> indices) const {
  thread_local std::vector<std::uint32_t> ranks;
  ranks.clear();
  for (const std::uint32_t i : indices) ranks.push_back(rank_.at(i));
  if (!std::is_sorted(ranks.begin(), ranks.end())) std::sort(ranks.begin(), ranks.end());
  // Equal names (one host class) are adjacent in rank order; keep the first of each, as format_hostlist does.
  std::size_t count = 0;
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    if (count > 0 && host_class_[ranks[count - 1]] == host_class_[ranks[k]]) continue;
    ranks[count++] = ranks[k];
  }
  return format_sorted(
      count, [&](std::size_t k) -> const HostName& { return sorted_[ranks[k]]; },
      [&](std::size_t i, std::size_t k) { return group_[ranks[k]] == group_[ranks[i]]; });
}

std::vector<std::string> expand_hostlist(std::string_view expr) {
  std::vector<std::string> hosts;
  std::size_t pos = 0;
  while (pos < expr.size() && is_space(expr[pos])) ++pos;
  if (pos == expr.size()) fail(expr, "empty expression");
  while (true) {
    const std::size_t start = pos;
    std::size_t open = std::string_view::npos;
    while (pos < expr.size()) {
      const char c = expr[pos];
      if (c == '[') {
        if (open != std::string_view::npos) fail(expr, "nested '['" + at(pos));
        open = pos;
      } else if (c == ']') {
        if (open == std::string_view::npos) fail(expr, "']'" + at(pos) + " has no matching '['");
        open = std::string_view::npos;
      } else if (open == std::string_view::npos && (c == ',' || is_space(c))) {
        break;
      }
      ++pos;
    }
    if (open != std::string_view::npos) fail(expr, "'['" + at(open) + " is not closed");
    if (pos == start) fail(expr, "empty host name" + at(start));
    expand_token(expr, expr.substr(start, pos - start), start, hosts);
    if (hosts.size() > kMaxHosts) fail(expr, "expands to more than " + std::to_string(kMaxHosts) + " hosts");
    while (pos < expr.size() && is_space(expr[pos])) ++pos;
    if (pos == expr.size()) break;
    if (expr[pos] == ',') {
      ++pos;
      while (pos < expr.size() && is_space(expr[pos])) ++pos;
      if (pos == expr.size()) fail(expr, "empty host name after the last ','");
    }
  }
  return hosts;
}

}  // namespace gputwin
