// The slurmrestd client; see slurmrestd_client.hpp. One libcurl easy handle per client keeps the connection alive
// between calls. Every failure is classified once, here, into a RestFailure; every text that goes into a message
// (Slurm's errors[], a body snippet, curl's error) is scrubbed of the token first.
#include "twin/rest/slurmrestd_client.hpp"

#include <curl/curl.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

namespace gputwin {
namespace {

constexpr std::size_t kSnippetChars = 200;              // How much of an unexpected body a message quotes.
constexpr std::size_t kMinScrubbedToken = 4;            // Shorter "tokens" would garble every message.
constexpr std::uint64_t kMaxReserveBytes = 1ull << 30;  // Trust a Content-Length this far for reserve().
constexpr long kCurlBufferBytes = 512 * 1024;  // libcurl's largest receive buffer: fewer callbacks on big replies.
constexpr const char* kAuthHint = "check the token (SLURM_JWT) and user";

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// `text` with every occurrence of `token` (and a token prefix cut off at its end) replaced by "<token>".
std::string scrub(std::string text, const std::string& token) {
  if (token.size() < kMinScrubbedToken) return text;
  const std::string mask = "<token>";
  for (auto pos = text.find(token); pos != std::string::npos; pos = text.find(token, pos + mask.size())) {
    text.replace(pos, token.size(), mask);
  }
  for (std::size_t n = std::min(token.size() - 1, text.size()); n >= kMinScrubbedToken; --n) {
    if (text.compare(text.size() - n, n, token, 0, n) == 0) {
      text.replace(text.size() - n, n, mask);
      break;
    }
  }
  return text;
}

/// `text` on one line: control characters become spaces, runs of spaces one, and non-ASCII bytes '?' if asked.
std::string one_line(std::string_view text, bool ascii_only) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) c = ' ';
    if (ascii_only && c >= 0x80) c = '?';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(static_cast<char>(c));
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

/// The media type of a Content-Type header, without parameters ("text/html; charset=utf-8" -> "text/html").
std::string media_type(const std::string& content_type) {
  return one_line(lower(content_type.substr(0, content_type.find(';'))), true);
}

/// What an unexpected body is: "not a slurmrestd reply (text/html)", "empty reply", or its first characters.
std::string describe_body(const std::string& body, const std::string& content_type, const std::string& token) {
  const std::string type = media_type(content_type);
  const auto first = body.find_first_not_of(" \t\r\n");
  if (contains(type, "html") || (first != std::string::npos && body[first] == '<')) {
    return "not a slurmrestd reply (" + (type.empty() ? std::string("HTML") : type) + ")";
  }
  if (first == std::string::npos) return type.empty() ? "empty reply" : "empty reply (" + type + ")";
  std::string head = one_line(scrub(body.substr(0, kSnippetChars + token.size()), token), true);
  if (head.size() > kSnippetChars) head = scrub(head.substr(0, kSnippetChars), token) + "...";
  return head;
}

/// "Invalid job id specified: Unable to find JobId=9 (slurm_load_job)"; several joined by "; ".
std::string describe_messages(const std::vector<RestMessage>& messages, const std::string& token) {
  std::string out;
  for (const RestMessage& m : messages) {
    std::string one = m.error;
    if (!m.description.empty() && m.description != m.error) one += (one.empty() ? "" : ": ") + m.description;
    if (one.empty()) one = "error " + std::to_string(m.error_number);
    if (!m.source.empty()) one += " (" + m.source + ")";
    out += (out.empty() ? "" : "; ") + one;
  }
  return one_line(scrub(out, token), false);
}

/// errors[] with the token scrubbed from every text, for SlurmrestdError::errors.
std::vector<RestMessage> scrubbed(std::vector<RestMessage> messages, const std::string& token) {
  for (RestMessage& m : messages) {
    m.error = scrub(std::move(m.error), token);
    m.description = scrub(std::move(m.description), token);
    m.source = scrub(std::move(m.source), token);
  }
  return messages;
}

/// An error that says authentication failed: Slurm's SLURM_PROTOCOL_AUTHENTICATION_ERROR (1007), or its words.
bool says_auth(const RestMessage& m) {
  if (m.error_number == 1007) return true;
  const std::string text = lower(m.error + " " + m.description);
  return contains(text, "auth") || contains(text, "token") || contains(text, "jwt");
}

/// 22.05 (v0.0.38) checks only that the JWT headers are present; slurmctld then rejects the token and every
/// endpoint answers 500 with nothing but "Unspecified error" (error_number -1): treat that as an auth failure.
bool is_legacy_rejected_token(const std::vector<RestMessage>& errors, long status, const std::string& path) {
  if (status != 500 || errors.empty() || !contains(path, "/v0.0.38/")) return false;
  return std::all_of(errors.begin(), errors.end(), [](const RestMessage& m) {
    return m.error == "Unspecified error" && (m.error_number == -1 || m.error_number == 0);
  });
}

bool any_auth(const std::vector<RestMessage>& messages) {
  return std::any_of(messages.begin(), messages.end(), says_auth);
}

/// 22.05's slurmdb answers a query without matches with errors[] 9003 "Nothing found with query" (and no list).
bool is_nothing_found(const std::vector<RestMessage>& errors) {
  return !errors.empty() && std::all_of(errors.begin(), errors.end(), [](const RestMessage& m) {
    return m.error_number == 9003 || contains(lower(m.error), "nothing found");
  });
}

RestFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return RestFailure::kTimeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
      return RestFailure::kTls;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING:
      return RestFailure::kReply;
    default:  // COULDNT_CONNECT, COULDNT_RESOLVE_HOST, RECV_ERROR, SEND_ERROR, GOT_NOTHING, PARTIAL_FILE, ...
      return RestFailure::kConnect;
  }
}

