#include "cli/report_command.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <numeric>
#include <string_view>

#include "faults/checkpoint.hpp"
#include "results/output_file.hpp"
#include "results/report_data.hpp"
#include "results/svg_chart.hpp"

extern char** environ;

namespace gputwin {
namespace {

// ---- numbers as people read them ----

/// `v` with `decimals` decimals and thousands separated by commas: 1234567.8 -> "1,234,567.8".
std::string grouped(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos) s.erase(0, s[0] == '-' ? 1 : 0);  // no "-0"
  const std::size_t digits_begin = s[0] == '-' ? 1 : 0;
  std::size_t int_end = s.find('.');
  if (int_end == std::string::npos) int_end = s.size();
  for (std::size_t i = int_end; i > digits_begin + 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

/// A count or a value of unknown kind: integers plain, small values with three decimals, others with one.
std::string number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return grouped(v, 0);
  return grouped(v, std::abs(v) < 10 ? 3 : 1);
}

std::string percent(double ratio) {
  return fmt::format("{:.2f}%", ratio * 100);
}
std::string usd(double v) {
  return "$" + grouped(v, 2);
}
std::string hours(double v) {
  return grouped(v, 1);
}

/// Seconds, with hours or days alongside when long: "5,400 s (1.5 h)".
std::string seconds(double s) {
  std::string out = grouped(s, s == std::floor(s) ? 0 : 1) + " s";
  if (std::abs(s) >= 2 * 86400) return out + fmt::format(" ({:.1f} d)", s / 86400);
  if (std::abs(s) >= 3600) return out + fmt::format(" ({:.1f} h)", s / 3600);
  return out;
}

/// A bucket or period as a person says it: "15 min", "2 h", "1 d", "45 s".
std::string period(double s) {
  const auto whole = [&](double unit) { return s >= unit && std::fmod(s, unit) == 0; };
  if (whole(86400)) return fmt::format("{} d", s / 86400);
  if (whole(3600)) return fmt::format("{} h", s / 3600);
  if (whole(60)) return fmt::format("{} min", s / 60);
  return fmt::format("{} s", s);
}

/// The unit of a time axis over [0, horizon]: hours up to three days, days beyond.
struct TimeAxis {
  double divisor;
  const char* label;
};
TimeAxis time_axis(double horizon_s) {
  return horizon_s <= 3 * 86400 ? TimeAxis{3600, "time since the start of the run (h)"}
                                : TimeAxis{86400, "time since the start of the run (days)"};
}

/// The unit of a duration axis whose largest value is `max_s`.
struct DurationUnit {
  double divisor;
  const char* name;
};
DurationUnit duration_unit(double max_s) {
  if (max_s >= 7200) return {3600, "h"};
  if (max_s >= 120) return {60, "min"};
  return {1, "s"};
}

// ---- the summary's keys ----

enum class Unit { kCount, kRatio, kSeconds, kGpuHours, kUsd, kNumber };

std::string format_value(double v, Unit unit) {
  switch (unit) {
    case Unit::kCount:
    case Unit::kNumber:
      return number(v);
    case Unit::kRatio:
      return percent(v);
    case Unit::kSeconds:
      return seconds(v);
    case Unit::kGpuHours:
      return hours(v);
    case Unit::kUsd:
      return usd(v);
  }
  return number(v);
}

/// The unit of a key the report does not know, from its name.
Unit guess_unit(std::string_view key) {
  if (key.ends_with("_usd")) return Unit::kUsd;
  if (key.ends_with("_s")) return Unit::kSeconds;
  if (key.ends_with("gpu_hours") || key.starts_with("gpu_hours")) return Unit::kGpuHours;
  return Unit::kNumber;
}

struct KnownKey {
  std::string_view key;
  std::string_view label;
  Unit unit;
};

/// A table of the headline: known keys in order, then keys starting with `prefix` (labelled by the rest).
struct KeyGroup {
  std::string_view title;
  std::vector<KnownKey> keys;
  std::string_view prefix;        // "" for none
  std::string_view prefix_label;  // label of a prefixed key: prefix_label + rest
};

const std::vector<KeyGroup>& key_groups() {
  static const std::vector<KeyGroup> kGroups{
      {"Jobs",
       {{"jobs", "jobs", Unit::kCount},
        {"started", "started", Unit::kCount},
        {"rejected", "rejected at submit", Unit::kCount},
        {"requeues", "runs requeued (preemption or fault)", Unit::kCount}},
       "jobs_",
       "ended "},
      {"Utilisation",
       {{"gpu_utilization", "GPU utilisation", Unit::kRatio},
        {"cpu_utilization", "CPU utilisation", Unit::kRatio},
        {"gpu_hours", "GPU-hours allocated", Unit::kGpuHours},
        {"cpu_hours", "CPU-hours allocated", Unit::kGpuHours},
        {"makespan_s", "makespan", Unit::kSeconds},
        {"first_submit_s", "first submit", Unit::kSeconds},
        {"last_submit_s", "last submit", Unit::kSeconds}},
       "",
       ""},
      {"Waits",
       {{"wait_mean_s", "mean wait", Unit::kSeconds},
        {"wait_p50_s", "p50 wait", Unit::kSeconds},
        {"wait_p95_s", "p95 wait", Unit::kSeconds},
        {"wait_p99_s", "p99 wait", Unit::kSeconds},
        {"wait_max_s", "longest wait", Unit::kSeconds},
        {"bounded_slowdown_mean", "mean bounded slowdown (tau 10 s)", Unit::kNumber}},
       "",
       ""},
      {"Reliability and goodput",
       {{"goodput", "goodput", Unit::kRatio},
        {"node_availability", "node availability", Unit::kRatio},
        {"faults", "faults", Unit::kCount},
        {"faults_suppressed", "faults on components already out of service", Unit::kCount},
        {"job_interruptions", "job interruptions", Unit::kCount},
        {"black_hole_interruptions", "... of runs started on an unnoticed faulty node", Unit::kCount},
        {"allocated_gpu_hours", "GPU-hours allocated, requeued runs included", Unit::kGpuHours},
        {"gpu_hours_lost_fault_work", "GPU-hours lost: work since the last checkpoint", Unit::kGpuHours},
        {"gpu_hours_lost_restart", "GPU-hours lost: restart overhead", Unit::kGpuHours},
        {"gpu_hours_checkpoint", "GPU-hours writing checkpoints", Unit::kGpuHours},
        {"lost_gpu_hours", "GPU-hours lost: preemption (requeued runs)", Unit::kGpuHours}},
       "lost_gpu_hours_class_",
       "GPU-hours lost to "},
      {"Cloud and cost",
       {{"cost_total_usd", "total cost", Unit::kUsd},
        {"cost_idle_usd", "cost of idle nodes", Unit::kUsd},
        {"cost_per_used_gpu_hour", "cost per used GPU-hour", Unit::kUsd},
        {"spot_interruptions", "spot reclaims", Unit::kCount},
        {"cloud_job_interruptions", "job runs ended by reclaims, operations or failed resumes", Unit::kCount},
        {"gpu_hours_lost_cloud", "GPU-hours those runs lost", Unit::kGpuHours},
        {"quota_cancels", "jobs cancelled by quota", Unit::kCount},
        {"nodes_created", "nodes created by the autoscaler", Unit::kCount},
        {"boot_failures", "boot failures", Unit::kCount},
        {"nodes_removed", "nodes removed", Unit::kCount},
        {"pool_node_hours", "node-hours in the pool", Unit::kGpuHours},
        {"cold_start_s", "cold start", Unit::kSeconds}},
       "cost_",
       "cost: "},
      {"Placement and energy",
       {{"multi_node_jobs", "multi-node jobs", Unit::kCount},
        {"cross_leaf_jobs", "... across leaf switches", Unit::kCount},
        {"leaves_per_multi_node_job", "leaf switches per multi-node job", Unit::kNumber},
        {"placement_gpu_hours", "GPU-hours added by placement", Unit::kGpuHours},
        {"cross_leaf_traffic_tb", "cross-leaf traffic (TB)", Unit::kNumber},
        {"socket_split_jobs", "jobs split across sockets", Unit::kCount},
        {"gpu_energy_kwh", "GPU energy (kWh)", Unit::kNumber},
        {"gpu_power_mean_w", "mean GPU power (W)", Unit::kNumber},
        {"gpu_fragmentation_mean", "free GPUs on partly used nodes", Unit::kRatio},
        {"metrics_gpu_step_s", "GPU metrics period", Unit::kSeconds},
        {"metrics_cluster_step_s", "cluster metrics period", Unit::kSeconds}},
       "",
       ""},
  };
  return kGroups;
}

struct HeadlineRow {
  std::string label, value;
};
struct HeadlineTable {
  std::string title;
  std::vector<HeadlineRow> rows;
};

/// The summary as titled tables; keys the report does not know go to "Other figures" under their own names.
std::vector<HeadlineTable> headline_tables(const std::map<std::string, double>& summary, std::size_t& unknown) {
  std::vector<HeadlineTable> tables;
  std::map<std::string, double> rest = summary;
  for (const KeyGroup& g : key_groups()) {
    HeadlineTable t{std::string(g.title), {}};
    for (const KnownKey& k : g.keys) {
      const auto it = rest.find(std::string(k.key));
      if (it == rest.end()) continue;
      t.rows.push_back({std::string(k.label), format_value(it->second, k.unit)});
      rest.erase(it);
    }
    if (!g.prefix.empty()) {
      for (auto it = rest.lower_bound(std::string(g.prefix)); it != rest.end() && it->first.starts_with(g.prefix);) {
        const std::string name = it->first.substr(g.prefix.size());
        const Unit unit = g.prefix == "jobs_"   ? Unit::kCount
                          : g.prefix == "cost_" ? guess_unit(it->first)
                                                : Unit::kGpuHours;
        t.rows.push_back({std::string(g.prefix_label) + name, format_value(it->second, unit)});
        it = rest.erase(it);
      }
    }
    if (!t.rows.empty()) tables.push_back(std::move(t));
  }
  unknown = rest.size();
  if (!rest.empty()) {
    HeadlineTable t{"Other figures", {}};
    for (const auto& [key, v] : rest) t.rows.push_back({key, format_value(v, guess_unit(key))});
    tables.push_back(std::move(t));
  }
  return tables;
}

// ---- HTML ----

std::string esc(std::string_view text) {
  return svg::xml_escape(text);
}

/// An HTML table: a header row, then rows; cells after the first are numbers (right-aligned).
std::string html_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table>\n<tr>";
  for (std::size_t i = 0; i < header.size(); ++i)
    out += fmt::format("<th{}>{}</th>", i ? " class=\"n\"" : "", esc(header[i]));
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out += fmt::format("<td{}>{}</td>", i ? " class=\"n\"" : "", esc(row[i]));
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

/// A section of the report: its HTML, its plots and its line of the text summary.
struct Section {
  std::string id, title;
  std::string html;
  std::vector<ReportPlot> plots;
  std::string line;  // "waits      ..." without the newline
};

std::string text_line(std::string_view name, const std::string& what) {
  return fmt::format("{:<10} {}", name, what);
}

void add_plot(Section& s, std::string name, std::string svg, const std::string& caption) {
  s.html += fmt::format("<figure id=\"plot-{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n", name, svg, esc(caption));
  s.plots.push_back({std::move(name), std::move(svg)});
}

std::vector<double> scaled(std::vector<double> v, double divisor) {
  for (double& x : v) x /= divisor;
  return v;
}

template <typename T, typename F>
std::vector<double> column(const std::vector<T>& rows, F field) {
  std::vector<double> out;
  out.reserve(rows.size());
  for (const T& r : rows) out.push_back(field(r));
  return out;
}

/// 1, 2, ... as category names.
std::vector<std::string> day_names(std::size_t days) {
  std::vector<std::string> out;
  for (std::size_t d = 1; d <= days; ++d) out.push_back(std::to_string(d));
  return out;
}

// ---- sections ----

Section waits_section(const ReportData& d) {
  Section s{"waits", "Waits over time", "", {}, ""};
  if (d.started_jobs == 0) {
    s.line = text_line("waits", "skipped: no job started");
    return s;
  }
  double top = 0;
  for (const WaitBucket& b : d.waits) top = std::max(top, b.p95_s);
  const DurationUnit u = duration_unit(top);
  const TimeAxis axis = time_axis(d.horizon_s);
  std::vector<double> mean, p95;
  for (const WaitBucket& b : d.waits) {
    mean.push_back(b.jobs ? b.mean_s / u.divisor : NAN);
    p95.push_back(b.jobs ? b.p95_s / u.divisor : NAN);
  }
  svg::XyChart c{.title = "Wait of jobs by start time",
                 .x_label = axis.label,
                 .y_label = fmt::format("wait ({})", u.name),
                 .x = scaled(column(d.waits, [](const WaitBucket& b) { return b.start_s; }), axis.divisor),
                 .series = {{.name = "mean", .values = mean, .colour = "#0072B2"},
                            {.name = "p95", .values = p95, .colour = "#D55E00"}}};
  add_plot(s, "waits", svg::line_chart(c),
           fmt::format("Mean and 95th percentile (nearest rank) of start - submit of the jobs that started in each "
                       "{} bucket; no point where no job started.",
                       period(d.step_s)));
  s.line = text_line("waits", fmt::format("mean and p95 wait of {} started jobs by start time, {} buckets of {}",
                                          d.started_jobs, d.waits.size(), period(d.step_s)));
  return s;
}

Section cluster_section(const ReportData& d) {
  Section s{"cluster", "Utilisation and availability over time", "", {}, ""};
  if (d.cluster.empty()) {
    s.line = text_line("cluster", "skipped: no cluster_metrics table (the run had /metrics/enabled false)");
    return s;
  }
  const TimeAxis axis = time_axis(d.horizon_s);
  const std::vector<double> x =
      scaled(column(d.cluster, [](const ClusterBucket& b) { return b.start_s; }), axis.divisor);
  const auto col = [&](double ClusterBucket::*field) {
    return column(d.cluster, [field](const ClusterBucket& b) { return b.*field; });
  };
  const std::string mean_of = fmt::format("Means of the samples in each {} bucket.", period(d.step_s));
  svg::XyChart nodes{.title = "Nodes by state",
                     .x_label = axis.label,
                     .y_label = "nodes",
                     .x = x,
                     .series = {{.name = "allocated", .values = col(&ClusterBucket::nodes_alloc), .colour = "#0072B2"},
                                {.name = "mixed", .values = col(&ClusterBucket::nodes_mixed), .colour = "#56B4E9"},
                                {.name = "idle", .values = col(&ClusterBucket::nodes_idle), .colour = "#C8C8C8"},
                                {.name = "drain", .values = col(&ClusterBucket::nodes_drain), .colour = "#E69F00"},
                                {.name = "down", .values = col(&ClusterBucket::nodes_down), .colour = "#D55E00"}}};
  const std::vector<double> powered_down = col(&ClusterBucket::nodes_powered_down);
  const bool any_powered_down = std::any_of(powered_down.begin(), powered_down.end(), [](double v) { return v > 0; });
  if (any_powered_down) nodes.series.push_back({.name = "powered down", .values = powered_down, .colour = "#7F7F7F"});
  add_plot(s, "node_states", svg::stacked_area_chart(nodes),
           "Node states as sinfo counts them (CPU-based: MIXED is partly allocated)" +
               std::string(any_powered_down ? "; powered down: POWERED_DOWN, POWERING_UP or POWERING_DOWN (cloud "
                                              "nodes not created, power-saved nodes, nodes booting or being removed). "
                                            : ". ") +
               mean_of);
  std::vector<double> up = col(&ClusterBucket::gpus_alloc);
  const std::vector<double> free = col(&ClusterBucket::gpus_free);
  for (std::size_t i = 0; i < up.size(); ++i) up[i] += free[i];
  svg::XyChart gpus{.title = "GPUs",
                    .x_label = axis.label,
                    .y_label = "GPUs",
                    .x = x,
                    .series = {{.name = "allocated", .values = col(&ClusterBucket::gpus_alloc), .colour = "#0072B2"},
                               {.name = "up (allocated + free)", .values = up, .colour = "#009E73"},
                               {.name = "free on partly used nodes",
                                .values = col(&ClusterBucket::gpus_free_fragmented),
                                .colour = "#E69F00"}}};
  add_plot(
      s, "gpus", svg::line_chart(gpus),
      "GPUs allocated to jobs, GPUs on nodes that are up, and free GPUs stranded on partly used nodes. " + mean_of);
  svg::XyChart jobs{.title = "Jobs",
                    .x_label = axis.label,
                    .y_label = "jobs",
                    .x = x,
                    .series = {{.name = "pending", .values = col(&ClusterBucket::jobs_pending), .colour = "#E69F00"},
                               {.name = "running", .values = col(&ClusterBucket::jobs_running), .colour = "#0072B2"}}};
  add_plot(s, "jobs", svg::line_chart(jobs), "Jobs pending (held and dependent jobs included) and running. " + mean_of);
  s.line = text_line("cluster", fmt::format("node states, GPUs and jobs from {} samples, {} buckets of {}",
                                            d.cluster_samples, d.cluster.size(), period(d.step_s)));
  if (any_powered_down) {
    const double mean_down =
        std::accumulate(powered_down.begin(), powered_down.end(), 0.0) / static_cast<double>(powered_down.size());
    s.line += fmt::format("; nodes powered down {:.1f} on average, {:.1f} in the highest bucket", mean_down,
                          *std::max_element(powered_down.begin(), powered_down.end()));
  }
  return s;
}

/// Summary keys of GPU-hours lost inside allocations (with preemption's lost_gpu_hours, the summary's goodput
/// losses: goodput = 1 - losses / allocated_gpu_hours).
constexpr std::string_view kLossKeys[] = {"gpu_hours_lost_fault_work", "gpu_hours_lost_restart", "gpu_hours_checkpoint",
                                          "lost_gpu_hours"};

Section losses_section(const ReportData& d) {
  Section s{"losses", "Goodput and losses by cause", "", {}, ""};
  const auto get = [&](std::string_view key) -> std::optional<double> {
    const auto it = d.summary.find(std::string(key));
    return it == d.summary.end() ? std::nullopt : std::optional<double>(it->second);
  };
  std::vector<std::pair<std::string, double>> classes;
  for (auto it = d.summary.lower_bound("lost_gpu_hours_class_");
       it != d.summary.end() && it->first.starts_with("lost_gpu_hours_class_"); ++it) {
    classes.emplace_back(it->first.substr(std::string_view("lost_gpu_hours_class_").size()), it->second);
  }
  const bool fault_figures = std::any_of(std::begin(kLossKeys), std::end(kLossKeys) - 1,
                                         [&](std::string_view k) { return get(k).has_value(); });
  if (!fault_figures && classes.empty() && get("lost_gpu_hours").value_or(0) <= 0) {
    s.line = text_line("losses", "skipped: no fault, checkpoint or preemption losses in the summary");
    return s;
  }
  // Every run's GPU-hours: the summary's allocated_gpu_hours, or, for runs without a node lifecycle, gpu_hours
  // (final runs) plus the requeued runs preemption discarded.
  const double allocated =
      get("allocated_gpu_hours").value_or(get("gpu_hours").value_or(0) + get("lost_gpu_hours").value_or(0));
  double useful = allocated;
  for (const std::string_view k : kLossKeys) useful -= get(k).value_or(0);
  useful = std::max(0.0, useful);
  const std::vector<std::pair<std::string, double>> causes{
      {"useful", useful},
      {"fault: lost work", get("gpu_hours_lost_fault_work").value_or(0)},
      {"fault: restart overhead", get("gpu_hours_lost_restart").value_or(0)},
      {"checkpoint writes", get("gpu_hours_checkpoint").value_or(0)},
      {"preemption (requeued runs)", get("lost_gpu_hours").value_or(0)}};
  svg::BarChart bars{.title = "GPU-hours by cause", .category_label = "", .value_label = "GPU-hours"};
  std::vector<double> values;
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, v] : causes) {
    bars.categories.push_back(name);
    values.push_back(v);
    rows.push_back({name, hours(v), allocated > 0 ? percent(v / allocated) : "-"});
  }
  bars.series = {{.name = "GPU-hours", .values = values, .colour = "#0072B2"}};
  bars.horizontal = true;
  add_plot(s, "gpu_hours_by_cause", svg::bar_chart(bars),
           fmt::format("The {} GPU-hours allocated to every run (requeued ones included: allocated_gpu_hours, or "
                       "gpu_hours + lost_gpu_hours for a run without node lifecycle) split into useful work and "
                       "losses; useful / allocated is the summary's goodput.",
                       hours(allocated)));
  s.html += html_table({"GPU-hours", "hours", "share of allocated"}, rows);
  std::string line = fmt::format("GPU-hours by cause: useful {}", hours(useful));
  if (const auto g = get("goodput")) line += fmt::format(" (goodput {})", percent(*g));
  for (std::size_t i = 1; i < causes.size(); ++i) {
    if (causes[i].second > 0) line += fmt::format(", {} {}", causes[i].first, hours(causes[i].second));
  }
  if (!classes.empty()) {
    std::stable_sort(classes.begin(), classes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    svg::BarChart by_class{.title = "GPU-hours lost by fault class", .category_label = "", .value_label = "GPU-hours"};
    std::vector<double> lost;
    std::vector<std::vector<std::string>> class_rows;
    for (const auto& [name, v] : classes) {
      by_class.categories.push_back(name);
      lost.push_back(v);
      class_rows.push_back({name, hours(v)});
    }
    by_class.series = {{.name = "GPU-hours lost", .values = lost, .colour = "#D55E00"}};
    by_class.horizontal = true;
    add_plot(s, "lost_by_fault_class", svg::bar_chart(by_class),
             "GPU-hours lost per fault class (summary keys lost_gpu_hours_class_*).");
    s.html += html_table({"fault class", "GPU-hours lost"}, class_rows);
    line += fmt::format("; {} fault classes", classes.size());
  }
  s.line = text_line("losses", line);
  return s;
}

std::vector<std::vector<std::string>> group_rows(const std::vector<FaultGroup>& groups) {
  std::vector<std::vector<std::string>> rows;
  for (const FaultGroup& g : groups) {
    rows.push_back({g.key, number(static_cast<double>(g.faults)), number(static_cast<double>(g.jobs_hit)),
                    hours(g.lost_gpu_hours)});
  }
  return rows;
}

Section faults_section(const ReportData& d) {
  Section s{"faults", "Faults", "", {}, ""};
  if (!d.faults) {
    s.line = text_line("faults", "skipped: no faults table in results.sqlite");
    return s;
  }
  const FaultsReport& f = *d.faults;
  s.html += fmt::format("<p>{} faults, {} GPU-hours lost.</p>\n", number(static_cast<double>(f.faults)),
                        hours(f.lost_gpu_hours));
  if (f.faults == 0) {
    s.line = text_line("faults", "no faults in the faults table");
    return s;
  }
  const std::size_t days = f.per_day.empty() ? 0 : f.per_day[0].size();
  svg::BarChart per_day{.title = "Faults per day by effect",
                        .category_label = "day of the run",
                        .value_label = "faults",
                        .categories = day_names(days)};
  const std::map<std::string, std::string> colours{{"restart_app", "#56B4E9"},
                                                   {"reset_gpu", "#E69F00"},
                                                   {"reboot_node", "#D55E00"},
                                                   {"repair_node", "#CC79A7"},
                                                   {"none", "#C8C8C8"}};
  for (std::size_t e = 0; e < f.effects.size(); ++e) {
    const auto c = colours.find(f.effects[e]);
    per_day.series.push_back({.name = f.effects[e],
                              .values = f.per_day[e],
                              .colour = c == colours.end() ? std::string(svg::palette_colour(e)) : c->second});
  }
  add_plot(s, "faults_per_day", svg::bar_chart(per_day),
           "Faults by the day they struck, stacked by what the simulator did about them (effect).");
  const std::vector<std::string> header{"", "faults", "jobs hit", "GPU-hours lost"};
  std::vector<std::string> by_class_header = header, by_xid_header = header;
  by_class_header[0] = "class";
  by_xid_header[0] = "XID";
  s.html += "<div class=\"tables\">\n" + html_table(by_class_header, group_rows(f.by_class)) +
            html_table(by_xid_header, group_rows(f.by_xid)) + "</div>\n";
  std::vector<std::vector<std::string>> rows;
  for (const DetectionDelay& dd : f.detection) {
    const bool any = dd.detected > 0;
    rows.push_back({dd.detected_by, number(static_cast<double>(dd.faults)), number(static_cast<double>(dd.detected)),
                    any ? seconds(dd.mean_s) : "-", any ? seconds(dd.p50_s) : "-", any ? seconds(dd.p95_s) : "-"});
  }
  s.html += "<h3>Detection delay (detected_time - time)</h3>\n" +
            html_table({"detected by", "faults", "detected", "mean", "p50", "p95"}, rows);
  const DetectionDelay& all = f.detection.back();
  s.line = text_line(
      "faults", fmt::format("{} faults over {} days: per day by effect, {} classes, {} XIDs, detection delay by {} "
                            "mechanisms (all: p50 {}, p95 {})",
                            f.faults, days, f.by_class.size(), f.by_xid.size(), f.detection.size() - 1,
                            seconds(all.p50_s), seconds(all.p95_s)));
  return s;
}

Section interruptions_section(const ReportData& d) {
  Section s{"interruptions", "Job interruptions", "", {}, ""};
  if (!d.interruptions) {
    s.line = text_line("interrupts", "skipped: no job_interruptions table in results.sqlite");
    return s;
  }
  const InterruptionsReport& r = *d.interruptions;
  s.html += fmt::format("<p>{} interruptions by faults ({} requeued), {} GPU-hours lost.</p>\n",
                        number(static_cast<double>(r.interruptions)), number(static_cast<double>(r.requeued)),
                        hours(r.lost_gpu_hours));
  std::string others;
  for (const auto& [cause, count] : r.other_causes)
    others += fmt::format("{}{} {}", others.empty() ? "" : ", ", cause, count);
  if (!others.empty()) {
    s.html += fmt::format("<p>Not by faults: {} ({} GPU-hours lost). They are left out of the figures below.</p>\n",
                          esc(others), hours(r.other_lost_gpu_hours));
  }
  if (r.interruptions > 0) {
    svg::BarChart per_day{.title = "Job interruptions per day",
                          .category_label = "day of the run",
                          .value_label = "interruptions",
                          .categories = day_names(r.per_day.size()),
                          .series = {{.name = "interruptions", .values = r.per_day, .colour = "#D55E00"}}};
    add_plot(s, "interruptions_per_day", svg::bar_chart(per_day), "Jobs interrupted by faults, by day.");
  }
  std::vector<std::vector<std::string>> rows;
  std::string mttfs;
  for (const SizeBucket& b : r.by_size) {
    rows.push_back({b.label, number(static_cast<double>(b.jobs)), number(static_cast<double>(b.interruptions)),
                    hours(b.run_s / 3600), b.mttf_h ? hours(*b.mttf_h) : "-"});
    const bool sized = std::isdigit(static_cast<unsigned char>(b.label[0])) != 0;
    if (b.mttf_h) {
      mttfs += fmt::format("{}{}{} {} h", mttfs.empty() ? "" : ", ", b.label, sized ? " GPUs" : "", hours(*b.mttf_h));
    }
  }
  s.html += "<h3>By job size</h3>\n" +
            html_table({"GPUs per job", "jobs", "interruptions", "run hours", "observed MTTF (h)"}, rows) +
            "<p class=\"note\">Run hours: the jobs' final runs (jobs.run_time) plus their interrupted runs "
            "(job_interruptions.run_s). Observed mean time to failure = run hours / interruptions.</p>\n";
  s.line = text_line("interrupts",
                     fmt::format("{} job interruptions by faults: per day, MTTF by job size ({}){}", r.interruptions,
                                 mttfs.empty() ? "none" : mttfs, others.empty() ? "" : "; not by faults: " + others));
  return s;
}

/// Checkpoint plans shown in the table (the ones with most GPUs); the page says how many there are in all.
constexpr std::size_t kCheckpointRows = 20;

/// "3", "3, 4, 7" or "3, 4, 7 (+40)": job ids, at most three.
std::string id_list(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < 3; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > 3) out += fmt::format(" (+{})", ids.size() - 3);
  return out;
}

