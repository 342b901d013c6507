#include "ui/slurm_api.hpp"

#include <jwt.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <limits>
#include <memory>
#include <string_view>

#include "model/input_limits.hpp"

namespace gputwin {
namespace {

// Answers quote request text (the method, a job id, a query value) and results text, which may hold bytes that are not
// UTF-8: they become U+FFFD instead of making dump() throw.
constexpr auto kReplaceInvalidUtf8 = SlurmJson::error_handler_t::replace;

constexpr std::string_view kNotFoundText =
    "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit "
    "'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes a list of all "
    "possible slurmrestd endpoints.";
constexpr std::string_view kNoAuthText = "Authentication does not apply to request";

/// slurmrestd's 404 for a path it does not serve (text/plain, as the real one).
HttpResponse not_found() {
  HttpResponse r = HttpResponse::text(std::string(kNotFoundText), "text/plain");
  r.status = 404;
  return r;
}

HttpResponse json_reply(const SlurmJson& body, int status = 200) {
  return HttpResponse::json(body.dump(-1, ' ', false, kReplaceInvalidUtf8), status);
}

/// A reply whose records are written one at a time, so that a large answer never holds all of them as JSON values
/// (a record is built, written and freed). Compact, as every JSON client reads it.
class RecordsReply {
 public:
  /// `expected`: how many records will come (reserves room for them after the first).
  RecordsReply(std::string key, std::size_t expected) : key_(std::move(key)), expected_(expected) {
    text_ = "{\"" + key_ + "\":[";
  }
  /// Appends one record.
  void add(const SlurmJson& record) {
    if (count_++ > 0) text_ += ',';
    text_ += record.dump(-1, ' ', false, kReplaceInvalidUtf8);
    if (count_ == 1 && expected_ > 1) text_.reserve(text_.size() * expected_ + text_.size() / 4 * expected_);
  }
  /// The whole reply: the records, then the fields slurm_reply puts after them (last_update, meta, errors, ...).
  HttpResponse finish(const SlurmShapeContext& context, SlurmPlugin plugin) && {
    const std::string rest =
        slurm_reply(context, plugin, key_, SlurmJson::array()).dump(-1, ' ', false, kReplaceInvalidUtf8);
    const std::string empty = "{\"" + key_ + "\":[]";  // slurm_reply puts the records first
    text_ += ']';
    text_.append(rest, empty.size());
    return HttpResponse::json(std::move(text_));
  }

