#include "results/state_overview.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "faults/fault_types.hpp"
#include "model/hostlist.hpp"
#include "results/gpu_metrics.hpp"

namespace gputwin {

namespace {

// Each node's state at `at_s`: its last node event at or before then (latest time; at one time, the last recorded),
// as RunView's node_state_at reads the node_events rows; IDLE without one.
std::vector<std::string_view> node_states_at(const RunRecorder& recorder, std::size_t nodes, std::int64_t at_s) {
  std::vector<std::string_view> states(nodes, "IDLE");
  std::vector<std::int64_t> seen(nodes, std::numeric_limits<std::int64_t>::min());
  for (const NodeEvent& e : recorder.node_events()) {
    const std::int64_t t = to_seconds(e.time);
    if (t > at_s || e.node >= nodes) continue;
    const std::size_t last = std::min<std::size_t>(nodes, static_cast<std::size_t>(e.node) + e.count);
    const std::string_view name = node_state_name(e.state);
    for (std::size_t n = e.node; n < last; ++n) {
      if (t < seen[n]) continue;
      seen[n] = t;
      states[n] = name;
    }
  }
  return states;
}

// Each node's GPUs at the per-GPU series' sample at or before `at_s`, as RunView::gpu_samples reads them from the
// gpu_metrics rows write_results would write (`step_s` as RunView reads metrics_info's gpu_step_s).
std::vector<NodeGpuSample> gpu_use_at(const ClusterState& state, const MetricsInput& metrics, std::int64_t step_s,
                                      std::int64_t at_s) {
  std::vector<NodeGpuSample> samples(state.node_count());
  if (step_s <= 0) return samples;
  const std::int64_t t = std::max<std::int64_t>(0, at_s / step_s * step_s);
  const GpuBinding binding(state, metrics.horizon);
  gpu_samples_at(state, binding, metrics.horizon, metrics.config, metrics.load, metrics.xids, metrics.node_conditions,
                 t, [&](const GpuSample& s) {
                   // As the database hands them back: the XID through its INTEGER column.
                   samples[s.node].add(s.util_pct, s.fb_used_mib, static_cast<std::int32_t>(s.xid));
                 });
  return samples;
}

}  // namespace

StateOverview state_overview(const RunInfo& info, const ClusterState& state, const RunRecorder& recorder,
                             const MetricsInput* metrics, SimTime now) {
  const ClusterConfig& cluster = state.config();
  const bool with_metrics = metrics != nullptr && metrics->config.enabled;
  StateOverview out;
  out.at_s = to_seconds(now);
  const std::int64_t at_s = out.at_s;

  // What the runs and metrics_info tables tell RunView.
  RunDescription& d = out.info;
  d.scenario = info.scenario;
  d.policy = info.policy;
  d.kind = "run";
  d.seed = info.seed;
  d.end_s = at_s;
  d.jobs = state.job_count();
  d.nodes = cluster.nodes.size();
  for (const NodeConfig& node : cluster.nodes) d.total_gpus += static_cast<std::size_t>(node.gpus);
  if (with_metrics) {
    const double horizon_s = to_seconds_f(metrics->horizon);
    d.epoch_unix_s = metrics->config.epoch_unix_s;
    d.cluster_step_s = static_cast<std::int64_t>(cluster_sample_step_s(metrics->config, horizon_s));
    d.gpu_step_s = static_cast<std::int64_t>(gpu_sample_step_s(metrics->config, horizon_s, sampled_gpu_count(cluster)));
  }

  // Nodes: the nodes table, their states from the node history, GPU use from the per-GPU series.
  const std::vector<std::string_view> states = node_states_at(recorder, cluster.nodes.size(), at_s);
  std::vector<double> fb_total(cluster.nodes.size());
  out.nodes.reserve(cluster.nodes.size());
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n) {
    const NodeConfig& node = cluster.nodes[n];
    NodeRow r;
    r.index = static_cast<std::int32_t>(n);
    r.name = node.name;
    r.state = std::string(states[n]);
    r.group = std::string(node_state_group(r.state));
    r.cpus = static_cast<std::int32_t>(node.cpus);
    r.gpus = static_cast<std::int32_t>(node.gpus);
    r.memory_mb = static_cast<std::int64_t>(node.memory_mb);
    r.gpu_type = node.gpu_type;
    fb_total[n] = gpu_fb_total_mib(node.gpu_type);
    out.nodes.push_back(std::move(r));
  }
  const std::vector<NodeGpuSample> samples =
      with_metrics ? gpu_use_at(state, *metrics, d.gpu_step_s, at_s) : std::vector<NodeGpuSample>{};
  set_gpu_use(out.nodes, samples, fb_total);