std::string optional_seconds(std::optional<double> v) {
  return v ? seconds(std::round(*v)) : "-";
}
std::string optional_percent(std::optional<double> v) {
  return v ? percent(*v) : "-";
}

/// Expected goodput of `g`'s plan against its interval, around Daly's optimum, with the configured, Young's and
/// Daly's intervals marked.
std::string checkpoint_interval_plot(const CheckpointGroup& g) {
  const double daly = *g.daly_s;
  const double young = g.young_s.value_or(daly);
  const double interval = g.interval_s.value_or(daly);
  const double lo = std::min({daly / 4, interval, young}), hi = std::max({daly * 4, interval, young});
  std::vector<double> taus;
  for (int i = 0; i <= 120; ++i) taus.push_back(lo + (hi - lo) * i / 120);
  for (const double t : {interval, young, daly}) taus.push_back(t);
  std::sort(taus.begin(), taus.end());
  taus.erase(std::unique(taus.begin(), taus.end()), taus.end());
  const DurationUnit u = duration_unit(hi);
  const CheckpointPlan plan{0, g.write_s, g.restart_s, true};
  svg::XyChart c{.title = fmt::format("Expected goodput against the checkpoint interval ({} GPUs)",
                                      number(static_cast<double>(g.gpus))),
                 .x_label = fmt::format("compute between checkpoints ({})", u.name),
                 .y_label = "expected goodput (%)",
                 .x = {},
                 .series = {{.name = "expected goodput", .colour = "#0072B2"},
                            {.name = "configured interval", .colour = "#D55E00", .dot_radius = 5},
                            {.name = "Young's", .colour = "#009E73", .dot_radius = 5},
                            {.name = "Daly's", .colour = "#000000", .dot_radius = 3.5}},
                 .y_from_zero = false};
  for (const double t : taus) {
    CheckpointPlan p = plan;
    p.interval_s = t;
    const double goodput = goodput_daly(p, *g.mttf_h * 3600) * 100;
    c.x.push_back(t / u.divisor);
    c.series[0].values.push_back(goodput);
    c.series[1].values.push_back(t == interval && g.interval_s ? goodput : NAN);
    c.series[2].values.push_back(t == young && g.young_s ? goodput : NAN);
    c.series[3].values.push_back(t == daly ? goodput : NAN);
  }
  return svg::line_chart(c);
}

