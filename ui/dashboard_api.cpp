#include "ui/dashboard_api.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/errors.hpp"
#include "results/metrics_export.hpp"

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

/// RFC 4648 base64 of `bytes` (the Gantt grid travels as one string, not a million numbers).
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

DashboardApi::DashboardApi(std::filesystem::path results_dir, std::filesystem::path assets_dir)
    : results_dir_(std::move(results_dir)),
      assets_dir_(std::move(assets_dir)),
      view_(std::make_unique<RunView>(results_dir_)) {
  view_->prepare_orders();
}

DashboardApi::~DashboardApi() = default;

HttpResponse DashboardApi::handle(const HttpRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    throw HttpError(405, request.method + " " + request.path + ": a finished run is read-only (only GET)");
  }
  if (request.path == "/metrics") return metrics(request);
  if (request.path.rfind("/api/", 0) == 0) return api(request);
  return asset(request);
}

HttpResponse DashboardApi::api(const HttpRequest& request) const {
  const RunDescription& info = view_->info();
  const std::string& path = request.path;
  const auto at = [&] { return int_param(request, "t", info.end_s, -kTimeBound, kTimeBound); };
  if (path == "/api/info") {
    return HttpResponse::json(json{
        {"scenario", info.scenario},
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
        {"live", false}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/overview") {
    const std::int64_t t = at();
    const Overview o = view_->overview(t);
    json groups = json::object();
    for (std::size_t g = 0; g < kNodeGroups.size(); ++g) groups[std::string(kNodeGroups[g])] = o.node_groups[g];
    json parts = json::array();
    for (const PartitionRow& p : view_->partitions(t)) parts.push_back(to_json(p));
    return HttpResponse::json(json{
        {"t", t},
        {"total_gpus", o.total_gpus},
        {"allocated_gpus", o.allocated_gpus},
        {"gpu_util_pct", o.gpu_util_pct >= 0 ? json(o.gpu_util_pct) : json(nullptr)},
        {"gpu_mem_pct", o.gpu_mem_pct >= 0 ? json(o.gpu_mem_pct) : json(nullptr)},
        {"running_jobs", o.running_jobs},
        {"pending_jobs", o.pending_jobs},
        {"idle_nodes", o.idle_nodes},
        {"total_nodes", o.total_nodes},
        {"node_groups", groups},
        {"partitions", parts}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/jobs") {
    JobQuery q;
    q.at_s = at();
    const auto filter = parse_job_filter(request.param("filter").value_or("all"));
    if (!filter)
      throw HttpError(400, "parameter 'filter': expected all, running, pending, completed, failed or unknown");
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
    const JobPage page = view_->jobs(q);
    static constexpr const char* kCountNames[] = {"ALL", "RUNNING", "PENDING", "COMPLETED", "FAILED", "UNKNOWN"};
    json counts = json::object();
    for (std::size_t i = 0; i < page.counts.size(); ++i) counts[kCountNames[i]] = page.counts[i];
    json rows = json::array();
    for (const JobRow& r : page.rows) rows.push_back(to_json(r));
    return HttpResponse::json(json{
        {"t", q.at_s},
        {"total", page.total},
        {"offset", q.offset},
        {"limit", q.limit},
        {"counts", counts},
        {"jobs", rows}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path.rfind("/api/jobs/", 0) == 0) {
    const std::string id_text = path.substr(10);
    std::int64_t id = 0;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size())
      throw HttpError(400, "job id '" + id_text.substr(0, 40) + "' is not a number");
    const auto job = view_->job(id, at());
    if (!job) throw HttpError(404, "no job " + id_text);
    return HttpResponse::json(to_json(*job).dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/nodes") {
    const std::int64_t t = at();
    const std::string filter = request.param("filter").value_or("all");
    if (filter != "all" && filter != "failed" && filter != "xid" && filter != "healthy") {
      throw HttpError(400, "parameter 'filter': expected all, failed, xid or healthy");
    }
    // gpu=false leaves out GPU use (one SQLite read per node): what a page that only needs names and states asks.
    const std::string gpu = request.param("gpu").value_or("true");
    if (gpu != "true" && gpu != "false") throw HttpError(400, "parameter 'gpu': expected true or false");
    json rows = json::array();
    std::size_t failed = 0, xid = 0, healthy = 0;
    const auto nodes = view_->nodes(t, gpu == "true");
    for (const NodeRow& n : nodes) {
      const bool is_failed = n.group == "DRAIN" || n.group == "DOWN" || n.group == "UNKNOWN";
      failed += is_failed ? 1 : 0;
      xid += n.xid != 0 ? 1 : 0;
      healthy += !is_failed && n.xid == 0 ? 1 : 0;
      if ((filter == "failed" && !is_failed) || (filter == "xid" && n.xid == 0) ||
          (filter == "healthy" && (is_failed || n.xid != 0))) {
        continue;
      }
      rows.push_back(to_json(n));
    }
    return HttpResponse::json(json{
        {"t", t},
        {"counts", {{"all", nodes.size()}, {"failed", failed}, {"xid", xid}, {"healthy", healthy}}},
        {"nodes", rows}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path.rfind("/api/nodes/", 0) == 0 && path.size() > 16 && path.compare(path.size() - 5, 5, "/gpus") == 0) {
    const std::string name = path.substr(11, path.size() - 16);
    const std::int32_t node = view_->node_index(name);
    if (node < 0) throw HttpError(404, "no node '" + name.substr(0, 64) + "'");
    const std::int64_t to = int_param(request, "to", info.end_s, -kTimeBound, kTimeBound);
    const std::int64_t from = int_param(request, "from", std::max<std::int64_t>(0, to - 3600), -kTimeBound, kTimeBound);
    const auto points = static_cast<std::size_t>(int_param(request, "points", 300, 1, 5000));
    json gpus = json::object();
    for (const GpuPoint& p : view_->gpu_series(node, from, to, points)) {
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
    return HttpResponse::json(
        json{{"node", name}, {"from", from}, {"to", to}, {"gpus", gpus}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/waits") {
    const auto points = static_cast<std::size_t>(int_param(request, "points", 400, 1, 20000));
    const WaitDistribution d = view_->waits(at(), points);
    json cdf{{"wait", json::array()}, {"fraction", json::array()}};
    for (const auto& [wait, fraction] : d.cdf) {
      cdf["wait"].push_back(wait);
      cdf["fraction"].push_back(fraction);
    }
    return HttpResponse::json(json{
        {"jobs", d.jobs},
        {"mean", d.mean_s},
        {"p50", d.p50_s},
        {"p90", d.p90_s},
        {"p95", d.p95_s},
        {"p99", d.p99_s},
        {"max", d.max_s},
        {"cdf", cdf}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/costs") {
    const std::int64_t to = int_param(request, "to", info.end_s, -kTimeBound, kTimeBound);
    const std::int64_t from = int_param(request, "from", info.begin_s, -kTimeBound, to);
    const auto points = static_cast<std::size_t>(int_param(request, "points", 600, 2, 20000));
    const std::vector<std::string> scopes = view_->cost_scopes();
    const std::string scope = request.param("scope").value_or("cluster");
    if (!scopes.empty() && std::find(scopes.begin(), scopes.end(), scope) == scopes.end()) {
      throw HttpError(400, "parameter 'scope': no cost scope '" + scope.substr(0, 100) + "'");
    }
    json series{{"time", json::array()}, {"burn_usd_per_h", json::array()}, {"total_usd", json::array()}};
    for (const CostPoint& p : view_->cost_series(scope, from, to, points)) {
      series["time"].push_back(p.time);
      series["burn_usd_per_h"].push_back(p.burn_usd_per_h);
      series["total_usd"].push_back(p.total_usd);
    }
    return HttpResponse::json(
        json{{"scopes", scopes}, {"scope", scope}, {"from", from}, {"to", to}, {"series", series}}.dump(
            -1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/gantt") {
    GanttQuery q;
    q.to_s = int_param(request, "to", info.end_s, -kTimeBound, kTimeBound);
    q.from_s = int_param(request, "from", info.begin_s, -kTimeBound, q.to_s);
    const auto nodes = static_cast<std::int64_t>(info.nodes);
    q.node_from = static_cast<std::int32_t>(int_param(request, "node_from", 0, 0, nodes));
    q.node_to = static_cast<std::int32_t>(int_param(request, "node_to", nodes, q.node_from, nodes));
    q.width = static_cast<std::int32_t>(int_param(request, "width", 1200, 1, 4096));
    q.height = static_cast<std::int32_t>(int_param(request, "height", 800, 1, 4096));
    const GanttView g = view_->gantt(q);
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
  if (path == "/api/series/cluster") {
    const std::int64_t to = int_param(request, "to", info.end_s, -kTimeBound, kTimeBound);
    const std::int64_t from = int_param(request, "from", info.begin_s, -kTimeBound, kTimeBound);
    const auto points = static_cast<std::size_t>(int_param(request, "points", 600, 1, 20000));
    json s{{"time", json::array()},        {"pending", json::array()},      {"running", json::array()},
           {"gpus_alloc", json::array()},  {"gpu_util_pct", json::array()}, {"nodes_down", json::array()},
           {"nodes_drain", json::array()}, {"gpu_power_w", json::array()}};
    for (const ClusterPoint& p : view_->cluster_series(from, to, points)) {
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
    s["total_gpus"] = info.total_gpus;
    return HttpResponse::json(s.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  if (path == "/api/events") {
    const std::int64_t t = at();
    const auto limit = static_cast<std::size_t>(int_param(request, "limit", 200, 1, 100000));
    const std::string kind = request.param("kind").value_or("");
    if (!kind.empty() && kind != "job" && kind != "node" && kind != "fault" && kind != "action") {
      throw HttpError(400, "parameter 'kind': expected job, node, fault or action");
    }
    const std::string format = request.param("format").value_or("json");
    if (format != "json" && format != "text") throw HttpError(400, "parameter 'format': expected json or text");
    const auto events = view_->events(t, limit, kind);
    if (format == "text") {
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
    return HttpResponse::json(json{{"t", t}, {"events", rows}}.dump(-1, ' ', false, kReplaceInvalidUtf8));
  }
  throw HttpError(404, "no API endpoint " + path.substr(0, 100));
}

HttpResponse DashboardApi::metrics(const HttpRequest& request) const {
  MetricsExportOptions options;
  options.at_s = int_param(request, "t", view_->info().end_s, 0, view_->info().end_s);
  // dcgm-exporter's label names (UUID, modelName, Hostname) by default, as Grafana's DCGM dashboards expect;
  // labels=snake gives names promtool's linter accepts.
  const auto labels = request.query.find("labels");
  if (labels != request.query.end() && labels->second != "dcgm" && labels->second != "snake") {
    throw HttpError(400, "labels: dcgm or snake");
  }
  options.dcgm_labels = labels == request.query.end() || labels->second == "dcgm";
  std::ostringstream out;
  try {
    export_metrics(results_dir_, options, out);
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
