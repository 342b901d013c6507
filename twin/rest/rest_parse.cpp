// Parsers of slurmrestd replies (rest_parse.hpp). A reply is parsed once into a simdjson DOM; each job and node
// object is then walked once, its members picked out by name through a small hash table (simdjson's at_key is a
// linear scan, and a v0.0.44 job has about 120 members: forty at_key calls per job would dominate a 100,000-job
// reply). The shape of a value, not the API version, decides how it is read:
//   - numbers: 5, "5", null, or {"set": true, "infinite": false, "number": 5}. Unset, infinite, and the 32-bit
//     NO_VAL/INFINITE a plain int may carry (0xfffffffe, 0xffffffff: slurmdb's time/start of a never-started job)
//     read as "none"; so do 64-bit NO_VAL64/INFINITE64.
//   - states: "idle" plus state_flags (v0.0.38 nodes), "RUNNING" (v0.0.38/39 jobs), ["MIXED", "DRAIN"] (v0.0.40+),
//     {"current": [...], "reason": "..."} (slurmdb jobs), ["PENDING"] under "state" (GET jobs/state).
//   - partitions: flat (v0.0.38: nodes, max_time_limit, total_cpus, ...) or nested (v0.0.40+: nodes/configured,
//     maximums/time, priority/tier, tres/billing_weights, qos/assigned).
//   - jobs: slurmctld's (GET jobs) or slurmdbd's (GET slurmdb jobs: time/{submission,start,end,limit},
//     required/CPUs, tres/{allocated,requested}).
// Choices where the replies are ambiguous are documented at the reader that makes them.
#include "twin/rest/rest_parse.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gputwin {

RestReplyError::RestReplyError(std::string endpoint, std::string path, std::string problem)
    : std::runtime_error(endpoint + ": " + (path.empty() ? std::string() : path + ": ") + problem),
      endpoint_(std::move(endpoint)) {}

const char* api_version_name(ApiVersion version) {
  switch (version) {
    case ApiVersion::k38:
      return "v0.0.38";
    case ApiVersion::k39:
      return "v0.0.39";
    case ApiVersion::k40:
      return "v0.0.40";
    case ApiVersion::k41:
      return "v0.0.41";
    case ApiVersion::k42:
      return "v0.0.42";
    case ApiVersion::k43:
      return "v0.0.43";
    case ApiVersion::k44:
      return "v0.0.44";
  }
  return "v0.0.?";
}

std::optional<ApiVersion> parse_api_version(std::string_view text) {
  if (!text.empty() && text.front() == 'v') text.remove_prefix(1);
  constexpr std::string_view kPrefix = "0.0.";
  if (text.size() != kPrefix.size() + 2 || !text.starts_with(kPrefix)) return std::nullopt;
  int minor = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data() + kPrefix.size(), end, minor);
  if (ec != std::errc() || ptr != end || minor < 38 || minor > 44) return std::nullopt;
  return static_cast<ApiVersion>(minor - 38);
}

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr std::int64_t kNoVal32 = 0xfffffffe;     // NO_VAL: a 32-bit field that is unset.
constexpr std::int64_t kInfinite32 = 0xffffffff;  // INFINITE: a 32-bit field without limit.
constexpr std::uint64_t kNoVal64 = 0xfffffffffffffffeULL;
constexpr std::uint64_t kInfinite64 = 0xffffffffffffffffULL;

// ---- Where: the JSON path of a value, rendered only when something is wrong -----------------------------------------

/// A place in the reply: a chain of keys and indices up to the root. Each link points at its parent, so a Where
/// must not outlive the one it was made from (pass them down, never store them).
class Where {
 public:
  /// The top of the reply of `endpoint`.
  explicit Where(const std::string& endpoint) : endpoint_(&endpoint) {}
  /// The member `key` below this place (`key`'s characters must outlive the result).
  [[nodiscard]] Where key(std::string_view key) const {
    Where w(kChild, *this);
    w.key_ = key;
    return w;
  }
  /// The members `keys`, one below the other, below this place (`keys` must outlive the result).
  [[nodiscard]] Where keys(std::span<const std::string_view> keys) const {
    Where w(kChild, *this);
    w.keys_ = keys;
    return w;
  }
  /// Element `index` of the array at this place.
  [[nodiscard]] Where index(std::size_t index) const {
    Where w(kChild, *this);
    w.index_ = index;
    w.has_index_ = true;
    return w;
  }
  /// Throws RestReplyError for this place.
  [[noreturn]] void fail(const std::string& problem) const { throw RestReplyError(*endpoint_, path(), problem); }
  /// "/jobs/3/job_id" (empty at the top).
  [[nodiscard]] std::string path() const {
    std::string out;
    append_to(out);
    return out;
  }

 private:
  struct Child {};
  static constexpr Child kChild{};
  Where(Child /*tag*/, const Where& parent) : endpoint_(parent.endpoint_), parent_(&parent) {}

  void append_to(std::string& out) const {
    if (parent_ != nullptr) parent_->append_to(out);
    if (!key_.empty()) append_key(out, key_);
    for (std::string_view k : keys_) append_key(out, k);
    if (has_index_) out += '/' + std::to_string(index_);
  }
  static void append_key(std::string& out, std::string_view key) {
    out += '/';
    for (char c : key) {  // JSON pointer escapes (RFC 6901)
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
  }

  const std::string* endpoint_;
  const Where* parent_ = nullptr;
  std::string_view key_;
  std::span<const std::string_view> keys_;
  std::size_t index_ = 0;
  bool has_index_ = false;
};

/// A value found in the reply, with its place.
struct Found {
  element value;  ///< The value.
  Where where;    ///< Its path.
};

// ---- Scalars in every shape --------------------------------------------------------------------------------------

/// "an object", "a string", ... for messages.
const char* kind_of(element e) {
  switch (e.type()) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "true/false";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "something else";
}

/// `text` quoted for a message, cut to 40 characters (a hostile reply may hold a huge string).
std::string quoted(std::string_view text) {
  constexpr std::size_t kMax = 40;
  return '"' + std::string(text.substr(0, kMax)) + (text.size() > kMax ? "...\"" : "\"");
}

/// A string, or "" for null.
std::string_view read_string(element e, const Where& w) {
  if (e.is_string()) return e.get_string().value_unsafe();
  if (e.is_null()) return {};
  w.fail(std::string("expected a string, got ") + kind_of(e));
}

/// true/false, or `fallback` for null.
bool read_bool(element e, const Where& w, bool fallback) {
  if (e.is_bool()) return e.get_bool().value_unsafe();
  if (e.is_null()) return fallback;
  w.fail(std::string("expected true or false, got ") + kind_of(e));
}

/// The value of member `key` of object `e` (nullopt when absent).
std::optional<element> member(element e, std::string_view key) {
  if (!e.is_object()) return std::nullopt;
  auto found = e.get_object().value_unsafe().at_key(key);
  if (found.error()) return std::nullopt;
  return found.value_unsafe();
}

/// A plain integer: a JSON integer, an integral double, or a numeric string ("1" in GET jobs/state). nullopt for
/// null, "", and the NO_VAL/INFINITE sentinels.
std::optional<std::int64_t> read_plain_integer(element e, const Where& w) {
  std::int64_t v = 0;
  switch (e.type()) {
    case element_type::INT64:
      v = e.get_int64().value_unsafe();
      break;
    case element_type::UINT64: {
      const std::uint64_t u = e.get_uint64().value_unsafe();
      if (u == kNoVal64 || u == kInfinite64) return std::nullopt;
      w.fail("number out of range: " + std::to_string(u));
    }
    case element_type::DOUBLE: {
      const double d = e.get_double().value_unsafe();
      constexpr double kExact = 9007199254740992.0;  // 2^53: larger doubles are not exact integers
      if (std::trunc(d) != d || std::fabs(d) > kExact) w.fail("expected an integer, got " + std::to_string(d));
      v = static_cast<std::int64_t>(d);
      break;
    }
    case element_type::STRING: {
      const std::string_view s = e.get_string().value_unsafe();
      if (s.empty()) return std::nullopt;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size()) w.fail("expected an integer, got " + quoted(s));
      break;
    }
    case element_type::NULL_VALUE:
      return std::nullopt;
    default:
      w.fail(std::string("expected an integer, got ") + kind_of(e));
  }
  if (v == kNoVal32 || v == kInfinite32) return std::nullopt;
  return v;
}

