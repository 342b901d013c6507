// What a live run's in-memory Overview costs (results/state_overview): runs a scenario up to a simulated second, then
// times, in thread CPU seconds, the copy a live run makes on the simulation's thread (ClusterState with shared specs,
// the recorder, the metrics input) and the figures computed from it on a reader's thread, with the per-GPU budget of a
// live snapshot (500,000 rows), several times each; then the Jobs tab's table built from the copy (state_job_table),
// a sort order and a few pages of it.
//
//   build/results/state_overview_bench scenarios/bench-1m.json 1100000 [repeats] [--set /pointer=value]...
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/scenario.hpp"
#include "results/state_overview.hpp"
#include "sim/runner.hpp"

namespace {

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gputwin;
  if (argc < 3) {
    std::fprintf(stderr, "usage: state_overview_bench SCENARIO UNTIL_S [REPEATS] [--set /pointer=value]...\n");
    return 2;
  }
  const std::int64_t until_s = std::atoll(argv[2]);
  int repeats = 3;
  std::vector<std::string> sets;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--set" && i + 1 < argc) {
      sets.emplace_back(argv[++i]);
    } else {
      repeats = std::max(1, std::atoi(argv[i]));
    }
  }
  Scenario scenario = load_scenario(argv[1], sets);
  RunOptions options;
  options.stop_at = from_seconds(until_s);
  const double run0 = thread_cpu_s();
  const RunOutcome o = run_scenario(std::move(scenario), options);
  std::printf("ran to %lld s: %zu jobs, %zu runs requeued, %zu node events, %.2f s CPU\n",
              static_cast<long long>(to_seconds(o.world->now())), o.state->job_count(), o.state->past_runs().size(),
              o.recorder->node_events().size(), thread_cpu_s() - run0);
  for (int r = 0; r < repeats; ++r) {
    const double c0 = thread_cpu_s();
    const ClusterState state(*o.state, o.state->config());
    const RunRecorder recorder(*o.recorder);
    MetricsInput metrics = metrics_input(o);
    const double c1 = thread_cpu_s();
    metrics.config.max_gpu_samples = std::min<std::uint64_t>(metrics.config.max_gpu_samples, 500'000);
    const StateOverview f =
        state_overview(run_info(o), state, recorder, metrics.config.enabled ? &metrics : nullptr, o.world->now());
    const double c2 = thread_cpu_s();
    std::printf("copy %.3f s CPU, figures %.3f s CPU: %lld running, %lld pending, GPU util %.2f%%, gpu_step %lld s\n",
                c1 - c0, c2 - c1, static_cast<long long>(f.overview.running_jobs),
                static_cast<long long>(f.overview.pending_jobs), f.overview.gpu_util_pct,
                static_cast<long long>(f.info.gpu_step_s));
    // The Jobs tab's table of the copy, one time-independent sort order (by name, as a click on the column asks), and
    // pages: the first in job id order, one deep in it, the PENDING tab, and sorted by run time (time-dependent).
    const std::unique_ptr<JobTable> table = state_job_table(state, recorder);
    const double c3 = thread_cpu_s();
    table->prepare_order(JobSort::kName, false);
    const double c4 = thread_cpu_s();
    JobQuery q;
    q.at_s = to_seconds(o.world->now());
    const JobPage first = table->jobs(q);
    const double c5 = thread_cpu_s();
    q.offset = first.total / 2;
    (void)table->jobs(q);  // timed, not read
    q.offset = 0;
    q.filter = JobFilter::kPending;
    (void)table->jobs(q);  // timed, not read
    q.filter = JobFilter::kAll;
    q.sort = JobSort::kRunTime;
    q.descending = true;
    (void)table->jobs(q);  // timed, not read
    const double c6 = thread_cpu_s();
    std::printf("jobs table %.3f s CPU, order by name %.3f s, first page %.4f s, three more pages %.4f s (%zu jobs)\n",
                c3 - c2, c4 - c3, c5 - c4, c6 - c5, first.total);
  }
  return 0;
}
