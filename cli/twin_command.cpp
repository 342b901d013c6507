#include "cli/twin_command.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/import_command.hpp"
#include "cli/serve_command.hpp"
#include "model/errors.hpp"
#include "model/input_file.hpp"
#include "results/results_store.hpp"
#include "twin/twin_score.hpp"
#include "ui/dashboard_api.hpp"
#include "ui/folder_feed.hpp"
#include "ui/http_server.hpp"
#include "ui/slurm_api.hpp"

namespace gputwin {

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop = true;
}

constexpr std::uintmax_t kMaxTokenBytes = 64 * 1024;

}  // namespace

std::string read_token_file(const std::string& path) {
  if (const auto problem = input_file_problem(path, "token file", kMaxTokenBytes)) throw ConfigError(path, 0, *problem);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw ConfigError(path, 0, "cannot read the token file");
  if ((st.st_mode & 077) != 0)
    throw ConfigError(path, 0,
                      fmt::format("the token file is readable by others (mode {:o}); chmod 600 it", st.st_mode & 0777));
  std::ifstream in(path, std::ios::binary);
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.rfind("SLURM_JWT=", 0) == 0) token.erase(0, 10);  // the line `scontrol token` prints
  if (token.empty()) throw ConfigError(path, 0, "the token file is empty");
  return token;
}

namespace {

// The user a JWT was minted for (Slurm's "sun" claim), empty if it cannot be read.
std::string token_user(const std::string& token) {
  const std::size_t a = token.find('.');
  const std::size_t b = token.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos) return {};
  std::string payload = token.substr(a + 1, b - a - 1);
  for (char& c : payload) c = c == '-' ? '+' : c == '_' ? '/' : c;
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string decoded;
  std::uint32_t bits = 0;
  int count = 0;
  for (char c : payload) {
    const std::size_t v = kAlphabet.find(c);
    if (v == std::string::npos) break;
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      decoded += static_cast<char>((bits >> count) & 0xff);
    }
  }
  const nlohmann::json claims = nlohmann::json::parse(decoded, nullptr, false);
  if (!claims.is_object() || !claims.contains("sun") || !claims["sun"].is_string()) return {};
  return claims["sun"].get<std::string>();
}

// The site policy: a scenario file, slurm.conf through `gputwin import`, or Slurm's defaults.
Scenario load_policy(const TwinCommands& c) {
  if (!c.scenario.empty()) return load_scenario(c.scenario);
  Scenario policy;
  policy.name = "twin";
  if (c.slurm_conf.empty()) return policy;
  ImportRequest request;
  request.slurm_conf = c.slurm_conf;
  std::ostringstream text;
  std::ostringstream notes;
  if (run_import(request, text, notes) != 0) throw ConfigError(c.slurm_conf, 0, "cannot import: " + notes.str());
  const Scenario imported = parse_scenario(text.str(), c.slurm_conf, std::filesystem::path(c.slurm_conf).parent_path());
  policy.scheduler = imported.scheduler;
  policy.accounting = imported.accounting;
  std::cerr << "twin: site policy imported from " << c.slurm_conf << " (" << policy_name(policy.scheduler.policy)
            << ", PriorityType " << (policy.scheduler.priority.multifactor ? "multifactor" : "basic") << ")\n";
  return policy;
}

