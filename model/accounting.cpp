#include "model/accounting.hpp"

#include <charconv>
#include <string>

#include "model/text.hpp"

namespace gputwin {
namespace {

bool parse_int(std::string_view s, std::int64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0;
}

bool parse_double(std::string_view s, double& out) {
  try {
    std::size_t used = 0;
    out = std::stod(std::string(s), &used);
    return used == s.size() && out >= 0;
  } catch (const std::exception&) {
    return false;
  }
}

/// Calls on_pair(key, value) for each "key=value" of a comma list; false on a malformed item.
template <typename OnPair>
bool for_each_pair(std::string_view text, std::string& error, OnPair on_pair) {
  std::size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      error = "'" + std::string(item) + "' is not key=value";
      return false;
    }
    if (!on_pair(lower(item.substr(0, eq)), item.substr(eq + 1))) return false;
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return true;
}

}  // namespace

bool parse_memory_mb(std::string_view text, std::int64_t& mb) {
  if (text.empty()) return false;
  std::int64_t scale = 1;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = -1024;
      break;
    case 'M':
    case 'm':
      scale = 1;
      break;
    case 'G':
    case 'g':
      scale = 1024;
      break;
    case 'T':
    case 't':
      scale = 1024 * 1024;
      break;
    default:
      scale = 0;
      break;
  }
  std::int64_t value = 0;
  if (!parse_int(scale == 0 ? text : text.substr(0, text.size() - 1), value)) return false;
  if (scale == 0) scale = 1;
  mb = scale > 0 ? value * scale : (value + 1023) / 1024;
  return true;
}

bool parse_tres_limits(std::string_view text, TresLimits& out, std::string& error) {
  out = TresLimits{};
  return for_each_pair(text, error, [&](const std::string& key, std::string_view value) {
    std::int64_t v = 0;
    const bool ok = key == "mem" ? parse_memory_mb(value, v) : parse_int(value, v);
    if (!ok) {
      error = "bad value '" + std::string(value) + "' for " + key;
      return false;
    }
    if (key == "cpu") {
      out.cpu = v;
    } else if (key == "mem") {
      out.mem_mb = v;
    } else if (key == "node") {
      out.node = v;
    } else if (key == "gres/gpu" || key.starts_with("gres/gpu:")) {
      out.gpu = v;
    } else {
      error = "unsupported TRES '" + key + "' (supported: cpu, mem, node, gres/gpu)";
      return false;
    }
    return true;
  });
}

bool parse_billing_weights(std::string_view text, BillingWeights& out, std::string& error) {
  out = BillingWeights{};
  return for_each_pair(text, error, [&](const std::string& key, std::string_view value) {
    double scale = 1.0;
    if (key == "mem" && !value.empty()) {  // per MB unless suffixed (Mem=0.25G is per GB)
      const char unit = value.back();
      if (unit == 'G' || unit == 'g') {
        value.remove_suffix(1);
      } else if (unit == 'T' || unit == 't') {
        value.remove_suffix(1);
        scale = 1.0 / 1024;
      } else if (unit == 'M' || unit == 'm') {
        value.remove_suffix(1);
        scale = 1024;
      } else {
        scale = 1024;
      }
    }
    double w = 0;
    if (!parse_double(value, w)) {
      error = "bad weight '" + std::string(value) + "' for " + key;
      return false;
    }
    if (key == "cpu") {
      out.cpu = w;
    } else if (key == "mem") {
      out.mem_gb = w * scale;
    } else if (key == "node") {
      out.node = w;
    } else if (key == "gres/gpu" || key.starts_with("gres/gpu:")) {
      out.gpu = w;
    } else {
      error = "unsupported TRES '" + key + "' (supported: CPU, Mem, Node, GRES/gpu)";
      return false;
    }
    return true;
  });
}

}  // namespace gputwin
