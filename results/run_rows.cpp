#include "results/run_rows.hpp"

#include <charconv>

#include "engine/rng.hpp"

namespace gputwin {
namespace {

// Appends `v` as a CSV field: quoted, with quotes doubled, when it holds a comma, a quote or a newline.
void append_csv_field(std::string& out, std::string_view v) {
  if (v.find_first_of(",\"\n") == std::string_view::npos) {
    out += v;
    return;
  }
  out += '"';
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

// Appends a number in decimal.
template <typename Int>
void append_int(std::string& out, Int v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

// Folds `v` into `hash`: a boost-style combine, then splitmix64's finaliser over the running value.
std::uint64_t mix(std::uint64_t hash, std::uint64_t v) {
  return splitmix64_mix(hash ^ (v + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2)));
}

}  // namespace

JobRunRecord job_run_record(const ClusterState& state, JobIndex j, std::vector<NodeIndex>& nodes) {
  const JobRuntime& rt = state.job(j);
  JobRunRecord r;
  r.start = rt.start;
  r.end = rt.end;
  r.time_limit_s = rt.time_limit_s;
  r.tres = job_tres(state, j);
  r.partition = rt.partition;
  r.priority = rt.priority;
  r.state = rt.state;
  r.reason = rt.reason;
  r.rejected = rt.rejected;
  if (rt.start >= 0) {
    for (const NodeAllocation& a : state.allocation(j)) nodes.push_back(a.node);
  }
  return r;
}

std::uint64_t fold_job_run_record(std::uint64_t hash, const JobRunRecord& r, std::span<const NodeIndex> nodes) {
  for (const std::uint64_t v :
       {static_cast<std::uint64_t>(r.start), static_cast<std::uint64_t>(r.end),
        static_cast<std::uint64_t>(r.time_limit_s), r.tres.nodes, r.tres.cpus, r.tres.gpus, std::uint64_t{r.partition},
        std::uint64_t{r.priority}, static_cast<std::uint64_t>(r.state), static_cast<std::uint64_t>(r.reason),
        std::uint64_t{r.rejected}, std::uint64_t{nodes.size()}}) {
    hash = mix(hash, v);
  }
  for (const NodeIndex n : nodes) hash = mix(hash, n);
  return hash;
}

JobRowFormat::JobRowFormat(const ClusterConfig& config)
    : node_names_(node_list_formatter(config)), topology_(config.topology.slurm) {
  for (const PartitionConfig& p : config.partitions) partition_names_.push_back(p.name);
}

std::string JobRowFormat::node_list(std::span<const NodeIndex> nodes) const {
  return nodes.empty() ? std::string() : node_names_.format(nodes);
}

void JobRowFormat::append_csv_line(std::string& out, const JobSpec& spec, const JobRunRecord& r,
                                   std::string_view node_list) const {
  append_int(out, spec.id);
  out += ',';
  append_csv_field(out, spec.name);
  out += ',';
  append_csv_field(out, spec.user);
  out += ',';
  append_csv_field(out, spec.account);
  out += ',';
  append_csv_field(out, partition_names_[r.partition]);
  out += ',';
  append_int(out, spec.submit_s);
  out += ',';
  if (r.start >= 0) append_int(out, to_seconds(r.start));
  out += ',';
  if (r.end >= 0) append_int(out, to_seconds(r.end));
  out += ',';
  out += recorded_state_name(r.state, r.rejected);
  out += ',';
  append_int(out, r.tres.nodes);
  out += ',';
  append_int(out, r.tres.cpus);
  out += ',';
  append_int(out, r.tres.gpus);
  out += ',';
  append_int(out, r.time_limit_s);
  out += ',';
  append_csv_field(out, node_list);
  out += ',';
  append_int(out, r.priority);
  out += '\n';
}

void JobRowFormat::add_jobs_row(results_sqlite::BatchInsert& ins, const JobSpec& spec, const JobRunRecord& r,
                                std::string_view node_list, std::span<const NodeIndex> nodes) const {
  ins.int64(1, static_cast<sqlite3_int64>(spec.id));
  ins.text_ref(2, spec.name);
  ins.text_ref(3, spec.user);
  ins.text_ref(4, spec.account);
  ins.text_ref(5, partition_names_[r.partition]);
  ins.text_ref(6, spec.qos.empty() ? std::string_view("normal") : std::string_view(spec.qos));
  ins.int64(7, spec.submit_s);
  if (r.start >= 0)
    ins.int64(8, to_seconds(r.start));
  else
    ins.null(8);
  if (r.end >= 0)
    ins.int64(9, to_seconds(r.end));
  else
    ins.null(9);
  ins.text_ref(10, recorded_state_name(r.state, r.rejected));
  ins.int64(11, static_cast<sqlite3_int64>(r.tres.nodes));
  ins.int64(12, static_cast<sqlite3_int64>(r.tres.cpus));
  ins.int64(13, static_cast<sqlite3_int64>(r.tres.gpus));
  ins.int64(14, r.time_limit_s);
  if (r.start >= 0)
    ins.text(15, node_list);
  else
    ins.null(15);
  ins.int64(16, r.priority);
  if (r.state == JobState::kPending || r.rejected)
    ins.text_ref(17, pending_reason_name(r.reason));
  else
    ins.null(17);
  if (r.start >= 0)
    ins.int64(18, to_seconds(r.start) - spec.submit_s);
  else
    ins.null(18);
  if (r.end >= 0 && r.start >= 0)
    ins.int64(19, to_seconds(r.end - r.start));
  else
    ins.null(19);
  if (spec.array_job_id != 0) {
    ins.int64(20, static_cast<sqlite3_int64>(spec.array_job_id));
    ins.int64(21, spec.array_task_id);
  } else {
    ins.null(20);
    ins.null(21);
  }
  ins.int64(22, spec.run_time_s);
  if (r.start >= 0 && topology_.kind != TopologyKind::kFlat)
    ins.int64(23, leaves_spanned(topology_, nodes));
  else
    ins.null(23);
}

void add_node_event_row(results_sqlite::BatchInsert& ins, const NodeEvent& e) {
  ins.int64(1, to_seconds(e.time));
  ins.int64(2, e.node);
  ins.text_ref(3, node_state_name(e.state));
  ins.int64(4, e.count);
  ins.end_row();
}

void add_reason_row(results_sqlite::BatchInsert& ins, const ReasonEvent& e, std::uint64_t job_id) {
  ins.int64(1, to_seconds(e.time));
  ins.int64(2, static_cast<sqlite3_int64>(job_id));
  ins.text_ref(3, pending_reason_name(e.reason));
  ins.end_row();
}

std::uint64_t fold_node_event(std::uint64_t hash, const NodeEvent& e) {
  hash = mix(hash, static_cast<std::uint64_t>(e.time));
  hash = mix(hash, e.node);
  hash = mix(hash, static_cast<std::uint64_t>(e.state));
  return mix(hash, e.count);
}

std::uint64_t fold_reason_event(std::uint64_t hash, const ReasonEvent& e) {
  hash = mix(hash, static_cast<std::uint64_t>(e.time));
  hash = mix(hash, e.job);
  return mix(hash, static_cast<std::uint64_t>(e.reason));
}

}  // namespace gputwin