// `gputwin twin ... --serve`: the twin polls on its own thread while the dashboard (and the slurmrestd-compatible
// read API) serve its results folder, re-read after each poll it writes. No controls: the twin acts only through its
// controllers. When the twin stops by itself (--once, --duration, --polls, the end of a --replay) the folder is served on
// until Ctrl-C; Ctrl-C stops both.
int serve_twin(TwinCommands& c) {
  TwinOptions& o = c.options;
  // Bad options stop here, before anything polls or listens.
  const std::string jwt_key = c.no_slurmrestd || c.jwt_key.empty() ? std::string() : read_jwt_key(c.jwt_key);
  const std::filesystem::path assets =
      c.assets.empty() ? std::filesystem::path(GPUTWIN_WEB_ASSETS_DIR) : std::filesystem::path(c.assets);
  try {
    (void)listen_spec(c.listen);
  } catch (const std::invalid_argument& e) {
    throw InputError("--listen", "", e.what());
  }
  if (!c.no_slurmrestd) {
    try {
      (void)listen_spec(c.slurmrestd_listen);
    } catch (const std::invalid_argument& e) {
      throw InputError("--slurmrestd-listen", "", e.what());
    }
  }
  FolderFeed feed(o.out);
  o.results_mutex = &feed.write_mutex();
  o.on_written = [&feed] { feed.written(); };
  DashboardApi api(feed, assets);
  SlurmApiOptions slurm_options;
  slurm_options.jwt_key = jwt_key;  // read only: no writer
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<HttpServer> slurm_server;
  try {
    HttpServer::Options options;
    options.listen = c.listen;
    server = std::make_unique<HttpServer>(options, [&api](const HttpRequest& r) { return api.handle(r); });
    if (!c.no_slurmrestd) {
      HttpServer::Options s_options;
      s_options.listen = c.slurmrestd_listen;
      // Each request reads one poll throughout.
      slurm_server = std::make_unique<HttpServer>(s_options, [&feed, &slurm_options](const HttpRequest& r) {
        std::shared_ptr<const RunSnapshot> snap;
        try {
          snap = feed.current().run;
        } catch (const LiveError& e) {
          throw HttpError(e.status(), e.what());
        }
        return SlurmApi(snap->slurm(), slurm_options).handle(r);
      });
    }
  } catch (const std::runtime_error& e) {
    throw InputError(server ? "--slurmrestd-listen" : "--listen", "", e.what());
  }
  fmt::print("gputwin: the twin's dashboard ({}) on {}\n", o.out.string(), server->url());
  if (slurm_server) {
    fmt::print("gputwin: slurmrestd-compatible API of the mirror (v0.0.41-v0.0.44, read only, {}) on {}\n",
               jwt_key.empty() ? "no token check" : "JWT checked", slurm_server->url());
  }
  if (!std::filesystem::is_regular_file(assets / "index.html")) {
    fmt::print("gputwin: the dashboard's pages are not built ({}): the API answers; see {}/ for how\n", assets.string(),
               server->url());
  }
  std::fflush(stdout);

  std::atomic<bool> done{false};
  int status = 0;
  std::thread twin([&] {
    try {
      status = run_twin(o, std::cerr, g_stop);
      feed.finished(status == 0 ? "" : "the twin stopped with exit status " + std::to_string(status));
    } catch (const std::exception& e) {
      std::cerr << "gputwin twin: " << e.what() << "\n";
      status = 1;
      feed.finished(e.what());
    }
    done = true;
  });
  while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  twin.join();
  if (!g_stop && (status == 0 || feed.writes() > 0)) {
    fmt::print("gputwin: the twin stopped after {} polls written{}; still serving its folder (Ctrl-C to stop)\n",
               feed.writes(), status == 0 ? "" : fmt::format(" (exit status {})", status));
    std::fflush(stdout);
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  feed.close_streams();
  slurm_server.reset();
  server.reset();
  fmt::print("gputwin: stopped serving\n");
  return status;
}

int run_twin_command(TwinCommands& c) {
  TwinOptions& o = c.options;
  if (!o.replay.empty()) {
    o.act = false;
    o.history_days = 0;
    o.policy = load_policy(c);
    if (c.serve) {
      std::signal(SIGINT, on_signal);
      std::signal(SIGTERM, on_signal);
      return serve_twin(c);
    }
    return run_twin(o, std::cerr, g_stop);
  }
  if (o.client.url.empty()) {
    std::cerr << "gputwin twin: --slurmrestd is required (or --replay DIR)\n";
    return 2;
  }
  if (!c.token_file.empty()) {
    o.client.token = read_token_file(c.token_file);
  } else if (const char* env = std::getenv("SLURM_JWT")) {
    o.client.token = env;
  }
  if (o.client.user.empty()) {
    if (const char* env = std::getenv("SLURMRESTD_USER")) o.client.user = env;
  }
  if (o.client.user.empty() && !o.client.token.empty()) o.client.user = token_user(o.client.token);
  if (o.client.token.empty()) {
    std::cerr << "gputwin twin: no token: set SLURM_JWT (what `scontrol token` prints) or give --token-file\n";
    return 2;
  }
  if (o.client.user.empty()) {
    std::cerr << "gputwin twin: no user: give --user or set SLURMRESTD_USER\n";
    return 2;
  }
  const auto predictor = parse_runtime_predictor(c.predictor);
  if (!predictor) {
    std::cerr << "gputwin twin: --predictor: unknown '" << c.predictor << "' (limit, recent, ratio)\n";
    return 2;
  }
  o.forecast.predictor = *predictor;
  std::stringstream names(c.controllers);
  for (std::string name; std::getline(names, name, ',');) {
    if (!name.empty()) o.controllers.push_back(name);
  }
  o.policy = load_policy(c);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (c.serve) return serve_twin(c);
  return run_twin(o, std::cerr, g_stop);
}

}  // namespace

