// `gputwin report RESULTS`: a run's results folder as a report a platform engineer reads. A short text summary on
// stdout, and one self-contained HTML page (no JavaScript, nothing fetched) with the headline figures, waits,
// utilisation and availability over time, goodput and losses by cause, faults, job interruptions, checkpoint
// intervals against Young's and Daly's, cost, scaling actions, quota events and cluster operations, each section
// present when its data is in results.sqlite. Plots are inline SVG drawn by results/svg_chart; with
// --format svg each plot is its own .svg file instead, with --format png a PNG made by rsvg-convert.
//
//   gputwin run scenarios/quickstart.json --out out/qs
//   gputwin report out/qs                      # out/qs/report.html
//   gputwin report out/qs --format png --out plots/
#pragma once

#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gputwin {

/// What `gputwin report` writes.
enum class ReportFormat {
  kHtml,  ///< One HTML page with inline SVG plots.
  kSvg,   ///< One SVG file per plot.
  kPng,   ///< One PNG file per plot (rsvg-convert).
};

/// Options of `gputwin report`.
struct ReportOptions {
  std::filesystem::path out;                  ///< HTML file, or folder for svg/png; default RESULTS/report.html or
                                              ///< RESULTS/report/.
  ReportFormat format = ReportFormat::kHtml;  ///< What to write.
  double step_s = 0;                          ///< Time bucket of the series, seconds; 0: about 100 over the run.
};

/// A plot of the report.
struct ReportPlot {
  std::string name;  ///< File stem ("waits", "faults_per_day", ...).
  std::string svg;   ///< The SVG document.
};

/// A report built in memory.
struct Report {
  std::string text;               ///< The summary printed on stdout (headline figures, one line per section).
  std::string html;               ///< The HTML page.
  std::vector<ReportPlot> plots;  ///< Its plots, in page order.
};

/// An external program the command needs is not installed.
class MissingToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses "html", "svg" or "png"; false otherwise.
bool parse_report_format(const std::string& text, ReportFormat& format);

/// Builds the report of `results_dir` without writing anything. Throws InputError naming the file for a missing
/// or malformed results folder or table, or a bad step. The same results give the same bytes.
Report build_report(const std::filesystem::path& results_dir, const ReportOptions& options);

/// Builds the report, writes it (each file under a temporary name, renamed when complete) and prints the summary
/// and what was written to `out`. Throws InputError as build_report, MissingToolError for --format png without
/// rsvg-convert, std::runtime_error when a file cannot be written or converted. Returns the exit status (0).
int write_report(const std::filesystem::path& results_dir, const ReportOptions& options, std::ostream& out);

}  // namespace gputwin