  // The cards: nodes by health-grid group, jobs by their rows' phase at at_s.
  Overview& o = out.overview;
  o.at_s = at_s;
  o.total_gpus = static_cast<std::int64_t>(d.total_gpus);
  o.total_nodes = static_cast<std::int64_t>(cluster.nodes.size());
  for (const NodeRow& r : out.nodes) count_node(o, r.state);
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    const std::int64_t start_s = rt.start >= 0 ? to_seconds(rt.start) : -1;
    const std::int64_t end_s = rt.end >= 0 ? to_seconds(rt.end) : -1;
    const JobPhase phase = job_phase_at(state.spec(j).submit_s, start_s, end_s, at_s);
    if (phase == JobPhase::kNotSubmitted) continue;
    // The row's GPU count as RunView reads it back (an INTEGER into 32 bits), needed only for a running job.
    const std::string_view recorded = recorded_state_name(rt);
    const bool running = phase == JobPhase::kRunning || (phase == JobPhase::kRecorded && recorded == "RUNNING");
    count_job(o, phase, recorded, running ? static_cast<std::int32_t>(job_tres(state, j).gpus) : 0);
  }
  set_gpu_use(o, samples, fb_total);

  // Partitions: the rows write_results writes, their members found as RunView finds them (the hostlist expanded).
  std::unordered_map<std::string_view, std::int32_t> by_name;
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n)
    by_name.emplace(cluster.nodes[n].name, static_cast<std::int32_t>(n));
  for (const PartitionConfig& p : cluster.partitions) {
    PartitionRow row;
    row.name = p.name;
    std::vector<std::string> names;
    names.reserve(p.nodes.size());
    for (const NodeIndex n : p.nodes) names.push_back(cluster.nodes[n].name);
    row.nodes = format_hostlist(names);
    row.is_default = p.is_default;
    row.default_time_s = p.default_time_s >= 0 ? p.default_time_s : -1;
    row.max_time_s = p.max_time_s >= 0 ? p.max_time_s : -1;
    row.state = std::string(partition_state_name(p.state));
    std::vector<std::int32_t> members;
    try {
      for (const std::string& name : expand_hostlist(row.nodes)) {
        const auto it = by_name.find(name);
        if (it != by_name.end()) members.push_back(it->second);
      }
    } catch (const std::exception&) {
      members.clear();  // as RunView: a hostlist it cannot expand has no members
    }
    set_partition_nodes(row, members, out.nodes);
    out.partitions.push_back(std::move(row));
  }
  return out;
}