 private:
  std::string key_;
  std::string text_;
  std::size_t expected_ = 0;
  std::size_t count_ = 0;
};

/// The record key an endpoint answers with ("" for ping and diag, which have their own).
std::string_view record_key(std::string_view endpoint) {
  if (endpoint == "jobs" || endpoint.starts_with("job/")) return "jobs";
  if (endpoint == "nodes" || endpoint.starts_with("node/")) return "nodes";
  if (endpoint == "partitions" || endpoint.starts_with("partition/")) return "partitions";
  if (endpoint == "reservations") return "reservations";
  if (endpoint == "qos") return "qos";
  if (endpoint == "accounts") return "accounts";
  if (endpoint == "associations") return "associations";
  return "";
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// A field of a write's body that gputwin cannot take: answered 400 naming it.
struct BadField {
  std::string text;  ///< "field 'time_limit': ..."
};

[[noreturn]] void bad_field(const std::string& field, const std::string& what) {
  throw BadField{"field '" + field + "': " + what};
}

/// String field `name` of `object` (absent: nullopt), at most `max` bytes.
std::optional<std::string> string_of(const SlurmJson& object, const std::string& name, std::size_t max) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) bad_field(name, "expected a string");
  const std::string& text = it->get_ref<const std::string&>();
  if (text.size() > max) bad_field(name, "longer than " + std::to_string(max) + " bytes");
  return text;
}

/// An integer from `lo` to `hi` given as a JSON integer or a decimal string (as slurmrestd's parsers take both).
std::int64_t integer_of(const SlurmJson& value, const std::string& field, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      bad_field(field, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    v = value.get<std::int64_t>();
  } else if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      bad_field(field, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  } else {
    bad_field(field, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  if (v < lo || v > hi)
    bad_field(field, "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

/// A `{set, infinite, number}` input (uint32_no_val/uint64_no_val: also a plain integer or a numeric string).
/// nullopt when unset (`set` false, or null); `infinite` tells an infinite value (then nullopt too).
std::optional<std::int64_t> no_val_of(const SlurmJson& object, const std::string& name, std::int64_t lo,
                                      std::int64_t hi, bool& infinite) {
  infinite = false;
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return integer_of(*it, name, lo, hi);
  for (const auto& [key, value] : it->items()) {
    if (key != "set" && key != "infinite" && key != "number")
      bad_field(name, "unknown key '" + key.substr(0, 40) + "'");
  }
  for (const char* key : {"set", "infinite"}) {
    if (it->contains(key) && !it->at(key).is_boolean()) bad_field(name + "." + key, "expected true or false");
  }
  if (it->value("infinite", false)) {
    infinite = true;
    return std::nullopt;
  }
  if (!it->value("set", it->contains("number"))) return std::nullopt;
  if (!it->contains("number")) bad_field(name + ".number", "expected an integer with set: true");
  return integer_of(it->at("number"), name + ".number", lo, hi);
}

/// GPUs of one `tres_per_node`/`tres_per_job` value: "gres/gpu:8", "gres/gpu:h100:8", "gres/gpu=8" (also "gres:"
/// and without the prefix); the GPU type is not checked. Comma-separated entries other than GPUs are refused.
std::uint64_t gpus_of(const std::string& text, const std::string& field, std::uint64_t max) {
  std::uint64_t gpus = 0;
  bool found = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    if (item.rfind("gres/", 0) == 0 || item.rfind("gres:", 0) == 0) item = item.substr(5);
    if (item.rfind("gpu", 0) != 0 || found) {
      bad_field(field, "expected one GPU request, gres/gpu[:TYPE]:COUNT (gputwin takes no other TRES here)");
    }
    found = true;
    const std::size_t sep = item.find_last_of(":=");
    const std::string count = sep == std::string::npos || sep < 3 ? "" : item.substr(sep + 1);
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), v);
    if (count.empty() || ec != std::errc() || p != count.data() + count.size() || v > max) {
      bad_field(field, "expected gres/gpu[:TYPE]:COUNT with a COUNT from 0 to " + std::to_string(max));
    }
    gpus = v;
    if (end == text.size()) break;
  }
  if (!found) bad_field(field, "expected gres/gpu[:TYPE]:COUNT");
  return gpus;
}

/// The simulated run time a job carries in its comment: "gputwin:run=SECONDS" (anywhere in it, separated by spaces
/// or commas); nullopt when the comment has none.
std::optional<std::int64_t> run_time_of(const std::string& comment) {
  constexpr std::string_view key = "gputwin:run=";
  const std::size_t at = comment.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::size_t end = comment.find_first_of(" ,;\t", at);
  if (end == std::string::npos) end = comment.size();
  const std::string value = comment.substr(at + key.size(), end - at - key.size());
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size() || v < 0 || v > kMaxDurationSeconds) {
    bad_field("comment", "gputwin:run= expects whole seconds from 0 to " + std::to_string(kMaxDurationSeconds));
  }
  return v;
}

/// A job of POST job/submit's body (`job`, v0.0.44 job_desc_msg) as a JobSpec; `hold` is its `hold`.
JobSpec job_of(const SlurmJson& job, const std::string& default_user, bool& hold) {
  if (!job.is_object()) bad_field("job", "expected an object (job_desc_msg)");
  for (const char* unsupported : {"array", "dependency", "begin_time", "reservation", "required_nodes"}) {
    if (job.contains(unsupported) && !job.at(unsupported).is_null()) {
      bad_field(unsupported, "not taken by gputwin's simulated submit (it models no such request made this way)");
    }
  }
  (void)string_of(job, "script", 1 << 20);  // ignored: the simulation runs no script
  JobSpec spec;
  spec.name = string_of(job, "name", 256).value_or("");
  spec.partition = string_of(job, "partition", 256).value_or("");
  if (spec.partition.find(',') != std::string::npos) bad_field("partition", "gputwin takes one partition");
  spec.account = string_of(job, "account", 256).value_or("");
  spec.qos = string_of(job, "qos", 256).value_or("");
  spec.user = string_of(job, "user_id", 256).value_or(default_user);
  if (spec.user.empty()) spec.user = "root";
  bool infinite = false;
  if (const auto minutes = no_val_of(job, "time_limit", 1, kMaxDurationSeconds / 60, infinite))
    spec.time_limit_s = *minutes * 60;
  // Nodes: minimum_nodes, else `nodes` ("N" or "N-M": the minimum), else 1.
  std::int64_t nodes = 0;
  if (const auto it = job.find("minimum_nodes"); it != job.end() && !it->is_null()) {
    nodes = integer_of(*it, "minimum_nodes", 1, static_cast<std::int64_t>(kMaxNodes));
  } else if (const auto n = job.find("nodes"); n != job.end() && !n->is_null()) {
    if (n->is_string()) {
      const std::string& text = n->get_ref<const std::string&>();
      const std::size_t dash = text.find('-');
      nodes = integer_of(SlurmJson(text.substr(0, dash)), "nodes", 1, static_cast<std::int64_t>(kMaxNodes));
      if (dash != std::string::npos)
        (void)integer_of(SlurmJson(text.substr(dash + 1)), "nodes", nodes, static_cast<std::int64_t>(kMaxNodes));
    } else {
      nodes = integer_of(*n, "nodes", 1, static_cast<std::int64_t>(kMaxNodes));
    }
  }
  if (const auto it = job.find("maximum_nodes"); it != job.end() && !it->is_null())
    (void)integer_of(*it, "maximum_nodes", std::max<std::int64_t>(nodes, 1), static_cast<std::int64_t>(kMaxNodes));
  spec.nodes = static_cast<std::uint32_t>(std::max<std::int64_t>(nodes, 1));
  // GPUs: per node, or per job split evenly over the nodes.
  const auto per_node = string_of(job, "tres_per_node", 1024);
  const auto per_job = string_of(job, "tres_per_job", 1024);
  if (per_node && per_job) bad_field("tres_per_job", "give tres_per_node or tres_per_job, not both");
  if (per_node) spec.gpus_per_node = static_cast<std::uint32_t>(gpus_of(*per_node, "tres_per_node", kMaxGpusPerNode));
  if (per_job) {
    const std::uint64_t total = gpus_of(*per_job, "tres_per_job", kMaxGpus);
    if (total % spec.nodes != 0 || total / spec.nodes > kMaxGpusPerNode) {
      bad_field("tres_per_job", std::to_string(total) + " GPUs do not split evenly over " + std::to_string(spec.nodes) +
                                    " node(s) (gputwin places GPUs per node)");
    }
    spec.gpus_per_node = static_cast<std::uint32_t>(total / spec.nodes);
  }
  // CPUs: minimum_cpus, else tasks x cpus_per_task, else one per node.
  constexpr std::int64_t kMaxCpus = std::numeric_limits<std::int32_t>::max();
  std::int64_t cpus = 0;
  if (const auto it = job.find("minimum_cpus"); it != job.end() && !it->is_null()) {
    cpus = integer_of(*it, "minimum_cpus", 1, kMaxCpus);
  } else {
    std::int64_t tasks = 1, per_task = 1;
    if (const auto it = job.find("tasks"); it != job.end() && !it->is_null())
      tasks = integer_of(*it, "tasks", 1, kMaxCpus);
    if (const auto it = job.find("cpus_per_task"); it != job.end() && !it->is_null())
      per_task = integer_of(*it, "cpus_per_task", 1, static_cast<std::int64_t>(kMaxCpusPerNode));
    if (tasks * per_task > kMaxCpus) bad_field("tasks", "tasks x cpus_per_task above " + std::to_string(kMaxCpus));
    cpus = tasks * per_task;
  }
  spec.cpus = static_cast<std::uint32_t>(std::max<std::int64_t>(cpus, spec.nodes));
  if (const auto mb =
          no_val_of(job, "memory_per_node", 0, static_cast<std::int64_t>(kMaxMemoryGbPerNode) * 1024, infinite))
    spec.mem_per_node_mb = static_cast<std::uint64_t>(*mb);
  if (const auto p = no_val_of(job, "priority", 1, std::numeric_limits<std::uint32_t>::max() - 1, infinite))
    spec.priority = static_cast<std::uint32_t>(*p);
  if (const auto it = job.find("hold"); it != job.end() && !it->is_null()) {
    if (!it->is_boolean()) bad_field("hold", "expected true or false");
    hold = it->get<bool>();
  }
  const std::string comment = string_of(job, "comment", 4096).value_or("");
  spec.run_time_s = run_time_of(comment).value_or(-1);  // -1: the run gives it its time limit
  return spec;
}

/// The changes of POST job/{id}'s body (job_desc_msg: hold, priority, time_limit; anything else is refused).
SlurmJobUpdate update_of(const SlurmJson& body) {
  if (!body.is_object()) bad_field("body", "expected a JSON object (job_desc_msg)");
  SlurmJobUpdate update;
  for (const auto& [key, value] : body.items()) {
    if (key != "hold" && key != "priority" && key != "time_limit" && key != "job_id") {
      bad_field(key.substr(0, 40), "gputwin's job update takes hold, priority and time_limit");
    }
  }
  bool infinite = false;
  if (const auto it = body.find("hold"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) bad_field("hold", "expected true or false");
    update.hold = it->get<bool>();
  }
  if (const auto p = no_val_of(body, "priority", 0, std::numeric_limits<std::uint32_t>::max() - 1, infinite)) {
    if (*p == 0) {
      update.hold = true;  // priority 0 holds the job, as scontrol update priority=0 (and scontrol hold) do
    } else {
      update.priority = static_cast<std::uint32_t>(*p);
    }
  }
  if (infinite) bad_field("priority", "expected a number (infinite is not taken)");
  if (const auto minutes = no_val_of(body, "time_limit", 1, kMaxDurationSeconds / 60, infinite))
    update.time_limit_s = *minutes * 60;
  if (infinite) bad_field("time_limit", "expected a number of minutes (infinite is not taken)");
  return update;
}

struct JwtDeleter {
  void operator()(jwt_t* jwt) const { jwt_free(jwt); }
};

}  // namespace