void add_twin_commands(CLI::App& app, TwinCommands& c) {
  TwinOptions& o = c.options;
  c.twin = app.add_subcommand("twin",
                              "Mirror a real Slurm cluster through slurmrestd, forecast its pending jobs' starts and "
                              "run controllers on it (dry-run unless --act)");
  c.twin->add_option("--slurmrestd", o.client.url,
                     "slurmrestd URL, e.g. http://127.0.0.1:6820 (required unless --replay)");
  c.twin->add_option("--out", o.out, "Results folder (updated at every poll)")->required();
  c.twin->add_option("--user", o.client.user, "X-SLURM-USER-NAME (default: $SLURMRESTD_USER, else the token's user)");
  c.twin->add_option("--token-file", c.token_file, "File holding the JWT, mode 0600 (default: $SLURM_JWT)");
  c.twin->add_option("--cacert", o.client.cacert, "CA bundle for an https slurmrestd");
  c.twin->add_option("--timeout", o.client.timeout_s, "Seconds a request may take (default 30)");
  c.twin->add_option("--interval", o.interval_s, "Seconds between polls (default 30)")->check(CLI::Range(0.5, 86400.0));
  c.twin->add_flag("--once", o.once, "One mirror and forecast, then exit");
  c.twin->add_option("--duration", o.duration_s, "Stop after this many seconds")->check(CLI::Range(0.0, 1e9));
  c.twin->add_option("--polls", o.max_polls, "Stop after this many polls")->check(CLI::Range(1, 100000000));
  c.twin->add_option("--scenario", c.scenario,
                     "Site policy as a scenario (scheduler, priority, faults, cost, "
                     "operations)");
  c.twin->add_option("--slurm-conf", c.slurm_conf, "slurm.conf to import the site policy from");
  c.twin->add_option("--predictor", c.predictor, "Run time predictor: limit, recent (default) or ratio");
  c.twin->add_option("--horizon", o.forecast.horizon_s, "Seconds a forecast looks ahead (default 604800)")
      ->check(CLI::Range(60, 366 * 86400));
  c.twin->add_flag("--no-forecast", o.no_forecast, "Mirror only");
  c.twin->add_option("--history-days", o.history_days, "Days of slurmdb job history that seed the predictor");
  c.twin->add_option("--controllers", c.controllers, "Controllers to run: health,scaling,quota,priority");
  CLI::Option* act = c.twin->add_flag("--act", o.act, "Carry the controllers' actions out (default: dry-run)");
  c.twin->add_flag("--dry-run", c.dry_run, "Only record what the controllers would do (the default)")->excludes(act);
  c.twin
      ->add_option("--max-nodes-out-pct", o.limits.max_nodes_out_pct,
                   "Most nodes held out of service at once, percent (default 10)")
      ->check(CLI::Range(0.0, 100.0));
  c.twin->add_option("--max-actions-per-minute", o.limits.max_actions_per_minute,
                     "Most actions in any minute (default 10)");
  c.twin->add_option("--save-replies", o.save_replies,
                     "Keep every poll's raw replies in this folder (to replay or report a problem)");
  c.twin->add_option("--replay", o.replay, "Replay replies kept by --save-replies instead of polling (dry-run)");
  c.twin->add_option("--scontrol", o.scontrol, "Slurm's scontrol for what the API cannot do (\"\" never)");
  c.twin->add_flag("--serve", c.serve,
                   "Serve the web dashboard of the results folder while the twin polls (read only: no controls)");
  c.twin->add_option("--listen", c.listen, "With --serve: address and port of the dashboard (default 127.0.0.1:8080)");
  c.twin->add_option("--slurmrestd-listen", c.slurmrestd_listen,
                     "With --serve: address and port of the slurmrestd-compatible API (default 127.0.0.1:6820)");
  c.twin->add_flag("--no-slurmrestd", c.no_slurmrestd, "With --serve: no slurmrestd-compatible API");
  c.twin->add_option("--jwt-key", c.jwt_key, "With --serve: key file to check X-SLURM-USER-TOKEN with");
  c.twin->add_option("--assets", c.assets, "With --serve: folder of the built dashboard pages (default: this build's)");

  c.score = app.add_subcommand("twin-score", "Score a twin's start-time forecasts against the actual starts");
  c.score->add_option("results", c.score_path, "A twin's results folder")->required();
}

int run_twin_commands(TwinCommands& c) {
  if (c.twin != nullptr && *c.twin) return run_twin_command(c);
  if (c.score != nullptr && *c.score) {
    try {
      print_twin_score(score_twin(c.score_path), std::cout);
    } catch (const ResultsError& e) {
      std::cerr << "gputwin twin-score: " << e.what() << "\n";
      return 2;
    }
    return 0;
  }
  return -1;
}

}  // namespace gputwin