/// The "number" of a {"set": bool, "infinite": bool, "number": N} object, or nullopt when it is unset, infinite,
/// or has no number.
std::optional<Found> set_number(element e, const Where& w) {
  const auto infinite = member(e, "infinite");
  const auto set = member(e, "set");
  if (infinite && read_bool(*infinite, w.key("infinite"), false)) return std::nullopt;
  if (set && !read_bool(*set, w.key("set"), true)) return std::nullopt;
  const auto number = member(e, "number");
  if (!number) return std::nullopt;
  if (number->is_object()) w.key("number").fail("expected a number, got an object");
  return Found{*number, w.key("number")};
}

/// An integer in any of slurmrestd's shapes: 5, "5", null, {"set": bool, "infinite": bool, "number": 5}. nullopt
/// when unset or infinite.
std::optional<std::int64_t> read_integer(element e, const Where& w) {
  if (!e.is_object()) return read_plain_integer(e, w);
  const auto number = set_number(e, w);
  return number ? read_plain_integer(number->value, number->where) : std::nullopt;
}

/// A float in any shape (1.0, 1, {"set": true, "number": 1.0}, null); nullopt when unset or infinite.
std::optional<double> read_float(element e, const Where& w) {
  if (e.is_object()) {
    const auto number = set_number(e, w);
    return number ? read_float(number->value, number->where) : std::nullopt;
  }
  if (e.is_null()) return std::nullopt;
  if (e.is_double()) return e.get_double().value_unsafe();
  if (e.is_int64()) return static_cast<double>(e.get_int64().value_unsafe());
  if (e.is_uint64()) return static_cast<double>(e.get_uint64().value_unsafe());
  w.fail(std::string("expected a number, got ") + kind_of(e));
}

/// `v` as an unsigned field: 0 when none; negative or too large values are errors, not wrapped.
template <typename U>
U to_unsigned(std::optional<std::int64_t> v, const Where& w) {
  if (!v) return 0;
  if (*v < 0) w.fail("expected a non-negative integer, got " + std::to_string(*v));
  if (static_cast<std::uint64_t>(*v) > std::numeric_limits<U>::max()) {
    w.fail("number out of range: " + std::to_string(*v));
  }
  return static_cast<U>(*v);
}

/// `v` as an int32 field (array_task_id, exit code); `fallback` when none.
std::int32_t to_int32(std::optional<std::int64_t> v, const Where& w, std::int32_t fallback) {
  if (!v) return fallback;
  if (*v < std::numeric_limits<std::int32_t>::min() || *v > std::numeric_limits<std::int32_t>::max()) {
    w.fail("number out of range: " + std::to_string(*v));
  }
  return static_cast<std::int32_t>(*v);
}

/// Epoch seconds (0 when unset).
std::int64_t read_time(element e, const Where& w) {
  const auto v = read_integer(e, w);
  if (v && *v < 0) w.fail("expected a time (epoch seconds), got " + std::to_string(*v));
  return v.value_or(0);
}

/// A time limit in minutes, as seconds. v0.0.38 writes an infinite partition limit as -1 (max_time_limit), so -1
/// is "none" like null; other negative values are errors.
std::optional<std::int64_t> read_minutes_as_seconds(element e, const Where& w) {
  const auto minutes = read_integer(e, w);
  if (!minutes || *minutes == -1) return std::nullopt;
  if (*minutes < 0) w.fail("expected a time in minutes, got " + std::to_string(*minutes));
  if (*minutes > std::numeric_limits<std::int64_t>::max() / 60) w.fail("time out of range");
  return *minutes * 60;
}

/// Calls `fn(element, Where)` for each element of an array (absent or null: none).
template <typename Fn>
void for_each_element(element e, const Where& w, Fn&& fn) {
  if (e.is_null()) return;
  if (!e.is_array()) w.fail(std::string("expected an array, got ") + kind_of(e));
  const simdjson::dom::array items = e.get_array().value_unsafe();  // a local: the result object is a temporary
  std::size_t i = 0;
  for (element item : items) {
    fn(item, w.index(i));
    ++i;
  }
}

/// The strings of an array of strings, or of a comma-separated string (v0.0.38's features, csv_string fields).
std::vector<std::string> read_string_list(element e, const Where& w) {
  std::vector<std::string> out;
  if (e.is_string()) {
    std::string_view s = e.get_string().value_unsafe();
    while (!s.empty()) {
      const std::size_t comma = s.find(',');
      if (comma != 0) out.emplace_back(s.substr(0, comma));
      if (comma == std::string_view::npos) break;
      s.remove_prefix(comma + 1);
    }
    return out;
  }
  for_each_element(e, w, [&](element item, const Where& iw) { out.emplace_back(read_string(item, iw)); });
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);  // ASCII letters only; the strings compared are Slurm flag names
         });
}

std::string join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

// ---- Finding members ---------------------------------------------------------------------------------------------

/// The non-null value of member `key` of `e` (nullopt when `e` is null, or the member is absent or null); throws if
/// `e` is not an object.
std::optional<Found> find(element e, std::string_view key, const Where& w) {
  if (e.is_null()) return std::nullopt;
  if (!e.is_object()) w.fail(std::string("expected an object, got ") + kind_of(e));
  const auto v = member(e, key);
  if (!v || v->is_null()) return std::nullopt;
  return Found{*v, w.key(key)};
}

/// The non-null value at `keys` below `e` ("limits", "max", "wall_clock", ...); nullopt when one is absent or null;
/// throws if one on the way is not an object. `keys` must outlive the result (use a static array).
std::optional<Found> find_path(element e, std::span<const std::string_view> keys, const Where& w) {
  element current = e;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (current.is_null()) return std::nullopt;
    if (!current.is_object()) w.keys(keys.first(i)).fail(std::string("expected an object, got ") + kind_of(current));
    const auto v = member(current, keys[i]);
    if (!v) return std::nullopt;
    current = *v;
  }
  if (current.is_null()) return std::nullopt;
  return Found{current, w.keys(keys)};
}

/// Maps member names to small ids, so that a record's object is walked once (see the file comment).
class KeyIndex {
 public:
  /// One wanted member.
  struct Entry {
    std::string_view key;  ///< Member name.
    int id;                ///< The reader's id for it (below its Members<N> count).
  };
  KeyIndex(std::initializer_list<Entry> entries) {
    for (const Entry& e : entries) {
      std::size_t i = hash(e.key);
      while (slots_[i].id >= 0) i = (i + 1) % kSlots;
      slots_[i] = Slot{e.key, e.id};
    }
  }
  /// The id of `key`, or -1 if the reader does not want it.
  [[nodiscard]] int find(std::string_view key) const noexcept {
    for (std::size_t i = hash(key);; i = (i + 1) % kSlots) {
      const Slot& s = slots_[i];
      if (s.id < 0 || s.key == key) return s.id;
    }
  }

 private:
  static constexpr std::size_t kSlots = 256;  // at most ~50 entries: short probe chains, and always an empty slot
  struct Slot {
    std::string_view key;
    int id = -1;
  };
  static std::size_t hash(std::string_view key) noexcept {
    if (key.empty()) return 0;
    const auto c = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(key[i])); };
    return (key.size() * 131 + c(0) * 31 + c(key.size() / 2) * 7 + c(key.size() - 1)) % kSlots;
  }
  std::array<Slot, kSlots> slots_{};
};