SlurmApi::SlurmApi(const SlurmSource& source, SlurmApiOptions options)
    : source_(source), options_(std::move(options)) {}

std::optional<std::string> SlurmApi::authenticate(const HttpRequest& request, std::string& problem) const {
  const auto user = request.headers.find("x-slurm-user-name");
  const auto token = request.headers.find("x-slurm-user-token");
  if (user == request.headers.end() || token == request.headers.end() || user->second.empty() ||
      token->second.empty()) {
    problem = "missing";
    return std::nullopt;
  }
  jwt_t* raw = nullptr;
  const auto& key = options_.jwt_key;
  if (jwt_decode(&raw, token->second.c_str(), reinterpret_cast<const unsigned char*>(key.data()),
                 static_cast<int>(key.size())) != 0 ||
      raw == nullptr) {
    problem = "bad signature";
    return std::nullopt;
  }
  const std::unique_ptr<jwt_t, JwtDeleter> jwt(raw);
  if (jwt_get_alg(jwt.get()) != JWT_ALG_HS256) {
    problem = "not HS256";
    return std::nullopt;
  }
  errno = 0;
  const long expires = jwt_get_grant_int(jwt.get(), "exp");
  if (errno != 0 || expires <= static_cast<long>(std::time(nullptr))) {
    problem = "expired";
    return std::nullopt;
  }
  const char* sun = jwt_get_grant(jwt.get(), "sun");
  const std::string subject = sun == nullptr ? "" : sun;
  if (subject != user->second && subject != "root" && subject != "slurm") {
    problem = "token of another user";
    return std::nullopt;
  }
  return user->second;
}