std::string describe_curl(CURLcode code, const char* error_buffer) {
  const std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return "timed out (" + detail + ")";
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      return "cannot connect (" + detail + ")";
    case CURLE_GOT_NOTHING:
      return "connection closed without a reply";
    case CURLE_PARTIAL_FILE:
      return "connection closed in the middle of the reply (" + detail + ")";
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return "connection dropped (" + detail + ")";
    default:
      return classify(code) == RestFailure::kTls ? "TLS failure (" + detail + ")" : detail;
  }
}

/// Where libcurl writes a reply body: grows `body` up to `max` bytes, then aborts the transfer.
struct BodySink {
  std::string* body;
  std::uint64_t max;
  CURL* easy;
  bool reserved = false;
  bool too_large = false;
};

std::size_t write_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const std::size_t bytes = size * count;
  if (!sink->reserved) {  // One allocation for a large reply, instead of doubling through it.
    sink->reserved = true;
    curl_off_t length = -1;
    if (curl_easy_getinfo(sink->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length > 0 &&
        static_cast<std::uint64_t>(length) <= std::min(sink->max, kMaxReserveBytes)) {
      sink->body->reserve(static_cast<std::size_t>(length));
    }
  }
  if (sink->body->size() + bytes > sink->max) {
    sink->too_large = true;
    return 0;  // libcurl stops with CURLE_WRITE_ERROR.
  }
  sink->body->append(data, bytes);
  return bytes;
}

/// `slurm_time` for a slurmdb query: v0.0.38 reads times with parse_time(), which takes "uts<epoch>" (an integer
/// is refused there: "Unable to parse time format"); later versions take the integer.
std::string slurmdb_time(std::int64_t epoch_s, ApiVersion version) {
  if (version != ApiVersion::k38) return std::to_string(epoch_s);
  return "uts" + std::to_string(std::max<std::int64_t>(epoch_s, 1000000));  // parse_time refuses uts < 1000000.
}

/// True if `body` is a JSON object with a "meta" object (every genuine slurmrestd reply has one).
bool has_meta(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body).get(root) != simdjson::SUCCESS) return false;
  simdjson::dom::object meta;
  return root["meta"].get_object().get(meta) == simdjson::SUCCESS;
}

/// The failures in a v0.0.40+ DELETE reply's status[] (an unknown job answers 200 with status[0].error.code 2017).
std::vector<RestMessage> status_errors(const std::string& body) {
  std::vector<RestMessage> out;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::array statuses;
  if (parser.parse(body).get(root) != simdjson::SUCCESS || root["status"].get_array().get(statuses)) return out;
  for (simdjson::dom::element status : statuses) {
    std::int64_t code = 0;
    if (status["error"]["code"].get_int64().get(code) != simdjson::SUCCESS || code == 0) continue;
    RestMessage message;
    message.error_number = code;
    std::string_view text;
    if (status["error"]["string"].get_string().get(text) == simdjson::SUCCESS) message.error = std::string(text);
    if (status["error"]["message"].get_string().get(text) == simdjson::SUCCESS) message.description = std::string(text);
    out.push_back(std::move(message));
  }
  return out;
}