/// The wanted members of one record object, found in one pass: id -> value. Null members count as absent.
template <int N>
class Members {
 public:
  Members(element value, const Where& w, const KeyIndex& index) {
    if (!value.is_object()) w.fail(std::string("expected an object, got ") + kind_of(value));
    const simdjson::dom::object members = value.get_object().value_unsafe();
    for (const auto field : members) {
      const int id = index.find(field.key);
      if (id < 0 || field.value.is_null()) continue;
      values_[id] = field.value;
      keys_[id] = field.key;
      has_.set(id);
    }
  }
  /// Whether member `id` is present and not null.
  [[nodiscard]] bool has(int id) const { return has_.test(id); }
  /// Member `id` with its place, if present.
  [[nodiscard]] std::optional<Found> get(int id, const Where& w) const {
    if (!has(id)) return std::nullopt;
    return Found{values_[id], w.key(keys_[id])};
  }
  /// Member `id` as a string ("" when absent).
  [[nodiscard]] std::string string(int id, const Where& w) const {
    return has(id) ? std::string(read_string(values_[id], w.key(keys_[id]))) : std::string();
  }
  /// Member `id` as an integer in any shape.
  [[nodiscard]] std::optional<std::int64_t> integer(int id, const Where& w) const {
    return has(id) ? read_integer(values_[id], w.key(keys_[id])) : std::nullopt;
  }
  /// Member `id` as an unsigned field (0 when absent).
  template <typename U>
  [[nodiscard]] U count(int id, const Where& w) const {
    return has(id) ? to_unsigned<U>(read_integer(values_[id], w.key(keys_[id])), w.key(keys_[id])) : U{0};
  }
  /// Member `id` as epoch seconds (0 when absent).
  [[nodiscard]] std::int64_t time(int id, const Where& w) const {
    return has(id) ? read_time(values_[id], w.key(keys_[id])) : 0;
  }
  /// Member `id` as true/false (`fallback` when absent).
  [[nodiscard]] bool boolean(int id, const Where& w, bool fallback) const {
    return has(id) ? read_bool(values_[id], w.key(keys_[id]), fallback) : fallback;
  }

 private:
  std::array<element, N> values_{};
  std::array<std::string_view, N> keys_{};
  std::bitset<N> has_;
};

// ---- Gres and TRES strings -----------------------------------------------------------------------------------------

/// GPUs named in a gres or TRES string.
struct GpuCount {
  std::uint64_t untyped = 0;  ///< Sum of "gpu:N" / "gres/gpu=N" entries.
  std::uint64_t typed = 0;    ///< Sum of "gpu:TYPE:N" / "gres/gpu:TYPE=N" entries.
  bool any_untyped = false;   ///< Some entry had no type.
  bool any = false;           ///< Some gpu entry at all.
  std::string_view type;      ///< Type of the first typed entry.
  bool bad = false;           ///< A count that is not a number below 2^32.

  /// Counts `count` GPUs of `type` (empty: untyped); `type` must outlive this (it points into the reply).
  void add(std::uint64_t count, std::string_view type) {
    any = true;
    if (type.empty()) {
      untyped += count;
      any_untyped = true;
    } else {
      typed += count;
      if (this->type.empty()) this->type = type;
    }
  }
  /// Every GPU entry added up (gres strings list distinct GPUs).
  [[nodiscard]] std::uint64_t sum() const { return untyped + typed; }
  /// The total of a TRES string, where "gres/gpu=16" and "gres/gpu:h100=16" both count the same GPUs.
  [[nodiscard]] std::uint64_t tres_total() const { return any_untyped ? untyped : typed; }
};

/// Calls fn(item) for each comma-separated item outside parentheses: "gpu:h100:2(IDX:0,2),gpu:a100:1(S:0-1)" has
/// two (Slurm prints index and socket lists with commas inside the parentheses).
template <typename Fn>
void for_each_gres_item(std::string_view text, Fn&& fn) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      if (i > start) fn(text.substr(start, i - start));
      start = i + 1;
    }
  }
}