HttpResponse SlurmApi::handle(const HttpRequest& request) const {
  std::string_view path = request.path;
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  // /slurm/v0.0.44/jobs -> daemon "slurm", version "v0.0.44", endpoint "jobs"
  if (!path.starts_with('/')) return not_found();
  const std::size_t daemon_end = path.find('/', 1);
  if (daemon_end == std::string_view::npos) return not_found();
  const std::string_view daemon = path.substr(1, daemon_end - 1);
  const std::size_t version_end = path.find('/', daemon_end + 1);
  if (version_end == std::string_view::npos) return not_found();
  const auto version = parse_slurm_api_version(path.substr(daemon_end + 1, version_end - daemon_end - 1));
  if (!version || (daemon != "slurm" && daemon != "slurmdb")) return not_found();
  const std::string endpoint(path.substr(version_end + 1));

  SlurmShapeContext context = source_.context();
  context.version = *version;
  const SlurmPlugin plugin = daemon == "slurm" ? SlurmPlugin::kSlurmctld : SlurmPlugin::kSlurmdbd;
  if (!options_.jwt_key.empty()) {
    std::string problem;
    const auto user = authenticate(request, problem);
    if (!user) {
      if (problem == "missing") {
        HttpResponse r = HttpResponse::text(std::string(kNoAuthText), "text/plain");
        r.status = 500;
        return r;
      }
      const std::string_view key = record_key(endpoint);
      const SlurmJson errors = SlurmJson::array({slurm_error(
          "Unable to query " + (key.empty() ? endpoint : std::string(key)), 1007, "Protocol authentication error",
          "slurm_load_" + (key.empty() ? endpoint : std::string(key)) + "()")});
      return json_reply(slurm_reply(context, plugin, key, SlurmJson::array(), errors), 511);
    }
    context.client_user = *user;
  }
  if (request.method != "GET" && options_.writer != nullptr && plugin == SlurmPlugin::kSlurmctld &&
      context.version == SlurmApiVersion::k44) {
    if (auto reply = write(request, context, endpoint)) return *reply;
  }
  if (request.method != "GET") {
    const SlurmJson errors = SlurmJson::array({slurm_error(
        "gputwin serves an ended run: its slurmrestd-compatible API takes no " + request.method + " requests", 1,
        "Unspecified error", "gputwin")});
    return json_reply(slurm_reply(context, plugin, record_key(endpoint), SlurmJson::array(), errors), 403);
  }
  return plugin == SlurmPlugin::kSlurmctld ? slurmctld(request, context, endpoint)
                                           : slurmdbd(request, context, endpoint);
}