bool is_retryable(const SlurmrestdError& error) {
  switch (error.kind()) {
    case RestFailure::kConnect:
    case RestFailure::kTimeout:
      return true;
    case RestFailure::kHttp:
      return error.status() >= 500;
    default:
      return false;
  }
}

std::string base_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

SlurmrestdError::SlurmrestdError(RestFailure kind, std::string endpoint, long status, const std::string& problem)
    : std::runtime_error(endpoint + ": " + problem), kind_(kind), endpoint_(std::move(endpoint)), status_(status) {}

/// The reused easy handle and the two header lists (with and without a JSON body).
struct SlurmrestdClient::Curl {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_slist* body_headers = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {};

  Curl() = default;
  Curl(const Curl&) = delete;
  Curl& operator=(const Curl&) = delete;
  ~Curl() {
    curl_slist_free_all(headers);
    curl_slist_free_all(body_headers);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

SlurmrestdClient::SlurmrestdClient(ClientOptions options)
    : options_(std::move(options)), curl_(std::make_unique<Curl>()) {
  init_curl_once();
  options_.url = base_url(options_.url);
  if (options_.version) {
    version_ = *options_.version;
    node_update_ = version_ >= ApiVersion::k39;
  }
  curl_->easy = curl_easy_init();
  if (curl_->easy == nullptr) throw std::runtime_error("slurmrestd client: curl_easy_init failed");
  std::vector<std::string> lines = {"Accept: application/json", "Expect:"};
  if (!options_.user.empty()) lines.push_back("X-SLURM-USER-NAME: " + options_.user);
  if (!options_.token.empty()) lines.push_back("X-SLURM-USER-TOKEN: " + options_.token);
  for (const std::string& line : lines) {
    curl_->headers = curl_slist_append(curl_->headers, line.c_str());
    curl_->body_headers = curl_slist_append(curl_->body_headers, line.c_str());
  }
  curl_->body_headers = curl_slist_append(curl_->body_headers, "Content-Type: application/json");

  CURL* easy = curl_->easy;
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, curl_->error_buffer);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_s * 1000));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_s * 1000));
  curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_reply_bytes));
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, kCurlBufferBytes);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_body);
  if (!options_.cacert.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, options_.cacert.c_str());
}

SlurmrestdClient::~SlurmrestdClient() = default;

void SlurmrestdClient::fail(RestFailure kind, const std::string& endpoint, long status, const std::string& problem,
                            std::vector<RestMessage> errors) const {
  SlurmrestdError error(kind, scrub(endpoint, options_.token), status, scrub(problem, options_.token));
  error.errors = scrubbed(std::move(errors), options_.token);
  throw error;
}

void SlurmrestdClient::warn(const std::string& message) const {
  const std::string text = scrub(message, options_.token);
  if (options_.on_warning) {
    options_.on_warning(text);
  } else {
    std::cerr << "gputwin: warning: " << text << '\n';
  }
}

template <class Parse>
auto SlurmrestdClient::parsed(const RestResponse& response, Parse&& parse) const -> decltype(parse()) {
  try {
    return parse();
  } catch (const RestReplyError& error) {
    std::string problem = error.what();
    const std::string prefix = response.endpoint + ": ";
    if (problem.compare(0, prefix.size(), prefix) == 0) problem.erase(0, prefix.size());
    fail(RestFailure::kReply, response.endpoint, response.status, problem);
  }
}

std::string SlurmrestdClient::slurm_path(std::string_view rest) const {
  return std::string("/slurm/") + api_version_name(version_) + "/" + std::string(rest);
}

std::string SlurmrestdClient::slurmdb_path(std::string_view rest) const {
  return std::string("/slurmdb/") + api_version_name(version_) + "/" + std::string(rest);
}