/// Adds one item ("gpu:h100:8(S:0-1)", "gres:gpu:h100:2", "gres/gpu:4", "gres/gpu=2", "gres/gpu:h100=16") to `out`
/// when it names GPUs. A missing count means 1.
void add_gres_item(std::string_view item, GpuCount& out) {
  if (const std::size_t paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
  while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
  while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
  if (item.starts_with("gres/") || item.starts_with("gres:")) item.remove_prefix(5);
  std::array<std::string_view, 4> tokens{};
  std::size_t n = 0;
  for (std::size_t start = 0; n < tokens.size();) {
    const std::size_t sep = item.find_first_of(":=", start);
    tokens[n++] = item.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start);
    if (sep == std::string_view::npos) break;
    start = sep + 1;
  }
  if (n == 0 || tokens[0] != "gpu") return;
  const auto is_number = [](std::string_view t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::string_view type;
  std::string_view count_text = "1";
  if (n >= 2 && is_number(tokens[n - 1])) {
    count_text = tokens[n - 1];
    if (n >= 3) type = tokens[1];
  } else if (n >= 2) {
    type = tokens[1];
    if (n >= 3) {  // "gpu:h100:lots"
      out.bad = true;
      return;
    }
  }
  std::uint32_t count = 0;
  const auto [ptr, ec] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
  if (ec != std::errc() || ptr != count_text.data() + count_text.size()) {
    out.bad = true;
    return;
  }
  out.add(count, type);
}

/// GPUs in a gres/TRES string.
GpuCount gpus_in(std::string_view text) {
  GpuCount out;
  for_each_gres_item(text, [&](std::string_view item) { add_gres_item(item, out); });
  return out;
}

/// GPUs of the string member at `found`, failing at its path on a bad count.
GpuCount gpus_at(const std::optional<Found>& found) {
  if (!found) return {};
  const std::string_view text = read_string(found->value, found->where);
  GpuCount out = gpus_in(text);
  if (out.bad) found->where.fail("bad GPU count in " + quoted(text));
  return out;
}

/// `v` as a GPU count field, failing at `w` when it does not fit.
std::uint32_t gpu_field(std::uint64_t v, const Where& w) {
  if (v > std::numeric_limits<std::uint32_t>::max()) w.fail("GPU count out of range: " + std::to_string(v));
  return static_cast<std::uint32_t>(v);
}

// ---- States ------------------------------------------------------------------------------------------------------

constexpr std::array<std::string_view, 7> kNodeBaseStates = {"IDLE",  "DOWN",   "ALLOCATED", "ERROR",
                                                             "MIXED", "FUTURE", "UNKNOWN"};
constexpr std::array<std::string_view, 12> kJobBaseStates = {"PENDING",   "RUNNING",   "SUSPENDED", "COMPLETED",
                                                             "CANCELLED", "FAILED",    "TIMEOUT",   "NODE_FAIL",
                                                             "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};

template <std::size_t N>
bool is_one_of(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

/// Upper-case state names from a string ("idle", "RUNNING") or an array of them (["MIXED", "DRAIN"]).
void add_state_names(element e, const Where& w, std::vector<std::string>& out) {
  if (e.is_string()) {
    out.push_back(upper(e.get_string().value_unsafe()));
    return;
  }
  if (!e.is_array()) w.fail(std::string("expected a state name or a list of them, got ") + kind_of(e));
  for_each_element(e, w, [&](element item, const Where& iw) { out.push_back(upper(read_string(item, iw))); });
}

/// The base state of `names` (the first when it is one of `bases`, else the first base found later) and the others
/// as flags. `fallback` gives the base when none is listed; no names at all give no state.
template <std::size_t N, typename Fallback>
std::pair<std::string, std::vector<std::string>> split_state(std::vector<std::string> names,
                                                             const std::array<std::string_view, N>& bases,
                                                             Fallback&& fallback) {
  if (names.empty()) return {};
  auto base = std::find_if(names.begin(), names.end(), [&](const std::string& s) { return is_one_of(s, bases); });
  if (base == names.end()) {
    std::string state = fallback(names);
    return {std::move(state), std::move(names)};
  }
  std::string state = std::move(*base);
  names.erase(base);
  return {std::move(state), std::move(names)};
}

/// The base state a job has when 22.05 (v0.0.38) prints only a flag as its job_state (job_state_string() returns
/// the flag, not the base, for these). A completing or staging-out job has ended, but 22.05 does not say how:
/// COMPLETED stands for it until the next poll shows the real end state.
std::string implied_job_base(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  const std::string& flag = names.front();
  static constexpr std::array<std::string_view, 5> kRunning = {"CONFIGURING", "RESIZING", "STOPPED", "SIGNALING",
                                                               "POWER_UP_NODE"};
  static constexpr std::array<std::string_view, 5> kPending = {"REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                                                               "SPECIAL_EXIT", "RESV_DEL_HOLD"};
  static constexpr std::array<std::string_view, 2> kEnded = {"COMPLETING", "STAGE_OUT"};
  if (is_one_of(flag, kRunning)) return "RUNNING";
  if (is_one_of(flag, kPending)) return "PENDING";
  if (is_one_of(flag, kEnded)) return "COMPLETED";
  return flag;  // a state this parser does not know: passed on as it is
}

// ---- Top level ---------------------------------------------------------------------------------------------------

/// The reply's top-level object, parsed with the calling thread's parser. The body is copied once into the
/// parser's padded buffer (a string_view gives no guarantee that the 64 bytes after it are readable). The parser is
/// kept between calls: its buffers (input copy, structural index, tape, strings: a few times the largest reply)
/// stay allocated, so polling a large cluster does not fault in gigabytes of fresh pages on every call (a 790 MB
/// jobs reply: 23 s in parse_jobs on a fresh parser on the 2-core development VM, whose first-touch page faults are
/// slow, and 1.6 s with the buffers warm). The element is valid until the thread's next parse.
element parse_root(std::string_view body, const Where& top) {
  thread_local simdjson::dom::parser parser;
  auto result = parser.parse(body.data(), body.size(), true);
  if (result.error()) top.fail(std::string("not JSON: ") + simdjson::error_message(result.error()));
  const element root = result.value_unsafe();
  if (!root.is_object()) top.fail(std::string("expected a JSON object, got ") + kind_of(root));
  return root;
}

/// The required array member `key` of the top-level object.
Found required_array(element root, std::string_view key, const Where& top) {
  const auto v = member(root, key);
  if (!v) top.key(key).fail("missing");
  if (!v->is_array()) top.key(key).fail(std::string("expected an array, got ") + kind_of(*v));
  return Found{*v, top.key(key)};
}

/// Reads each element of the array `found` with `read(element, Where)`.
template <typename T, typename Read>
std::vector<T> read_records(const Found& found, Read&& read) {
  std::vector<T> out;
  out.reserve(found.value.get_array().value_unsafe().size());
  for_each_element(found.value, found.where, [&](element item, const Where& w) { out.push_back(read(item, w)); });
  return out;
}

// ---- Messages ----------------------------------------------------------------------------------------------------

RestMessage read_message(element e, const Where& w) {
  RestMessage m;
  if (!e.is_object()) w.fail(std::string("expected an object, got ") + kind_of(e));
  // error_number (usual) or error_code (v0.0.38's held-submit and parse errors).
  if (auto v = find(e, "error_number", w)) m.error_number = read_integer(v->value, v->where).value_or(0);
  if (auto v = find(e, "error_code", w)) m.error_number = read_integer(v->value, v->where).value_or(0);
  if (auto v = find(e, "error", w)) m.error = read_string(v->value, v->where);
  if (auto v = find(e, "description", w)) m.description = read_string(v->value, v->where);
  if (auto v = find(e, "source", w)) m.source = read_string(v->value, v->where);
  return m;
}

std::vector<RestMessage> read_messages(element root, std::string_view key, const Where& top) {
  std::vector<RestMessage> out;
  if (const auto list = find(root, key, top)) {
    for_each_element(list->value, list->where,
                     [&](element item, const Where& w) { out.push_back(read_message(item, w)); });
  }
  return out;
}

// ---- Nodes -------------------------------------------------------------------------------------------------------

namespace node_key {
enum : int {
  kName,
  kState,
  kStateFlags,
  kReason,
  kReasonChangedAt,
  kReasonSetByUser,
  kComment,
  kCpus,
  kAllocCpus,
  kRealMemory,
  kAllocMemory,
  kGres,
  kGresUsed,
  kPartitions,
  kFeatures,
  kWeight,
  kBootTime,
  kLastBusy,
  kCount
};
}  // namespace node_key

const KeyIndex& node_keys() {
  using namespace node_key;
  static const KeyIndex index{{"name", kName},
                              {"state", kState},
                              {"state_flags", kStateFlags},
                              {"reason", kReason},
                              {"reason_changed_at", kReasonChangedAt},
                              {"reason_set_by_user", kReasonSetByUser},
                              {"comment", kComment},
                              {"cpus", kCpus},
                              {"alloc_cpus", kAllocCpus},
                              {"real_memory", kRealMemory},
                              {"alloc_memory", kAllocMemory},
                              {"gres", kGres},
                              {"gres_used", kGresUsed},
                              {"partitions", kPartitions},
                              {"features", kFeatures},
                              {"weight", kWeight},
                              {"boot_time", kBootTime},
                              {"last_busy", kLastBusy}};
  return index;
}

/// Node state: v0.0.38's lowercase `state` plus `state_flags`, or v0.0.39+'s array whose first element is the base
/// state when it is one (IDLE, DOWN, ...); the rest are flags. With no base state listed, the node is UNKNOWN.
void read_node_state(const Members<node_key::kCount>& f, const Where& w, RestNode& node) {
  std::vector<std::string> names;
  if (const auto state = f.get(node_key::kState, w)) add_state_names(state->value, state->where, names);
  if (const auto flags = f.get(node_key::kStateFlags, w)) add_state_names(flags->value, flags->where, names);
  auto [state, flags] = split_state(std::move(names), kNodeBaseStates, [](const auto&) { return "UNKNOWN"; });
  node.state = std::move(state);
  node.flags = std::move(flags);
}

/// gres and gres_used as given, and their GPUs.
void read_node_gres(const Members<node_key::kCount>& f, const Where& w, RestNode& node) {
  using namespace node_key;
  if (const auto gres = f.get(kGres, w)) {
    const GpuCount gpus = gpus_at(gres);
    node.gres = read_string(gres->value, gres->where);
    node.gpus = gpu_field(gpus.sum(), gres->where);
    node.gpu_type = gpus.type;
  }
  if (const auto used = f.get(kGresUsed, w)) {
    node.gres_used = read_string(used->value, used->where);
    node.alloc_gpus = gpu_field(gpus_at(used).sum(), used->where);
  }
}

RestNode read_node(element e, const Where& w) {
  using namespace node_key;
  const Members<kCount> f(e, w, node_keys());
  RestNode node;
  node.name = f.string(kName, w);
  read_node_state(f, w, node);
  node.reason = f.string(kReason, w);
  node.reason_time = f.time(kReasonChangedAt, w);
  node.reason_user = f.string(kReasonSetByUser, w);
  node.comment = f.string(kComment, w);
  node.cpus = f.count<std::uint32_t>(kCpus, w);
  node.alloc_cpus = f.count<std::uint32_t>(kAllocCpus, w);
  node.memory_mb = f.count<std::uint64_t>(kRealMemory, w);
  node.alloc_memory_mb = f.count<std::uint64_t>(kAllocMemory, w);
  read_node_gres(f, w, node);
  if (const auto parts = f.get(kPartitions, w)) node.partitions = read_string_list(parts->value, parts->where);
  if (const auto features = f.get(kFeatures, w)) {
    node.features = join(read_string_list(features->value, features->where), ',');
  }
  if (const auto weight = f.get(kWeight, w)) {
    const auto v = read_integer(weight->value, weight->where);
    if (v) node.weight = to_unsigned<std::uint32_t>(v, weight->where);
  }
  node.boot_time = f.time(kBootTime, w);
  node.last_busy = f.time(kLastBusy, w);
  return node;
}

// ---- Jobs --------------------------------------------------------------------------------------------------------

namespace job_key {
enum : int {
  kJobId,
  kName,
  kUserName,
  kUser,
  kAccount,
  kPartition,
  kQos,
  kJobState,
  kState,
  kStateReason,
  kStateDescription,
  kSubmitTime,
  kEligibleTime,
  kStartTime,
  kEndTime,
  kTime,
  kTimeLimit,
  kPriority,
  kHold,
  kNodeCount,
  kAllocationNodes,
  kCpus,
  kRequired,
  kTasks,
  kTresPerNode,
  kTresPerJob,
  kTresPerTask,
  kTresPerSocket,
  kTresReqStr,
  kTresAllocStr,
  kTres,
  kGresDetail,
  kGres,
  kGpusPerNode,
  kMemoryPerNode,
  kNodes,
  kCommand,
  kComment,
  kDependency,
  kArrayJobId,
  kArrayTaskId,
  kArray,
  kRequeue,
  kShared,
  kExitCode,
  kCount
};
}  // namespace job_key

using JobMembers = Members<job_key::kCount>;

const KeyIndex& job_keys() {
  using namespace job_key;
  static const KeyIndex index{{"job_id", kJobId},
                              {"name", kName},
                              {"user_name", kUserName},
                              {"user", kUser},
                              {"account", kAccount},
                              {"partition", kPartition},
                              {"qos", kQos},
                              {"job_state", kJobState},
                              {"state", kState},
                              {"state_reason", kStateReason},
                              {"state_description", kStateDescription},
                              {"submit_time", kSubmitTime},
                              {"eligible_time", kEligibleTime},
                              {"start_time", kStartTime},
                              {"end_time", kEndTime},
                              {"time", kTime},
                              {"time_limit", kTimeLimit},
                              {"priority", kPriority},
                              {"hold", kHold},
                              {"node_count", kNodeCount},
                              {"allocation_nodes", kAllocationNodes},
                              {"cpus", kCpus},
                              {"required", kRequired},
                              {"tasks", kTasks},
                              {"tres_per_node", kTresPerNode},
                              {"tres_per_job", kTresPerJob},
                              {"tres_per_task", kTresPerTask},
                              {"tres_per_socket", kTresPerSocket},
                              {"tres_req_str", kTresReqStr},
                              {"tres_alloc_str", kTresAllocStr},
                              {"tres", kTres},
                              {"gres_detail", kGresDetail},
                              {"gres", kGres},
                              {"gpus_per_node", kGpusPerNode},
                              {"memory_per_node", kMemoryPerNode},
                              {"nodes", kNodes},
                              {"command", kCommand},
                              {"comment", kComment},
                              {"dependency", kDependency},
                              {"array_job_id", kArrayJobId},
                              {"array_task_id", kArrayTaskId},
                              {"array", kArray},
                              {"requeue", kRequeue},
                              {"shared", kShared},
                              {"exit_code", kExitCode}};
  return index;
}

/// Job state and reason: job_state (string in v0.0.38/39, array in v0.0.40+), or slurmdb's state {current, reason},
/// or GET jobs/state's state array.
void read_job_state(const JobMembers& f, const Where& w, RestJob& job) {
  using namespace job_key;
  std::vector<std::string> names;
  if (const auto js = f.get(kJobState, w)) {
    add_state_names(js->value, js->where, names);
  } else if (const auto state = f.get(kState, w)) {
    if (state->value.is_object()) {
      if (const auto current = find(state->value, "current", state->where)) {
        add_state_names(current->value, current->where, names);
      }
      if (const auto reason = find(state->value, "reason", state->where)) {
        job.reason = read_string(reason->value, reason->where);
      }
    } else {
      add_state_names(state->value, state->where, names);
    }
  }
  auto [state, flags] = split_state(std::move(names), kJobBaseStates, implied_job_base);
  job.state = std::move(state);
  job.flags = std::move(flags);
  if (f.has(kStateReason)) job.reason = f.string(kStateReason, w);
  job.state_description = f.string(kStateDescription, w);
}

/// slurmdb's time {submission, eligible, start, end, limit} (limit in minutes).
void read_slurmdb_times(const Found& time, RestJob& job) {
  if (const auto v = find(time.value, "submission", time.where)) job.submit_time = read_time(v->value, v->where);
  if (const auto v = find(time.value, "eligible", time.where)) job.eligible_time = read_time(v->value, v->where);
  if (const auto v = find(time.value, "start", time.where)) job.start_time = read_time(v->value, v->where);
  if (const auto v = find(time.value, "end", time.where)) job.end_time = read_time(v->value, v->where);
  if (const auto v = find(time.value, "limit", time.where))
    job.time_limit_s = read_minutes_as_seconds(v->value, v->where);
}

void read_job_times(const JobMembers& f, const Where& w, RestJob& job) {
  using namespace job_key;
  if (const auto time = f.get(kTime, w)) read_slurmdb_times(*time, job);
  if (f.has(kSubmitTime)) job.submit_time = f.time(kSubmitTime, w);
  if (f.has(kEligibleTime)) job.eligible_time = f.time(kEligibleTime, w);
  if (f.has(kStartTime)) job.start_time = f.time(kStartTime, w);
  if (f.has(kEndTime)) job.end_time = f.time(kEndTime, w);
  if (const auto limit = f.get(kTimeLimit, w)) job.time_limit_s = read_minutes_as_seconds(limit->value, limit->where);
}

/// GPUs of a slurmdb TRES list [{"type": "gres", "name": "gpu" | "gpu:h100", "count": 2}, ...]; also the node and
/// cpu counts when asked.
struct TresList {
  GpuCount gpus;
  std::optional<std::int64_t> nodes;
  std::optional<std::int64_t> cpus;
};

TresList read_tres_list(const std::optional<Found>& list) {
  TresList out;
  if (!list) return out;
  for_each_element(list->value, list->where, [&](element item, const Where& w) {
    const auto type = find(item, "type", w);
    const auto name = find(item, "name", w);
    const auto count = find(item, "count", w);
    const std::string_view t = type ? read_string(type->value, type->where) : std::string_view();
    if (t != "gres" && t != "node" && t != "cpu") return;  // energy reports -2 when unknown: not read
    const std::optional<std::int64_t> n = count ? read_integer(count->value, count->where) : std::nullopt;
    if (t == "node") out.nodes = n;
    if (t == "cpu") out.cpus = n;
    const std::string_view gres = name ? read_string(name->value, name->where) : std::string_view();
    if (t != "gres" || !(gres == "gpu" || gres.starts_with("gpu:")) || !n) return;
    out.gpus.add(to_unsigned<std::uint32_t>(n, count->where), gres == "gpu" ? std::string_view() : gres.substr(4));
  });
  return out;
}

/// v0.0.38's gpus_per_node (a job description field: 2, "2" or "h100:2"; harmless when absent).
GpuCount read_gpus_per_node(const std::optional<Found>& field) {
  GpuCount out;
  if (!field) return out;
  if (!field->value.is_string()) {
    if (const auto n = read_integer(field->value, field->where))
      out.add(to_unsigned<std::uint32_t>(n, field->where), {});
    return out;
  }
  const std::string_view text = read_string(field->value, field->where);
  const std::size_t colon = text.rfind(':');
  const std::string_view count = colon == std::string_view::npos ? text : text.substr(colon + 1);
  std::uint32_t n = 0;
  const auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (ec != std::errc() || ptr != count.data() + count.size()) field->where.fail("bad GPU count in " + quoted(text));
  out.add(n, colon == std::string_view::npos ? std::string_view() : text.substr(0, colon));
  return out;
}

/// Everything a job reply says about its GPUs.
struct JobGpuSources {
  GpuCount per_node;             ///< tres_per_node: "gres:gpu:h100:2" (22.05), "gres/gpu:h100:2" (23.11+).
  GpuCount per_job;              ///< tres_per_job: "gres/gpu:8".
  GpuCount per_task;             ///< tres_per_task: "gres/gpu=2".
  GpuCount per_socket;           ///< tres_per_socket.
  GpuCount gres;                 ///< v0.0.38 job description's gres: "gpu:h100:2".
  GpuCount v38_per_node;         ///< v0.0.38 job description's gpus_per_node.
  GpuCount alloc;                ///< tres_alloc_str: "cpu=16,...,gres/gpu=16".
  GpuCount req;                  ///< tres_req_str.
  std::uint64_t detail_sum = 0;  ///< gres_detail summed over the allocated nodes.
  std::uint64_t detail_max = 0;  ///< The most any one node holds in gres_detail.
  bool detail_any = false;       ///< gres_detail names GPUs.
  TresList db_alloc;             ///< slurmdb tres/allocated.
  TresList db_req;               ///< slurmdb tres/requested.
};

JobGpuSources read_gpu_sources(const JobMembers& f, const Where& w) {
  using namespace job_key;
  JobGpuSources s;
  s.per_node = gpus_at(f.get(kTresPerNode, w));
  s.per_job = gpus_at(f.get(kTresPerJob, w));
  s.per_task = gpus_at(f.get(kTresPerTask, w));
  s.per_socket = gpus_at(f.get(kTresPerSocket, w));
  s.gres = gpus_at(f.get(kGres, w));
  s.v38_per_node = read_gpus_per_node(f.get(kGpusPerNode, w));
  s.alloc = gpus_at(f.get(kTresAllocStr, w));
  s.req = gpus_at(f.get(kTresReqStr, w));
  if (const auto detail = f.get(kGresDetail, w)) {
    for_each_element(detail->value, detail->where, [&](element item, const Where& iw) {
      const GpuCount node = gpus_at(Found{item, iw});
      s.detail_any = s.detail_any || node.any;
      s.detail_sum += node.sum();
      s.detail_max = std::max(s.detail_max, node.sum());
    });
  }
  if (const auto tres = f.get(kTres, w)) {
    s.db_alloc = read_tres_list(find(tres->value, "allocated", tres->where));
    s.db_req = read_tres_list(find(tres->value, "requested", tres->where));
  }
  return s;
}

/// GPUs per node asked for: tres_per_node, else v0.0.38's gres / gpus_per_node, else the most any node holds in
/// gres_detail; 0 when the job asked per job or per task only.
std::uint64_t gpus_per_node_of(const JobGpuSources& s) {
  if (s.per_node.any) return s.per_node.sum();
  if (s.gres.any) return s.gres.sum();
  if (s.v38_per_node.any) return s.v38_per_node.sum();
  return s.detail_any ? s.detail_max : 0;
}

/// A GPU total and the member it comes from (for the error path).
struct GpuTotal {
  std::uint64_t count = 0;
  std::string_view source = "tres_alloc_str";
};

/// The job's GPUs: tres_alloc_str (when it counts gres/gpu), else gres_detail summed over the nodes (running jobs
/// on clusters without AccountingStorageTRES=gres/gpu), else tres_req_str, else tres_per_job, else per node x
/// node_count, else per task x tasks, else slurmdb's tres allocated, then requested.
GpuTotal total_gpus_of(const JobGpuSources& s, std::uint64_t per_node, std::uint64_t node_count, std::uint64_t tasks) {
  if (s.alloc.any) return {s.alloc.tres_total(), "tres_alloc_str"};
  if (s.detail_any) return {s.detail_sum, "gres_detail"};
  if (s.req.any) return {s.req.tres_total(), "tres_req_str"};
  if (s.per_job.any) return {s.per_job.sum(), "tres_per_job"};
  if (per_node > 0) return {per_node * std::max<std::uint64_t>(node_count, 1), "tres_per_node"};
  if (s.per_task.any) return {s.per_task.sum() * std::max<std::uint64_t>(tasks, 1), "tres_per_task"};
  if (s.db_alloc.gpus.any) return {s.db_alloc.gpus.tres_total(), "tres"};
  if (s.db_req.gpus.any) return {s.db_req.gpus.tres_total(), "tres"};
  return {};
}

/// The GPU type asked for: the first typed request (per node, job, task, socket, v0.0.38 gres, slurmdb requested).
std::string_view gpu_type_of(const JobGpuSources& s) {
  for (const GpuCount* asked :
       {&s.per_node, &s.per_job, &s.per_task, &s.per_socket, &s.gres, &s.v38_per_node, &s.db_req.gpus}) {
    if (!asked->type.empty()) return asked->type;
  }
  return {};
}

/// GPUs of a job (after read_job_size: the node count is used). slurmdb replies also give node and CPU counts in
/// their TRES lists, used when allocation_nodes / required are silent.
void read_job_gpus(const JobMembers& f, const Where& w, RestJob& job) {
  using namespace job_key;
  const JobGpuSources s = read_gpu_sources(f, w);
  const std::uint64_t per_node = gpus_per_node_of(s);
  job.gpus_per_node = gpu_field(per_node, w.key("tres_per_node"));
  const auto tasks = to_unsigned<std::uint32_t>(f.integer(kTasks, w), w.key("tasks"));
  const GpuTotal total = total_gpus_of(s, per_node, job.node_count, tasks);
  job.gpus = gpu_field(total.count, w.key(total.source));
  job.gpu_type = gpu_type_of(s);
  if (job.node_count == 0 && f.has(kTres)) {
    job.node_count = to_unsigned<std::uint32_t>(s.db_alloc.nodes ? s.db_alloc.nodes : s.db_req.nodes, w.key("tres"));
  }
  if (job.cpus == 0 && f.has(kTres)) {
    job.cpus = to_unsigned<std::uint32_t>(s.db_alloc.cpus ? s.db_alloc.cpus : s.db_req.cpus, w.key("tres"));
  }
}

/// Node count, CPUs and memory per node: slurmctld's node_count / cpus / memory_per_node, or slurmdb's
/// allocation_nodes and required {CPUs, memory_per_node (v0.0.39+), memory (v0.0.38)}.
void read_job_size(const JobMembers& f, const Where& w, RestJob& job) {
  using namespace job_key;
  job.node_count =
      f.has(kNodeCount) ? f.count<std::uint32_t>(kNodeCount, w) : f.count<std::uint32_t>(kAllocationNodes, w);
  job.cpus = f.count<std::uint32_t>(kCpus, w);
  job.mem_per_node_mb = f.count<std::uint64_t>(kMemoryPerNode, w);
  if (const auto required = f.get(kRequired, w)) {
    if (const auto cpus = find(required->value, "CPUs", required->where)) {
      job.cpus = to_unsigned<std::uint32_t>(read_integer(cpus->value, cpus->where), cpus->where);
    }
    auto memory = find(required->value, "memory_per_node", required->where);
    if (!memory) memory = find(required->value, "memory", required->where);
    if (memory)
      job.mem_per_node_mb = to_unsigned<std::uint64_t>(read_integer(memory->value, memory->where), memory->where);
  }
}

/// The return code of exit_code: v0.0.38's plain int is the raw wait status (768 for "exit 3", as 22.05 printed
/// it live), v0.0.39's {set, number} likewise; v0.0.40+ and slurmdb give {status, return_code}. A job killed by a
/// signal has no return code (0), as v0.0.40+ reports it.
std::int32_t read_exit_code(const Found& exit_code) {
  const auto decode_wait_status = [&](std::optional<std::int64_t> status) -> std::int32_t {
    if (!status) return 0;
    if (*status < 0 || *status > std::numeric_limits<std::int32_t>::max()) {
      exit_code.where.fail("exit status out of range: " + std::to_string(*status));
    }
    return (*status & 0x7f) == 0 ? static_cast<std::int32_t>((*status >> 8) & 0xff) : 0;
  };
  if (!exit_code.value.is_object()) return decode_wait_status(read_integer(exit_code.value, exit_code.where));
  if (const auto rc = find(exit_code.value, "return_code", exit_code.where)) {
    return to_int32(read_integer(rc->value, rc->where), rc->where, 0);
  }
  if (member(exit_code.value, "number")) return decode_wait_status(read_integer(exit_code.value, exit_code.where));
  return 0;
}

/// Array ids: array_job_id / array_task_id, or slurmdb's array {job_id, task_id}.
void read_job_array(const JobMembers& f, const Where& w, RestJob& job) {
  using namespace job_key;
  job.array_job_id = f.count<std::uint64_t>(kArrayJobId, w);
  if (const auto task = f.get(kArrayTaskId, w))
    job.array_task_id = to_int32(read_integer(task->value, task->where), task->where, -1);
  if (const auto array = f.get(kArray, w)) {
    if (const auto id = find(array->value, "job_id", array->where)) {
      job.array_job_id = to_unsigned<std::uint64_t>(read_integer(id->value, id->where), id->where);
    }
    if (const auto task = find(array->value, "task_id", array->where)) {
      job.array_task_id = to_int32(read_integer(task->value, task->where), task->where, -1);
    }
  }
}

/// exclusive: `shared` is "none" (v0.0.38: a string, null when the partition default applies; seen live for
/// sbatch --exclusive) or an array holding "none" (v0.0.40+: [] by default). --exclusive=user gives "user", which
/// is not exclusive of the node.
bool read_exclusive(const std::optional<Found>& shared) {
  if (!shared) return false;
  if (shared->value.is_string()) return read_string(shared->value, shared->where) == "none";
  bool none = false;
  for_each_element(shared->value, shared->where,
                   [&](element item, const Where& iw) { none = none || read_string(item, iw) == "none"; });
  return none;
}

/// comment: slurmctld's string, or slurmdb's {administrator, job, system} (the job's own).
std::string read_comment(const std::optional<Found>& comment) {
  if (!comment) return "";
  if (!comment->value.is_object()) return std::string(read_string(comment->value, comment->where));
  const auto job = find(comment->value, "job", comment->where);
  return job ? std::string(read_string(job->value, job->where)) : std::string();
}

RestJob read_job(element e, const Where& w) {
  using namespace job_key;
  const JobMembers f(e, w, job_keys());
  RestJob job;
  job.job_id = f.count<std::uint64_t>(kJobId, w);
  job.name = f.string(kName, w);
  job.user = f.has(kUserName) ? f.string(kUserName, w) : f.string(kUser, w);
  job.account = f.string(kAccount, w);
  job.partition = f.string(kPartition, w);
  job.partition.resize(std::min(job.partition.size(), job.partition.find(',')));  // "gpu,debug": the first
  job.qos = f.string(kQos, w);
  read_job_state(f, w, job);
  read_job_times(f, w, job);
  job.priority = f.integer(kPriority, w);
  read_job_size(f, w, job);
  read_job_gpus(f, w, job);
  job.nodes = f.string(kNodes, w);
  if (job.nodes == "None assigned") job.nodes.clear();  // slurmdb's pending jobs
  job.command = f.string(kCommand, w);
  job.comment = read_comment(f.get(kComment, w));
  job.dependency = f.string(kDependency, w);
  read_job_array(f, w, job);
  job.requeue = f.boolean(kRequeue, w, true);
  job.exclusive = read_exclusive(f.get(kShared, w));
  if (const auto exit_code = f.get(kExitCode, w)) job.exit_code = read_exit_code(*exit_code);
  // held: v0.0.40+ says so (hold); v0.0.38 shows it as priority 0 with JobHeldUser / JobHeldAdmin.
  job.held = f.boolean(kHold, w, false) || (job.priority == 0 && job.reason.starts_with("JobHeld"));
  return job;
}

// ---- Partitions --------------------------------------------------------------------------------------------------

constexpr std::array<std::string_view, 2> kNodesConfigured = {"nodes", "configured"};
constexpr std::array<std::string_view, 2> kNodesTotal = {"nodes", "total"};
constexpr std::array<std::string_view, 2> kCpusTotal = {"cpus", "total"};
constexpr std::array<std::string_view, 2> kDefaultsTime = {"defaults", "time"};
constexpr std::array<std::string_view, 2> kMaximumsTime = {"maximums", "time"};
constexpr std::array<std::string_view, 2> kPartitionState = {"partition", "state"};
constexpr std::array<std::string_view, 2> kPriorityTier = {"priority", "tier"};
constexpr std::array<std::string_view, 2> kPriorityJobFactor = {"priority", "job_factor"};
constexpr std::array<std::string_view, 2> kTresBillingWeights = {"tres", "billing_weights"};
constexpr std::array<std::string_view, 2> kQosAssigned = {"qos", "assigned"};

/// The first of the values found at `keys` (flat v0.0.38 name first, nested v0.0.40+ path second).
std::optional<Found> first_found(element e, const Where& w, std::string_view flat,
                                 std::span<const std::string_view> nested) {
  const auto v = member(e, flat);
  if (v && !v->is_null() && !v->is_object()) return Found{*v, w.key(flat)};
  return find_path(e, nested, w);
}

/// is_default: the `flags` array holds "default" (v0.0.38) or "DEFAULT". v0.0.40+ replies do not say which
/// partition is the default (partition_info has no such field), so it stays false there.
bool read_is_default(element e, const Where& w) {
  const auto flags = find(e, "flags", w);
  if (!flags) return false;
  bool found = false;
  for_each_element(flags->value, flags->where,
                   [&](element item, const Where& iw) { found = found || iequals(read_string(item, iw), "default"); });
  return found;
}

RestPartition read_partition(element e, const Where& w) {
  if (!e.is_object()) w.fail(std::string("expected an object, got ") + kind_of(e));
  RestPartition p;
  if (const auto v = find(e, "name", w)) p.name = read_string(v->value, v->where);
  if (const auto v = first_found(e, w, "nodes", kNodesConfigured)) p.nodes = read_string(v->value, v->where);
  p.is_default = read_is_default(e, w);
  for (std::string_view key : {"default_time_limit", "default_time"}) {
    if (const auto v = find(e, key, w)) p.default_time_s = read_minutes_as_seconds(v->value, v->where);
  }
  if (const auto v = find_path(e, kDefaultsTime, w)) p.default_time_s = read_minutes_as_seconds(v->value, v->where);
  for (std::string_view key : {"max_time_limit", "max_time"}) {
    if (const auto v = find(e, key, w)) p.max_time_s = read_minutes_as_seconds(v->value, v->where);
  }
  if (const auto v = find_path(e, kMaximumsTime, w)) p.max_time_s = read_minutes_as_seconds(v->value, v->where);
  if (const auto v = first_found(e, w, "state", kPartitionState)) {
    std::vector<std::string> names;
    add_state_names(v->value, v->where, names);
    if (!names.empty()) p.state = std::move(names.front());
  }
  const auto count = [&](std::string_view flat, std::span<const std::string_view> nested, std::uint32_t fallback) {
    const auto v = first_found(e, w, flat, nested);
    if (!v) return fallback;
    const auto n = read_integer(v->value, v->where);
    return n ? to_unsigned<std::uint32_t>(n, v->where) : fallback;
  };
  p.priority_tier = count("priority_tier", kPriorityTier, 1);
  p.priority_job_factor = count("priority_job_factor", kPriorityJobFactor, 1);
  p.total_nodes = count("total_nodes", kNodesTotal, 0);
  p.total_cpus = count("total_cpus", kCpusTotal, 0);
  if (const auto v = first_found(e, w, "billing_weights", kTresBillingWeights)) {
    p.billing_weights = read_string(v->value, v->where);
  }
  if (const auto v = first_found(e, w, "qos", kQosAssigned)) p.qos = read_string(v->value, v->where);
  return p;
}

// ---- Associations and QOS ----------------------------------------------------------------------------------------

// slurmdb's association limits (data_parser ASSOC: max/jobs/active is MaxJobs, max/jobs/total MaxSubmitJobs,
// max/jobs/per/count GrpJobs; the same in v0.0.38's output).
constexpr std::array<std::string_view, 3> kAssocMaxJobs = {"max", "jobs", "active"};
constexpr std::array<std::string_view, 3> kAssocMaxSubmit = {"max", "jobs", "total"};
constexpr std::array<std::string_view, 4> kAssocGrpJobs = {"max", "jobs", "per", "count"};
constexpr std::array<std::string_view, 2> kDefaultQos = {"default", "qos"};

/// An optional limit at `keys` (nullopt when unset or infinite).
std::optional<std::int64_t> read_limit(element e, std::span<const std::string_view> keys, const Where& w) {
  const auto v = find_path(e, keys, w);
  if (!v) return std::nullopt;
  const auto n = read_integer(v->value, v->where);
  if (n && *n < 0) v->where.fail("expected a non-negative limit, got " + std::to_string(*n));
  return n;
}

RestAssociation read_association(element e, const Where& w) {
  if (!e.is_object()) w.fail(std::string("expected an object, got ") + kind_of(e));
  RestAssociation a;
  if (const auto v = find(e, "account", w)) a.account = read_string(v->value, v->where);
  if (const auto v = find(e, "user", w)) a.user = read_string(v->value, v->where);
  if (const auto v = find(e, "partition", w)) a.partition = read_string(v->value, v->where);
  if (const auto v = find(e, "parent_account", w)) a.parent_account = read_string(v->value, v->where);
  if (const auto v = find(e, "shares_raw", w)) {
    if (const auto n = read_integer(v->value, v->where)) a.shares_raw = *n;
  }
  if (const auto v = find_path(e, kDefaultQos, w)) a.default_qos = read_string(v->value, v->where);
  for (std::string_view key : {"qos", "QOS"}) {  // the 22.05 spec says QOS; its replies say qos
    if (const auto v = find(e, key, w)) a.qos = read_string_list(v->value, v->where);
  }
  a.max_jobs = read_limit(e, kAssocMaxJobs, w);
  a.max_submit_jobs = read_limit(e, kAssocMaxSubmit, w);
  a.grp_jobs = read_limit(e, kAssocGrpJobs, w);
  return a;
}

// slurmdb's QOS limits (the same paths in v0.0.38 and v0.0.44): MaxWall per job in minutes, MaxJobsPerUser under
// active_jobs, MaxSubmitJobsPerUser under jobs/per.
constexpr std::array<std::string_view, 5> kQosMaxWall = {"limits", "max", "wall_clock", "per", "job"};
constexpr std::array<std::string_view, 6> kQosMaxJobsPu = {"limits", "max", "jobs", "active_jobs", "per", "user"};
constexpr std::array<std::string_view, 5> kQosMaxSubmitPu = {"limits", "max", "jobs", "per", "user"};
constexpr std::array<std::string_view, 2> kQosPreemptList = {"preempt", "list"};

RestQos read_qos(element e, const Where& w) {
  if (!e.is_object()) w.fail(std::string("expected an object, got ") + kind_of(e));
  RestQos q;
  if (const auto v = find(e, "name", w)) q.name = read_string(v->value, v->where);
  if (const auto v = find(e, "priority", w)) q.priority = read_integer(v->value, v->where).value_or(0);
  if (const auto v = find_path(e, kQosMaxWall, w)) q.max_wall_pj_s = read_minutes_as_seconds(v->value, v->where);
  q.max_jobs_pu = read_limit(e, kQosMaxJobsPu, w);
  q.max_submit_pu = read_limit(e, kQosMaxSubmitPu, w);
  if (const auto v = find_path(e, kQosPreemptList, w)) q.preempt = read_string_list(v->value, v->where);
  if (const auto v = find(e, "usage_factor", w)) q.usage_factor = read_float(v->value, v->where).value_or(1.0);
  return q;
}

// ---- Ping and diag -----------------------------------------------------------------------------------------------

/// One controller's answer: responding (v0.0.42+), else pinged (v0.0.40/41) or ping (v0.0.38) "UP".
bool ping_responding(element e, const Where& w) {
  if (const auto v = find(e, "responding", w)) return read_bool(v->value, v->where, false);
  for (std::string_view key : {"pinged", "ping"}) {
    if (const auto v = find(e, key, w)) return iequals(read_string(v->value, v->where), "UP");
  }
  return false;
}

}  // namespace

// ---- Public parsers ----------------------------------------------------------------------------------------------

RestMessages parse_messages(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  RestMessages out;
  out.errors = read_messages(root, "errors", top);
  out.warnings = read_messages(root, "warnings", top);
  return out;
}

/// The controller reported is the first that responds (else the first listed); with several (primary and backup),
/// the twin only needs to know that one answers.
RestPing parse_ping(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  const Found pings = required_array(root, "pings", top);
  RestPing out;
  bool chosen = false;
  for_each_element(pings.value, pings.where, [&](element item, const Where& w) {
    const bool responding = ping_responding(item, w);
    if (chosen && (out.responding || !responding)) return;
    chosen = true;
    out.responding = responding;
    if (const auto v = find(item, "hostname", w)) out.hostname = read_string(v->value, v->where);
    if (const auto v = find(item, "latency", w)) out.latency_us = read_integer(v->value, v->where).value_or(0);
  });
  return out;
}

RestDiag parse_diag(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  const auto stats = find(root, "statistics", top);
  if (!stats) top.key("statistics").fail("missing");
  if (!stats->value.is_object()) stats->where.fail(std::string("expected an object, got ") + kind_of(stats->value));
  RestDiag d;
  const auto integer = [&](std::string_view key) -> std::int64_t {
    const auto v = find(stats->value, key, stats->where);
    return v ? read_integer(v->value, v->where).value_or(0) : 0;
  };
  const auto time = [&](std::string_view key) -> std::int64_t {
    const auto v = find(stats->value, key, stats->where);
    return v ? read_time(v->value, v->where) : 0;
  };
  d.server_time = time("req_time");
  d.jobs_pending = integer("jobs_pending");
  d.jobs_running = integer("jobs_running");
  d.schedule_cycle_last_us = integer("schedule_cycle_last");
  d.bf_last_cycle_us = integer("bf_cycle_last");
  d.bf_last_backfilled_jobs = integer("bf_last_backfilled_jobs");
  d.bf_when_last_cycle = time("bf_when_last_cycle");
  if (const auto v = find(stats->value, "bf_active", stats->where)) d.bf_active = read_bool(v->value, v->where, false);
  return d;
}

std::vector<RestNode> parse_nodes(std::string_view body, const std::string& endpoint, RestMessages* messages) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  if (messages != nullptr) {
    messages->errors = read_messages(root, "errors", top);
    messages->warnings = read_messages(root, "warnings", top);
    if (!messages->errors.empty() && !find(root, "nodes", top)) return {};  // the caller reports the errors
  }
  return read_records<RestNode>(required_array(root, "nodes", top), read_node);
}

std::vector<RestJob> parse_jobs(std::string_view body, const std::string& endpoint, RestMessages* messages) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  if (messages != nullptr) {
    messages->errors = read_messages(root, "errors", top);
    messages->warnings = read_messages(root, "warnings", top);
    if (!messages->errors.empty() && !find(root, "jobs", top)) return {};  // the caller reports the errors
  }
  return read_records<RestJob>(required_array(root, "jobs", top), read_job);
}

std::vector<RestPartition> parse_partitions(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  return read_records<RestPartition>(required_array(root, "partitions", top), read_partition);
}

std::vector<RestAssociation> parse_associations(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  return read_records<RestAssociation>(required_array(root, "associations", top), read_association);
}

std::vector<RestQos> parse_qos(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  // v0.0.38 (22.05) names the array "QOS"; v0.0.39+ "qos".
  const std::string_view key = member(root, "qos") || !member(root, "QOS") ? "qos" : "QOS";
  return read_records<RestQos>(required_array(root, key, top), read_qos);
}

std::uint64_t parse_submit(std::string_view body, const std::string& endpoint) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  auto id = find(root, "job_id", top);
  if (!id) {  // v0.0.40/41 also carry result {job_id}
    if (const auto result = find(root, "result", top)) id = find(result->value, "job_id", result->where);
  }
  return id ? to_unsigned<std::uint64_t>(read_integer(id->value, id->where), id->where) : 0;
}