std::unique_ptr<JobTable> state_job_table(const ClusterState& state, const RunRecorder& recorder) {
  // The pending reasons as RunView asks the job_reasons rows: the last change of that job id at or before a second
  // (write_results writes the recorder's changes in order, seconds truncated; SQLite walks the (job_id, time) index
  // backwards, so of changes in one second the last written answers).
  struct Reason {
    std::int64_t job_id = 0, time_s = 0;
    PendingReason reason = PendingReason::kNone;
  };
  auto reasons = std::make_shared<std::vector<Reason>>();
  reasons->reserve(recorder.reason_events().size());
  for (const ReasonEvent& e : recorder.reason_events()) {
    reasons->push_back({static_cast<std::int64_t>(state.spec(e.job).id), to_seconds(e.time), e.reason});
  }
  std::stable_sort(reasons->begin(), reasons->end(), [](const Reason& a, const Reason& b) {
    return a.job_id != b.job_id ? a.job_id < b.job_id : a.time_s < b.time_s;
  });

  // The rows in job id order (RunView reads them ORDER BY job_id; equal ids stay in table order).
  std::vector<JobIndex> order(state.job_count());
  for (JobIndex j = 0; j < state.job_count(); ++j) order[j] = j;
  const auto id_of = [&](JobIndex j) { return static_cast<std::int64_t>(state.spec(j).id); };
  if (!std::is_sorted(order.begin(), order.end(), [&](JobIndex a, JobIndex b) { return id_of(a) < id_of(b); })) {
    std::stable_sort(order.begin(), order.end(), [&](JobIndex a, JobIndex b) { return id_of(a) < id_of(b); });
  }
  auto table = std::make_unique<JobTable>();
  std::size_t name_bytes = 0;
  for (JobIndex j = 0; j < state.job_count(); ++j) name_bytes += state.spec(j).name.size();
  table->reserve(state.job_count(), name_bytes + 16 * state.job_count());  // node lists: "gpu[0001-0004]" or so
  const HostlistFormatter node_names = node_list_formatter(state);
  const std::vector<PartitionConfig>& partitions = state.config().partitions;
  std::string node_list;
  for (const JobIndex j : order) {
    // The jobs row write_results writes (results_store.cpp) as RunView reads it back: NULLs as -1 or "".
    const JobSpec& spec = state.spec(j);
    const JobRuntime& rt = state.job(j);
    const JobTres tres = job_tres(state, j);
    JobRecord r;
    r.job_id = id_of(j);
    r.name = spec.name;
    r.user = spec.user;
    r.account = spec.account;
    r.partition = partitions[rt.partition].name;
    r.qos = spec.qos.empty() ? std::string_view("normal") : std::string_view(spec.qos);
    r.submit_s = spec.submit_s;
    r.start_s = rt.start >= 0 ? to_seconds(rt.start) : -1;
    r.end_s = rt.end >= 0 ? to_seconds(rt.end) : -1;
    r.state = recorded_state_name(rt);
    // INTEGER columns read back into 32 bits.
    r.nodes = static_cast<std::int32_t>(tres.nodes);
    r.cpus = static_cast<std::int32_t>(tres.cpus);
    r.gpus = static_cast<std::int32_t>(tres.gpus);
    r.time_limit_s = rt.time_limit_s;
    node_list.clear();
    if (rt.start >= 0) node_list = job_node_list(state, j, node_names);
    r.node_list = node_list;
    r.priority = rt.priority;
    if (rt.state == JobState::kPending || rt.rejected) r.reason = pending_reason_name(rt.reason);
    table->add(r);
  }
  JobTable::ReasonAt reason_at;
  if (!reasons->empty()) {
    reason_at = [reasons](std::int64_t job_id, std::int64_t at_s) -> std::string {
      const auto it = std::upper_bound(reasons->begin(), reasons->end(), std::pair{job_id, at_s},
                                       [](const std::pair<std::int64_t, std::int64_t>& key, const Reason& r) {
                                         return key.first != r.job_id ? key.first < r.job_id : key.second < r.time_s;
                                       });
      if (it == reasons->begin() || std::prev(it)->job_id != job_id) return "";
      return std::string(pending_reason_name(std::prev(it)->reason));
    };
  }
  table->finish(std::move(reason_at));
  return table;
}

JobGpuPlacement::JobGpuPlacement(const ClusterState& state, SimTime horizon) {
  const GpuBinding binding(state, horizon);
  // The rows write_results writes: the discarded runs, then each started job's current run; one per node with GPUs.
  const auto add = [&](JobIndex j, SimTime start, std::uint32_t offset, std::span<const NodeAllocation> alloc) {
    Run run{static_cast<std::int64_t>(state.spec(j).id), to_seconds(start), static_cast<std::uint32_t>(nodes_.size()),
            0};
    for (std::size_t k = 0; k < alloc.size(); ++k) {
      if (alloc[k].gpus == 0) continue;
      nodes_.push_back(static_cast<std::int32_t>(alloc[k].node));
      masks_.push_back(binding.mask_at(offset + k));
      ++run.count;
    }
    if (run.count > 0) runs_.push_back(run);
  };
  for (const PastRun& run : state.past_runs()) add(run.job, run.start, run.alloc_offset, state.allocation(run));
  for (JobIndex j = 0; j < state.job_count(); ++j) {
    const JobRuntime& rt = state.job(j);
    if (rt.start >= 0) add(j, rt.start, rt.alloc_offset, state.allocation(j));
  }
  std::stable_sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) {
    return a.job_id != b.job_id ? a.job_id < b.job_id : a.start_s < b.start_s;
  });
}

