#include "ui/slurm_shapes.hpp"

#include <algorithm>

#include "model/hostlist.hpp"

namespace gputwin {
namespace {

using V = SlurmApiVersion;

/// slurmrestd's {set, infinite, number} for a value that is set.
SlurmJson number(std::int64_t value) {
  return {{"set", true}, {"infinite", false}, {"number", value}};
}
SlurmJson real_number(double value) {
  return {{"set", true}, {"infinite", false}, {"number", value}};
}
/// ... for a value that is not set.
SlurmJson unset() {
  return {{"set", false}, {"infinite", false}, {"number", 0}};
}
/// ... for a limit that is unlimited.
SlurmJson infinite() {
  return {{"set", false}, {"infinite", true}, {"number", 0}};
}
SlurmJson infinite_real() {
  return {{"set", false}, {"infinite", true}, {"number", 0.0}};
}
/// ... for a limit: infinite when negative.
SlurmJson limit(std::int64_t value) {
  return value < 0 ? infinite() : number(value);
}

SlurmJson empty_array() {
  return SlurmJson::array();
}

/// Minutes of a time limit in seconds, rounded up as Slurm shows limits; infinite when there is none.
SlurmJson time_limit_minutes(std::int64_t seconds) {
  return seconds <= 0 ? infinite() : number((seconds + 59) / 60);
}

/// "512M" / "2G" / "1T": a memory size in MB as Slurm's TRES strings print it.
std::string memory_text(std::int64_t mb) {
  if (mb > 0 && mb % (1024 * 1024) == 0) return std::to_string(mb / (1024 * 1024)) + "T";
  if (mb > 0 && mb % 1024 == 0) return std::to_string(mb / 1024) + "G";
  return std::to_string(mb) + "M";
}

/// "gpu:h100" or "gpu" for a GRES name with its type.
std::string gres_name(const std::string& gpu_type) {
  return gpu_type.empty() ? "gpu" : "gpu:" + gpu_type;
}

bool started(const JobRow& row) {
  return row.start_s >= 0;
}

/// exit_code / derived_exit_code of a job in `state`, as slurmctld fills them.
SlurmJson exit_code(std::string_view state) {
  SlurmJson code;
  if (state == "TIMEOUT" || state == "CANCELLED" || state == "PREEMPTED" || state == "DEADLINE") {
    code["status"] = {"SIGNALED"};
    code["return_code"] = unset();
    code["signal"] = {{"id", number(15)}, {"name", "TERM"}};
  } else if (state == "FAILED" || state == "NODE_FAIL" || state == "OUT_OF_MEMORY" || state == "BOOT_FAIL") {
    code["status"] = {"ERROR"};
    code["return_code"] = number(1);
    code["signal"] = {{"id", unset()}, {"name", ""}};
  } else {
    code["status"] = {"SUCCESS"};
    code["return_code"] = number(0);
    code["signal"] = {{"id", unset()}, {"name", ""}};
  }
  return code;
}

/// state_reason of a job: its pending reason, else what slurmctld sets when it ends.
std::string state_reason(const JobRow& row) {
  if (row.state == "PENDING") return row.reason.empty() ? "None" : row.reason;
  if (row.state == "FAILED") return "NonZeroExitCode";
  if (row.state == "TIMEOUT") return "TimeLimit";
  if (row.state == "NODE_FAIL") return "NodeDown";
  if (row.state == "OUT_OF_MEMORY") return "OutOfMemory";
  return "None";
}

/// "cpu=8,node=1,billing=8,gres/gpu=4": a job's TRES (memory is not modelled per job).
std::string job_tres(const JobRow& row) {
  std::string out = "cpu=" + std::to_string(row.cpus) + ",node=" + std::to_string(std::max(row.nodes, 1)) +
                    ",billing=" + std::to_string(row.cpus);
  if (row.gpus > 0) out += ",gres/gpu=" + std::to_string(row.gpus);
  return out;
}

/// tres.allocated / tres.requested entries of a slurmdbd job.
SlurmJson tres_list(const JobRow& row, bool with_energy) {
  SlurmJson list = SlurmJson::array();
  auto add = [&](const char* type, const char* name, int id, std::int64_t count) {
    list.push_back({{"type", type}, {"name", name}, {"id", id}, {"count", count}});
  };
  add("cpu", "", 1, row.cpus);
  if (with_energy) add("energy", "", 3, -2);
  add("node", "", 4, std::max(row.nodes, 1));
  add("billing", "", 5, row.cpus);
  if (row.gpus > 0) add("gres", "gpu", 1001, row.gpus);
  return list;
}

/// job_resources of a started job: its nodes, with the job's CPUs spread evenly and the first cores allocated on
/// each node (the simulator does not place cores; one socket per node).
SlurmJson job_resources(const ServedJob& job) {
  const JobRow& row = job.row;
  SlurmJson allocation = SlurmJson::array();
  const auto nodes = static_cast<std::int32_t>(job.node_names.size());
  for (std::int32_t i = 0; i < nodes; ++i) {
    const std::int32_t per_node = row.cpus / nodes + (i < row.cpus % nodes ? 1 : 0);
    const std::int32_t node_cpus = i < static_cast<std::int32_t>(job.node_cpus.size()) ? job.node_cpus[i] : per_node;
    SlurmJson cores = SlurmJson::array();
    for (std::int32_t c = 0; c < node_cpus; ++c) {
      cores.push_back({{"index", c}, {"status", {c < per_node ? "ALLOCATED" : "UNALLOCATED"}}});
    }
    allocation.push_back({{"index", i},
                          {"name", job.node_names[i]},
                          {"cpus", {{"count", per_node}, {"used", 0}}},
                          {"memory", {{"used", 0}, {"allocated", 0}}},
                          {"sockets", SlurmJson::array({{{"index", 0}, {"cores", std::move(cores)}}})}});
  }
  SlurmJson nodes_json;
  nodes_json["count"] = nodes;
  nodes_json["select_type"] = {"ONE_ROW"};
  nodes_json["list"] = row.node_list;
  nodes_json["whole"] = false;
  nodes_json["allocation"] = std::move(allocation);
  SlurmJson out;
  out["select_type"] = {"CORE"};
  out["nodes"] = std::move(nodes_json);
  out["cpus"] = row.cpus;
  out["threads_per_core"] = unset();
  return out;
}

/// gres_detail: "gpu:h100:4(IDX:0-3)" per node.
SlurmJson gres_detail(const ServedJob& job) {
  SlurmJson out = SlurmJson::array();
  if (job.row.gpus <= 0) return out;
  for (std::size_t i = 0; i < job.node_names.size(); ++i) {
    const std::string idx = i < job.gpu_indices.size() ? job.gpu_indices[i] : "";
    const std::int64_t count = job.row.gpus / static_cast<std::int64_t>(job.node_names.size());
    out.push_back(gres_name(job.gpu_type) + ":" + std::to_string(count) + "(IDX:" + (idx.empty() ? "N/A" : idx) + ")");
  }
  return out;
}

std::string stdout_path(const JobRow& row) {
  return "/home/" + row.user + "/slurm-" + std::to_string(row.job_id) + ".out";
}

std::string submit_line(const JobRow& row) {
  std::string line = "sbatch --partition " + row.partition + " --nodes " + std::to_string(std::max(row.nodes, 1)) +
                     " --ntasks " + std::to_string(row.cpus);
  if (row.gpus > 0) line += " --gpus " + std::to_string(row.gpus);
  if (row.time_limit_s > 0) line += " --time " + std::to_string((row.time_limit_s + 59) / 60);
  return line + " --job-name " + row.name;
}

}  // namespace

std::optional<SlurmApiVersion> parse_slurm_api_version(std::string_view text) {
  if (text == "v0.0.41") return V::k41;
  if (text == "v0.0.42") return V::k42;
  if (text == "v0.0.43") return V::k43;
  if (text == "v0.0.44") return V::k44;
  return std::nullopt;
}

std::string slurm_api_version_text(SlurmApiVersion version) {
  return "v0.0." + std::to_string(static_cast<int>(version));
}

SlurmJson slurm_meta(const SlurmShapeContext& context, SlurmPlugin plugin) {
  const bool ctld = plugin == SlurmPlugin::kSlurmctld;
  SlurmJson meta;
  meta["plugin"] = {{"type", ctld ? "openapi/slurmctld" : "openapi/slurmdbd"},
                    {"name", ctld ? "Slurm OpenAPI slurmctld" : "Slurm OpenAPI slurmdbd"},
                    {"data_parser", "data_parser/" + slurm_api_version_text(context.version)},
                    {"accounting_storage", "accounting_storage/slurmdbd"}};
  meta["client"] = {{"source", "gputwin"}, {"user", context.client_user}, {"group", context.client_user}};
  meta["command"] = empty_array();
  meta["slurm"] = {{"version", {{"major", "25"}, {"micro", "0"}, {"minor", "11"}}},
                   {"release", "25.11.0"},
                   {"cluster", context.cluster}};
  return meta;
}

SlurmJson slurm_reply(const SlurmShapeContext& context, SlurmPlugin plugin, std::string_view key, SlurmJson records,
                      SlurmJson errors, SlurmJson warnings) {
  SlurmJson reply;
  if (!key.empty()) reply[std::string(key)] = std::move(records);
  const std::int64_t now = context.unix_time(context.now_s);
  if (key == "jobs" && plugin == SlurmPlugin::kSlurmctld) {
    reply["last_backfill"] = number(now);
    reply["last_update"] = number(now);
  } else if (key == "nodes" || key == "partitions" || key == "reservations") {
    reply["last_update"] = number(now);
  }
  if (key.empty()) {
    // An answer without records (an unknown node) prints errors first, as slurmrestd does.
    reply["errors"] = std::move(errors);
    reply["warnings"] = std::move(warnings);
    reply["meta"] = slurm_meta(context, plugin);
    return reply;
  }
  reply["meta"] = slurm_meta(context, plugin);
  reply["errors"] = std::move(errors);
  reply["warnings"] = std::move(warnings);
  return reply;
}

SlurmJson slurm_error(std::string_view description, int error_number, std::string_view error, std::string_view source) {
  return {{"description", description}, {"error_number", error_number}, {"error", error}, {"source", source}};
}

SlurmJson slurm_warning(std::string_view description, std::string_view source) {
  return {{"description", description}, {"source", source}};
}

SlurmJson slurm_pings(const SlurmShapeContext& context) {
  SlurmJson ping;
  ping["hostname"] = context.cluster + "-ctld";
  ping["pinged"] = "UP";
  if (context.version >= V::k42) ping["responding"] = true;
  ping["latency"] = 0;
  ping["mode"] = "primary";
  if (context.version >= V::k42) ping["primary"] = true;
  return SlurmJson::array({std::move(ping)});
}

SlurmJson slurm_diag_statistics(const SlurmShapeContext& context, const SlurmDiagCounts& counts) {
  const std::int64_t now = context.unix_time(context.now_s);
  SlurmJson s;
  s["parts_packed"] = 1;
  s["req_time"] = number(now);
  s["req_time_start"] = number(context.epoch_unix_s);
  s["server_thread_count"] = 1;
  s["agent_queue_size"] = 0;
  s["agent_count"] = 0;
  s["agent_thread_count"] = 0;
  s["dbd_agent_queue_size"] = 0;
  s["gettimeofday_latency"] = 0;
  for (const char* key :
       {"schedule_cycle_max", "schedule_cycle_last", "schedule_cycle_sum", "schedule_cycle_total",
        "schedule_cycle_mean", "schedule_cycle_mean_depth", "schedule_cycle_per_minute", "schedule_cycle_depth"}) {
    s[key] = 0;
  }
  s["schedule_exit"] = {{"end_job_queue", 0}, {"default_queue_depth", 0}, {"max_job_start", 0},
                        {"max_rpc_cnt", 0},   {"max_sched_time", 0},      {"licenses", 0}};
  s["schedule_queue_length"] = counts.jobs_pending;
  s["jobs_submitted"] = counts.jobs_submitted;
  s["jobs_started"] = counts.jobs_started;
  s["jobs_completed"] = counts.jobs_completed;
  s["jobs_canceled"] = counts.jobs_canceled;
  s["jobs_failed"] = counts.jobs_failed;
  s["jobs_pending"] = counts.jobs_pending;
  s["jobs_running"] = counts.jobs_running;
  s["job_states_ts"] = number(now);
  for (const char* key :
       {"bf_backfilled_jobs", "bf_last_backfilled_jobs", "bf_backfilled_het_jobs", "bf_cycle_counter", "bf_cycle_mean",
        "bf_depth_mean", "bf_depth_mean_try", "bf_cycle_sum", "bf_cycle_last", "bf_cycle_max"}) {
    s[key] = 0;
  }
  s["bf_exit"] = {{"end_job_queue", 0}, {"bf_max_job_start", 0},   {"bf_max_job_test", 0},
                  {"bf_max_time", 0},   {"bf_node_space_size", 0}, {"state_changed", 0}};
  for (const char* key :
       {"bf_last_depth", "bf_last_depth_try", "bf_depth_sum", "bf_depth_try_sum", "bf_queue_len", "bf_queue_len_mean",
        "bf_queue_len_sum", "bf_table_size", "bf_table_size_sum", "bf_table_size_mean"}) {
    s[key] = 0;
  }
  s["bf_when_last_cycle"] = number(now);
  s["bf_active"] = false;
  s["rpcs_by_message_type"] = empty_array();
  s["rpcs_by_user"] = empty_array();
  s["pending_rpcs"] = empty_array();
  s["pending_rpcs_by_hostlist"] = empty_array();
  return s;
}

SlurmJson slurmctld_job(const SlurmShapeContext& c, const ServedJob& job) {
  const JobRow& r = job.row;
  const V v = c.version;
  const bool running = r.state == "RUNNING";
  const bool has_started = started(r);
  const std::int64_t submit = c.unix_time(r.submit_s);
  const std::int64_t start = has_started ? c.unix_time(r.start_s) : 0;
  std::int64_t end = 0;
  if (r.end_s >= 0) {
    end = c.unix_time(r.end_s);
  } else if (running && r.time_limit_s > 0) {
    end = start + r.time_limit_s;  // slurmctld shows the expected end of a running job
  }
  const std::string first_node = job.node_names.empty() ? "" : job.node_names.front();
  const std::int32_t node_count = std::max(r.nodes, 1);
  const std::string tres = job_tres(r);

  SlurmJson j;
  j["account"] = r.account;
  j["accrue_time"] = number(submit);
  j["admin_comment"] = "";
  j["allocating_node"] = "login";
  j["array_job_id"] = number(0);
  j["array_task_id"] = unset();
  j["array_max_tasks"] = number(0);
  j["array_task_string"] = "";
  j["association_id"] = job.association_id;
  j["batch_features"] = "";
  j["batch_flag"] = true;
  j["batch_host"] = has_started ? first_node : "";
  j["flags"] = has_started ? SlurmJson{"ACCRUE_COUNT_CLEARED", "JOB_WAS_RUNNING"} : SlurmJson::array();
  j["burst_buffer"] = "";
  j["burst_buffer_state"] = "";
  j["cluster"] = c.cluster;
  j["cluster_features"] = "";
  j["command"] = "";
  j["comment"] = "";
  j["container"] = "";
  j["container_id"] = "";
  j["contiguous"] = false;
  j["core_spec"] = 0;
  j["thread_spec"] = 32766;
  j["cores_per_socket"] = unset();
  j["billable_tres"] = real_number(r.cpus);
  j["cpus_per_task"] = number(1);
  j["cpu_frequency_minimum"] = unset();
  j["cpu_frequency_maximum"] = unset();
  j["cpu_frequency_governor"] = unset();
  j["cpus_per_tres"] = "";
  j["cron"] = "";
  j["deadline"] = number(0);
  j["delay_boot"] = number(0);
  j["dependency"] = "";
  j["derived_exit_code"] = exit_code(r.state);
  j["eligible_time"] = number(submit);
  j["end_time"] = number(end);
  j["excluded_nodes"] = "";
  j["exit_code"] = exit_code(r.state);
  j["extra"] = "";
  j["failed_node"] = "";
  j["features"] = "";
  j["federation_origin"] = "";
  j["federation_siblings_active"] = "";
  j["federation_siblings_viable"] = "";
  j["gres_detail"] = has_started ? gres_detail(job) : SlurmJson::array();
  j["group_id"] = job.group_id;
  j["group_name"] = r.account;
  j["het_job_id"] = number(0);
  j["het_job_id_set"] = "";
  j["het_job_offset"] = number(0);
  j["job_id"] = r.job_id;
  j["job_resources"] = has_started ? job_resources(job) : SlurmJson();
  j["job_size_str"] = empty_array();
  j["job_state"] = {r.state};
  j["last_sched_evaluation"] = number(has_started ? start : submit);
  j["licenses"] = "";
  if (v >= V::k43) j["licenses_allocated"] = "";
  j["mail_type"] = empty_array();
  j["mail_user"] = r.user;
  j["max_cpus"] = number(0);
  j["max_nodes"] = number(0);
  j["mcs_label"] = "";
  j["memory_per_tres"] = "";
  j["name"] = r.name;
  j["network"] = "";
  j["nodes"] = r.node_list;
  j["nice"] = 0;
  j["tasks_per_core"] = infinite();
  j["tasks_per_tres"] = number(0);
  j["tasks_per_node"] = number(0);
  j["tasks_per_socket"] = infinite();
  j["tasks_per_board"] = number(0);
  j["cpus"] = number(r.cpus);
  j["node_count"] = number(node_count);
  j["tasks"] = number(r.cpus);
  j["partition"] = r.partition;
  j["prefer"] = "";
  j["memory_per_cpu"] = unset();
  j["memory_per_node"] = unset();
  j["minimum_cpus_per_node"] = number(std::max(1, r.cpus / node_count));
  j["minimum_tmp_disk_per_node"] = number(0);
  j["power"] = {{"flags", empty_array()}};
  j["preempt_time"] = number(0);
  j["preemptable_time"] = number(0);
  j["pre_sus_time"] = number(0);
  j["hold"] = false;
  j["priority"] = number(r.priority);
  if (v >= V::k42) j["priority_by_partition"] = empty_array();
  j["profile"] = {"NOT_SET"};
  j["qos"] = r.qos;
  j["reboot"] = false;
  j["required_nodes"] = "";
  if (v >= V::k42) {
    j["required_switches"] = 0;
  } else {
    j["minimum_switches"] = 0;
  }
  j["requeue"] = true;
  j["resize_time"] = number(0);
  j["restart_cnt"] = 0;
  j["resv_name"] = "";
  j["scheduled_nodes"] = "";
  if (v >= V::k43) j["segment_size"] = 0;
  j["selinux_context"] = "";
  j["shared"] = empty_array();
  if (v == V::k41) {
    j["exclusive"] = empty_array();
    j["oversubscribe"] = true;
    j["show_flags"] = empty_array();
  }
  if (v >= V::k44) {
    j["step_id"] = {
        {"sluid", ""}, {"job_id", number(r.job_id)}, {"step_het_component", unset()}, {"step_id", "entire"}};
  }
  j["sockets_per_board"] = 0;
  j["sockets_per_node"] = unset();
  j["start_time"] = number(start);
  j["state_description"] = "";
  j["state_reason"] = state_reason(r);
  j["standard_input"] = "/dev/null";
  j["standard_output"] = "slurm-%j.out";
  j["standard_error"] = "";
  if (v >= V::k43) {
    j["stdin_expanded"] = "/dev/null";
    j["stdout_expanded"] = stdout_path(r);
    j["stderr_expanded"] = "";
  }
  j["submit_time"] = number(submit);
  if (v >= V::k44) j["submit_line"] = submit_line(r);
  j["suspend_time"] = number(0);
  j["system_comment"] = "";
  j["time_limit"] = time_limit_minutes(r.time_limit_s);
  j["time_minimum"] = number(0);
  j["threads_per_core"] = unset();
  j["tres_bind"] = "";
  j["tres_freq"] = "";
  j["tres_per_job"] = r.gpus > 0 ? "gres/gpu:" + std::to_string(r.gpus) : "";
  j["tres_per_node"] = "";
  j["tres_per_socket"] = "";
  j["tres_per_task"] = "";
  j["tres_req_str"] = tres;
  j["tres_alloc_str"] = has_started ? tres : "";
  j["user_id"] = job.user_id;
  j["user_name"] = r.user;
  j["maximum_switch_wait_time"] = 0;
  j["wckey"] = "";
  j["current_working_directory"] = "/home/" + r.user;
  return j;
}

SlurmJson slurmdbd_job(const SlurmShapeContext& c, const ServedJob& job) {
  const JobRow& r = job.row;
  const V v = c.version;
  const bool has_started = started(r);
  const std::int64_t start = has_started ? c.unix_time(r.start_s) : 0;
  const std::int64_t end = r.end_s >= 0 ? c.unix_time(r.end_s) : 0;
  const std::int64_t elapsed = has_started ? (r.end_s >= 0 ? r.end_s : c.now_s) - r.start_s : 0;
  auto cpu_time = [] { return SlurmJson{{"seconds", 0}, {"microseconds", 0}}; };

  SlurmJson j;
  j["account"] = r.account;
  j["comment"] = {{"administrator", ""}, {"job", ""}, {"system", ""}};
  j["allocation_nodes"] = has_started ? std::max(r.nodes, 1) : 0;
  j["array"] = {
      {"job_id", 0}, {"limits", {{"max", {{"running", {{"tasks", 0}}}}}}}, {"task_id", unset()}, {"task", ""}};
  j["association"] = {
      {"account", r.account}, {"cluster", c.cluster}, {"partition", ""}, {"user", r.user}, {"id", job.association_id}};
  j["block"] = "";
  j["cluster"] = c.cluster;
  j["constraints"] = "";
  j["container"] = "";
  j["derived_exit_code"] = exit_code(r.state);
  SlurmJson time;
  time["elapsed"] = std::max<std::int64_t>(elapsed, 0);
  time["eligible"] = c.unix_time(r.submit_s);
  time["end"] = end;
  time["planned"] = number(has_started ? r.start_s - r.submit_s : c.now_s - r.submit_s);
  time["start"] = start;
  time["submission"] = c.unix_time(r.submit_s);
  time["suspended"] = 0;
  time["system"] = cpu_time();
  time["limit"] = time_limit_minutes(r.time_limit_s);
  time["total"] = cpu_time();
  time["user"] = cpu_time();
  j["time"] = std::move(time);
  j["exit_code"] = exit_code(r.state);
  j["extra"] = "";
  j["failed_node"] = "";
  j["flags"] = has_started ? SlurmJson{"STARTED_ON_SCHEDULE", "START_RECEIVED"} : SlurmJson::array();
  j["group"] = r.account;
  j["het"] = {{"job_id", 0}, {"job_offset", unset()}};
  j["job_id"] = r.job_id;
  j["name"] = r.name;
  j["licenses"] = "";
  j["mcs"] = {{"label", ""}};
  j["nodes"] = has_started ? r.node_list : "None assigned";
  j["partition"] = r.partition;
  j["hold"] = false;
  j["priority"] = number(r.priority);
  j["qos"] = r.qos;
  if (v >= V::k42) j["qosreq"] = "";
  j["required"] = {{"CPUs", r.cpus}, {"memory_per_cpu", unset()}, {"memory_per_node", unset()}};
  j["kill_request_user"] = "";
  if (v >= V::k42) j["restart_cnt"] = 0;
  if (v >= V::k43) {
    j["reservation"] = {{"id", 0}, {"name", ""}, {"requested", ""}};
    j["script"] = "";
    j["segment_size"] = 0;
  } else {
    j["reservation"] = {{"id", 0}, {"name", ""}};
    j["script"] = "";
  }
  j["stdin_expanded"] = "/dev/null";
  j["stdout_expanded"] = stdout_path(r);
  j["stderr_expanded"] = "";
  j["stdout"] = "slurm-%j.out";
  j["stderr"] = "";
  j["stdin"] = "/dev/null";
  j["state"] = {{"current", {r.state}}, {"reason", state_reason(r)}};
  SlurmJson steps = SlurmJson::array();
  if (has_started) {
    SlurmJson step;
    SlurmJson step_time;
    step_time["elapsed"] = std::max<std::int64_t>(elapsed, 0);
    step_time["end"] = number(end);
    step_time["start"] = number(start);
    step_time["suspended"] = 0;
    step_time["system"] = cpu_time();
    if (v >= V::k43) step_time["limit"] = infinite();
    step_time["total"] = cpu_time();
    step_time["user"] = cpu_time();
    step["time"] = std::move(step_time);
    step["exit_code"] = exit_code(r.state);
    step["nodes"] = {{"count", std::max(r.nodes, 1)},
                     {"range", r.node_list},
                     {"list", job.node_names.empty() ? SlurmJson::array() : SlurmJson(job.node_names)}};
    step["tasks"] = {{"count", 1}};
    step["pid"] = "";
    step["CPU"] = {{"requested_frequency", {{"min", number(0)}, {"max", number(0)}}}, {"governor", "0"}};
    step["kill_request_user"] = "";
    step["state"] = {r.state};
    step["statistics"] = {{"CPU", {{"actual_frequency", 0}}}, {"energy", {{"consumed", number(0)}}}};
    SlurmJson step_name = {{"id", std::to_string(r.job_id) + ".batch"}, {"name", "batch"}};
    if (v >= V::k43) {
      for (const char* key : {"stderr", "stdin", "stdout", "stderr_expanded", "stdin_expanded", "stdout_expanded"}) {
        step_name[key] = "";
      }
    }
    step["step"] = std::move(step_name);
    step["task"] = {{"distribution", "Unknown"}};
    SlurmJson none = {
        {"max", empty_array()}, {"min", empty_array()}, {"average", empty_array()}, {"total", empty_array()}};
    step["tres"] = {{"requested", none}, {"consumed", none}, {"allocated", tres_list(r, false)}};
    steps.push_back(std::move(step));
  }
  j["steps"] = std::move(steps);
  j["submit_line"] = submit_line(r);
  j["tres"] = {{"allocated", has_started ? tres_list(r, true) : SlurmJson::array()},
               {"requested", tres_list(r, false)}};
  j["used_gres"] = "";
  j["user"] = r.user;
  j["wckey"] = {{"wckey", ""}, {"flags", empty_array()}};
  j["working_directory"] = "/home/" + r.user;
  return j;
}

namespace {

/// slurmctld's state array of a node: base state plus flags.
SlurmJson node_state(const ServedNode& node) {
  const std::string& s = node.row.state;
  const char* busy = node.alloc_cpus <= 0 && node.alloc_gpus <= 0                           ? "IDLE"
                     : node.alloc_cpus >= node.row.cpus && node.alloc_gpus >= node.row.gpus ? "ALLOCATED"
                                                                                            : "MIXED";
  if (s == "IDLE" || s == "MIXED" || s == "ALLOCATED" || s == "DOWN") return {s};
  if (s == "COMPLETING") return {busy, "COMPLETING"};
  if (s == "DRAINING" || s == "DRAINED" || s == "DRAIN") return {busy, "DRAIN"};
  if (s == "FAILING" || s == "FAIL") return {busy, "DRAIN", "FAIL"};
  if (s == "REBOOTING") return {"DOWN", "REBOOT_ISSUED"};
  if (s == "POWERED_DOWN" || s == "POWERING_UP" || s == "POWERING_DOWN") return {"IDLE", s};
  return {"UNKNOWN"};
}

}  // namespace

SlurmJson slurm_node(const SlurmShapeContext& c, const ServedNode& node) {
  const NodeRow& r = node.row;
  const V v = c.version;
  SlurmJson n;
  n["architecture"] = "x86_64";
  n["burstbuffer_network_address"] = "";
  n["boards"] = 1;
  n["boot_time"] = number(c.unix_time(node.boot_s));
  if (v >= V::k43) {
    n["tls_cert_last_renewal"] = number(0);
    n["cert_flags"] = empty_array();
  }
  n["cluster_name"] = "";
  n["cores"] = r.cpus;
  n["specialized_cores"] = 0;
  n["cpu_binding"] = 0;
  n["cpu_load"] = node.alloc_cpus * 100;
  n["free_mem"] = number(r.memory_mb);
  n["cpus"] = r.cpus;
  n["effective_cpus"] = r.cpus;
  n["specialized_cpus"] = "";
  n["energy"] = {{"average_watts", 0},         {"base_consumed_energy", 0},     {"consumed_energy", 0},
                 {"current_watts", number(0)}, {"previous_consumed_energy", 0}, {"last_collected", 0}};
  n["external_sensors"] = SlurmJson::object();
  n["extra"] = "";
  n["power"] = SlurmJson::object();
  n["features"] = empty_array();
  n["active_features"] = empty_array();
  n["gpu_spec"] = "";
  const std::string gres = gres_name(r.gpu_type);
  n["gres"] = r.gpus > 0 ? gres + ":" + std::to_string(r.gpus) : "";
  n["gres_drained"] = "N/A";
  n["gres_used"] = r.gpus > 0 ? gres + ":" + std::to_string(node.alloc_gpus) +
                                    "(IDX:" + (node.alloc_gpu_indices.empty() ? "N/A" : node.alloc_gpu_indices) + ")"
                              : "";
  n["instance_id"] = "";
  n["instance_type"] = "";
  n["last_busy"] = number(c.unix_time(node.last_busy_s));
  n["mcs_label"] = "";
  n["specialized_memory"] = 0;
  n["name"] = r.name;
  n["next_state_after_reboot"] = {"INVALID"};
  n["address"] = r.name;
  n["hostname"] = r.name;
  n["state"] = node_state(node);
  n["operating_system"] = "Linux (simulated by gputwin)";
  n["owner"] = "";
  n["partitions"] = node.partitions;
  n["port"] = 6818;
  n["real_memory"] = r.memory_mb;
  n["res_cores_per_gpu"] = 0;
  n["comment"] = "";
  n["reason"] = node.reason;
  n["reason_changed_at"] = number(node.reason.empty() ? 0 : c.unix_time(c.now_s));
  n["reason_set_by_user"] = node.reason.empty() ? "" : "root";
  n["resume_after"] = number(0);
  n["reservation"] = "";
  n["alloc_memory"] = 0;
  n["alloc_cpus"] = node.alloc_cpus;
  n["alloc_idle_cpus"] = std::max(r.cpus - node.alloc_cpus, 0);
  n["tres_used"] = node.alloc_cpus > 0 ? "cpu=" + std::to_string(node.alloc_cpus) +
                                             (node.alloc_gpus > 0 ? ",gres/gpu=" + std::to_string(node.alloc_gpus) : "")
                                       : "";
  n["tres_weighted"] = static_cast<double>(node.alloc_cpus);
  n["slurmd_start_time"] = number(c.unix_time(node.boot_s));
  n["sockets"] = 1;
  n["threads"] = 1;
  n["temporary_disk"] = 0;
  n["weight"] = 1;
  if (v >= V::k43) n["topology"] = "";
  std::string tres =
      "cpu=" + std::to_string(r.cpus) + ",mem=" + memory_text(r.memory_mb) + ",billing=" + std::to_string(r.cpus);
  if (r.gpus > 0) tres += ",gres/gpu=" + std::to_string(r.gpus);
  n["tres"] = tres;
  n["version"] = node.version;
  return n;
}

SlurmJson slurm_partition(const SlurmShapeContext& c, const PartitionRow& p) {
  SlurmJson j;
  j["nodes"] = {{"allowed_allocation", ""}, {"configured", p.nodes}, {"total", p.total_nodes}};
  j["accounts"] = {{"allowed", ""}, {"deny", ""}};
  j["groups"] = {{"allowed", ""}};
  j["qos"] = {{"allowed", ""}, {"deny", ""}, {"assigned", ""}};
  j["alternate"] = "";
  std::string tres = "node=" + std::to_string(p.total_nodes);
  if (p.total_gpus > 0) tres += ",gres/gpu=" + std::to_string(p.total_gpus);
  j["tres"] = {{"billing_weights", ""}, {"configured", tres}};
  j["cluster"] = "";
  j["select_type"] = empty_array();
  j["cpus"] = {{"task_binding", 0}, {"total", 0}};
  j["defaults"] = {{"memory_per_cpu", 0},
                   {"partition_memory_per_cpu", unset()},
                   {"partition_memory_per_node", unset()},
                   {"time", p.default_time_s < 0 ? unset() : time_limit_minutes(p.default_time_s)},
                   {"job", ""}};
  j["grace_time"] = 0;
  j["maximums"] = {{"cpus_per_node", infinite()},
                   {"cpus_per_socket", infinite()},
                   {"memory_per_cpu", 0},
                   {"partition_memory_per_cpu", unset()},
                   {"partition_memory_per_node", number(0)},
                   {"nodes", infinite()},
                   {"shares", 1},
                   {"oversubscribe", {{"jobs", 1}, {"flags", empty_array()}}},
                   {"time", p.max_time_s < 0 ? infinite() : time_limit_minutes(p.max_time_s)},
                   {"over_time_limit", unset()}};
  j["minimums"] = {{"nodes", 0}};
  j["name"] = p.name;
  j["node_sets"] = "";
  j["priority"] = {{"job_factor", 1}, {"tier", 1}};
  j["timeouts"] = {{"resume", unset()}, {"suspend", unset()}};
  if (c.version >= V::k43) j["topology"] = "";
  j["partition"] = {{"state", {p.state.empty() ? "UP" : p.state}}};
  j["suspend_time"] = unset();
  return j;
}

SlurmJson slurm_qos(const SlurmShapeContext& c, const ServedQos& q) {
  const bool v41 = c.version == V::k41;
  SlurmJson per_account_user = {{"account", infinite()}, {"user", infinite()}};
  SlurmJson max;
  max["active_jobs"] = {{"accruing", infinite()}, {"count", infinite()}};
  SlurmJson jobs;
  if (!v41) jobs["count"] = infinite();
  jobs["active_jobs"] = {{"per", per_account_user}};
  jobs["per"] = {{"account", infinite()}, {"user", limit(q.max_jobs_per_user)}};
  SlurmJson minutes;
  if (!v41) minutes["total"] = empty_array();
  minutes["per"] = {
      {"qos", empty_array()}, {"job", empty_array()}, {"account", empty_array()}, {"user", empty_array()}};
  SlurmJson tres = {
      {"total", empty_array()},
      {"minutes", std::move(minutes)},
      {"per", {{"account", empty_array()}, {"job", empty_array()}, {"node", empty_array()}, {"user", empty_array()}}}};
  SlurmJson wall = {{"per", {{"qos", infinite()}, {"job", limit(q.max_wall_per_job_min)}}}};
  if (v41) {
    // v0.0.41 prints tres and wall_clock before jobs.
    max["tres"] = std::move(tres);
    max["wall_clock"] = std::move(wall);
    max["jobs"] = std::move(jobs);
  } else {
    max["jobs"] = std::move(jobs);
    max["tres"] = std::move(tres);
    max["wall_clock"] = std::move(wall);
  }
  max["accruing"] = {{"per", per_account_user}};
  SlurmJson j;
  j["description"] = q.description.empty() ? q.name : q.description;
  j["flags"] = empty_array();
  j["id"] = q.id;
  j["limits"] = {{"grace_time", 0},
                 {"max", std::move(max)},
                 {"factor", infinite_real()},
                 {"min", {{"priority_threshold", infinite()}, {"tres", {{"per", {{"job", empty_array()}}}}}}}};
  j["name"] = q.name;
  j["preempt"] = {{"list", empty_array()}, {"mode", {"DISABLED"}}, {"exempt_time", infinite()}};
  j["priority"] = number(q.priority);
  j["usage_factor"] = real_number(1.0);
  j["usage_threshold"] = infinite_real();
  return j;
}

SlurmJson slurm_account(const SlurmShapeContext&, const ServedAccount& a) {
  return {{"associations", empty_array()},
          {"coordinators", empty_array()},
          {"description", a.description.empty() ? a.name : a.description},
          {"name", a.name},
          {"organization", a.organization.empty() ? a.name : a.organization},
          {"flags", empty_array()}};
}

SlurmJson slurm_association(const SlurmShapeContext& c, const ServedAssociation& a) {
  SlurmJson per_job = {
      {"count", infinite()}, {"accruing", infinite()}, {"submitted", infinite()}, {"wall_clock", infinite()}};
  SlurmJson max;
  max["jobs"] = {{"per", std::move(per_job)}, {"active", infinite()}, {"accruing", infinite()}, {"total", infinite()}};
  max["tres"] = {{"total", empty_array()},
                 {"group", {{"minutes", empty_array()}, {"active", empty_array()}}},
                 {"minutes", {{"total", empty_array()}, {"per", {{"job", empty_array()}}}}},
                 {"per", {{"job", empty_array()}, {"node", empty_array()}}}};
  max["per"] = {{"account", {{"wall_clock", infinite()}}}};
  std::string lineage = "/";
  if (a.account != "root") lineage += a.account + "/";
  if (!a.user.empty()) lineage += "0-" + a.user + "/";
  SlurmJson j;
  j["accounting"] = empty_array();
  j["account"] = a.account;
  j["cluster"] = c.cluster;
  j["comment"] = "";
  j["default"] = {{"qos", ""}};
  j["flags"] = empty_array();
  j["max"] = std::move(max);
  j["id"] = a.id;
  j["is_default"] = a.is_default;
  j["lineage"] = lineage;
  j["min"] = {{"priority_threshold", infinite()}};
  j["parent_account"] = a.parent_account;
  j["partition"] = a.partition;
  j["priority"] = infinite();
  j["qos"] = a.qos;
  j["shares_raw"] = a.shares_raw;
  j["user"] = a.user;
  return j;
}

}  // namespace gputwin