Section checkpoints_section(const ReportData& d) {
  Section s{"checkpoints", "Checkpoint intervals", "", {}, ""};
  if (!d.checkpoints) return s;
  const CheckpointsReport& c = *d.checkpoints;
  if (c.jobs == 0) {
    s.line = text_line("checkpoint", "no checkpointed jobs in job_checkpoints");
    return s;
  }
  const std::size_t shown = std::min(c.groups.size(), kCheckpointRows);
  s.html += fmt::format("<p>{} checkpointed jobs with {} different plans{}.</p>\n", number(static_cast<double>(c.jobs)),
                        c.groups.size(), shown < c.groups.size() ? fmt::format("; the {} with most GPUs", shown) : "");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < shown; ++i) {
    const CheckpointGroup& g = c.groups[i];
    const bool ratio = g.interval_s && g.daly_s && *g.daly_s > 0;
    rows.push_back({number(static_cast<double>(g.gpus)), id_list(g.job_ids), optional_seconds(g.interval_s),
                    optional_seconds(g.young_s), optional_seconds(g.daly_s),
                    ratio ? fmt::format("{:.2f}", *g.interval_s / *g.daly_s) : "-",
                    g.blocking ? seconds(g.write_s) : seconds(g.write_s) + " (async)", seconds(g.restart_s),
                    g.mttf_h ? fmt::format("{:.2f}", *g.mttf_h) : "-", optional_percent(g.goodput),
                    optional_percent(g.goodput_at_daly)});
  }
  s.html += html_table({"GPUs", "jobs", "interval", "Young", "Daly", "interval / Daly", "write", "restart", "MTTF (h)",
                        "goodput", "at Daly"},
                       rows) +
            "<p class=\"note\">Interval: compute between checkpoints as configured (/faults/checkpoint); Young "
            "sqrt(2 write MTTF) and Daly's refinement of it are the best intervals for the job's MTTF under the "
            "fault profile. Goodput: expected goodput at the interval and at Daly's, by Daly's model (solve "
            "time over expected wall time, restarts included); an asynchronous write costs the job no time.</p>\n";
  const auto plotted = std::find_if(c.groups.begin(), c.groups.end(),
                                    [](const CheckpointGroup& g) { return g.daly_s && g.goodput_at_daly; });
  if (plotted != c.groups.end()) {
    add_plot(s, "checkpoint_interval", checkpoint_interval_plot(*plotted),
             fmt::format("Expected goodput (Daly's model) of the {}-GPU plan with a {} write, a {} restart and an "
                         "MTTF of {:.2f} h, against its interval; the dots mark the configured interval, Young's and "
                         "Daly's.",
                         number(static_cast<double>(plotted->gpus)), seconds(plotted->write_s),
                         seconds(plotted->restart_s), *plotted->mttf_h));
  }
  // The text line: the plan plotted (the largest with an MTTF), or else the largest.
  const CheckpointGroup& top = plotted != c.groups.end() ? *plotted : c.groups.front();
  std::string line =
      fmt::format("{} checkpointed jobs, {} plans; {} GPUs: interval {}, Young {}, Daly {}", c.jobs, c.groups.size(),
                  number(static_cast<double>(top.gpus)), optional_seconds(top.interval_s),
                  optional_seconds(top.young_s), optional_seconds(top.daly_s));
  if (top.goodput && top.goodput_at_daly) {
    line += fmt::format(", expected goodput {} ({} at Daly's)", percent(*top.goodput), percent(*top.goodput_at_daly));
  }
  s.line = text_line("checkpoint", line);
  return s;
}

