#include "results/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <tuple>

namespace gputwin::svg {
namespace {

constexpr double kCharWidth = 6.5;  // mean advance of an 11 px sans-serif character, for layout only
constexpr double kLegendRow = 16;   // height of one legend row
constexpr double kBarBand = 22;     // height of one category of a horizontal bar chart
constexpr double kTitleY = 18;      // baseline of the title
constexpr double kLegendY = 32;     // top of the first legend row
constexpr const char* kGrid = "#e3e3e3";
constexpr const char* kAxis = "#444";

/// 10^n for 0 <= n <= 22, exact in a double.
double power_of_ten(int n) {
  double p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

/// Width of `text` at the chart font, estimated from its code points.
double text_width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return static_cast<double>(n) * kCharWidth;
}

/// A value as tooltips show it: integers plain, others with up to three decimals.
std::string value_text(double v) {
  if (std::isnan(v)) return "no value";
  std::string s = fmt::format("{:.3f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

/// The text-anchor of a label centred at `x`: "end" (at x) when centring would come within 6 px of `right`.
const char* anchor(double x, std::string_view label, double right) {
  return x + text_width(label) / 2 + 6 > right ? "end" : "middle";
}

/// The plot area inside a chart, in pixels.
struct Plot {
  double left, right, top, bottom;
  [[nodiscard]] double width() const { return right - left; }
  [[nodiscard]] double height() const { return bottom - top; }
};

/// Legend items laid out in rows that fit the chart's width.
struct Legend {
  struct Item {
    double x, y;
    std::string name, colour;
  };
  std::vector<Item> items;
  int rows = 0;
};

std::string series_colour(const std::vector<Series>& series, std::size_t i) {
  return series[i].colour.empty() ? std::string(palette_colour(i)) : series[i].colour;
}

Legend layout_legend(const std::vector<Series>& series, const Frame& frame) {
  Legend legend;
  double x = frame.left;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double w = 14 + text_width(series[i].name) + 16;
    if (legend.rows == 0) legend.rows = 1;
    if (x + w > frame.width - frame.right && x > frame.left) {
      x = frame.left;
      ++legend.rows;
    }
    legend.items.push_back({x, kLegendY + (legend.rows - 1) * kLegendRow, series[i].name, series_colour(series, i)});
    x += w;
  }
  return legend;
}

/// Builds one SVG document.
class Writer {
 public:
  Writer(double width, double height, const std::string& title) : width_(width) {
    put(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" )"
        R"(font-family="DejaVu Sans, Verdana, sans-serif" font-size="11" role="img" aria-label="{}">)",
        svg_number(width), svg_number(height), svg_number(width), svg_number(height), xml_escape(title));
    put(R"(<rect width="{}" height="{}" fill="white"/>)", svg_number(width), svg_number(height));
    put(R"(<text x="8" y="{}" font-size="14" font-weight="bold">{}</text>)", svg_number(kTitleY), xml_escape(title));
  }
  /// Appends one line.
  template <typename... Args>
  void put(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
    out_ += '\n';
  }
  void legend(const Legend& legend) {
    for (const Legend::Item& item : legend.items) {
      put(R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/>)"
          R"(<text x="{}" y="{}">{}</text>)",
          svg_number(item.x), svg_number(item.y), item.colour, svg_number(item.x + 14), svg_number(item.y + 9),
          xml_escape(item.name));
    }
  }
  /// Grid line, tick mark and label of each y (value) tick.
  void y_axis(const Plot& p, const Ticks& t, const std::string& label) {
    for (const double v : t.values) {
      const double y = p.bottom - (v - t.lo) / (t.hi - t.lo) * p.height();
      put(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/>)"
          R"(<text x="{}" y="{}" text-anchor="end">{}</text>)",
          svg_number(p.left), svg_number(y), svg_number(p.right), svg_number(y), kGrid, svg_number(p.left - 6),
          svg_number(y + 4), tick_label(v, t));
    }
    put(R"svg(<text transform="translate(14 {}) rotate(-90)" text-anchor="middle">{}</text>)svg",
        svg_number((p.top + p.bottom) / 2), xml_escape(label));
  }
  /// Tick marks and labels of numeric x ticks along the bottom, and the x label.
  void x_axis(const Plot& p, const Ticks& t, const std::string& label, double chart_height) {
    for (const double v : t.values) {
      const double x = p.left + (v - t.lo) / (t.hi - t.lo) * p.width();
      const std::string text = tick_label(v, t);
      put(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/>)"
          R"(<text x="{}" y="{}" text-anchor="{}">{}</text>)",
          svg_number(x), svg_number(p.bottom), svg_number(x), svg_number(p.bottom + 4), kAxis, svg_number(x),
          svg_number(p.bottom + 15), anchor(x, text, width_), text);
    }
    x_label(p, label, chart_height);
  }
  void x_label(const Plot& p, const std::string& label, double chart_height) {
    put(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", svg_number((p.left + p.right) / 2),
        svg_number(chart_height - 6), xml_escape(label));
  }
  /// The two axis lines.
  void frame(const Plot& p) {
    put(R"(<path d="M{} {}V{}H{}" fill="none" stroke="{}"/>)", svg_number(p.left), svg_number(p.top),
        svg_number(p.bottom), svg_number(p.right), kAxis);
  }
  std::string finish() {
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  double width_;
  std::string out_;
};

void check_lengths(const std::vector<Series>& series, std::size_t n, const std::string& title) {
  for (const Series& s : series) {
    if (s.values.size() != n) {
      throw std::invalid_argument(
          fmt::format("chart '{}': series '{}' has {} values for {} points", title, s.name, s.values.size(), n));
    }
  }
}

/// The plot area of an x/y chart below its legend.
Plot xy_plot(const Frame& f, const Legend& legend) {
  const double extra = std::max(0, legend.rows - 1) * kLegendRow;
  return Plot{f.left, f.width - f.right, f.top + extra, f.height - f.bottom};
}

/// Finite range of values (lo > hi when there is none).
std::pair<double, double> finite_range(const std::vector<double>& values) {
  double lo = INFINITY, hi = -INFINITY;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {lo, hi};
}

Ticks y_ticks(double lo, double hi, bool from_zero) {
  if (lo > hi) lo = hi = 0;
  if (from_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  return nice_ticks(lo, hi, 5);
}

Ticks x_ticks(const XyChart& c, const Plot& p) {
  const auto [lo, hi] = finite_range(c.x);
  const int target = std::max(2, static_cast<int>(p.width() / 90));
  return lo > hi ? nice_ticks(0, 1, target) : nice_ticks(lo, hi, target);
}

/// Maps data to pixels.
struct Scale {
  Plot p;
  Ticks x, y;
  [[nodiscard]] double px(double v) const { return p.left + (v - x.lo) / (x.hi - x.lo) * p.width(); }
  [[nodiscard]] double py(double v) const { return p.bottom - (v - y.lo) / (y.hi - y.lo) * p.height(); }
};

}  // namespace

Ticks nice_ticks(double min, double max, int target) {
  if (!std::isfinite(min) || !std::isfinite(max)) min = 0, max = 1;
  if (max < min) std::swap(min, max);
  if (max == min) {
    if (min == 0) {
      max = 1;
    } else {
      const double pad = std::abs(min) * 0.5;
      min -= pad, max += pad;
    }
  }
  target = std::max(target, 1);
  const double raw = (max - min) / target;
  int e = static_cast<int>(std::floor(std::log10(raw)));
  const double norm = e >= 0 ? raw / power_of_ten(e) : raw * power_of_ten(-e);
  constexpr double kSlack = 1e-9;  // 2.0000000001 is 2
  long long s = norm <= 1 + kSlack ? 1 : norm <= 2 + kSlack ? 2 : norm <= 5 + kSlack ? 5 : 10;
  if (s == 10) s = 1, ++e;
  // k steps as k x s x 10^e in one rounding (0.2 x 3 is 0.6, not 0.6000000000000001).
  const auto at = [&](long long k) {
    const auto m = static_cast<double>(k * s);
    return e >= 0 ? m * power_of_ten(e) : m / power_of_ten(-e);
  };
  Ticks t;
  t.step = at(1);
  t.decimals = std::max(0, -e);
  const auto k0 = static_cast<long long>(std::floor(min / t.step + kSlack));
  const auto k1 = static_cast<long long>(std::ceil(max / t.step - kSlack));
  t.lo = at(k0);
  t.hi = at(std::max(k1, k0 + 1));
  for (long long k = k0; k <= std::max(k1, k0 + 1); ++k) t.values.push_back(at(k));
  return t;
}

std::string tick_label(double value, const Ticks& ticks) {
  // k from 10^4 (1000 stays 1000), M from 10^6, G from 10^9; at most two decimals before the suffix.
  static constexpr std::array<std::tuple<double, double, int, const char*>, 3> kSuffixes{
      {{1e9, 1e9, 9, "G"}, {1e6, 1e6, 6, "M"}, {1e4, 1e3, 3, "k"}}};
  if (value == 0) return "0";
  const double reach = std::max(std::abs(ticks.lo), std::abs(ticks.hi));
  const int step_exponent = static_cast<int>(std::floor(std::log10(ticks.step) + 1e-9));
  for (const auto& [from, scale, exponent, suffix] : kSuffixes) {
    if (reach < from || step_exponent < exponent - 2) continue;
    return fmt::format("{:.{}f}", value / scale, std::max(0, exponent - step_exponent)) + suffix;
  }
  std::string s = fmt::format("{:.{}f}", value, ticks.decimals);
  if (s.find_first_not_of("-0.") == std::string::npos) return "0";
  return s;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab and newlines are not allowed in XML 1.0.
        out += static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c;
    }
  }
  return out;
}

