// SVG charts for reports, written by our own code so a report is one self-contained file: no JavaScript, nothing
// fetched. Line charts, stacked areas and (stacked) bars, with axes at "nice" tick values (1, 2 or 5 x 10^k), grid
// lines, a legend and a title; all text is XML-escaped. Output is deterministic: the same data gives the same bytes
// (fixed number formats, no ids from clocks or addresses), so reports can be diffed and tested.
//
//   svg::XyChart c{.title = "Jobs", .x_label = "time (h)", .y_label = "jobs", .x = {0, 1, 2},
//                  .series = {{.name = "running", .values = {3, 5, 4}}}};
//   std::string text = svg::line_chart(c);  // <svg xmlns=...>...</svg>
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gputwin::svg {

/// The ticks of an axis: every multiple of `step` from `lo` (<= the data's minimum) to `hi` (>= its maximum).
struct Ticks {
  double lo = 0;               ///< First tick: where the axis starts.
  double hi = 1;               ///< Last tick: where the axis ends.
  double step = 1;             ///< Distance between ticks: 1, 2 or 5 x 10^k.
  int decimals = 0;            ///< Decimals that write every tick exactly (0 for steps >= 1).
  std::vector<double> values;  ///< lo, lo + step, ..., hi (each computed as k x step, without accumulated error).
};

/// Ticks covering [min, max] with about `target` intervals (Heckbert's nice numbers, rounded up: the step is the
/// smallest 1, 2 or 5 x 10^k at least (max - min) / target). An empty range is widened: [0, 0] becomes [0, 1].
Ticks nice_ticks(double min, double max, int target = 5);

/// A tick's label: `value` with the ticks' decimals; in k, M or G when the axis reaches 10^4, 10^6 or 10^9 and
/// two decimals suffice (20000 with step 5000 -> "20k", 2500000 with step 500000 -> "2.5M").
std::string tick_label(double value, const Ticks& ticks);

/// `text` with &, <, >, " and ' written as entities, safe in XML text and attribute values.
std::string xml_escape(std::string_view text);

/// A coordinate or size as written into SVG: at most two decimals, no trailing zeros, never "-0".
std::string svg_number(double v);

/// Colour of the i-th series when the series names none (a colour-blind-safe palette, Okabe and Ito, cycling).
std::string_view palette_colour(std::size_t i);

/// One named series of values.
struct Series {
  std::string name{};            ///< Legend text.
  std::vector<double> values{};  ///< One value per x (or per category); NaN: no value (a line breaks there).
  std::string colour{};          ///< SVG colour; empty: palette_colour(index).
  double dot_radius = 2;         ///< Radius of a lone point of a line chart (larger to mark a few chosen points).
};

/// Size of a chart and the room around its plot area, in SVG user units (pixels).
struct Frame {
  double width = 720;   ///< Whole chart.
  double height = 300;  ///< Whole chart (horizontal bar charts size themselves to their categories).
  double left = 64;     ///< Room for the y tick labels and the y label.
  double right = 16;    ///< Room right of the plot.
  double top = 52;      ///< Room for the title and one legend row (more rows push the plot down).
  double bottom = 40;   ///< Room for the x tick labels and the x label.
};

/// A chart over a numeric x axis: lines, or areas stacked from zero.
struct XyChart {
  std::string title;           ///< Bold text at the top.
  std::string x_label;         ///< Under the x axis (with the unit, e.g. "time (h)").
  std::string y_label;         ///< Along the y axis.
  std::vector<double> x;       ///< x of each point, increasing.
  std::vector<Series> series;  ///< Each with x.size() values.
  bool y_from_zero = true;     ///< The y axis starts at 0 (or below, for negative values).
  Frame frame{};               ///< Size.
};

/// A bar chart over named categories; several series stack on each other (and have a legend).
struct BarChart {
  std::string title{};                    ///< Bold text at the top.
  std::string category_label{};           ///< Under the category axis (vertical bars only).
  std::string value_label{};              ///< Along the value axis.
  std::vector<std::string> categories{};  ///< One bar (stack) per category, in this order.
  std::vector<Series> series{};           ///< Each with categories.size() values; NaN counts as 0.
  bool horizontal = false;                ///< Bars grow to the right, categories listed downwards (long names).
  Frame frame{};                          ///< Size.
};

/// A line per series (x against value; breaks at NaN, lone points drawn as dots). Throws std::invalid_argument
/// if a series' length differs from x's.
std::string line_chart(const XyChart& chart);

/// Series stacked as filled areas, the first at the bottom. NaN counts as 0. Throws std::invalid_argument if a
/// series' length differs from x's.
std::string stacked_area_chart(const XyChart& chart);

/// Bars, series stacked in order, each segment with a tooltip (<title>) giving its value. Throws
/// std::invalid_argument if a series' length differs from the categories'.
std::string bar_chart(const BarChart& chart);

}  // namespace gputwin::svg
