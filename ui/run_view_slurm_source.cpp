#include "ui/run_view_slurm_source.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "model/hostlist.hpp"

namespace gputwin {
namespace {

/// The hosts of a node list read from results.sqlite; none when it is not a hostlist (a damaged results folder), as
/// RunView does for partitions and the Gantt, so one bad row does not fail every answer that lists jobs or nodes.
std::vector<std::string> hosts_of(std::string_view list) {
  try {
    return expand_hostlist(list);
  } catch (const std::exception&) {
    return {};
  }
}

/// A stable numeric id for a name (uid, gid): 10000 plus FNV-1a of the name modulo 50000.
std::int32_t name_id(std::string_view name) {
  std::uint32_t hash = 2166136261u;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return static_cast<std::int32_t>(10'000 + hash % 50'000);
}

std::string association_key(std::string_view account, std::string_view user) {
  std::string key(account);
  key += '\x1f';
  key += user;
  return key;
}

}  // namespace

std::string RunViewSlurmSource::cluster_name(std::string_view scenario) {
  std::string out;
  for (const char c : scenario) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) || c == '-' || c == '_' ? static_cast<char>(std::tolower(u)) : '-';
  }
  return out.empty() ? "gputwin" : out;
}

namespace {

SlurmRunState view_state(const RunView& view, std::int64_t at_s) {
  SlurmRunState s;
  s.info = view.info();
  s.at_s = at_s;
  s.jobs = &view.job_table();
  s.nodes = view.nodes(at_s, false);
  s.partitions = view.partitions(at_s);
  s.job_gpus = [&view](std::int64_t job_id, std::int64_t start_s) { return view.job_gpus(job_id, start_s); };
  return s;
}

}  // namespace

RunViewSlurmSource::RunViewSlurmSource(const RunView& view, std::int64_t at_s)
    : RunViewSlurmSource(view_state(view, at_s)) {}

RunViewSlurmSource::RunViewSlurmSource(SlurmRunState state) : run_(std::move(state)), at_s_(run_.at_s) {
  for (std::size_t i = 0; i < run_.nodes.size(); ++i) {
    node_index_.emplace(run_.nodes[i].name, static_cast<std::int32_t>(i));
  }
  const auto pairs = run_.jobs->account_users();
  std::set<std::string> account_names;
  for (const auto& [account, user] : pairs) account_names.insert(account);
  const std::vector<std::string> qos = run_.jobs->qos_names();  // every association may use every QOS the jobs used
  std::int32_t id = 1;
  auto add = [&](std::string account, std::string user, std::string parent, bool is_default) {
    ServedAssociation a;
    a.account = std::move(account);
    a.user = std::move(user);
    a.parent_account = std::move(parent);
    a.is_default = is_default;
    a.id = id++;
    a.qos = qos;
    association_ids_.emplace(association_key(a.account, a.user), a.id);
    associations_.push_back(std::move(a));
  };
  add("root", "", "", false);
  for (const std::string& account : account_names) {
    if (account != "root") add(account, "", "root", false);
  }
  std::set<std::string> users_seen;
  for (const auto& [account, user] : pairs) {
    // A user's first account (in name order) is their default, as sacctmgr's DefaultAccount.
    add(account, user, "", users_seen.insert(user).second);
  }
}

SlurmShapeContext RunViewSlurmSource::context() const {
  SlurmShapeContext c;
  c.cluster = cluster_name(run_.info.scenario);
  c.epoch_unix_s = run_.info.epoch_unix_s != 0 ? run_.info.epoch_unix_s : kDefaultEpochUnixS;
  c.now_s = at_s_;
  return c;
}

ServedJob RunViewSlurmSource::slurm_job(JobRow row) const {
  ServedJob job;
  if (!row.node_list.empty()) job.node_names = hosts_of(row.node_list);
  std::vector<std::pair<std::int32_t, std::string>> placement;
  if (row.start_s >= 0 && row.gpus > 0) placement = run_.job_gpus(row.job_id, row.start_s);
  for (const std::string& name : job.node_names) {
    const auto it = node_index_.find(name);
    const NodeRow* node = it == node_index_.end() ? nullptr : &run_.nodes[static_cast<std::size_t>(it->second)];
    job.node_cpus.push_back(node != nullptr ? node->cpus : 0);
    if (node != nullptr && job.gpu_type.empty()) job.gpu_type = node->gpu_type;
    std::string indices;
    if (node != nullptr) {
      for (const auto& [index, gpus] : placement) {
        if (index == node->index) indices = gpus;
      }
    }
    job.gpu_indices.push_back(std::move(indices));
  }
  job.user_id = name_id(row.user);
  job.group_id = name_id(row.account);
  const auto assoc = association_ids_.find(association_key(row.account, row.user));
  job.association_id = assoc == association_ids_.end() ? 0 : assoc->second;
  job.row = std::move(row);
  return job;
}

std::vector<ServedJob> RunViewSlurmSource::controller_jobs() const {
  std::vector<ServedJob> jobs;
  for (JobRow& row : run_.jobs->controller_jobs(at_s_, kMinJobAgeS)) jobs.push_back(slurm_job(std::move(row)));
  return jobs;
}