std::string svg_number(double v) {
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string_view palette_colour(std::size_t i) {
  static constexpr std::array<std::string_view, 8> kPalette{"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                            "#56B4E9", "#D55E00", "#F0E442", "#000000"};
  return kPalette[i % kPalette.size()];
}

std::string line_chart(const XyChart& c) {
  check_lengths(c.series, c.x.size(), c.title);
  const Legend legend = layout_legend(c.series, c.frame);
  const Plot p = xy_plot(c.frame, legend);
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& s : c.series) {
    const auto [a, b] = finite_range(s.values);
    lo = std::min(lo, a), hi = std::max(hi, b);
  }
  const Scale sc{p, x_ticks(c, p), y_ticks(lo, hi, c.y_from_zero)};
  Writer w(c.frame.width, c.frame.height, c.title);
  w.legend(legend);
  w.y_axis(p, sc.y, c.y_label);
  w.x_axis(p, sc.x, c.x_label, c.frame.height);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const std::string colour = series_colour(c.series, i);
    w.put("<g><title>{}</title>", xml_escape(c.series[i].name));
    // One polyline per run of points with values; a run of one point is a dot.
    std::size_t k = 0;
    while (k < c.x.size()) {
      if (!std::isfinite(c.series[i].values[k]) || !std::isfinite(c.x[k])) {
        ++k;
        continue;
      }
      std::size_t end = k;
      while (end < c.x.size() && std::isfinite(c.series[i].values[end]) && std::isfinite(c.x[end])) ++end;
      if (end - k == 1) {
        w.put(R"(<circle cx="{}" cy="{}" r="{}" fill="{}"/>)", svg_number(sc.px(c.x[k])),
              svg_number(sc.py(c.series[i].values[k])), svg_number(c.series[i].dot_radius), colour);
      } else {
        std::string points;
        for (std::size_t j = k; j < end; ++j) {
          if (j > k) points += ' ';
          points += svg_number(sc.px(c.x[j])) + ',' + svg_number(sc.py(c.series[i].values[j]));
        }
        w.put(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"/>)", points, colour);
      }
      k = end;
    }
    w.put("</g>");
  }
  w.frame(p);
  return w.finish();
}