std::optional<HttpResponse> SlurmApi::write(const HttpRequest& request, const SlurmShapeContext& context,
                                            const std::string& endpoint) const {
  const auto ctld = SlurmPlugin::kSlurmctld;
  // openapi_resp (node update) and openapi_kill_job_resp (job delete): meta, errors, warnings (and status).
  const auto reply = [&](const std::pair<int, std::string>& result, const char* source, bool kill) {
    SlurmJson body;
    if (kill) body["status"] = SlurmJson::array();
    body["meta"] = slurm_meta(context, ctld);
    body["errors"] = result.first == 0
                         ? SlurmJson::array()
                         : SlurmJson::array({slurm_error(result.second, result.first, result.second, source)});
    body["warnings"] = SlurmJson::array();
    return json_reply(body, result.first == 0 ? 200 : 500);
  };
  const auto bad = [&](const std::string& text, const char* source) {
    return reply({9000, text}, source, false);  // slurmrestd's ESLURM_REST_INVALID_QUERY
  };
  if (options_.jwt_key.empty()) {
    // No JWT key: a write must carry the live run's control token (as its X-SLURM-USER-TOKEN).
    const std::string token = request.header("x-slurm-user-token");
    bool same = !options_.write_token.empty() && token.size() == options_.write_token.size();
    unsigned char diff = 0;
    for (std::size_t i = 0; same && i < token.size(); ++i)
      diff |= static_cast<unsigned char>(token[i] ^ options_.write_token[i]);
    if (!same || diff != 0) {
      SlurmJson body;
      body["meta"] = slurm_meta(context, ctld);
      body["errors"] = SlurmJson::array(
          {slurm_error("writes need X-SLURM-USER-TOKEN: the run's control token (or a JWT with --jwt-key)", 1007,
                       "Protocol authentication error", "gputwin")});
      body["warnings"] = SlurmJson::array();
      return json_reply(body, 511);
    }
  }
  // A body field gputwin cannot take: 400 naming it, slurmrestd's ESLURM_REST_INVALID_QUERY.
  const auto bad_request = [&](const std::string& text, const char* source) {
    SlurmJson body;
    body["meta"] = slurm_meta(context, ctld);
    body["errors"] = SlurmJson::array({slurm_error(text, 9000, "Query is invalid", source)});
    body["warnings"] = SlurmJson::array();
    return json_reply(body, 400);
  };
  if (request.method == "POST" && endpoint == "job/submit") {
    // openapi_job_submit_response: job_id, step_id, job_submit_user_msg, meta, errors, warnings.
    const SlurmJson body = SlurmJson::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      return bad_request("body: unable to parse the request body as a JSON object", "_op_handler_submit_job_post");
    JobSpec spec;
    bool hold = false;
    try {
      if (body.contains("jobs")) bad_field("jobs", "heterogeneous jobs are not taken by gputwin's simulated submit");
      if (!body.contains("job")) bad_field("job", "expected the job's description (job_desc_msg)");
      (void)string_of(body, "script", 1 << 20);
      // The job's owner by default: the request's user (the JWT's, checked, with a key; else the header's).
      std::string user = request.header("x-slurm-user-name").substr(0, 256);
      if (user.empty()) user = context.client_user;
      spec = job_of(body.at("job"), user, hold);
    } catch (const BadField& e) {
      return bad_request(e.text, "_op_handler_submit_job_post");
    }
    const SlurmSubmitResult result = options_.writer->submit_job(spec, hold);
    SlurmJson reply;
    if (result.error == 0) {
      reply["job_id"] = result.job_id;
      reply["step_id"] = "batch";
      reply["job_submit_user_msg"] = "";
    }
    reply["meta"] = slurm_meta(context, ctld);
    reply["errors"] =
        result.error == 0
            ? SlurmJson::array()
            : SlurmJson::array({slurm_error(result.message, result.error, result.message, "slurm_submit_batch_job()")});
    // A held submit succeeds with a warning (25.05's slurmrestd: 200, job_id, warnings[]; errors empty).
    reply["warnings"] = result.error == 0 && hold
                            ? SlurmJson::array({slurm_warning("Job is in held state, pending scheduler release",
                                                              "slurm_submit_batch_job()")})
                            : SlurmJson::array();
    return json_reply(reply, result.error == 0 ? 200 : 500);
  }
  if (request.method == "POST" && endpoint.rfind("job/", 0) == 0 && endpoint.size() > 4) {
    // openapi_job_post_response: results (null for a job that is not an array, as 25.05 answered), meta, errors,
    // warnings.
    const std::string id_text = endpoint.substr(4);
    std::int64_t id = 0;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    SlurmJobUpdate update;
    std::pair<int, std::string> result{0, ""};
    if (ec != std::errc() || end != id_text.data() + id_text.size() || id <= 0) {
      result = {2017, "Invalid job id specified"};
    } else {
      const SlurmJson body = SlurmJson::parse(request.body, nullptr, false);
      if (body.is_discarded() || !body.is_object())
        return bad_request("body: unable to parse the request body as a JSON object", "_job_post_update");
      try {
        update = update_of(body);
        if (const auto it = body.find("job_id"); it != body.end() && !it->is_null()) {
          if (integer_of(*it, "job_id", 1, std::numeric_limits<std::int32_t>::max()) != id)
            bad_field("job_id", "differs from the job id in the path");
        }
      } catch (const BadField& e) {
        return bad_request(e.text, "_job_post_update");
      }
      result = options_.writer->update_job(id, update);
    }
    SlurmJson reply;
    reply["results"] = nullptr;
    reply["meta"] = slurm_meta(context, ctld);
    reply["errors"] =
        result.first == 0
            ? SlurmJson::array()
            : SlurmJson::array({slurm_error(result.second, result.first, result.second, "slurm_update_job2()")});
    reply["warnings"] = SlurmJson::array();
    return json_reply(reply, result.first == 0 ? 200 : 500);
  }
  if (request.method == "POST" && endpoint.rfind("node/", 0) == 0 && endpoint.size() > 5) {
    const std::string name = endpoint.substr(5);
    const SlurmJson body = SlurmJson::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      return bad("Unable to parse the request body as JSON", "_update_node");
    const auto state = body.find("state");
    if (state == body.end() || !state->is_array() || state->size() != 1 || !(*state)[0].is_string()) {
      return bad("state: expected one of [\"DRAIN\"], [\"RESUME\"], [\"UNDRAIN\"]", "_update_node");
    }
    const std::string value = (*state)[0].get<std::string>();
    if (value != "DRAIN" && value != "RESUME" && value != "UNDRAIN") {
      return bad("state: " + value.substr(0, 40) + ": gputwin takes DRAIN, RESUME or UNDRAIN", "_update_node");
    }
    std::string reason;
    if (const auto r = body.find("reason"); r != body.end()) {
      if (!r->is_string()) return bad("reason: expected a string", "_update_node");
      reason = r->get<std::string>().substr(0, 200);
    }
    if (value == "DRAIN" && reason.empty()) reason = "drained through slurmrestd";
    return reply(options_.writer->update_node(name, value == "DRAIN", reason), "_update_node", false);
  }
  if (request.method == "DELETE" && endpoint.rfind("job/", 0) == 0) {
    const std::string id_text = endpoint.substr(4);
    std::int64_t id = 0;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size() || id <= 0) {
      return reply({2017, "Invalid job id specified"}, "_handle_job_delete", true);
    }
    return reply(options_.writer->cancel_job(id), "_handle_job_delete", true);
  }
  return std::nullopt;
}