RestResponse SlurmrestdClient::perform(const std::string& method, const std::string& path, const std::string& body,
                                       bool reuse_buffer) {
  RestResponse response;
  if (reuse_buffer) {  // the previous large reply's memory, already touched
    response.body.swap(spare_body_);
    response.body.clear();
  }
  response.endpoint = method + " " + path;
  CURL* easy = curl_->easy;
  const std::string url = options_.url + path;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);  // Resets the method and body of the previous call.
  curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, nullptr);
  if (method == "POST" || !body.empty()) {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  if (method != "GET" && method != "POST") curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, body.empty() ? curl_->headers : curl_->body_headers);
  BodySink sink{&response.body, options_.max_reply_bytes, easy};
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &sink);
  curl_->error_buffer[0] = '\0';

  const CURLcode code = curl_easy_perform(easy);
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response.status);
  const char* content_type = nullptr;
  curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type != nullptr) response.content_type = content_type;
  if (sink.too_large || code == CURLE_FILESIZE_EXCEEDED) {
    fail(RestFailure::kReply, response.endpoint, response.status,
         "reply larger than " + std::to_string(options_.max_reply_bytes) + " bytes");
  }
  if (code != CURLE_OK) {
    fail(classify(code), response.endpoint, response.status, describe_curl(code, curl_->error_buffer));
  }
  return response;
}

void SlurmrestdClient::check_reply(const RestResponse& response, RestMessages* messages) const {
  RestMessages parsed_messages;
  std::string json_problem;
  try {
    parsed_messages = parse_messages(response.body, response.endpoint);
  } catch (const RestReplyError& error) {
    json_problem = error.what();
  }
  const bool json = json_problem.empty();
  const std::string http = "HTTP " + std::to_string(response.status) + ": ";
  if (response.status >= 200 && response.status < 300) {
    if (!json) {
      const std::string what = describe_body(response.body, response.content_type, options_.token);
      const bool looks_json = response.body.find_first_not_of(" \t\r\n") != std::string::npos &&
                              response.body[response.body.find_first_not_of(" \t\r\n")] == '{';
      fail(RestFailure::kReply, response.endpoint, response.status,
           looks_json ? http + "not a complete JSON object (" + json_problem + ")" : http + what);
    }
    if (messages != nullptr) *messages = std::move(parsed_messages);
    return;
  }
  const std::vector<RestMessage>& errors = parsed_messages.errors;
  const std::string problem =
      http + (json && !errors.empty() ? describe_messages(errors, options_.token)
                                      : describe_body(response.body, response.content_type, options_.token));
  const long status = response.status;
  const std::string path = response.endpoint.substr(response.endpoint.find(' ') + 1);
  // 25.11 answers missing or malformed JWT headers with 500 text/plain "Authentication does not apply to request".
  const bool auth_text = !json && contains(lower(response.body.substr(0, kSnippetChars)), "authentication");
  if (status == 401 || status == 403 || status == 511 || any_auth(errors) || auth_text) {
    fail(RestFailure::kAuth, response.endpoint, status, problem + " (" + kAuthHint + ")", errors);
  }
  if (is_legacy_rejected_token(errors, status, path)) {
    fail(RestFailure::kAuth, response.endpoint, status,
         problem + " (22.05 answers a rejected token this way: " + kAuthHint + ")", errors);
  }
  fail(RestFailure::kHttp, response.endpoint, status, problem, errors);
}

RestResponse SlurmrestdClient::exchange(const std::string& method, const std::string& path, const std::string& body,
                                        bool retry, RestMessages* messages) {
  for (int attempt = 0;; ++attempt) {
    try {
      RestResponse response = perform(method, path, body);
      check_reply(response, messages);
      return response;
    } catch (const SlurmrestdError& error) {
      if (!retry || attempt >= options_.retries || !is_retryable(error)) throw;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.backoff_s * (1 << std::min(attempt, 20))));
  }
}

void SlurmrestdClient::throw_on_errors(const RestResponse& response, const RestMessages& messages) const {
  if (messages.errors.empty()) return;
  const std::string text = describe_messages(messages.errors, options_.token);
  if (any_auth(messages.errors)) {
    fail(RestFailure::kAuth, response.endpoint, response.status, text + " (" + kAuthHint + ")", messages.errors);
  }
  fail(RestFailure::kSlurm, response.endpoint, response.status, "Slurm: " + text, messages.errors);
}

RestResponse SlurmrestdClient::request(const std::string& method, const std::string& path, const std::string& body) {
  RestMessages messages;
  RestResponse response = exchange(method, path, body, method == "GET", &messages);
  throw_on_errors(response, messages);
  if (options_.on_reply) options_.on_reply(response);
  return response;
}