std::string stacked_area_chart(const XyChart& c) {
  check_lengths(c.series, c.x.size(), c.title);
  const Legend legend = layout_legend(c.series, c.frame);
  const Plot p = xy_plot(c.frame, legend);
  // tops[i][j]: top of series i at point j (the sum of series 0..i).
  std::vector<std::vector<double>> tops(c.series.size(), std::vector<double>(c.x.size(), 0));
  double hi = 0;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    for (std::size_t j = 0; j < c.x.size(); ++j) {
      const double v = std::isfinite(c.series[i].values[j]) ? c.series[i].values[j] : 0;
      tops[i][j] = (i ? tops[i - 1][j] : 0) + v;
      hi = std::max(hi, tops[i][j]);
    }
  }
  const Scale sc{p, x_ticks(c, p), y_ticks(0, hi, true)};
  Writer w(c.frame.width, c.frame.height, c.title);
  w.legend(legend);
  w.y_axis(p, sc.y, c.y_label);
  w.x_axis(p, sc.x, c.x_label, c.frame.height);
  for (std::size_t i = 0; i < c.series.size() && !c.x.empty(); ++i) {
    std::string points;
    for (std::size_t j = 0; j < c.x.size(); ++j) {
      points += svg_number(sc.px(c.x[j])) + ',' + svg_number(sc.py(tops[i][j])) + ' ';
    }
    for (std::size_t j = c.x.size(); j-- > 0;) {
      points += svg_number(sc.px(c.x[j])) + ',' + svg_number(sc.py(i ? tops[i - 1][j] : 0));
      if (j > 0) points += ' ';
    }
    w.put(R"(<polygon points="{}" fill="{}" fill-opacity="0.85"><title>{}</title></polygon>)", points,
          series_colour(c.series, i), xml_escape(c.series[i].name));
  }
  w.frame(p);
  return w.finish();
}