Section cost_section(const ReportData& d) {
  Section s{"cost", "Cost", "", {}, ""};
  if (!d.costs) {
    s.line = text_line("cost", "skipped: no costs table in results.sqlite");
    return s;
  }
  const CostsReport& c = *d.costs;
  if (!c.cluster.empty()) {
    const TimeAxis axis = time_axis(d.horizon_s);
    const std::vector<double> x =
        scaled(column(c.cluster, [](const CostBucket& b) { return b.start_s; }), axis.divisor);
    svg::XyChart burn{.title = "Cluster burn rate",
                      .x_label = axis.label,
                      .y_label = "USD per hour",
                      .x = x,
                      .series = {{.name = "burn rate",
                                  .values = column(c.cluster, [](const CostBucket& b) { return b.burn_usd_per_h; }),
                                  .colour = "#CC79A7"}}};
    add_plot(s, "cost_burn_rate", svg::line_chart(burn),
             fmt::format("Mean burn rate of the cluster in each {} bucket.", period(d.step_s)));
    svg::XyChart total{.title = "Cluster cost so far",
                       .x_label = axis.label,
                       .y_label = "USD",
                       .x = x,
                       .series = {{.name = "cumulative cost",
                                   .values = column(c.cluster, [](const CostBucket& b) { return b.total_usd; }),
                                   .colour = "#0072B2"}}};
    add_plot(s, "cost_total", svg::line_chart(total), "Cumulative cost of the cluster at the end of each bucket.");
  }
  if (c.cluster_total_usd) s.html += fmt::format("<p>Cluster total: {}.</p>\n", usd(*c.cluster_total_usd));
  const auto totals = [&](const char* who, const std::vector<std::pair<std::string, double>>& list) {
    if (list.empty()) return;
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, v] : list) rows.push_back({name, usd(v)});
    s.html += html_table({who, "total (USD)"}, rows);
  };
  s.html += "<div class=\"tables\">\n";
  totals("user", c.users);
  totals("account", c.accounts);
  s.html += "</div>\n";
  s.line = text_line("cost", fmt::format("{}burn rate and cumulative cost over time; final totals of {} users and {} "
                                         "accounts",
                                         c.cluster_total_usd ? "cluster total " + usd(*c.cluster_total_usd) + "; " : "",
                                         c.users.size(), c.accounts.size()));
  return s;
}