std::optional<ServedJob> RunViewSlurmSource::controller_job(std::int64_t job_id) const {
  auto row = run_.jobs->job(job_id, at_s_);
  if (!row || row->state.empty() || row->state == "REJECTED") return std::nullopt;  // refused at submit
  if (row->end_s >= 0 && at_s_ - row->end_s > kMinJobAgeS) return std::nullopt;     // purged from slurmctld
  return slurm_job(std::move(*row));
}

std::vector<ServedNode> RunViewSlurmSource::nodes() const {
  std::vector<ServedNode> nodes;
  std::vector<NodeRow> rows = run_.nodes;
  nodes.reserve(rows.size());
  for (NodeRow& row : rows) {
    ServedNode node;
    node.row = std::move(row);
    nodes.push_back(std::move(node));
  }
  // Partitions holding each node.
  for (const PartitionRow& p : run_.partitions) {
    for (const std::string& name : hosts_of(p.nodes)) {
      const auto it = node_index_.find(name);
      if (it != node_index_.end()) nodes[static_cast<std::size_t>(it->second)].partitions.push_back(p.name);
    }
  }
  // What running jobs hold on each node: their CPUs spread evenly, their GPUs with the placement when stored.
  std::vector<std::vector<std::string>> gpu_lists(nodes.size());
  for (const ServedJob& job : controller_jobs()) {
    if (job.row.state != "RUNNING" || job.node_names.empty()) continue;
    const auto count = static_cast<std::int32_t>(job.node_names.size());
    for (std::int32_t i = 0; i < count; ++i) {
      const auto it = node_index_.find(job.node_names[static_cast<std::size_t>(i)]);
      if (it == node_index_.end()) continue;
      ServedNode& node = nodes[static_cast<std::size_t>(it->second)];
      node.alloc_cpus += job.row.cpus / count + (i < job.row.cpus % count ? 1 : 0);
      node.alloc_gpus += job.row.gpus / count + (i < job.row.gpus % count ? 1 : 0);
      node.last_busy_s = at_s_;
      if (!job.gpu_indices[static_cast<std::size_t>(i)].empty()) {
        gpu_lists[static_cast<std::size_t>(it->second)].push_back(job.gpu_indices[static_cast<std::size_t>(i)]);
      }
    }
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::string joined;
    for (const std::string& list : gpu_lists[n]) joined += (joined.empty() ? "" : ",") + list;
    nodes[n].alloc_gpu_indices = std::move(joined);
  }
  return nodes;
}

std::vector<PartitionRow> RunViewSlurmSource::partitions() const {
  return run_.partitions;
}

std::vector<ServedJob> RunViewSlurmSource::accounting_jobs(std::int64_t from_s, std::int64_t to_s,
                                                           std::size_t max_jobs) const {
  std::vector<ServedJob> jobs;
  for (JobRow& row : run_.jobs->jobs_between(at_s_, from_s, to_s, max_jobs)) jobs.push_back(slurm_job(std::move(row)));
  return jobs;
}

std::optional<ServedJob> RunViewSlurmSource::accounting_job(std::int64_t job_id) const {
  auto row = run_.jobs->job(job_id, at_s_);
  if (!row || row->state.empty() || row->state == "REJECTED") return std::nullopt;  // refused at submit
  return slurm_job(std::move(*row));
}

std::vector<ServedQos> RunViewSlurmSource::qos() const {
  std::vector<ServedQos> out;
  std::int32_t id = 1;
  for (const std::string& name : run_.jobs->qos_names()) {
    ServedQos q;
    q.name = name;
    q.id = id++;
    out.push_back(std::move(q));
  }
  return out;
}

std::vector<ServedAccount> RunViewSlurmSource::accounts() const {
  std::vector<ServedAccount> out;
  for (const ServedAssociation& a : associations_) {
    if (a.user.empty()) out.push_back({a.account, a.account, a.account});
  }
  std::sort(out.begin(), out.end(), [](const ServedAccount& a, const ServedAccount& b) { return a.name < b.name; });
  return out;
}

std::vector<ServedAssociation> RunViewSlurmSource::associations() const {
  return associations_;
}

SlurmDiagCounts RunViewSlurmSource::diag() const {
  JobQuery query;
  query.at_s = at_s_;
  query.limit = 0;
  const JobPage page = run_.jobs->jobs(query);
  const auto count = [&](JobFilter f) { return static_cast<std::int64_t>(page.counts[static_cast<std::size_t>(f)]); };
  SlurmDiagCounts d;
  d.jobs_pending = count(JobFilter::kPending);
  d.jobs_running = count(JobFilter::kRunning);
  d.jobs_completed = count(JobFilter::kCompleted);
  d.jobs_failed = count(JobFilter::kFailed);
  d.jobs_submitted = count(JobFilter::kAll);
  d.jobs_started = d.jobs_running + d.jobs_completed + d.jobs_failed;
  return d;
}

}  // namespace gputwin