std::string bar_chart(const BarChart& c) {
  const std::size_t n = c.categories.size();
  check_lengths(c.series, n, c.title);
  Frame f = c.frame;
  double label_width = 0;
  for (const std::string& name : c.categories) label_width = std::max(label_width, text_width(name));
  if (c.horizontal) f.left = std::max(f.left, std::min(label_width + 14, f.width / 2));
  // One series needs no legend: the value label names it.
  const Legend legend = c.series.size() > 1 ? layout_legend(c.series, f) : Legend{};
  const double extra = std::max(0, legend.rows - 1) * kLegendRow;
  if (c.horizontal) {
    f.height = f.top + extra + kBarBand * static_cast<double>(std::max<std::size_t>(n, 1)) + f.bottom;
  }
  const Plot p{f.left, f.width - f.right, f.top + extra, f.height - f.bottom};
  // Positive values stack up from 0, negative ones down.
  std::vector<double> up(n, 0), down(n, 0);
  for (const Series& s : c.series) {
    for (std::size_t j = 0; j < n; ++j) {
      const double v = std::isfinite(s.values[j]) ? s.values[j] : 0;
      (v >= 0 ? up[j] : down[j]) += v;
    }
  }
  double lo = 0, hi = 0;
  for (std::size_t j = 0; j < n; ++j) lo = std::min(lo, down[j]), hi = std::max(hi, up[j]);
  const double length = c.horizontal ? p.width() : p.height();
  const Ticks t = nice_ticks(lo, hi, c.horizontal ? std::max(2, static_cast<int>(p.width() / 90)) : 5);
  const auto at = [&](double v) { return (v - t.lo) / (t.hi - t.lo) * length; };  // pixels from the axis start
  const double band = (c.horizontal ? p.height() : p.width()) / static_cast<double>(std::max<std::size_t>(n, 1));
  const double thickness = std::max(1.0, band * 0.75);

  Writer w(f.width, f.height, c.title);
  w.legend(legend);
  if (c.horizontal) {
    for (const double v : t.values) {
      const double x = p.left + at(v);
      const std::string text = tick_label(v, t);
      w.put(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/>)"
            R"(<text x="{}" y="{}" text-anchor="{}">{}</text>)",
            svg_number(x), svg_number(p.top), svg_number(x), svg_number(p.bottom), kGrid, svg_number(x),
            svg_number(p.bottom + 15), anchor(x, text, f.width), text);
    }
    w.x_label(p, c.value_label, f.height);
    for (std::size_t j = 0; j < n; ++j) {
      w.put(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", svg_number(p.left - 6),
            svg_number(p.top + (static_cast<double>(j) + 0.5) * band + 4), xml_escape(c.categories[j]));
    }
  } else {
    w.y_axis(p, t, c.value_label);
    // Label every stride-th category so labels do not overlap.
    const auto stride = static_cast<std::size_t>(
        std::max(1.0, std::ceil(static_cast<double>(n) * (label_width + 8) / std::max(p.width(), 1.0))));
    for (std::size_t j = 0; j < n; j += stride) {
      w.put(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)",
            svg_number(p.left + (static_cast<double>(j) + 0.5) * band), svg_number(p.bottom + 15),
            xml_escape(c.categories[j]));
    }
    w.x_label(p, c.category_label, f.height);
  }
  std::fill(up.begin(), up.end(), 0);
  std::fill(down.begin(), down.end(), 0);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const std::string colour = series_colour(c.series, i);
    for (std::size_t j = 0; j < n; ++j) {
      const double v = std::isfinite(c.series[i].values[j]) ? c.series[i].values[j] : 0;
      if (v == 0) continue;
      double& base = v >= 0 ? up[j] : down[j];
      const double a = at(base), b = at(base + v);
      base += v;
      const double band_start = static_cast<double>(j) * band + (band - thickness) / 2;
      const std::string tip =
          xml_escape(c.series.size() > 1 ? c.categories[j] + ", " + c.series[i].name : c.categories[j]) + ": " +
          value_text(v);
      if (c.horizontal) {
        w.put(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>)",
              svg_number(p.left + std::min(a, b)), svg_number(p.top + band_start), svg_number(std::abs(b - a)),
              svg_number(thickness), colour, tip);
      } else {
        w.put(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>)",
              svg_number(p.left + band_start), svg_number(p.bottom - std::max(a, b)), svg_number(thickness),
              svg_number(std::abs(b - a)), colour, tip);
      }
    }
  }
  if (c.horizontal) {
    w.put(R"(<path d="M{} {}V{}" stroke="{}"/>)", svg_number(p.left + at(0)), svg_number(p.top), svg_number(p.bottom),
          kAxis);
  } else {
    w.frame(p);
    if (t.lo < 0) {
      w.put(R"(<path d="M{} {}H{}" stroke="{}"/>)", svg_number(p.left), svg_number(p.bottom - at(0)),
            svg_number(p.right), kAxis);
    }
  }
  return w.finish();
}

}  // namespace gputwin::svg