/// What a row of the scaling table means (control/scaling_controller.cpp; Slurm power saving uses the same actions).
std::string_view scaling_meaning(std::string_view action) {
  if (action == "create") return "node requested (power saving: resumed)";
  if (action == "ready") return "node booted and in service";
  if (action == "boot_failed") return "boot failed or passed ResumeTimeout: node deleted";
  if (action == "remove") return "idle node released (power saving: suspended)";
  if (action == "removed") return "node gone: removal done";
  if (action == "reclaimed") return "spot node taken back by the provider";
  return "";
}

/// The unit bucket starts are named in: the largest of days, hours, minutes and seconds that divides the step.
struct BucketUnit {
  double divisor;
  const char* label;
};
BucketUnit bucket_unit(double step_s) {
  for (const BucketUnit u : {BucketUnit{86400, "start of the bucket (days since the start of the run)"},
                             BucketUnit{3600, "start of the bucket (hours since the start of the run)"},
                             BucketUnit{60, "start of the bucket (minutes since the start of the run)"}}) {
    if (std::fmod(step_s, u.divisor) == 0) return u;
  }
  return {1, "start of the bucket (seconds since the start of the run)"};
}

/// "0", "2", "4", ...: the start of each of `buckets` buckets in `unit`.
std::vector<std::string> bucket_names(std::size_t buckets, double step_s, const BucketUnit& unit) {
  std::vector<std::string> out;
  for (std::size_t b = 0; b < buckets; ++b) {
    out.push_back(fmt::format("{:g}", static_cast<double>(b) * step_s / unit.divisor));
  }
  return out;
}

