#include "ui/slurm_api.hpp"

#include <jwt.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <memory>
#include <string_view>

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
