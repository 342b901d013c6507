// gputwin command line: `run` a scenario (progress bar, summary, results), `validate` a scenario, `import` a site,
// read a run back (`compare`, `metrics`, `report`, `squeue`).
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>

#include "cli/compare.hpp"
#include "cli/fidelity_command.hpp"
#include "cli/import_command.hpp"
#include "cli/live_command.hpp"
#include "cli/report_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/topology_command.hpp"
#include "cli/twin_command.hpp"
#include "cli/views.hpp"
#include "model/errors.hpp"
#include "model/scenario.hpp"
#include "results/metrics_export.hpp"
#include "results/output_file.hpp"
#include "results/output_lock.hpp"
#include "sim/runner.hpp"
#include "sim/stream_gate.hpp"

namespace {

using namespace gputwin;

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds);
  return fmt::format("{}d {:02}:{:02}:{:02}", s / 86400, (s / 3600) % 24, (s / 60) % 60, s % 60);
}

/// Draws a one-line progress bar on stderr, at most 10 times a second.
class ProgressBar {
 public:
  void update(const RunProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.ended < p.total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double fraction = p.total ? static_cast<double>(p.ended) / static_cast<double>(p.total) : 1.0;
    const int width = 30;
    const int filled = static_cast<int>(fraction * width);
    const double rate = p.wall_s > 0 ? static_cast<double>(p.ended) / p.wall_s : 0;
    fmt::print(stderr, "\r[{}{}] {:5.1f}%  sim {}  {}/{} jobs  {:.0f} jobs/s ", std::string(filled, '#'),
               std::string(width - filled, '.'), fraction * 100, format_duration(to_seconds_f(p.now)), p.ended, p.total,
               rate);
    if (p.ended >= p.total) fmt::print(stderr, "\n");
  }

 private:
  std::chrono::steady_clock::time_point last_{};
};