std::vector<std::pair<std::int32_t, std::string>> JobGpuPlacement::job_gpus(std::int64_t job_id,
                                                                            std::int64_t start_s) const {
  // RunView: SELECT node_index, gpus FROM job_gpus WHERE job_id = ? AND start_time = ? ORDER BY node_index.
  std::vector<std::pair<std::int32_t, std::uint64_t>> rows;
  auto it = std::lower_bound(runs_.begin(), runs_.end(), std::pair{job_id, start_s},
                             [](const Run& r, const std::pair<std::int64_t, std::int64_t>& key) {
                               return r.job_id != key.first ? r.job_id < key.first : r.start_s < key.second;
                             });
  for (; it != runs_.end() && it->job_id == job_id && it->start_s == start_s; ++it) {
    for (std::uint32_t k = 0; k < it->count; ++k) rows.emplace_back(nodes_[it->first + k], masks_[it->first + k]);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::int32_t, std::string>> out;
  out.reserve(rows.size());
  for (const auto& [node, mask] : rows) out.emplace_back(node, gpu_index_list(mask));
  return out;
}

StateEventLog::StateEventLog(const ClusterState& state, const RunRecorder& recorder, const FaultLog* faults,
                             const CloudLog* cloud, const JobTable& table)
    : table_(&table), job_orders_(job_event_orders(table)) {
  const auto& nodes = state.config().nodes;
  node_names_.reserve(nodes.size());
  for (const NodeConfig& node : nodes) node_names_.push_back(node.name);
  // The rows as write_results writes them (whole seconds), ordered by time as RunView reads them.
  node_rows_ = recorder.node_events();
  for (NodeEvent& e : node_rows_) e.time = to_seconds(e.time);
  std::stable_sort(node_rows_.begin(), node_rows_.end(),
                   [](const NodeEvent& a, const NodeEvent& b) { return a.time < b.time; });
  if (faults != nullptr) {
    // RunView: SELECT ... FROM faults WHERE time <= ? ORDER BY time DESC LIMIT ?, reversed. SQLite gives rows of the
    // same time in rowid order there, so reversed, later faults first: ordered here by time, then the log's order
    // backwards.
    for (std::size_t i = faults->faults.size(); i-- > 0;) {
      const FaultRecord& f = faults->faults[i];
      std::string t = f.fault_class;
      if (f.xid != 0) t += " XID " + std::to_string(f.xid);
      if (f.gpu != UINT32_MAX) t += " on GPU " + std::to_string(f.gpu);
      if (!f.cause.empty()) t += " (" + f.cause + ")";
      t += ": " + std::string(to_string(f.symptom)) + ", " + std::string(to_string(f.effect));
      const double time_s = to_seconds_f(f.time);
      faults_.push_back(Timed{time_s, EventLine{static_cast<std::int64_t>(time_s), "fault",
                                                f.node < nodes.size() ? nodes[f.node].name : "", std::move(t)}});
    }
    std::stable_sort(faults_.begin(), faults_.end(),
                     [](const Timed& a, const Timed& b) { return a.order_s < b.order_s; });
  }
  for (const PreemptionEvent& e : recorder.preemptions()) {
    const std::int64_t time_s = to_seconds(e.time);
    preemptions_.push_back(
        Timed{static_cast<double>(time_s),
              EventLine{time_s, "preemption", std::to_string(state.spec(e.job).id),
                        preemption_event_text(static_cast<std::int64_t>(state.spec(e.preemptor).id),
                                              e.requeue ? "REQUEUE" : "CANCEL", to_seconds(e.end))}});
  }
  std::stable_sort(preemptions_.begin(), preemptions_.end(),
                   [](const Timed& a, const Timed& b) { return a.order_s < b.order_s; });
  if (cloud == nullptr) return;
  // The controllers' records: written with their times to the microsecond, read WHERE time <= ? ORDER BY time DESC,
  // rowid DESC and reversed (so ties in the log's order), each line at its whole second.
  const auto add = [](std::vector<Timed>& lines, SimTime time, std::string_view kind, std::string subject,
                      std::string text) {
    const double time_s = to_seconds_f(time);
    lines.push_back(Timed{
        time_s, EventLine{static_cast<std::int64_t>(time_s), std::string(kind), std::move(subject), std::move(text)}});
  };
  for (const ScalingRecord& r : cloud->scaling) {
    const bool decision = r.action == ScalingRecord::Action::kCreate || r.action == ScalingRecord::Action::kRemove;
    add(scaling_, r.time, "scaling", nodes[r.node].name,
        scaling_event_text(to_string(r.action), decision ? static_cast<std::int64_t>(r.demand) : std::int64_t{-1}));
  }
  for (const QuotaEvent& e : cloud->quota_events) {
    add(quota_, e.time, "quota", e.user,
        quota_event_text(e.action, static_cast<std::int64_t>(e.job_id), e.spend_usd, e.projected_usd));
  }
  for (const OperationRecord& r : cloud->operations) {
    add(operations_, r.time, "operation", r.node < nodes.size() ? nodes[r.node].name : "cluster",
        operation_event_text(r.action, r.name, r.step, r.jobs_killed));
  }
  for (std::vector<Timed>* lines : {&scaling_, &quota_, &operations_}) {
    std::stable_sort(lines->begin(), lines->end(),
                     [](const Timed& a, const Timed& b) { return a.order_s < b.order_s; });
  }
}

void StateEventLog::append_last(const std::vector<Timed>& lines, std::int64_t at_s, std::size_t limit,
                                std::vector<EventLine>& out) {
  const auto end = std::upper_bound(lines.begin(), lines.end(), static_cast<double>(at_s),
                                    [](double t, const Timed& l) { return t < l.order_s; });
  const auto n = static_cast<std::size_t>(end - lines.begin());
  for (std::size_t k = n > limit ? n - limit : 0; k < n; ++k) out.push_back(lines[k].line);
}

std::vector<EventLine> StateEventLog::events(std::int64_t at_s, std::size_t limit, std::string_view kind) const {
  std::vector<EventLine> out;
  limit = std::min<std::size_t>(limit, 100000);
  if (limit == 0) return out;
  const bool all = kind.empty();
  if (all || kind == "job") append_job_events(*table_, job_orders_, at_s, limit, out);
  if (all || kind == "node") {
    // Newest first: a row of count nodes gives its changes last node first, until `limit` are taken.
    const auto before = out.size();
    auto row = std::upper_bound(node_rows_.begin(), node_rows_.end(), at_s,
                                [](std::int64_t t, const NodeEvent& e) { return t < e.time; });
    while (row != node_rows_.begin() && out.size() - before < limit) {
      --row;
      const auto [lo, hi] = node_range(row->node, row->count, node_names_.size());
      const std::string what = "now " + std::string(node_state_name(row->state));
      for (std::int64_t node = hi - 1; node >= lo && out.size() - before < limit; --node)
        out.push_back(EventLine{row->time, "node", node_names_[static_cast<std::size_t>(node)], what});
    }
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
  }
  if (all || kind == "fault") append_last(faults_, at_s, limit, out);
  if (all || kind == "preemption") append_last(preemptions_, at_s, limit, out);
  if (all || kind == "scaling") append_last(scaling_, at_s, limit, out);
  if (all || kind == "quota") append_last(quota_, at_s, limit, out);
  if (all || kind == "operation") append_last(operations_, at_s, limit, out);
  std::stable_sort(out.begin(), out.end(), [](const EventLine& a, const EventLine& b) { return a.time < b.time; });
  if (out.size() > limit) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(limit));
  return out;
}

}  // namespace gputwin
