#include "ui/dashboard_api.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "model/errors.hpp"
#include "model/input_limits.hpp"
#include "results/job_table.hpp"
#include "results/metrics_export.hpp"
#include "results/results_store.hpp"
#include "ui/compare_api.hpp"
#include "ui/folder_feed.hpp"
#include "ui/twin_api.hpp"

namespace gputwin {

namespace {

using nlohmann::json;

// Answers quote request text (a search, a user, a path) and results text, which may hold bytes that are not UTF-8:
// they become U+FFFD instead of making dump() throw.
constexpr auto kReplaceInvalidUtf8 = json::error_handler_t::replace;

constexpr std::int64_t kTimeBound = 1'000'000'000'000;  // seconds: far beyond any run, far from overflow
constexpr std::uintmax_t kMaxAssetBytes = 64u << 20;

json optional_time(std::int64_t t) {
  return t >= 0 ? json(t) : json(nullptr);
}

json to_json(const JobRow& r) {
  return json{{"job_id", r.job_id},
              {"name", r.name},
              {"user", r.user},
              {"account", r.account},
              {"partition", r.partition},
              {"qos", r.qos},
              {"state", r.state},
              {"reason", r.reason},
              {"submit_time", r.submit_s},
              {"start_time", optional_time(r.start_s)},
              {"end_time", optional_time(r.end_s)},
              {"run_time", r.run_time_s},
              {"time_limit", r.time_limit_s},
              {"priority", r.priority},
              {"nodes", r.nodes},
              {"cpus", r.cpus},
              {"gpus", r.gpus},
              {"node_list", r.node_list}};
}

json to_json(const NodeRow& n) {
  json j{{"index", n.index}, {"name", n.name},           {"state", n.state},       {"group", n.group}, {"cpus", n.cpus},
         {"gpus", n.gpus},   {"memory_mb", n.memory_mb}, {"gpu_type", n.gpu_type}, {"xid", n.xid}};
  j["gpu_util_pct"] = n.gpu_util_pct >= 0 ? json(n.gpu_util_pct) : json(nullptr);
  j["gpu_mem_pct"] = n.gpu_mem_pct >= 0 ? json(n.gpu_mem_pct) : json(nullptr);
  return j;
}

json to_json(const PartitionRow& p) {
  return json{{"name", p.name},
              {"nodes", p.nodes},
              {"state", p.state},
              {"gpu_type", p.gpu_type},
              {"default", p.is_default},
              {"default_time", optional_time(p.default_time_s)},
              {"max_time", optional_time(p.max_time_s)},
              {"total_nodes", p.total_nodes},
              {"avail_nodes", p.avail_nodes},
              {"total_gpus", p.total_gpus}};
}

// /api/info's answer (shared by a snapshot's view and a live run's in-memory figures).
std::string info_json(const RunDescription& info, bool live, bool controls, std::size_t compare) {
  return json{{"scenario", info.scenario},
              {"policy", info.policy},
              {"kind", info.kind},
              {"seed", info.seed},
              {"begin", info.begin_s},
              {"end", info.end_s},
              {"epoch_unix", info.epoch_unix_s},
              {"cluster_step", info.cluster_step_s},
              {"gpu_step", info.gpu_step_s},
              {"jobs", info.jobs},
              {"nodes", info.nodes},
              {"total_gpus", info.total_gpus},
              {"live", live},
              {"controls", controls},
              {"compare", compare}}
      .dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// /api/overview's answer at `t`, read from the state of simulated second `snapshot_s`.
std::string overview_json(const Overview& o, const std::vector<PartitionRow>& partitions, std::int64_t t,
                          std::int64_t snapshot_s) {
  json groups = json::object();
  for (std::size_t g = 0; g < kNodeGroups.size(); ++g) groups[std::string(kNodeGroups[g])] = o.node_groups[g];
  json parts = json::array();
  for (const PartitionRow& p : partitions) parts.push_back(to_json(p));
  return json{{"t", t},
              {"snapshot_s", snapshot_s},  // the state read: a live run's snapshot (the page shows when it changes)
              {"total_gpus", o.total_gpus},
              {"allocated_gpus", o.allocated_gpus},
              {"gpu_util_pct", o.gpu_util_pct >= 0 ? json(o.gpu_util_pct) : json(nullptr)},
              {"gpu_mem_pct", o.gpu_mem_pct >= 0 ? json(o.gpu_mem_pct) : json(nullptr)},
              {"running_jobs", o.running_jobs},
              {"pending_jobs", o.pending_jobs},
              {"idle_nodes", o.idle_nodes},
              {"total_nodes", o.total_nodes},
              {"node_groups", groups},
              {"partitions", parts}}
      .dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// The node list's filter parameter (all, failed, xid, healthy). Throws HttpError 400.
std::string node_filter(const HttpRequest& request) {
  std::string filter = request.param("filter").value_or("all");
  if (filter != "all" && filter != "failed" && filter != "xid" && filter != "healthy") {
    throw HttpError(400, "parameter 'filter': expected all, failed, xid or healthy");
  }
  return filter;
}

// The node list's gpu parameter: false leaves out GPU use (one SQLite read per node for a written run): what a page
// that only needs names and states asks. Throws HttpError 400.
bool with_gpu_use(const HttpRequest& request) {
  const std::string gpu = request.param("gpu").value_or("true");
  if (gpu != "true" && gpu != "false") throw HttpError(400, "parameter 'gpu': expected true or false");
  return gpu == "true";
}

// /api/nodes' answer at `t` for `nodes` (their GPU use left out, as RunView::nodes leaves it, unless `gpu_use`).
std::string nodes_json(const std::vector<NodeRow>& nodes, std::int64_t t, const std::string& filter, bool gpu_use) {
  json rows = json::array();
  std::size_t failed = 0, xid = 0, healthy = 0, drain = 0, down = 0, gpus = 0, healthy_gpus = 0;
  for (NodeRow n : nodes) {
    if (!gpu_use) {
      n.gpu_util_pct = -1;
      n.gpu_mem_pct = -1;
      n.xid = 0;
    }
    const bool is_failed = n.group == "DRAIN" || n.group == "DOWN" || n.group == "UNKNOWN";
    failed += is_failed ? 1 : 0;
    drain += n.group == "DRAIN" ? 1 : 0;
    down += n.group == "DOWN" ? 1 : 0;
    xid += n.xid != 0 ? 1 : 0;
    healthy += !is_failed && n.xid == 0 ? 1 : 0;
    gpus += static_cast<std::size_t>(n.gpus);
    healthy_gpus += !is_failed && n.xid == 0 ? static_cast<std::size_t>(n.gpus) : 0;
    if ((filter == "failed" && !is_failed) || (filter == "xid" && n.xid == 0) ||
        (filter == "healthy" && (is_failed || n.xid != 0))) {
      continue;
    }
    rows.push_back(to_json(n));
  }
  return json{{"t", t},
              {"counts", {{"all", nodes.size()}, {"failed", failed}, {"xid", xid}, {"healthy", healthy}}},
              // The Nodes tab's cards: failed = DRAIN (draining, drained, failing, fail) + DOWN (down, rebooting) +
              // UNKNOWN; XID errors need gpu=true (the GPU sample at t).
              {"summary",
               {{"nodes", nodes.size()},
                {"healthy", healthy},
                {"failed", failed},
                {"drain", drain},
                {"down", down},
                {"xid", xid},
                {"gpus", gpus},
                {"healthy_gpus", healthy_gpus}}},
              {"nodes", rows}}
      .dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// The Jobs table's page request (filter, sort, order, search, user, offset, limit) at `at_s`. Throws HttpError 400.
JobQuery job_query(const HttpRequest& request, std::int64_t at_s) {
  JobQuery q;
  q.at_s = at_s;
  const auto filter = parse_job_filter(request.param("filter").value_or("all"));
  if (!filter) throw HttpError(400, "parameter 'filter': expected all, running, pending, completed, failed or unknown");
  q.filter = *filter;
  const auto sort = parse_job_sort(request.param("sort").value_or("job_id"));
  if (!sort) {
    throw HttpError(400,
                    "parameter 'sort': expected job_id, name, user, partition, nodes, gpus, run_time, "
                    "time_limit, state, priority, submit_time or start_time");
  }
  q.sort = *sort;
  const std::string order = request.param("order").value_or("asc");
  if (order != "asc" && order != "desc") throw HttpError(400, "parameter 'order': expected asc or desc");
  q.descending = order == "desc";
  q.search = request.param("search").value_or("");
  if (q.search.size() > 200) throw HttpError(400, "parameter 'search': at most 200 characters");
  q.user = request.param("user").value_or("");
  q.offset = static_cast<std::size_t>(int_param(request, "offset", 0, 0, 1'000'000'000));
  q.limit = static_cast<std::size_t>(int_param(request, "limit", 50, 1, 1000));
  return q;
}

// /api/nodes/{name}/gpus: the path names a node's per-GPU drill-down.
bool is_node_gpus_path(const std::string& path) {
  return path.rfind("/api/nodes/", 0) == 0 && path.size() > 16 && path.compare(path.size() - 5, 5, "/gpus") == 0;
}

// /api/nodes/{name}/gpus' window: `to` (default `end_s`), `from` (default an hour before), at most `points` samples.
struct GpuSeriesQuery {
  std::int64_t from = 0, to = 0;
  std::size_t points = 300;
};

GpuSeriesQuery gpu_series_query(const HttpRequest& request, std::int64_t end_s) {
  GpuSeriesQuery q;
  q.to = int_param(request, "to", end_s, -kTimeBound, kTimeBound);
  q.from = int_param(request, "from", std::max<std::int64_t>(0, q.to - 3600), -kTimeBound, kTimeBound);
  q.points = static_cast<std::size_t>(int_param(request, "points", 300, 1, 5000));
  return q;
}

// /api/nodes/{name}/gpus' answer: each GPU's samples as columns.
std::string gpu_series_json(const std::vector<GpuPoint>& points, const std::string& name, const GpuSeriesQuery& q) {
  json gpus = json::object();
  for (const GpuPoint& p : points) {
    json& g = gpus[std::to_string(p.gpu)];
    if (g.is_null())
      g = json{{"time", json::array()},    {"util", json::array()},   {"fb_used_mib", json::array()},
               {"power_w", json::array()}, {"temp_c", json::array()}, {"xid", json::array()},
               {"job_id", json::array()}};
    g["time"].push_back(p.time);
    g["util"].push_back(p.util_pct);
    g["fb_used_mib"].push_back(p.fb_used_mib);
    g["power_w"].push_back(p.power_w);
    g["temp_c"].push_back(p.temp_c);
    g["xid"].push_back(p.xid);
    g["job_id"].push_back(p.job_id >= 0 ? json(p.job_id) : json(nullptr));
  }
  return json{{"node", name}, {"from", q.from}, {"to", q.to}, {"gpus", gpus}}.dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// /api/series/nodes' window: `to` (default `end_s`), `from` (default `begin_s`), at most `points` samples and `lines`
// nodes' own lines.
struct NodeSeriesQuery {
  std::int64_t from = 0, to = 0;
  std::size_t points = 400, lines = 16;
};

NodeSeriesQuery node_series_query(const HttpRequest& request, std::int64_t end_s, std::int64_t begin_s) {
  NodeSeriesQuery q;
  q.to = int_param(request, "to", end_s, -kTimeBound, kTimeBound);
  q.from = int_param(request, "from", begin_s, -kTimeBound, kTimeBound);
  q.points = static_cast<std::size_t>(int_param(request, "points", 400, 1, 2000));
  q.lines = static_cast<std::size_t>(int_param(request, "lines", 16, 0, 64));
  return q;
}

// /api/series/nodes' answer, the all-nodes overlay: a min/mean/max band across nodes and at most `lines` nodes' own
// lines, so that the answer stays at points x (3 + lines) numbers for 4,096 nodes; `name` names a node by index.
std::string node_series_json(const NodeUtilSeries& series, const NodeSeriesQuery& q, std::size_t nodes,
                             const std::function<std::string(std::int32_t)>& name) {
  // -1 (not sampled) becomes null, which uPlot draws as a gap.
  const auto values = [](const std::vector<double>& v) {
    json a = json::array();
    for (const double x : v) a.push_back(x < 0 ? json(nullptr) : json(std::round(x * 100) / 100));
    return a;
  };
  json out{{"from", q.from},
           {"to", q.to},
           {"time", series.time},
           {"min", values(series.min)},
           {"mean", values(series.mean)},
           {"max", values(series.max)},
           {"sampled", series.sampled},
           {"nodes", nodes},
           {"nodes_sampled", series.nodes_sampled},
           {"all_nodes", series.all_nodes},
           {"lines", json::array()}};
  for (const NodeUtilSeries::Line& l : series.lines) {
    out["lines"].push_back(
        json{{"node", name(l.node)}, {"mean", std::round(l.mean_pct * 100) / 100}, {"util", values(l.util_pct)}});
  }
  return out.dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// /api/events' parameters: the second (`t`, default `end_s`), at most `limit` lines, of one `kind` or all, as JSON
// or text.
struct EventQuery {
  std::int64_t at_s = 0;
  std::size_t limit = 200;
  std::string kind;
  bool text = false;
};

EventQuery event_query(const HttpRequest& request, std::int64_t end_s) {
  EventQuery q;
  q.at_s = int_param(request, "t", end_s, -kTimeBound, kTimeBound);
  q.limit = static_cast<std::size_t>(int_param(request, "limit", 200, 1, 100000));
  q.kind = request.param("kind").value_or("");
  static constexpr std::array<std::string_view, 8> kKinds = {"job",        "node",    "fault", "action",
                                                             "preemption", "scaling", "quota", "operation"};
  if (!q.kind.empty() && std::find(kKinds.begin(), kKinds.end(), q.kind) == kKinds.end()) {
    throw HttpError(400,
                    "parameter 'kind': expected job, node, fault, action, preemption, scaling, quota or operation");
  }
  const std::string format = request.param("format").value_or("json");
  if (format != "json" && format != "text") throw HttpError(400, "parameter 'format': expected json or text");
  q.text = format == "text";
  return q;
}

// /api/events' answer: the lines as JSON, or as a tab-separated download.
HttpResponse events_response(const std::vector<EventLine>& events, const EventQuery& q) {
  if (q.text) {
    std::string text;
    for (const EventLine& e : events) {
      text += std::to_string(e.time) + "\t" + e.kind + "\t" + e.subject + "\t" + e.text + "\n";
    }
    HttpResponse r = HttpResponse::text(std::move(text));
    r.headers.emplace_back("Content-Disposition", "attachment; filename=\"events.tsv\"");
    return r;
  }
  json rows = json::array();
  for (const EventLine& e : events) {
    rows.push_back(json{{"time", e.time}, {"kind", e.kind}, {"subject", e.subject}, {"text", e.text}});
  }
  return HttpResponse::json(json{{"t", q.at_s}, {"events", rows}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
}

// RFC 4648 base64 of `bytes` (the Gantt grid travels as one string, not a million numbers).
std::string base64(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{bytes[i]} << 16) |
                            (i + 1 < bytes.size() ? std::uint32_t{bytes[i + 1]} << 8 : 0) |
                            (i + 2 < bytes.size() ? std::uint32_t{bytes[i + 2]} : 0);
    out += kAlphabet[n >> 18 & 63];
    out += kAlphabet[n >> 12 & 63];
    out += i + 1 < bytes.size() ? kAlphabet[n >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

// /api/gantt's window: `from` and `to` (default the run's begin and end), nodes [`node_from`, `node_to`) (default all
// `nodes`), and the canvas (`width` x `height`, 1200 x 800 by default).
GanttQuery gantt_query(const HttpRequest& request, std::int64_t begin_s, std::int64_t end_s, std::size_t nodes) {
  GanttQuery q;
  q.to_s = int_param(request, "to", end_s, -kTimeBound, kTimeBound);
  q.from_s = int_param(request, "from", begin_s, -kTimeBound, q.to_s);
  const auto node_count = static_cast<std::int64_t>(nodes);
  q.node_from = static_cast<std::int32_t>(int_param(request, "node_from", 0, 0, node_count));
  q.node_to = static_cast<std::int32_t>(int_param(request, "node_to", node_count, q.node_from, node_count));
  q.width = static_cast<std::int32_t>(int_param(request, "width", 1200, 1, 4096));
  q.height = static_cast<std::int32_t>(int_param(request, "height", 800, 1, 4096));
  return q;
}

// /api/gantt's answer: the window, and the jobs in it as segments or a density grid.
HttpResponse gantt_response(const GanttQuery& q, const GanttView& g) {
  json out{{"from", q.from_s},         {"to", std::max(q.to_s, q.from_s + 1)},
           {"node_from", q.node_from}, {"node_to", q.node_to},
           {"exact", g.exact},         {"jobs_in_view", g.jobs_in_view}};
  if (g.exact) {
    // Columns: row, start, end, job id (flat, four numbers per segment).
    json flat = json::array();
    for (const GanttSegment& s : g.segments) {
      flat.push_back(s.row);
      flat.push_back(s.start_s);
      flat.push_back(s.end_s);
      flat.push_back(s.job_id);
    }
    out["segments"] = std::move(flat);
  } else {
    out["rows"] = g.rows;
    out["cols"] = g.cols;
    out["nodes_per_row"] = g.nodes_per_row;
    out["busy"] = base64(g.busy);  // one byte per cell, row-major, 0-255
  }
  return HttpResponse::json(out.dump(-1, ' ', false, kReplaceInvalidUtf8));
}

// Calls `read` (a live run's or a twin folder feed's); a LiveError it throws becomes the HttpError of its status.
template <typename Read>
auto live_answer(Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const LiveError& e) {
    throw HttpError(e.status(), e.what());
  }
}

// /metrics' label names: dcgm-exporter's (UUID, modelName, Hostname) by default, as Grafana's DCGM dashboards expect;
// labels=snake gives names promtool's linter accepts.
bool metrics_label_names(const HttpRequest& request) {
  const auto labels = request.query.find("labels");
  if (labels != request.query.end() && labels->second != "dcgm" && labels->second != "snake") {
    throw HttpError(400, "labels: dcgm or snake");
  }
  return labels == request.query.end() || labels->second == "dcgm";
}

// /api/series/cluster's answer: the points of the cluster series from `from` to `to`.
std::string cluster_series_json(const std::vector<ClusterPoint>& points, std::int64_t from, std::int64_t to,
                                std::size_t total_gpus) {
  json s{{"time", json::array()},        {"pending", json::array()},      {"running", json::array()},
         {"gpus_alloc", json::array()},  {"gpu_util_pct", json::array()}, {"nodes_down", json::array()},
         {"nodes_drain", json::array()}, {"gpu_power_w", json::array()}};
  for (const ClusterPoint& p : points) {
    s["time"].push_back(p.time);
    s["pending"].push_back(p.jobs_pending);
    s["running"].push_back(p.jobs_running);
    s["gpus_alloc"].push_back(p.gpus_alloc);
    s["gpu_util_pct"].push_back(p.gpu_util_pct);
    s["nodes_down"].push_back(p.nodes_down);
    s["nodes_drain"].push_back(p.nodes_drain);
    s["gpu_power_w"].push_back(p.gpu_power_w);
  }
  s["from"] = from;
  s["to"] = to;
  s["total_gpus"] = total_gpus;
  return s.dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// /api/jobs' answer: one page of `table` (a snapshot's view's, or a live run's copy's) with the counts per tab.
std::string jobs_json(const JobTable& table, const JobQuery& q) {
  const JobPage page = table.jobs(q);
  static constexpr const char* kCountNames[] = {"ALL", "RUNNING", "PENDING", "COMPLETED", "FAILED", "UNKNOWN"};
  json counts = json::object();
  for (std::size_t i = 0; i < page.counts.size(); ++i) counts[kCountNames[i]] = page.counts[i];
  json rows = json::array();
  for (const JobRow& r : page.rows) rows.push_back(to_json(r));
  return json{{"t", q.at_s},      {"total", page.total}, {"offset", q.offset},
              {"limit", q.limit}, {"counts", counts},    {"jobs", rows}}
      .dump(-1, ' ', false, kReplaceInvalidUtf8);
}

// /api/jobs/{id}'s answer at `at_s` (`path` names the job). Throws HttpError 400 or 404.
std::string job_json(const JobTable& table, const std::string& path, std::int64_t at_s) {
  const std::string id_text = path.substr(10);
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (ec != std::errc() || end != id_text.data() + id_text.size())
    throw HttpError(400, "job id '" + id_text.substr(0, 40) + "' is not a number");
  const auto job = table.job(id, at_s);
  if (!job) throw HttpError(404, "no job " + id_text);
  return to_json(*job).dump(-1, ' ', false, kReplaceInvalidUtf8);
}

bool is_safe_asset_path(std::string_view path) {
  if (path.empty() || path.size() > 200) return false;
  for (char c : path) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '-' || c == '_')) return false;
  }
  return path.find("..") == std::string_view::npos && path.find("//") == std::string_view::npos;
}

std::string content_type_of(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".json") return "application/json";
  if (ext == ".map") return "application/json";
  return "application/octet-stream";
}

constexpr const char* kNoAssetsPage = R"(<!doctype html><html><head><meta charset="utf-8"><title>gputwin</title></head>
<body style="font-family:sans-serif;max-width:40em;margin:3em auto">
<h1>gputwin dashboard</h1>
<p>The dashboard's pages are not built. They are bundled from npm packages when the project is built on a machine
with Node.js and npm: install them (<code>apt-get install nodejs npm</code>, which <code>scripts/setup.sh</code>
does) and rebuild (<code>bash scripts/build.sh</code>), or point <code>--assets</code> at a built
<code>ui/web/dist</code> folder.</p>
<p>The JSON API answers meanwhile: <a href="/api/info">/api/info</a>, <a href="/api/overview">/api/overview</a>,
<a href="/api/jobs">/api/jobs</a>, <a href="/api/nodes">/api/nodes</a>, <a href="/metrics">/metrics</a>.</p>
</body></html>)";

}  // namespace

std::int64_t int_param(const HttpRequest& request, const std::string& name, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi) {
  const auto text = request.param(name);
  if (!text || text->empty()) return fallback;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < lo || v > hi) {
    throw HttpError(400, "parameter '" + name + "': expected an integer from " + std::to_string(lo) + " to " +
                             std::to_string(hi) + ", got '" + text->substr(0, 40) + "'");
  }
  return v;
}

namespace {

/// /api/costs: `scope`'s spend and burn rate from `from` (default `begin_s`) to `to` (default `end_s`) in at most
/// `points` points, and every scope there is (a finished run's, or a live copy's so far).
HttpResponse costs_response(const HttpRequest& request, const CostSeries& costs, std::int64_t begin_s,
                            std::int64_t end_s) {
  const std::int64_t to = int_param(request, "to", end_s, -kTimeBound, kTimeBound);
  const std::int64_t from = int_param(request, "from", begin_s, -kTimeBound, to);
  const auto points = static_cast<std::size_t>(int_param(request, "points", 600, 2, 20000));
  const std::vector<std::string> scopes = costs.scopes();
  const std::string scope = request.param("scope").value_or("cluster");
  if (!scopes.empty() && std::find(scopes.begin(), scopes.end(), scope) == scopes.end()) {
    throw HttpError(400, "parameter 'scope': no cost scope '" + scope.substr(0, 100) + "'");
  }
  json series{{"time", json::array()}, {"burn_usd_per_h", json::array()}, {"total_usd", json::array()}};
  for (const CostPoint& p : costs.points(scope, from, to, points)) {
    series["time"].push_back(p.time);
    series["burn_usd_per_h"].push_back(p.burn_usd_per_h);
    series["total_usd"].push_back(p.total_usd);
  }
  return HttpResponse::json(
      json{{"scopes", scopes}, {"scope", scope}, {"from", from}, {"to", to}, {"series", series}}.dump(
          -1, ' ', false, kReplaceInvalidUtf8));
}

}  // namespace

DashboardApi::DashboardApi(const std::filesystem::path& results_dir, std::filesystem::path assets_dir)
    : assets_dir_(std::move(assets_dir)), fixed_(finished_snapshot(results_dir)) {
  fixed_->view->prepare_orders();
}

DashboardApi::DashboardApi(const std::vector<std::filesystem::path>& results_dirs, std::filesystem::path assets_dir)
    : assets_dir_(std::move(assets_dir)) {
  if (results_dirs.empty()) throw std::invalid_argument("DashboardApi: no results folder");
  std::vector<std::shared_ptr<const RunSnapshot>> runs;
  for (const auto& dir : results_dirs) runs.push_back(finished_snapshot(dir));
  fixed_ = runs.front();
  if (runs.size() > 1) compare_ = std::make_unique<CompareApi>(runs);
  fixed_->view->prepare_orders();
}

DashboardApi::DashboardApi(FolderFeed& feed, std::filesystem::path assets_dir)
    : assets_dir_(std::move(assets_dir)), feed_(&feed) {}

DashboardApi::DashboardApi(LiveRun& live, std::filesystem::path assets_dir, std::string control_token)
    : assets_dir_(std::move(assets_dir)), live_(&live), control_token_(std::move(control_token)) {}

DashboardApi::~DashboardApi() = default;

std::shared_ptr<const RunSnapshot> DashboardApi::snapshot() const {
  if (feed_ != nullptr) return live_answer([&] { return feed_->current().run; });
  if (live_ == nullptr) return fixed_;
  return live_answer([&] { return live_->snapshot(); });
}

const RunView& DashboardApi::view() const {
  if (fixed_ == nullptr) throw std::logic_error("DashboardApi::view() of a live run");
  return *fixed_->view;
}

HttpResponse DashboardApi::handle(const HttpRequest& request) const {
  if (request.path.rfind("/api/control/", 0) == 0) return control(request);
  if (request.method != "GET" && request.method != "HEAD") {
    throw HttpError(405, request.method + " " + request.path + ": only GET (the controls are POST /api/control/...)");
  }
  if (request.path == "/api/live") return live_status();
  if (request.path == "/api/stream") return stream(request);
  if (request.path == "/metrics") return metrics(request);
  if (request.path.rfind("/api/", 0) == 0) return api(request);
  return asset(request);
}

HttpResponse DashboardApi::twin_pages(const HttpRequest& request) const {
  std::shared_ptr<const RunSnapshot> run;
  std::shared_ptr<const TwinPageData> twin;
  std::string problem = "no forecasts here: not a twin's results folder (gputwin twin --out writes one)";
  if (feed_ != nullptr) {
    const FeedSnapshot fed = live_answer([&] { return feed_->current(); });  // the view and the pages of one poll
    run = fed.run;
    twin = fed.twin;
  } else if (fixed_ != nullptr && fixed_->view->info().kind == "twin") {
    std::call_once(fixed_twin_once_, [this] {
      try {
        fixed_twin_ = load_twin_page_data(*fixed_->view);
      } catch (const ResultsError& e) {
        fixed_twin_error_ = e.what();
      } catch (const InputError& e) {
        fixed_twin_error_ = e.what();
      }
    });
    run = fixed_;
    twin = fixed_twin_;
    if (!fixed_twin_error_.empty()) problem = fixed_twin_error_;
  }
  if (twin == nullptr) throw HttpError(404, problem);
  return twin_api_response(request, *twin, *run->view);
}

std::optional<HttpResponse> DashboardApi::present_answer(const HttpRequest& request) const {
  // At a second (a page following the clock asks for the simulation's, past the newest copy's): the newest copy at or
  // before it, the newest state known then. An earlier second is the run's history: the written snapshot answers it.
  std::optional<std::int64_t> t;
  if (request.path != "/api/info" && request.param("t")) t = int_param(request, "t", 0, -kTimeBound, kTimeBound);
  const std::shared_ptr<const LivePresent> present = live_answer([&] { return live_->present(t); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or an earlier second
  const std::int64_t now_s = present->now_s();
  if (request.path == "/api/info") {
    RunDescription info = present->figures().info;
    info.end_s = now_s;
    return HttpResponse::json(info_json(info, true, true, 0));
  }
  if (request.path == "/api/overview") {
    const StateOverview& f = present->figures();
    return HttpResponse::json(overview_json(f.overview, f.partitions, now_s, now_s));
  }
  const std::string filter = node_filter(request);
  const bool gpu_use = with_gpu_use(request);
  return HttpResponse::json(nodes_json(present->figures().nodes, now_s, filter, gpu_use));
}

std::optional<HttpResponse> DashboardApi::present_jobs_answer(const HttpRequest& request) const {
  // The request is checked before anything waits for a copy.
  const bool page = request.path == "/api/jobs";
  const bool waits = request.path == "/api/waits";
  const auto wait_points = waits ? static_cast<std::size_t>(int_param(request, "points", 400, 1, 20000)) : 0;
  const std::optional<std::int64_t> t =
      request.param("t") ? std::optional(int_param(request, "t", 0, -kTimeBound, kTimeBound)) : std::nullopt;
  const JobQuery query = page ? job_query(request, 0) : JobQuery{};
  const std::shared_ptr<const LivePresent> present =
      live_answer([&] { return live_->present_jobs(query.sort, query.descending); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or is writing them
  const JobTable* table = present->jobs();
  if (table == nullptr) return std::nullopt;
  // The copy's second, or an earlier one asked for: its rows know the run's history as the snapshot written of them
  // would (a later second shows the newest state known, the copy's).
  const std::int64_t at_s = std::min(t.value_or(present->now_s()), present->now_s());
  if (waits) {
    return HttpResponse::json(
        wait_distribution_json(wait_distribution(*table, at_s, wait_points)).dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (!page) return HttpResponse::json(job_json(*table, request.path, at_s));
  JobQuery q = query;
  q.at_s = at_s;
  return HttpResponse::json(jobs_json(*table, q));
}

std::optional<HttpResponse> DashboardApi::present_metrics_answer(const HttpRequest& request) const {
  // The request is checked before anything waits for a copy.
  const bool scrape = request.path == "/metrics";
  std::optional<std::int64_t> t;
  if (scrape && request.param("t")) t = int_param(request, "t", 0, 0, kTimeBound);
  MetricsExportOptions options;
  if (scrape) options.dcgm_labels = metrics_label_names(request);
  std::optional<std::int64_t> to, from;
  std::size_t points = 0;
  if (!scrape) {
    if (request.param("to")) to = int_param(request, "to", 0, -kTimeBound, kTimeBound);
    if (request.param("from")) from = int_param(request, "from", 0, -kTimeBound, kTimeBound);
    points = static_cast<std::size_t>(int_param(request, "points", 600, 1, 20000));
  }
  const std::shared_ptr<const LivePresent> present = live_answer([&] { return live_->present_metrics(); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or is writing them
  const LiveMetrics* m = present->metrics();
  if (m == nullptr) return std::nullopt;
  const std::int64_t now_s = present->now_s();
  if (scrape) {
    // Another second than the copy's is the run's history: the written snapshot answers it.
    if (!m->scrape || (t && *t != now_s)) return std::nullopt;
    return HttpResponse::text(m->scrape_text(options.dcgm_labels), "text/plain; version=0.0.4; charset=utf-8");
  }
  const RunDescription& info = present->figures().info;
  const std::int64_t to_s = to.value_or(now_s), from_s = from.value_or(info.begin_s);
  return HttpResponse::json(
      cluster_series_json(cluster_points(m->times, m->rows, m->cluster_step_s, from_s, to_s, now_s, points), from_s,
                          to_s, info.total_gpus));
}

std::optional<HttpResponse> DashboardApi::present_gpu_series_answer(const HttpRequest& request) const {
  // The request is checked before anything waits for a copy; its defaults follow the copy's second.
  const bool drill_down = is_node_gpus_path(request.path);
  if (drill_down)
    (void)gpu_series_query(request, 0);
  else
    (void)node_series_query(request, 0, 0);
  const std::shared_ptr<const LivePresent> present = live_answer([&] { return live_->present_metrics(); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or is writing them
  const LiveMetrics* m = present->metrics();
  if (m == nullptr) return std::nullopt;
  const std::int64_t now_s = present->now_s();
  const auto read = [m](auto... args) { m->read_gpu_samples(args...); };
  if (drill_down) {
    const std::string name = request.path.substr(11, request.path.size() - 16);
    const auto it = std::find(m->node_names.begin(), m->node_names.end(), name);
    if (it == m->node_names.end()) throw HttpError(404, "no node '" + name.substr(0, 64) + "'");
    const auto node = static_cast<std::int32_t>(it - m->node_names.begin());
    const GpuSeriesQuery q = gpu_series_query(request, now_s);
    return HttpResponse::json(gpu_series_json(
        gpu_series_of(read, m->gpu_step_s, m->node_names.size(), node, q.from, q.to, q.points), name, q));
  }
  const RunDescription& info = present->figures().info;
  const NodeSeriesQuery q = node_series_query(request, now_s, info.begin_s);
  const NodeUtilSeries series =
      node_util_series_of(read, m->gpu_step_s, m->node_names.size(), now_s, q.from, q.to, q.points, q.lines);
  return HttpResponse::json(node_series_json(
      series, q, info.nodes, [m](std::int32_t n) { return m->node_names[static_cast<std::size_t>(n)]; }));
}

std::optional<HttpResponse> DashboardApi::present_events_answer(const HttpRequest& request) const {
  // The request is checked before anything waits for a copy (its second: the copy's unless asked).
  const bool asked_t = request.param("t").has_value();
  EventQuery q = event_query(request, 0);
  const std::shared_ptr<const LivePresent> present = live_answer([&] { return live_->present_events(); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or is writing them
  const StateEventLog* log = present->events();
  if (log == nullptr) return std::nullopt;
  // A later second than the copy's shows the newest state known, the copy's.
  q.at_s = asked_t ? std::min(q.at_s, present->now_s()) : present->now_s();
  return events_response(log->events(q.at_s, q.limit, q.kind), q);
}

std::optional<HttpResponse> DashboardApi::present_gantt_answer(const HttpRequest& request) const {
  // The request is checked before anything waits for a copy (against the widest bounds: a `from` without `to` may be
  // up to the copy's second, unknown yet; then against the copy's).
  (void)gantt_query(request, 0, kTimeBound, static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()));
  const std::shared_ptr<const LivePresent> present = live_answer([&] { return live_->present_gantt(); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or is writing them
  const GanttIndex* index = present->gantt();
  if (index == nullptr) return std::nullopt;
  // The window ends at the copy's second unless asked (as the snapshot written of it answers).
  const RunDescription& info = present->figures().info;
  const GanttQuery q = gantt_query(request, info.begin_s, present->now_s(), info.nodes);
  return gantt_response(q, index->view(q));
}

std::optional<HttpResponse> DashboardApi::present_costs_answer(const HttpRequest& request) const {
  // The request is checked before anything waits for a copy (its defaults follow the copy's second).
  (void)int_param(request, "to", 0, -kTimeBound, kTimeBound);
  (void)int_param(request, "from", 0, -kTimeBound, kTimeBound);
  (void)int_param(request, "points", 600, 2, 20000);
  const std::shared_ptr<const LivePresent> present = live_answer([&] { return live_->present(); });
  if (present == nullptr) return std::nullopt;  // the run has finished (its results answer), or is writing them
  return costs_response(request, present->costs(), present->figures().info.begin_s, present->now_s());
}

HttpResponse DashboardApi::api(const HttpRequest& request) const {
  if (request.path == "/api/forecasts" || request.path == "/api/actions") return twin_pages(request);
  if (request.path.rfind("/api/compare", 0) == 0) {
    if (compare_ == nullptr) {
      throw HttpError(404, "no comparison: serve two or more results folders (gputwin serve RUN1 RUN2 ...)");
    }
    return compare_->handle(request);
  }
  if (live_ != nullptr &&
      (request.path == "/api/info" || request.path == "/api/overview" || request.path == "/api/nodes")) {
    if (std::optional<HttpResponse> answer = present_answer(request)) return std::move(*answer);
  }
  if (live_ != nullptr && request.path == "/api/events") {
    if (std::optional<HttpResponse> answer = present_events_answer(request)) return std::move(*answer);
  }
  if (live_ != nullptr && (request.path == "/api/series/nodes" || is_node_gpus_path(request.path))) {
    if (std::optional<HttpResponse> answer = present_gpu_series_answer(request)) return std::move(*answer);
  }
  if (live_ != nullptr && request.path == "/api/series/cluster") {
    if (std::optional<HttpResponse> answer = present_metrics_answer(request)) return std::move(*answer);
  }
  if (live_ != nullptr && request.path == "/api/costs") {
    if (std::optional<HttpResponse> answer = present_costs_answer(request)) return std::move(*answer);
  }
  if (live_ != nullptr && request.path == "/api/gantt") {
    if (std::optional<HttpResponse> answer = present_gantt_answer(request)) return std::move(*answer);
  }
  if (live_ != nullptr &&
      (request.path == "/api/jobs" || request.path == "/api/waits" || request.path.rfind("/api/jobs/", 0) == 0)) {
    if (std::optional<HttpResponse> answer = present_jobs_answer(request)) return std::move(*answer);
  }
  const std::shared_ptr<const RunSnapshot> snap = snapshot();
  const RunView& view = *snap->view;
  RunDescription info = view.info();
  // A live run's snapshot holds jobs not submitted yet: its slider ends now, not at their submit times.
  info.end_s = snap->now_s;
  const std::string& path = request.path;
  const auto at = [&] { return int_param(request, "t", info.end_s, -kTimeBound, kTimeBound); };
  if (path == "/api/info") {
    return HttpResponse::json(
        info_json(info, snap->live, live_ != nullptr, compare_ != nullptr ? compare_->runs().size() : 0));
  }
  if (path == "/api/overview") {
    const std::int64_t t = at();
    return HttpResponse::json(overview_json(view.overview(t), view.partitions(t), t, snap->now_s));
  }
  if (path == "/api/jobs") {
    const JobQuery q = job_query(request, at());
    return HttpResponse::json(jobs_json(view.job_table(), q));
  }
  if (path.rfind("/api/jobs/", 0) == 0) return HttpResponse::json(job_json(view.job_table(), path, at()));
  if (path == "/api/nodes") {
    const std::int64_t t = at();
    const std::string filter = node_filter(request);
    const bool gpu_use = with_gpu_use(request);
    return HttpResponse::json(nodes_json(view.nodes(t, gpu_use), t, filter, gpu_use));
  }
  if (is_node_gpus_path(path)) {
    const std::string name = path.substr(11, path.size() - 16);
    const std::int32_t node = view.node_index(name);
    if (node < 0) throw HttpError(404, "no node '" + name.substr(0, 64) + "'");
    const GpuSeriesQuery q = gpu_series_query(request, info.end_s);
    return HttpResponse::json(gpu_series_json(view.gpu_series(node, q.from, q.to, q.points), name, q));
  }
  if (path == "/api/waits") {
    const auto points = static_cast<std::size_t>(int_param(request, "points", 400, 1, 20000));
    return HttpResponse::json(
        wait_distribution_json(view.waits(at(), points)).dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/costs") return costs_response(request, view.costs(), info.begin_s, info.end_s);
  if (path == "/api/gantt") {
    const GanttQuery q = gantt_query(request, info.begin_s, info.end_s, info.nodes);
    return gantt_response(q, view.gantt(q));
  }
  if (path == "/api/series/nodes") {
    const NodeSeriesQuery q = node_series_query(request, info.end_s, info.begin_s);
    const std::vector<NodeRow> rows = view.nodes(q.to, false);
    return HttpResponse::json(node_series_json(view.node_util_series(q.from, q.to, q.points, q.lines), q, info.nodes,
                                               [&](std::int32_t n) { return rows[static_cast<std::size_t>(n)].name; }));
  }
  if (path == "/api/series/cluster") {
    const std::int64_t to = int_param(request, "to", info.end_s, -kTimeBound, kTimeBound);
    const std::int64_t from = int_param(request, "from", info.begin_s, -kTimeBound, kTimeBound);
    const auto points = static_cast<std::size_t>(int_param(request, "points", 600, 1, 20000));
    return HttpResponse::json(cluster_series_json(view.cluster_series(from, to, points), from, to, info.total_gpus));
  }
  if (path == "/api/events") {
    const EventQuery q = event_query(request, info.end_s);
    return events_response(view.events(q.at_s, q.limit, q.kind), q);
  }
  throw HttpError(404, "no API endpoint " + path.substr(0, 100));
}

nlohmann::json wait_distribution_json(const WaitDistribution& d) {
  json cdf{{"wait", json::array()}, {"fraction", json::array()}};
  for (const auto& [wait, fraction] : d.cdf) {
    cdf["wait"].push_back(wait);
    cdf["fraction"].push_back(fraction);
  }
  return json{{"jobs", d.jobs}, {"mean", d.mean_s}, {"p50", d.p50_s}, {"p90", d.p90_s},
              {"p95", d.p95_s}, {"p99", d.p99_s},   {"max", d.max_s}, {"cdf", cdf}};
}

std::string live_status_json(const LiveStatus& s) {
  json j{{"live", s.state == "running" || s.state == "paused"},
         {"state", s.state},
         {"now", s.now_s},
         {"speed", s.speed > 0 ? json(s.speed) : json("max")},
         {"submitted", s.submitted},
         {"ended", s.ended},
         {"total_jobs", s.total_jobs},
         {"events", s.events},
         {"snapshots", s.snapshots},
         {"copies", s.copies},
         {"reused_copies", s.reused_copies},
         {"snapshot_wall_s", s.snapshot_wall_s},
         {"snapshot_copy_wall_s", s.snapshot_copy_wall_s}};
  if (!s.error.empty()) j["error"] = s.error;
  return j.dump(-1, ' ', false, kReplaceInvalidUtf8);
}

HttpResponse DashboardApi::live_status() const {
  if (feed_ != nullptr) return HttpResponse::json(live_status_json(feed_->status()));
  if (live_ == nullptr) return HttpResponse::json(R"({"live":false,"state":"finished"})");
  return HttpResponse::json(live_status_json(live_->status()));
}

namespace {

std::string event_json(const LiveEvent& e) {
  return json{{"seq", e.seq}, {"time", e.time}, {"kind", e.kind}, {"subject", e.subject}, {"text", e.text}}.dump(
      -1, ' ', false, kReplaceInvalidUtf8);
}

// Constant-time comparison of a presented token with the expected one.
bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || b.empty()) return false;  // the length is no secret; the bytes are
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// The request's body as a JSON object ({} when empty). Throws HttpError 400.
json body_object(const HttpRequest& request) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) throw HttpError(400, "body: not JSON");
  if (!body.is_object()) throw HttpError(400, "body: expected a JSON object");
  return body;
}

// Field `name` of `body` as a string of 1 to `max` characters (`fallback` when absent and it is given).
std::string string_field(const json& body, const char* name, std::size_t max, const char* fallback = nullptr) {
  const auto it = body.find(name);
  if (it == body.end() && fallback != nullptr) return fallback;
  if (it == body.end() || !it->is_string() || it->get_ref<const std::string&>().empty() ||
      it->get_ref<const std::string&>().size() > max) {
    throw HttpError(
        400, std::string("field '") + name + "': expected a string of 1 to " + std::to_string(max) + " characters");
  }
  return it->get<std::string>();
}

// Field `name` of `body` as an integer from `lo` to `hi` (`fallback` when absent and it is given).
std::int64_t integer_field(const json& body, const char* name, std::int64_t lo, std::int64_t hi,
                           std::optional<std::int64_t> fallback = std::nullopt) {
  const auto it = body.find(name);
  if (it == body.end() && fallback) return *fallback;
  const bool ok = it != body.end() && it->is_number_integer() &&
                  (it->is_number_unsigned() ? it->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
                                                  static_cast<std::int64_t>(it->get<std::uint64_t>()) >= lo
                                            : it->get<std::int64_t>() >= lo && it->get<std::int64_t>() <= hi);
  if (!ok) {
    throw HttpError(400, std::string("field '") + name + "': expected an integer from " + std::to_string(lo) + " to " +
                             std::to_string(hi));
  }
  return it->get<std::int64_t>();
}

}  // namespace

HttpResponse DashboardApi::control(const HttpRequest& request) const {
  if (feed_ != nullptr) {
    throw HttpError(403,
                    "a twin's dashboard has no controls: the twin acts only through its controllers and their safety "
                    "limits (gputwin twin --controllers, --act, --max-nodes-out-pct)");
  }
  if (live_ == nullptr) {
    throw HttpError(403, "a finished run has no controls (they are for a live run: gputwin run SCENARIO --serve)");
  }
  if (request.method != "POST") throw HttpError(405, request.method + " " + request.path + ": controls are POST");
  const std::string auth = request.header("authorization");
  if (auth.empty()) throw HttpError(401, "the controls need Authorization: Bearer TOKEN (the --token-file's token)");
  if (auth.rfind("Bearer ", 0) != 0 || !same_token(std::string_view(auth).substr(7), control_token_)) {
    throw HttpError(401, "wrong token");
  }
  const std::string action = request.path.substr(13);
  const json body = body_object(request);
  try {
    if (action == "pause") {
      live_->pause();
    } else if (action == "resume") {
      live_->resume();
    } else if (action == "speed") {
      const auto it = body.find("factor");
      double factor = -1;
      if (it != body.end() && it->is_string() && it->get_ref<const std::string&>() == "max") {
        factor = 0;
      } else if (it != body.end() && it->is_number()) {
        factor = it->get<double>();
        if (!(factor > 0 && factor <= 1e9)) factor = -1;
      }
      if (factor < 0) {
        throw HttpError(400,
                        "field 'factor': expected simulated seconds per wall second (a number above 0, at most "
                        "1e9) or \"max\"");
      }
      live_->set_speed(factor);
    } else if (action == "node/drain" || action == "node/resume") {
      const std::string node = string_field(body, "node", 128);
      const std::int64_t at =
          action == "node/drain"
              ? live_->drain_node(node, string_field(body, "reason", 200, "drained from the dashboard"))
              : live_->resume_node(node);
      return HttpResponse::json(json{{"ok", true}, {"node", node}, {"action", action.substr(5)}, {"time", at}}.dump(
          -1, ' ', false, kReplaceInvalidUtf8));
    } else if (action == "node/restart") {
      // scontrol reboot ASAP sets the reason "Reboot ASAP" when none is given.
      const std::string node = string_field(body, "node", 128);
      const LiveRestarted done = live_->restart_node(node, string_field(body, "reason", 200, "Reboot ASAP"));
      return HttpResponse::json(
          json{{"ok", true}, {"node", node}, {"action", "restart"}, {"time", done.time}, {"rebooting", done.rebooting}}
              .dump(-1, ' ', false, kReplaceInvalidUtf8));
    } else if (action == "node/inject") {
      const std::string node = string_field(body, "node", 128);
      const auto xid = static_cast<std::uint32_t>(integer_field(body, "xid", 1, 65535));
      const auto gpu = static_cast<std::uint32_t>(integer_field(body, "gpu", 0, kMaxGpusPerNode - 1, 0));
      const LiveInjected done = live_->inject_fault(node, xid, gpu);
      return HttpResponse::json(json{
          {"ok", true},
          {"node", node},
          {"action", "inject"},
          {"xid", xid},
          {"gpu", gpu},
          {"time", done.time},
          {"struck", done.struck},
          {"effect", done.effect},
          {"symptom", done.symptom}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
    } else if (action == "scale") {
      const auto it = body.find("action");
      if (it == body.end() || !it->is_string() || (*it != "up" && *it != "down")) {
        throw HttpError(400,
                        "field 'action': expected \"up\" (power up pool nodes) or \"down\" (power down idle ones)");
      }
      const bool up = *it == "up";
      const auto count = static_cast<std::int32_t>(integer_field(body, "count", 1, 100'000));
      const LiveScaled done = live_->scale(up ? count : -count);
      return HttpResponse::json(json{
          {"ok", true},
          {"action", "scale"},
          {"direction", up ? "up" : "down"},
          {"count", count},
          {"nodes", done.nodes},
          {"time", done.time}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
    } else {
      throw HttpError(404, "no control '" + action.substr(0, 40) +
                               "' (pause, resume, speed, node/drain, node/resume, node/restart, node/inject, scale)");
    }
  } catch (const LiveError& e) {
    throw HttpError(e.status(), e.what());
  }
  return HttpResponse::json(live_status_json(live_->status()));
}

HttpResponse DashboardApi::stream(const HttpRequest& request) const {
  if (feed_ != nullptr) {
    // A twin's clock: a status event every second (the page re-reads the folder when `now` moves).
    HttpResponse r;
    r.stream = [feed = feed_](EventStream& out) {
      while (true) {
        if (!out.send("status", live_status_json(feed->status()))) return;
        for (int i = 0; i < 4; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(250));
          if (feed->streams_closed()) return;
        }
      }
    };
    return r;
  }
  if (live_ == nullptr) throw HttpError(404, "no event stream: this is a finished run (see /api/events)");
  // From the event after Last-Event-ID (a reconnecting EventSource), else from the newest: a page reads the history
  // from /api/events.
  std::uint64_t from = live_->last_event_seq();
  const std::string last = request.header("last-event-id");
  if (!last.empty()) {
    std::uint64_t seq = 0;
    const auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), seq);
    if (ec == std::errc() && end == last.data() + last.size() && seq <= from) from = seq;
  }
  if (const auto since = request.param("since")) {
    std::uint64_t seq = 0;
    const auto [end, ec] = std::from_chars(since->data(), since->data() + since->size(), seq);
    if (ec != std::errc() || end != since->data() + since->size())
      throw HttpError(400, "parameter 'since': expected a number");
    from = std::min(seq, from);
  }
  HttpResponse r;
  r.stream = [live = live_, from](EventStream& out) {
    std::uint64_t seq = from;
    auto last_status = std::chrono::steady_clock::now() - std::chrono::seconds(2);
    while (true) {
      const auto events = live->events_after(seq, 1000, std::chrono::milliseconds(250));
      for (const LiveEvent& e : events) {
        if (!out.send("", event_json(e), std::to_string(e.seq))) return;
        seq = e.seq;
      }
      const auto now = std::chrono::steady_clock::now();
      if (now - last_status >= std::chrono::seconds(1)) {
        last_status = now;
        const LiveStatus status = live->status();
        if (!out.send("status", live_status_json(status))) return;
        if (status.state == "ended" || status.state == "failed") {
          if (live->last_event_seq() <= seq) return;
        }
      }
      if (live->streams_closed()) return;
    }
  };
  return r;
}

HttpResponse DashboardApi::metrics(const HttpRequest& request) const {
  if (live_ != nullptr) {
    if (std::optional<HttpResponse> answer = present_metrics_answer(request)) return std::move(*answer);
  }
  const std::shared_ptr<const RunSnapshot> snap = snapshot();
  MetricsExportOptions options;
  options.at_s = int_param(request, "t", snap->now_s, 0, std::max(snap->now_s, snap->view->info().end_s));
  options.dcgm_labels = metrics_label_names(request);
  std::ostringstream out;
  try {
    export_metrics(snap->dir, options, out);
  } catch (const InputError& error) {
    throw HttpError(404, error.problem());
  }
  return HttpResponse::text(out.str(), "text/plain; version=0.0.4; charset=utf-8");
}

HttpResponse DashboardApi::asset(const HttpRequest& request) const {
  // An empty path (a handler called without the server, which always gives one starting with '/') is the index too.
  std::string rel = request.path.size() <= 1 ? "index.html" : request.path.substr(1);
  if (!is_safe_asset_path(rel)) throw HttpError(404, "no page " + request.path.substr(0, 100));
  const std::filesystem::path file = assets_dir_ / rel;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    if (rel == "index.html") return HttpResponse::text(kNoAssetsPage, "text/html; charset=utf-8");
    throw HttpError(404, "no page " + request.path.substr(0, 100));
  }
  const auto size = std::filesystem::file_size(file, ec);
  if (ec || size > kMaxAssetBytes) throw HttpError(500, "asset " + rel + " unreadable");
  std::ifstream in(file, std::ios::binary);
  std::string body(static_cast<std::size_t>(size), '\0');
  in.read(body.data(), static_cast<std::streamsize>(size));
  HttpResponse r = HttpResponse::text(std::move(body), content_type_of(file));
  r.headers.emplace_back("Cache-Control", rel == "index.html" ? "no-cache" : "max-age=3600");
  return r;
}

}  // namespace gputwin