Section scaling_section(const ReportData& d) {
  Section s{"scaling", "Scaling actions", "", {}, ""};
  if (!d.scaling) return s;
  const ScalingReport& r = *d.scaling;
  if (r.rows == 0) {
    s.line = text_line("scaling", "no scaling actions in the scaling table");
    return s;
  }
  const BucketUnit unit = bucket_unit(d.step_s);
  svg::BarChart per_bucket{.title = "Scaling actions",
                           .category_label = unit.label,
                           .value_label = "actions",
                           .categories = bucket_names(r.created.size(), d.step_s, unit)};
  std::vector<std::vector<std::string>> rows;
  std::string counts;
  for (std::size_t k = 0; k < r.actions.size(); ++k) {
    const ScalingAction& a = r.actions[k];
    per_bucket.series.push_back({.name = a.action, .values = a.per_bucket, .colour = ""});
    rows.push_back({a.action, number(static_cast<double>(a.rows)), number(static_cast<double>(a.nodes)),
                    std::string(scaling_meaning(a.action))});
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", a.action, a.rows);
  }
  add_plot(s, "scaling_actions", svg::bar_chart(per_bucket),
           fmt::format("Rows of the scaling table in each {} bucket, by action.", period(d.step_s)));
  const TimeAxis axis = time_axis(d.horizon_s);
  std::vector<double> x;
  for (std::size_t b = 0; b < r.created.size(); ++b) x.push_back(static_cast<double>(b) * d.step_s / axis.divisor);
  svg::XyChart nodes{
      .title = "Nodes created and demand",
      .x_label = axis.label,
      .y_label = "nodes",
      .x = x,
      .series = {{.name = "nodes created so far", .values = r.created, .colour = "#0072B2"},
                 {.name = "demand at decisions (largest)", .values = r.demand_max, .colour = "#E69F00"}}};
  add_plot(s, "scaling_nodes", svg::line_chart(nodes),
           "Nodes created (create rows) by the end of each bucket, and the largest demand recorded at the create "
           "and remove decisions in it: nodes of the node's shape that pending jobs needed (no point: no decision).");
  s.html = fmt::format("<p>{} actions.</p>\n", number(static_cast<double>(r.rows))) +
           html_table({"action", "rows", "nodes", "meaning"}, rows) + s.html;
  s.line = text_line("scaling", fmt::format("{} actions ({}); nodes created and demand over time, actions per {}",
                                            r.rows, counts, period(d.step_s)));
  return s;
}