bool SlurmrestdClient::discover_from_spec() {
  RestResponse spec;
  try {
    spec = exchange("GET", "/openapi/v3", {}, true, nullptr);
  } catch (const SlurmrestdError& error) {
    if (error.kind() == RestFailure::kHttp && error.status() == 404) return false;
    throw;
  }
  bool node_update = false;
  const std::vector<ApiVersion> versions =
      parsed(spec, [&] { return parse_openapi_versions(spec.body, spec.endpoint, &node_update); });
  if (versions.empty()) {
    fail(RestFailure::kReply, spec.endpoint, spec.status,
         "the spec offers none of the API versions v0.0.38 to v0.0.44");
  }
  version_ = versions.back();
  node_update_ = node_update && version_ >= ApiVersion::k39;
  return true;
}

void SlurmrestdClient::probe_versions() {
  for (int v = static_cast<int>(ApiVersion::k44); v >= static_cast<int>(ApiVersion::k38); --v) {
    const auto version = static_cast<ApiVersion>(v);
    const std::string path = std::string("/slurm/") + api_version_name(version) + "/ping";
    RestMessages messages;
    try {
      RestResponse response = exchange("GET", path, {}, true, &messages);
      if (any_auth(messages.errors)) throw_on_errors(response, messages);
    } catch (const SlurmrestdError& error) {
      if (error.kind() == RestFailure::kHttp && error.status() == 404) continue;
      throw;
    }
    version_ = version;
    node_update_ = version >= ApiVersion::k39;
    return;
  }
  fail(RestFailure::kHttp, "GET /slurm/v0.0.38/ping", 404,
       "no API version from v0.0.44 down to v0.0.38 answers (and /openapi/v3 is absent)");
}

void SlurmrestdClient::connect() {
  if (options_.version) {
    version_ = *options_.version;
    node_update_ = version_ >= ApiVersion::k39;
    ping();
    return;
  }
  if (!discover_from_spec()) probe_versions();
}

RestPing SlurmrestdClient::ping() {
  RestResponse r = request("GET", slurm_path("ping"));
  return parsed(r, [&] { return parse_ping(r.body, r.endpoint); });
}

RestDiag SlurmrestdClient::diag() {
  RestResponse r = request("GET", slurm_path("diag"));
  return parsed(r, [&] { return parse_diag(r.body, r.endpoint); });
}

template <typename Parse>
auto SlurmrestdClient::get_records(const std::string& path, Parse&& parse)
    -> decltype(parse(std::string_view(), std::string(), nullptr)) {
  for (int attempt = 0;; ++attempt) {
    try {
      RestResponse response = perform("GET", path, {}, /*reuse_buffer=*/true);
      if (response.status < 200 || response.status >= 300) check_reply(response, nullptr);  // throws
      RestMessages messages;
      try {
        auto records = parsed(response, [&] { return parse(response.body, response.endpoint, &messages); });
        throw_on_errors(response, messages);
        if (options_.on_reply) options_.on_reply(response);
        spare_body_ = std::move(response.body);  // keeps its capacity for the next reply
        return records;
      } catch (const SlurmrestdError& error) {
        if (error.kind() != RestFailure::kReply) throw;
        check_reply(response, &messages);     // not JSON at all: the message says what it is instead
        throw_on_errors(response, messages);  // errors[] in a reply without records
        throw;
      }
    } catch (const SlurmrestdError& error) {
      if (attempt >= options_.retries || !is_retryable(error)) throw;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.backoff_s * (1 << std::min(attempt, 20))));
  }
}

std::vector<RestNode> SlurmrestdClient::nodes() {
  return get_records(slurm_path("nodes"), [](std::string_view body, const std::string& endpoint,
                                             RestMessages* messages) { return parse_nodes(body, endpoint, messages); });
}

std::vector<RestJob> SlurmrestdClient::jobs() {
  return get_records(slurm_path("jobs"), [](std::string_view body, const std::string& endpoint,
                                            RestMessages* messages) { return parse_jobs(body, endpoint, messages); });
}

std::vector<RestPartition> SlurmrestdClient::partitions() {
  RestResponse r = request("GET", slurm_path("partitions"));
  return parsed(r, [&] { return parse_partitions(r.body, r.endpoint); });
}