std::vector<ApiVersion> parse_openapi_versions(std::string_view body, const std::string& endpoint, bool* node_update) {
  const Where top(endpoint);
  const element root = parse_root(body, top);
  const auto paths = find(root, "paths", top);
  if (!paths) top.key("paths").fail("missing");
  if (!paths->value.is_object()) paths->where.fail(std::string("expected an object, got ") + kind_of(paths->value));
  constexpr std::string_view kPrefix = "/slurm/";
  std::vector<ApiVersion> versions;
  const simdjson::dom::object all_paths = paths->value.get_object().value_unsafe();
  for (const auto field : all_paths) {
    std::string_view path = field.key;
    if (!path.starts_with(kPrefix)) continue;
    path.remove_prefix(kPrefix.size());
    const auto version = parse_api_version(path.substr(0, path.find('/')));
    if (version && std::find(versions.begin(), versions.end(), *version) == versions.end()) {
      versions.push_back(*version);
    }
  }
  std::sort(versions.begin(), versions.end());
  if (node_update != nullptr) {
    *node_update = false;
    if (!versions.empty()) {
      const std::string node_path = std::string(kPrefix) + api_version_name(versions.back()) + "/node/{node_name}";
      for (const std::string& p : {node_path, node_path + "/"}) {
        const auto ops = member(paths->value, p);
        if (ops && member(*ops, "post")) *node_update = true;
      }
    }
  }
  return versions;
}

}  // namespace gputwin