HttpResponse SlurmApi::slurmctld(const HttpRequest&, SlurmShapeContext& context, const std::string& endpoint) const {
  const auto ctld = SlurmPlugin::kSlurmctld;
  if (endpoint == "ping") {
    SlurmJson reply;
    reply["pings"] = slurm_pings(context);
    reply["meta"] = slurm_meta(context, ctld);
    reply["errors"] = SlurmJson::array();
    reply["warnings"] = SlurmJson::array();
    return json_reply(reply);
  }
  if (endpoint == "diag") {
    SlurmJson reply;
    reply["statistics"] = slurm_diag_statistics(context, source_.diag());
    reply["meta"] = slurm_meta(context, ctld);
    reply["errors"] = SlurmJson::array();
    reply["warnings"] = SlurmJson::array();
    return json_reply(reply);
  }
  if (endpoint == "jobs") {
    const std::vector<ServedJob> jobs = source_.controller_jobs();
    RecordsReply reply("jobs", jobs.size());
    for (const ServedJob& job : jobs) reply.add(slurmctld_job(context, job));
    return std::move(reply).finish(context, ctld);
  }
  if (endpoint.starts_with("job/")) {
    const std::string id_text = endpoint.substr(4);
    const auto id = parse_integer(id_text);
    const auto job = id ? source_.controller_job(*id) : std::nullopt;
    if (!job) {
      const SlurmJson errors = SlurmJson::array(
          {slurm_error("Unable to query JobId=" + id_text, 2017, "Invalid job id specified", "_handle_job_get")});
      return json_reply(slurm_reply(context, ctld, "jobs", SlurmJson::array(), errors), 404);
    }
    return json_reply(slurm_reply(context, ctld, "jobs", SlurmJson::array({slurmctld_job(context, *job)})));
  }
  if (endpoint == "nodes" || endpoint.starts_with("node/")) {
    const bool one = endpoint != "nodes";
    const std::string name = one ? endpoint.substr(5) : "";
    const std::vector<ServedNode> nodes = source_.nodes();
    RecordsReply reply("nodes", one ? 1 : nodes.size());
    bool found = false;
    for (const ServedNode& node : nodes) {
      if (one && node.row.name != name) continue;
      reply.add(slurm_node(context, node));
      found = true;
    }
    if (one && !found) {
      const SlurmJson errors =
          SlurmJson::array({slurm_error("Failure to query node " + name, 0, "No error", "_dump_nodes")});
      return json_reply(slurm_reply(context, ctld, "", SlurmJson(), errors));
    }
    return std::move(reply).finish(context, ctld);
  }
  if (endpoint == "partitions" || endpoint.starts_with("partition/")) {
    const bool one = endpoint != "partitions";
    const std::string name = one ? endpoint.substr(10) : "";
    SlurmJson records = SlurmJson::array();
    for (const PartitionRow& p : source_.partitions()) {
      if (!one || p.name == name) records.push_back(slurm_partition(context, p));
    }
    if (one && records.empty()) {
      const SlurmJson errors = SlurmJson::array(
          {slurm_error("Unable to find partition " + name, 2010, "Invalid partition name specified", "_dump_part")});
      return json_reply(slurm_reply(context, ctld, "partitions", SlurmJson::array(), errors));
    }
    return json_reply(slurm_reply(context, ctld, "partitions", std::move(records)));
  }
  if (endpoint == "reservations") {
    return json_reply(slurm_reply(context, ctld, "reservations", SlurmJson::array()));
  }
  return not_found();
}