Section quota_section(const ReportData& d) {
  Section s{"quota", "Quota events", "", {}, ""};
  if (!d.quota) return s;
  const QuotaReport& q = *d.quota;
  if (q.events == 0) {
    s.line = text_line("quota", "no quota events");
    return s;
  }
  std::vector<std::vector<std::string>> rows;
  std::size_t warnings = 0, blocks = 0, cancelled = 0, refused = 0, at_submit = 0;
  for (const QuotaUser& u : q.users) {
    rows.push_back({u.user, number(static_cast<double>(u.warnings)), number(static_cast<double>(u.blocks)),
                    u.blocked_s ? seconds(*u.blocked_s) : "-", number(static_cast<double>(u.cancelled)),
                    number(static_cast<double>(u.refused)), number(static_cast<double>(u.refused_at_submit)),
                    seconds(u.last_s), usd(u.spend_usd), usd(u.projected_usd)});
    warnings += u.warnings, blocks += u.blocks, cancelled += u.cancelled, refused += u.refused;
    at_submit += u.refused_at_submit;
  }
  s.html +=
      fmt::format("<p>{} quota events for {} users.</p>\n", number(static_cast<double>(q.events)), q.users.size()) +
      html_table({"user", "warnings", "blocks", "blocked at", "running jobs cancelled", "pending jobs refused",
                  "submissions refused", "last event", "spend then", "projected then"},
                 rows) +
      "<p class=\"note\">Spend and projected spend (spend plus the burn rate to the next quota check) at the "
      "user's last event. Submissions refused: the user's jobs that jobs.reason says a quota refused "
      "(AssocGrpBillingMinutes) without a quota_events row.</p>\n";
  s.line = text_line("quota", fmt::format("{} events for {} users: {} warnings, {} blocks, {} running jobs cancelled, "
                                          "{} pending jobs refused, {} submissions refused",
                                          q.events, q.users.size(), warnings, blocks, cancelled, refused, at_submit));
  return s;
}

/// Timeline rows shown; the page says how many more there are.
constexpr std::size_t kOperationRows = 100;

/// "gpu001, gpu002, gpu003 (+5)": node names, at most three.
std::string node_list(const std::vector<std::string>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < 3; ++i) out += (i ? ", " : "") + nodes[i];
  if (nodes.size() > 3) out += fmt::format(" (+{})", nodes.size() - 3);
  return out;
}

Section operations_section(const ReportData& d) {
  Section s{"operations", "Cluster operations", "", {}, ""};
  if (!d.operations) return s;
  const OperationsReport& o = *d.operations;
  if (o.rows == 0) {
    s.line = text_line("operations", "no cluster operations");
    return s;
  }
  std::size_t operations = 0;
  std::string started;
  for (const auto& [action, n] : o.started) {
    operations += n;
    started += fmt::format("{}{} {}", started.empty() ? "" : ", ", action, n);
  }
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < o.timeline.size() && i < kOperationRows; ++i) {
    const OperationStep& st = o.timeline[i];
    rows.push_back({seconds(st.time_s), st.action, st.name.empty() ? "-" : st.name, st.step,
                    st.nodes.empty() ? "-" : node_list(st.nodes), number(static_cast<double>(st.jobs_killed))});
  }
  s.html += fmt::format("<p>{} operations ({}), {} job runs killed.</p>\n", operations,
                        started.empty() ? "none started" : started, number(static_cast<double>(o.jobs_killed))) +
            html_table({"time", "operation", "image or volume", "step", "nodes", "jobs killed"}, rows);
  if (o.timeline.size() > kOperationRows) {
    s.html += fmt::format("<p class=\"note\">... and {} more steps.</p>\n", o.timeline.size() - kOperationRows);
  }
  s.line = text_line("operations",
                     fmt::format("{} operations ({}), {} steps, {} job runs killed", operations,
                                 started.empty() ? "none started" : started, o.timeline.size(), o.jobs_killed));
  return s;
}

constexpr const char* kStyle = R"(body{font-family:"DejaVu Sans",Verdana,sans-serif;margin:2em auto;max-width:760px;
color:#222;line-height:1.4}h1{font-size:1.5em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1em}table{border-collapse:collapse;margin:.5em 1.5em 1em 0;font-size:.9em}
th,td{padding:2px 8px;border-bottom:1px solid #e3e3e3;text-align:left}th{background:#f4f4f4}.n{text-align:right}
.tables{display:flex;flex-wrap:wrap;align-items:flex-start}figure{margin:1em 0}svg{max-width:100%;height:auto}
figcaption,.note,.run{color:#555;font-size:.85em}nav a{margin-right:1em})";

/// The headline figures as text lines (those the summary has).
std::string headline_text(const std::map<std::string, double>& m) {
  const auto has = [&](const char* k) { return m.count(k) > 0; };
  const auto at = [&](const char* k) { return m.at(k); };
  std::string out;
  if (has("jobs")) {
    std::string states;
    for (auto it = m.lower_bound("jobs_"); it != m.end() && it->first.starts_with("jobs_"); ++it) {
      states += fmt::format("{}{} {}", states.empty() ? "" : "  ", it->first.substr(5), number(it->second));
    }
    out += text_line("jobs", fmt::format("{}{}", number(at("jobs")), states.empty() ? "" : " (" + states + ")")) + "\n";
  }
  if (has("gpu_utilization") && has("cpu_utilization") && has("gpu_hours")) {
    out += text_line("util", fmt::format("GPU {}  CPU {}  ({:.1f} GPU-hours)", percent(at("gpu_utilization")),
                                         percent(at("cpu_utilization")), at("gpu_hours"))) +
           "\n";
  }
  std::string waits;
  for (const auto& [key, label] : {std::pair{"wait_mean_s", "mean"}, std::pair{"wait_p50_s", "p50"},
                                   std::pair{"wait_p95_s", "p95"}, std::pair{"wait_max_s", "max"}}) {
    if (has(key)) waits += fmt::format("{}{} {:.0f} s", waits.empty() ? "" : "  ", label, at(key));
  }
  if (!waits.empty()) out += text_line("wait", waits) + "\n";
  std::string reliability;
  const auto add = [&](const char* key, const char* label, bool ratio) {
    if (!has(key)) return;
    reliability +=
        fmt::format("{}{} {}", reliability.empty() ? "" : "  ", label, ratio ? percent(at(key)) : number(at(key)));
  };
  add("goodput", "goodput", true);
  add("node_availability", "node availability", true);
  add("faults", "faults", false);
  add("job_interruptions", "job interruptions", false);
  if (!reliability.empty()) out += text_line("goodput", reliability) + "\n";
  if (has("cost_total_usd")) out += text_line("cost", usd(at("cost_total_usd")) + " in all") + "\n";
  return out;
}

std::string run_title(const ReportData& d) {
  return d.run.scenario.empty() ? "gputwin report" : "gputwin report: " + d.run.scenario;
}

std::string run_description(const ReportData& d) {
  if (d.run.scenario.empty()) return "run details not recorded (no runs table)";
  return fmt::format("scenario {}, seed {}, policy {}, gputwin {}", d.run.scenario, d.run.seed, d.run.policy,
                     d.run.version);
}

// ---- writing ----

/// Writes `text` to `path` whole or not at all, never over a device, FIFO, directory or symbolic link.
void write_file(const std::filesystem::path& path, const std::string& text) {
  write_file_whole(path, "--out", [&](std::ostream& out) { out << text; });
}

/// The executable `name` on PATH; empty if there is none.
std::filesystem::path find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
  }
  return {};
}