void print_summary(const RunOutcome& o, const std::filesystem::path& out_dir, double write_wall_s,
                   const ResultsStream::Stats* streamed) {
  const RunSummary& s = o.summary;
  const Scenario& sc = *o.scenario;
  fmt::print("scenario   {} (seed {}, policy {})\n", sc.name, sc.seed, policy_name(sc.scheduler.policy));
  fmt::print("cluster    {} nodes, {} CPUs, {} GPUs\n", sc.cluster.nodes.size(), sc.cluster.total_cpus(),
             sc.cluster.total_gpus());
  std::string states;
  for (const auto& [name, count] : s.by_state) states += fmt::format("{} {}  ", name, count);
  fmt::print("jobs       {} ({}rejected at submit {})\n", s.jobs, states, s.rejected);
  fmt::print("makespan   {} ({:.0f} s; submissions over the first {})\n", format_duration(s.makespan_s), s.makespan_s,
             format_duration(s.last_submit_s - s.first_submit_s));
  // Utilisation and its GPU-hours count every run, requeued ones too (the final runs alone: gpu_hours).
  fmt::print("util       GPU {:.1f}%  CPU {:.1f}%  ({:.1f} GPU-hours allocated)\n", s.gpu_utilization * 100,
             s.cpu_utilization * 100, s.allocated_gpu_hours);
  fmt::print("wait       mean {:.0f} s  p50 {:.0f} s  p95 {:.0f} s  p99 {:.0f} s  max {:.0f} s\n", s.wait_mean_s,
             s.wait_p50_s, s.wait_p95_s, s.wait_p99_s, s.wait_max_s);
  fmt::print("slowdown   mean bounded slowdown {:.2f} (tau 10 s)\n", s.bounded_slowdown_mean);
  if (s.multi_node_jobs > 0 && s.leaves_per_multi_node_job > 0) {
    fmt::print(
        "placement  {} multi-node jobs, {} across leaf switches ({:.2f} leaves each); {:+.1f} GPU-hours from "
        "placement speed\n",
        s.multi_node_jobs, s.cross_leaf_jobs, s.leaves_per_multi_node_job, s.placement_gpu_hours);
  }
  if (!s.lifecycle && (s.requeues > 0 || s.by_state.count("PREEMPTED"))) {
    fmt::print("preempted  {} requeued runs, {:.1f} GPU-hours of discarded work\n", s.requeues, s.lost_gpu_hours);
  }
  if (s.lifecycle) {
    fmt::print(
        "faults     {} faults ({} on nodes already out), {} job runs interrupted ({} on faulty nodes not yet "
        "noticed), node availability {:.2f}%\n",
        s.faults, s.faults_suppressed, s.job_interruptions, s.black_hole_interruptions, s.node_availability * 100);
    fmt::print(
        "goodput    {:.2f}% of {:.1f} GPU-hours; lost: fault work {:.1f}, restarts {:.1f}, checkpoint writes {:.1f}, "
        "preemption {:.1f}\n",
        s.goodput * 100, s.allocated_gpu_hours, s.gpu_hours_lost_fault_work, s.gpu_hours_lost_restart,
        s.gpu_hours_checkpoint, s.lost_gpu_hours);
  }
  if (s.autoscaled) {
    fmt::print(
        "autoscale  {} nodes created ({} boot failures), {} removed; pool up {:.1f} node-hours; cold start {:.0f} s\n",
        s.nodes_created, s.boot_failures, s.nodes_removed, s.pool_node_hours, s.cold_start_s);
  }
  if (s.costed) {
    fmt::print(
        "cost       ${:.2f} in all, ${:.2f} idle, ${:.2f} per used GPU-hour; {} spot reclaims; {} job runs ended by "
        "reclaims, operations or failed resumes ({:.1f} GPU-hours lost); {} jobs cancelled or refused by quotas\n",
        s.cost_total_usd, s.cost_idle_usd, s.cost_per_used_gpu_hour, s.spot_interruptions, s.cloud_job_interruptions,
        s.gpu_hours_lost_cloud, s.quota_cancels);
  }
  const double events_per_s = o.sim_wall_s > 0 ? static_cast<double>(o.counters.events) / o.sim_wall_s : 0;
  const double jobs_per_s = o.sim_wall_s > 0 ? static_cast<double>(s.jobs) / o.sim_wall_s : 0;
  fmt::print(
      "speed      {:.3f} s wall ({:.3f} s loading), {} events, {:.0f} events/s, {:.0f} jobs/s, "
      "{:.0f} simulated s per wall s\n",
      o.sim_wall_s, o.load_wall_s, o.counters.events, events_per_s, jobs_per_s,
      o.sim_wall_s > 0 ? s.makespan_s / o.sim_wall_s : 0);
  fmt::print("scheduler  {} passes, {} backfill cycles ({} skipped), {} job tests, {} backfill starts\n",
             o.scheduler_stats.passes, o.scheduler_stats.backfill_cycles, o.scheduler_stats.backfill_skipped,
             o.scheduler_stats.jobs_tested, o.scheduler_stats.backfill_starts);
  if (!out_dir.empty()) {
    std::string during;
    if (streamed != nullptr && streamed->dropped) {
      during = "; rows written during the run changed later, so all were written again";
    } else if (streamed != nullptr) {
      during =
          fmt::format("; {} jobs and {} node events written during the run", streamed->jobs, streamed->node_events);
    }
    fmt::print("results    {}/results.sqlite, summary.json, jobs.csv ({:.3f} s wall to write after the run{})\n",
               out_dir.string(), write_wall_s, during);
  }
}

/// The value of a time option (seconds or d-hh:mm:ss), or nullopt after saying on stderr that it is not a time.
std::optional<std::int64_t> time_option(std::string_view option, const std::string& text) {
  std::int64_t seconds = 0;
  if (gputwin::parse_sim_time(text, seconds)) return seconds;
  fmt::print(stderr, "gputwin: {}: '{}' is not a time (seconds, or d-hh:mm:ss)\n", option, text);
  return std::nullopt;
}