HttpResponse SlurmApi::slurmdbd(const HttpRequest& request, SlurmShapeContext& context,
                                const std::string& endpoint) const {
  const auto dbd = SlurmPlugin::kSlurmdbd;
  if (endpoint == "jobs") {
    // start_time/end_time in Unix seconds, as slurmrestd takes them; by default the last day, as sacct's window
    std::int64_t from_s = context.now_s - 86'400;
    std::int64_t to_s = context.now_s;
    for (const auto& [name, target] : {std::pair{"start_time", &from_s}, std::pair{"end_time", &to_s}}) {
      const auto it = request.query.find(name);
      if (it == request.query.end()) continue;
      const auto value = parse_integer(it->second);
      if (!value) {
        const SlurmJson errors = SlurmJson::array(
            {slurm_error(std::string("Invalid ") + name + " '" + it->second.substr(0, 64) + "': expected Unix seconds",
                         9000, "Unspecified error", "_parse_query")});
        return json_reply(slurm_reply(context, dbd, "jobs", SlurmJson::array(), errors), 400);
      }
      *target = *value - context.epoch_unix_s;
    }
    const auto jobs = source_.accounting_jobs(from_s, to_s, options_.max_accounting_jobs + 1);
    if (jobs.size() > options_.max_accounting_jobs) {
      const SlurmJson errors = SlurmJson::array(
          {slurm_error("Too wide of a date range in query: over " + std::to_string(options_.max_accounting_jobs) +
                           " jobs; narrow start_time and end_time",
                       7000, "Unspecified error", "_dump_jobs")});
      return json_reply(slurm_reply(context, dbd, "jobs", SlurmJson::array(), errors), 400);
    }
    RecordsReply reply("jobs", jobs.size());
    for (const ServedJob& job : jobs) reply.add(slurmdbd_job(context, job));
    return std::move(reply).finish(context, dbd);
  }
  if (endpoint.starts_with("job/")) {
    const auto id = parse_integer(endpoint.substr(4));
    const auto job = id ? source_.accounting_job(*id) : std::nullopt;
    if (!job) {
      const SlurmJson warnings = SlurmJson::array({slurm_warning("slurmdb_jobs_get() found nothing", "_dump_jobs")});
      return json_reply(slurm_reply(context, dbd, "jobs", SlurmJson::array(), SlurmJson::array(), warnings));
    }
    return json_reply(slurm_reply(context, dbd, "jobs", SlurmJson::array({slurmdbd_job(context, *job)})));
  }
  if (endpoint == "qos") {
    SlurmJson records = SlurmJson::array();
    for (const ServedQos& q : source_.qos()) records.push_back(slurm_qos(context, q));
    return json_reply(slurm_reply(context, dbd, "qos", std::move(records)));
  }
  if (endpoint == "accounts") {
    SlurmJson records = SlurmJson::array();
    for (const ServedAccount& a : source_.accounts()) records.push_back(slurm_account(context, a));
    return json_reply(slurm_reply(context, dbd, "accounts", std::move(records)));
  }
  if (endpoint == "associations") {
    const std::vector<ServedAssociation> associations = source_.associations();
    RecordsReply reply("associations", associations.size());
    for (const ServedAssociation& a : associations) reply.add(slurm_association(context, a));
    return std::move(reply).finish(context, dbd);
  }
  return not_found();
}

}  // namespace gputwin