std::vector<RestQos> SlurmrestdClient::qos() {
  RestResponse r = request("GET", slurmdb_path("qos"));
  return parsed(r, [&] { return parse_qos(r.body, r.endpoint); });
}

std::vector<RestAssociation> SlurmrestdClient::associations() {
  const std::string path = slurmdb_path("associations");
  RestMessages messages;
  RestResponse r;
  try {
    r = exchange("GET", path, {}, true, &messages);
  } catch (const SlurmrestdError& error) {
    if (error.kind() != RestFailure::kHttp || (error.status() != 404 && error.errors.empty())) throw;
    warn(std::string(error.what()) + "; no associations (is slurmdbd configured?)");
    return {};
  }
  if (!messages.errors.empty()) {
    if (any_auth(messages.errors)) throw_on_errors(r, messages);
    warn(r.endpoint + ": " + describe_messages(messages.errors, options_.token) + "; no associations");
    return {};
  }
  return parsed(r, [&] { return parse_associations(r.body, r.endpoint); });
}

std::vector<RestJob> SlurmrestdClient::finished_jobs(std::int64_t start_time, std::int64_t end_time) {
  const std::string path = slurmdb_path("jobs") + "?start_time=" + slurmdb_time(start_time, version_) +
                           "&end_time=" + slurmdb_time(end_time, version_);
  RestMessages messages;
  RestResponse r = exchange("GET", path, {}, true, &messages);
  const bool nothing_found = is_nothing_found(messages.errors);
  if (!nothing_found) throw_on_errors(r, messages);
  std::vector<RestJob> jobs;
  if (!nothing_found) jobs = parsed(r, [&] { return parse_jobs(r.body, r.endpoint); });
  if (!nothing_found && options_.on_reply) options_.on_reply(r);
  if (!jobs.empty()) return jobs;
  // An expired token on slurmdb can answer 200 with an empty list: "no jobs" must still look like a real reply.
  if (any_auth(messages.warnings)) {
    fail(RestFailure::kAuth, r.endpoint, r.status,
         "empty job list with warnings: " + describe_messages(messages.warnings, options_.token) + " (" + kAuthHint +
             ")");
  }
  if (!has_meta(r.body)) {
    fail(RestFailure::kAuth, r.endpoint, r.status,
         std::string("empty job list without meta: the token may have expired (") + kAuthHint + ")");
  }
  return jobs;
}

void SlurmrestdClient::update_job(std::uint64_t job_id, const std::string& json_body) {
  request("POST", slurm_path("job/" + std::to_string(job_id)), json_body);
}

void SlurmrestdClient::cancel_job(std::uint64_t job_id) {
  RestResponse r = request("DELETE", slurm_path("job/" + std::to_string(job_id)));
  std::vector<RestMessage> failures = status_errors(r.body);
  if (!failures.empty()) {
    fail(RestFailure::kSlurm, r.endpoint, r.status, "Slurm: " + describe_messages(failures, options_.token), failures);
  }
}

void SlurmrestdClient::update_node(const std::string& name, const std::string& json_body) {
  char* escaped = curl_easy_escape(curl_->easy, name.c_str(), static_cast<int>(name.size()));
  const std::string path = slurm_path("node/" + std::string(escaped != nullptr ? escaped : name.c_str()));
  curl_free(escaped);
  if (version_ < ApiVersion::k39) {
    fail(RestFailure::kHttp, "POST " + path, 0, "node updates need v0.0.39+ (use scontrol)");
  }
  if (!node_update_) {
    fail(RestFailure::kHttp, "POST " + path, 0, "this slurmrestd offers no node update endpoint (use scontrol)");
  }
  request("POST", path, json_body);
}

std::uint64_t SlurmrestdClient::submit_job(const std::string& json_body) {
  RestMessages messages;
  RestResponse r = exchange("POST", slurm_path("job/submit"), json_body, false, &messages);
  const std::uint64_t job_id = parsed(r, [&] { return parse_submit(r.body, r.endpoint); });
  if (job_id != 0) return job_id;  // Submitted, even with errors[] (22.05 reports a held submit as error 2042).
  throw_on_errors(r, messages);
  fail(RestFailure::kReply, r.endpoint, r.status, "reply has no job_id");
}

}  // namespace gputwin