/// Runs `program` with `args` (no shell) and waits; throws std::runtime_error unless it exits with 0.
void run_program(const std::filesystem::path& program, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string argv0 = program.string();
  argv.push_back(argv0.data());
  std::vector<std::string> copies = args;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = posix_spawn(&pid, argv0.c_str(), nullptr, nullptr, argv.data(), environ); rc != 0) {
    throw std::runtime_error(fmt::format("{}: cannot start: {}", argv0, std::strerror(rc)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(argv0 + ": wait failed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("{} {} failed (status {})", argv0, args.empty() ? "" : args.back(),
                                         WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
}

/// Plot file names any report may write, so a folder written before keeps no stale plot.
constexpr std::string_view kPlotNames[] = {"waits",
                                           "node_states",
                                           "gpus",
                                           "jobs",
                                           "gpu_hours_by_cause",
                                           "lost_by_fault_class",
                                           "faults_per_day",
                                           "interruptions_per_day",
                                           "checkpoint_interval",
                                           "cost_burn_rate",
                                           "cost_total",
                                           "scaling_actions",
                                           "scaling_nodes"};

}  // namespace

bool parse_report_format(const std::string& text, ReportFormat& format) {
  if (text == "html") return format = ReportFormat::kHtml, true;
  if (text == "svg") return format = ReportFormat::kSvg, true;
  if (text == "png") return format = ReportFormat::kPng, true;
  return false;
}

Report build_report(const std::filesystem::path& results_dir, const ReportOptions& options) {
  const ReportData d = load_report_data(results_dir, options.step_s);
  std::size_t unknown = 0;
  const std::vector<HeadlineTable> headline = headline_tables(d.summary, unknown);
  std::vector<Section> sections;
  sections.push_back(waits_section(d));
  sections.push_back(cluster_section(d));
  sections.push_back(losses_section(d));
  sections.push_back(faults_section(d));
  sections.push_back(interruptions_section(d));
  sections.push_back(checkpoints_section(d));
  sections.push_back(cost_section(d));
  sections.push_back(scaling_section(d));
  sections.push_back(quota_section(d));
  sections.push_back(operations_section(d));

  Report r;
  r.text = text_line("report", run_description(d)) + "\n" + headline_text(d.summary);
  std::size_t figures = 0;
  for (const HeadlineTable& t : headline) figures += t.rows.size();
  r.text += text_line("headline", fmt::format("{} figures in {} tables{}", figures, headline.size(),
                                              unknown ? fmt::format(" ({} not known to the report, under \"Other "
                                                                    "figures\")",
                                                                    unknown)
                                                      : "")) +
            "\n";
  for (const Section& s : sections) {
    if (!s.line.empty()) r.text += s.line + "\n";  // sections of tables the run did not write have no line
  }

  std::string& h = r.html;
  h = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{}\n"
      "</style>\n</head>\n<body>\n<h1>{}</h1>\n<p class=\"run\">{}</p>\n<nav><a href=\"#headline\">Headline</a>",
      esc(run_title(d)), kStyle, esc(run_title(d)), esc(run_description(d)));
  for (const Section& s : sections) {
    if (!s.html.empty()) h += fmt::format("<a href=\"#{}\">{}</a>", s.id, esc(s.title));
  }
  h += "</nav>\n<section id=\"headline\">\n<h2>Headline</h2>\n<div class=\"tables\">\n";
  for (const HeadlineTable& t : headline) {
    std::vector<std::vector<std::string>> rows;
    for (const HeadlineRow& row : t.rows) rows.push_back({row.label, row.value});
    h += html_table({t.title, ""}, rows);
  }
  h += "</div>\n</section>\n";
  for (Section& s : sections) {
    if (s.html.empty()) continue;
    h += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", s.id, esc(s.title), s.html);
    for (ReportPlot& p : s.plots) r.plots.push_back(std::move(p));
  }
  h += "</body>\n</html>\n";
  return r;
}

int write_report(const std::filesystem::path& results_dir, const ReportOptions& options, std::ostream& out) {
  std::filesystem::path rsvg;
  if (options.format == ReportFormat::kPng) {
    rsvg = find_program("rsvg-convert");
    if (rsvg.empty()) {
      throw MissingToolError(
          "--format png: rsvg-convert not found on PATH (Debian: apt-get install librsvg2-bin, which "
          "scripts/setup.sh installs); --format svg writes the plots without it");
    }
  }
  const Report r = build_report(results_dir, options);
  out << r.text;
  if (options.format == ReportFormat::kHtml) {
    const std::filesystem::path file = options.out.empty() ? results_dir / "report.html" : options.out;
    write_file(file, r.html);
    out << text_line("wrote", fmt::format("{} ({} plots, {} bytes)", file.string(), r.plots.size(), r.html.size()))
        << "\n";
    return 0;
  }
  const std::filesystem::path dir = options.out.empty() ? results_dir / "report" : options.out;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": cannot create: " + ec.message());
  const char* ext = options.format == ReportFormat::kSvg ? ".svg" : ".png";
  for (const std::string_view name : kPlotNames) {
    const bool written =
        std::any_of(r.plots.begin(), r.plots.end(), [&](const ReportPlot& p) { return p.name == name; });
    if (!written) std::filesystem::remove(dir / (std::string(name) + ext), ec);
  }
  for (const ReportPlot& p : r.plots) {
    const std::filesystem::path svg_file = dir / (p.name + ".svg");
    if (options.format == ReportFormat::kSvg) {
      write_file(svg_file, p.svg);
      continue;
    }
    check_output_target(dir / (p.name + ".png"), "--out");  // before rendering: never over a device or link
    const std::filesystem::path svg_tmp = dir / ("." + p.name + ".svg.tmp");
    const std::filesystem::path png_tmp = dir / ("." + p.name + ".png.tmp");
    try {
      write_file(svg_tmp, p.svg);
      run_program(rsvg, {"--format", "png", "--output", png_tmp.string(), svg_tmp.string()});
    } catch (...) {
      std::filesystem::remove(svg_tmp, ec);
      std::filesystem::remove(png_tmp, ec);
      throw;
    }
    std::filesystem::remove(svg_tmp, ec);
    std::filesystem::rename(png_tmp, dir / (p.name + ".png"), ec);
    if (ec) throw std::runtime_error((dir / (p.name + ".png")).string() + ": cannot move into place: " + ec.message());
  }
  std::string names;
  for (const ReportPlot& p : r.plots) names += (names.empty() ? "" : " ") + p.name + ext;
  out << text_line("wrote", fmt::format("{} plots in {}: {}", r.plots.size(), dir.string(), names)) << "\n";
  return 0;
}

}  // namespace gputwin