int run_command(const std::string& scenario_path, const std::string& out, std::optional<std::uint64_t> seed,
                const std::string& policy, bool quiet, bool no_results, bool no_node_history,
                const std::vector<std::string>& overrides, const std::string& until,
                const std::optional<gputwin::LiveServeOptions>& serve) {
  Scenario scenario = load_scenario(scenario_path, overrides);
  RunOptions options;
  options.seed = seed;
  if (!until.empty()) {
    const auto at = time_option("--until", until);
    if (!at) return 2;
    options.stop_at = from_seconds(*at);
  }
  options.node_history = !no_node_history && !no_results;  // nobody reads the history without results
  options.reason_history = !no_results;
  if (!policy.empty()) {
    SchedulerPolicy p;
    if (!parse_policy(policy, p)) {
      fmt::print(stderr, "gputwin: --policy: unknown policy '{}' (known: {})\n", policy, policy_names());
      return 2;
    }
    options.policy = p;
  }
  // The run owns its results folder from before it starts: a second run into the same folder stops here.
  std::filesystem::path out_dir;
  std::optional<gputwin::OutputFolderLock> lock;
  if (!no_results) {
    out_dir = out.empty() ? std::filesystem::path("out") / scenario.name : std::filesystem::path(out);
    lock.emplace(out_dir);
  }
  if (serve) return gputwin::run_live_command(std::move(scenario), std::move(options), out_dir, *serve);
  ProgressBar bar;
  if (!quiet && isatty(STDERR_FILENO)) options.progress = [&](const RunProgress& p) { bar.update(p); };
  // The results that settle while the run goes on are written beside it, on the other core.
  std::optional<StreamGate> stream;
  if (!no_results) options.gate = &stream.emplace(out_dir);
  RunOutcome outcome = run_scenario(std::move(scenario), options);
  double write_wall_s = 0;
  if (!no_results) {
    const auto begin = std::chrono::steady_clock::now();
    const MetricsInput metrics = metrics_input(outcome);
    write_results(out_dir, run_info(outcome), *outcome.state, outcome.summary, *outcome.recorder,
                  metrics.config.enabled ? &metrics : nullptr, fault_log(outcome), cloud_log(outcome), nullptr,
                  stream->stream());
    write_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  if (!quiet) print_summary(outcome, out_dir, write_wall_s, stream ? &stream->stream()->stats() : nullptr);
  return 0;
}

/// `gputwin metrics`: to stdout, or to a file written whole or not at all (results/output_file.hpp).
/// The stderr line of a whole-run export whose period gputwin chose.
void say_export_step(const gputwin::MetricsExportChoice& c, const gputwin::MetricsExportOptions& options) {
  if (options.at_s || options.step_s > 0) return;
  if (c.adapted) {
    fmt::print(stderr,
               "gputwin metrics: step {} s (stored every {} s) keeps the export within --max-samples {} ({} sample "
               "lines); --step {} or a larger --max-samples for more\n",
               c.step_s, c.stored_step_s, options.max_samples, c.samples, c.stored_step_s);
  } else {
    fmt::print(stderr, "gputwin metrics: step {} s (every stored sample, {} sample lines)\n", c.step_s, c.samples);
  }
}

int metrics_command(const std::filesystem::path& results, const gputwin::MetricsExportOptions& options) {
  if (options.out.empty()) {
    const gputwin::MetricsExportChoice choice = gputwin::export_metrics(results, options, std::cout);
    std::cout.flush();
    say_export_step(choice, options);
    return std::cout ? 0 : 1;
  }
  gputwin::MetricsExportChoice choice;
  gputwin::write_file_whole(options.out, "--out",
                            [&](std::ostream& file) { choice = gputwin::export_metrics(results, options, file); });
  say_export_step(choice, options);
  return 0;
}

int validate_command(const std::string& scenario_path, const std::vector<std::string>& overrides) {
  Scenario scenario = load_scenario(scenario_path, overrides);
  const std::vector<JobSpec> jobs = load_workload(scenario);
  fmt::print("{}: OK: scenario '{}', {} nodes, {} partitions, {} jobs, policy {}\n", scenario_path, scenario.name,
             scenario.cluster.nodes.size(), scenario.cluster.partitions.size(), jobs.size(),
             policy_name(scenario.scheduler.policy));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gputwin: simulator and digital twin of Slurm-managed GPU clusters"};
  app.set_version_flag("--version", std::string(gputwin::gputwin_version()));
  app.require_subcommand(1);

  std::string scenario_path, out, policy;
  std::uint64_t seed = 0;
  bool quiet = false, no_results = false, no_node_history = false;
  CLI::App* run = app.add_subcommand("run", "Run a scenario and write results.sqlite, summary.json and jobs.csv");
  run->add_option("scenario", scenario_path, "Scenario file (JSON)")->required();
  run->add_option("--out", out, "Output folder (default: out/<scenario name>)");
  CLI::Option* seed_opt = run->add_option("--seed", seed, "Seed, replacing the scenario's");
  run->add_option("--policy", policy, "Scheduling policy: " + policy_names());
  run->add_flag("--quiet", quiet, "No progress bar and no summary");
  run->add_flag("--no-results", no_results, "Do not write the results folder (benchmarks)");
  run->add_flag("--no-node-history", no_node_history, "Do not record node state changes");
  std::string run_until;
  run->add_option("--until", run_until,
                  "Stop the simulation at this simulated time (seconds or d-hh:mm:ss); jobs still pending or "
                  "running then are reported as such");
  bool run_serve = false;
  gputwin::LiveServeOptions live_serve;
  run->add_flag("--serve", run_serve,
                "Serve the simulation live while it runs: the dashboard with its controls (pause, resume, speed, "
                "drain and resume nodes) and the slurmrestd-compatible API; Ctrl-C stops it where it is and writes "
                "the results as a run stopped then");
  run->add_option("--listen", live_serve.listen, "With --serve: the dashboard's ADDR:PORT (default 127.0.0.1:8080)");
  run->add_option("--slurmrestd-listen", live_serve.slurmrestd_listen,
                  "With --serve: the slurmrestd-compatible API's ADDR:PORT (default 127.0.0.1:6820)");
  run->add_flag("--no-slurmrestd", live_serve.no_slurmrestd, "With --serve: no slurmrestd-compatible API");
  run->add_option("--token-file", live_serve.token_file,
                  "With --serve: the controls' bearer token (a file of mode 0600); without it one is made and "
                  "written to OUT/control.token (mode 0600)");
  run->add_option("--jwt-key", live_serve.jwt_key,
                  "With --serve: key file to check the slurmrestd-compatible API's X-SLURM-USER-TOKEN with");
  run->add_option("--speed", live_serve.speed,
                  "With --serve: simulated seconds per wall second at the start, or max (default 60)");
  run->add_flag("--paused", live_serve.paused, "With --serve: start with the clock held");
  run->add_option("--refresh-ms", live_serve.refresh_ms,
                  "With --serve: readers get a snapshot of the simulation at most this old (default 1000)")
      ->check(CLI::Range(0, 3'600'000));
  run->add_option("--assets", live_serve.assets, "With --serve: folder of the built dashboard pages");
  std::vector<std::string> overrides;
  const char* set_help = "What-if override of a scenario value: /json/pointer=value (repeatable)";
  run->add_option("--set", overrides, set_help);

  std::string validate_path;
  CLI::App* validate = app.add_subcommand("validate", "Check a scenario and its workload without running it");
  validate->add_option("scenario", validate_path, "Scenario file (JSON)")->required();
  validate->add_option("--set", overrides, set_help);

  gputwin::ImportRequest import_request;
  CLI::App* import = app.add_subcommand("import",
                                        "Turn a site's slurm.conf (and gres.conf, sacctmgr dump, QOS, sacct "
                                        "history) into a scenario on stdout");
  import->add_option("slurm_conf", import_request.slurm_conf, "slurm.conf (Include lines are followed)")->required();
  import->add_option("--topology", import_request.topology,
                     "topology.conf or topology.yaml (topology/tree switches or topology/block blocks)");
  import->add_option("--topology-name", import_request.topology_name,
                     "Which topology of a topology.yaml (default: the cluster_default one)");
  import->add_option("--gres", import_request.gres, "gres.conf (GPU types)");
  import->add_option("--assoc", import_request.assoc, "sacctmgr dump file (accounts, users, shares, limits)");
  import->add_option("--qos", import_request.qos, "sacctmgr show qos -P output");
  import->add_option("--sacct", import_request.sacct, "Job history to replay as the workload");
  import->add_option("--sacct-format", import_request.sacct_format, "sacct (sacct -P), sacct-json or slurmdb-json");

  // Views of a run at a simulated time, in Slurm's columns.
  std::string view_path, view_at, view_user;
  bool view_long = false;
  auto add_view = [&](const char* name, const char* help, const char* what) {
    CLI::App* sub = app.add_subcommand(name, help);
    sub->add_option(what[0] == 'r' ? "results" : "scenario", view_path, what)->required();
    sub->add_option("--at", view_at, "Simulated time: seconds, or d-hh:mm:ss")->required();
    return sub;
  };
  CLI::App* squeue = add_view("squeue", "The queue at a simulated time, with pending reasons (from a results folder)",
                              "results folder written by `gputwin run --out`");
  squeue->add_option("-u,--user", view_user, "Only this user's jobs");
  CLI::App* sprio =
      add_view("sprio", "Priority factors of pending jobs at a simulated time (re-runs the scenario)", "scenario");
  CLI::App* sshare = add_view("sshare", "Fair-share tree at a simulated time (re-runs the scenario)", "scenario");
  sprio->add_option("--set", overrides, set_help);
  sshare->add_option("--set", overrides, set_help);
  sshare->add_flag("-l,--long", view_long, "Long format (NormUsage, LevelFS)");

  std::string topology_path, topology_format = "conf";
  CLI::App* topology =
      app.add_subcommand("topology", "Print a scenario's network topology (topology.conf or Graphviz)");
  topology->add_option("scenario", topology_path, "Scenario file (JSON)")->required();
  topology->add_option("--format", topology_format, "conf (Slurm topology.conf, default) or dot (Graphviz)");
  topology->add_option("--set", overrides, set_help);

  std::string metrics_path, metrics_at;
  gputwin::MetricsExportOptions metrics_options;
  bool metrics_no_gpus = false;
  CLI::App* metrics = app.add_subcommand(
      "metrics",
      "A run's metrics as OpenMetrics (whole run, for promtool tsdb create-blocks-from openmetrics) or one "
      "scrape at a simulated time (Prometheus text, for promtool check metrics)");
  metrics->add_option("results", metrics_path, "Results folder written by `gputwin run --out`")->required();
  metrics->add_flag("--openmetrics", metrics_options.openmetrics,
                    "OpenMetrics 1.0 (always so for the whole run; with --at, instead of Prometheus text 0.0.4)");
  metrics->add_option("--at", metrics_at, "One scrape at this simulated time (seconds or d-hh:mm:ss)");
  metrics->add_option("--step", metrics_options.step_s,
                      "Export period, seconds (a multiple of the stored one); default: the shortest that keeps the "
                      "whole run within --max-samples (said on stderr)");
  metrics
      ->add_option("--max-samples", metrics_options.max_samples,
                   "Sample lines of the whole run without --step (default 1000000: about 170 MB)")
      ->check(CLI::PositiveNumber);
  metrics->add_flag("--no-gpus", metrics_no_gpus, "Leave out the per-GPU DCGM series");
  std::string metrics_labels = "dcgm";
  metrics
      ->add_option("--labels", metrics_labels,
                   "GPU label names: dcgm (dcgm-exporter's UUID, modelName, Hostname; default) or snake (uuid, "
                   "model_name, hostname: what promtool's linter wants)")
      ->check(CLI::IsMember({"dcgm", "snake"}));
  metrics->add_flag("--job-label", metrics_options.job_label,
                    "Label GPU series with hpc_job (dcgm-exporter's HPC job mapping)");
  metrics->add_option("--out", metrics_options.out, "Output file (written whole or not at all; default stdout)");

  std::string report_path, report_format = "html";
  gputwin::ReportOptions report_options;
  CLI::App* report = app.add_subcommand(
      "report",
      "A run's results as a report: a text summary on stdout and an HTML page with plots (or one SVG or PNG per "
      "plot)");
  report->add_option("results", report_path, "Results folder written by `gputwin run --out`")->required();
  report->add_option("--out", report_options.out,
                     "HTML file (default RESULTS/report.html), or the folder of the plots with --format svg|png "
                     "(default RESULTS/report)");
  report->add_option("--format", report_format, "html (default), svg or png (png needs rsvg-convert)")
      ->check(CLI::IsMember({"html", "svg", "png"}));
  report->add_option("--step", report_options.step_s,
                     "Time bucket of the plots over time, seconds (default: about 100 buckets over the run)");

  std::string compare_a, compare_b;
  CLI::App* compare = app.add_subcommand("compare", "Two runs' results side by side (what-if studies)");
  compare->add_option("a", compare_a, "Results folder A")->required();
  compare->add_option("b", compare_b, "Results folder B")->required();

  gputwin::TwinCommands twin_commands;
  gputwin::add_twin_commands(app, twin_commands);
  gputwin::ServeCommand serve_command;
  gputwin::add_serve_command(app, serve_command);
  gputwin::FidelityCommand fidelity_command;
  gputwin::add_fidelity_command(app, fidelity_command);

  CLI11_PARSE(app, argc, argv);
  try {
    if (const int status = gputwin::run_twin_commands(twin_commands); status >= 0) return status;
    if (const int status = gputwin::run_serve_command(serve_command); status >= 0) return status;
    if (const int status = gputwin::run_fidelity_command(fidelity_command); status >= 0) return status;
    if (*run) {
      return run_command(scenario_path, out, seed_opt->count() ? std::optional<std::uint64_t>(seed) : std::nullopt,
                         policy, quiet, no_results, no_node_history, overrides, run_until,
                         run_serve ? std::optional<gputwin::LiveServeOptions>(live_serve) : std::nullopt);
    }
    if (*validate) return validate_command(validate_path, overrides);
    if (*import) return gputwin::run_import(import_request, std::cout, std::cerr);
    if (*compare) return gputwin::print_comparison(compare_a, compare_b);
    if (*metrics) {
      metrics_options.gpus = !metrics_no_gpus;
      metrics_options.dcgm_labels = metrics_labels == "dcgm";
      if (!metrics_at.empty()) {
        const auto at = time_option("--at", metrics_at);
        if (!at) return 2;
        metrics_options.at_s = *at;
      }
      return metrics_command(metrics_path, metrics_options);
    }
    if (*report) {
      gputwin::parse_report_format(report_format, report_options.format);
      return gputwin::write_report(report_path, report_options, std::cout);
    }
    if (*topology) {
      return gputwin::print_topology(load_scenario(topology_path, overrides), topology_format, std::cout, std::cerr);
    }
    if (*squeue || *sprio || *sshare) {
      const auto parsed = time_option("--at", view_at);
      if (!parsed) return 2;
      const std::int64_t at = *parsed;
      if (*squeue) return gputwin::print_squeue(view_path, at, view_user);
      const Scenario scenario = load_scenario(view_path, overrides);
      return *sprio ? gputwin::print_sprio(scenario, at) : gputwin::print_sshare(scenario, at, view_long);
    }
  } catch (const gputwin::InputError& e) {
    fmt::print(stderr, "gputwin: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr,
               "gputwin: out of memory: the input needs more memory than this machine has (README \"Reliability\" "
               "lists the bounds on inputs)\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gputwin: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
