#include "cli/service_commands.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "base/memory.h"
#include "cli/endpoint_file.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "cli/option_checks.h"
#include "cli/render_options.h"
#include "cli/socket_keys.h"
#include "service/job_submission.h"
#include "service/service_client.h"

namespace farm {

using nlohmann::json;

namespace {

constexpr const char* k_default_server = "tcp://127.0.0.1:5555";

void add_client_options(CLI::App& cmd, ClientOptions& o, bool json_output) {
  cmd.add_option("--server", o.server,
                 std::string("The farm service's endpoint (its --bind; default: $FARM_SERVER, else ") + k_default_server + ")")
      ->check(endpoint_for(EndpointUse::connect));
  cmd.add_option("--key", o.key_path, "This client's key pair (from `farm keygen`); required unless --server is loopback");
  cmd.add_option("--server-key", o.server_key_path, "The service's public key (its .pub): only that service is trusted");
  cmd.add_flag("--insecure", o.insecure, "Connect to a non-loopback service without encryption or authentication");
  cmd.add_option("--timeout", o.timeout, "Seconds to wait for each answer of the service")->transform(in_range(0.1, 3600.0));
  if (json_output) cmd.add_flag("--json", o.json, "Print the service's answer as JSON (for scripts)");
}

std::string server_of(const ClientOptions& o) {
  if (!o.server.empty()) return o.server;
  if (const char* env = std::getenv("FARM_SERVER"); env && *env) return env;
  return k_default_server;
}

ServiceClient connect(const ClientOptions& o) {
  const std::string server = server_of(o);
  if (std::string why = endpoint_problem(server, EndpointUse::connect); !why.empty())
    throw std::invalid_argument("the service's endpoint '" + server + "': " + why);
  return ServiceClient(server, worker_socket_keys(server, o.key_path, o.server_key_path, o.insecure), o.timeout);
}

std::string duration_text(const json& seconds) {
  if (!seconds.is_number()) return "-";
  const long s = std::lround(seconds.get<double>());
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s / 60 % 60) + "m";
}

void print_jobs(const json& jobs) {
  std::printf("%-6s %-24s %-10s %-9s %5s %8s %7s %8s %9s\n", "ID", "NAME", "OWNER", "STATE", "PRIO", "PROGRESS", "WORKERS",
              "ELAPSED", "REMAINING");
  for (const json& j : jobs) {
    std::string name = j.value("name", "");
    if (name.size() > 24) name = name.substr(0, 22) + "..";
    std::printf("%-6lld %-24s %-10s %-9s %5d %7.1f%% %7d %8s %9s\n", static_cast<long long>(j.value("id", int64_t{0})),
                name.c_str(), j.value("owner_name", "").c_str(), j.value("state", "").c_str(), j.value("priority", 0),
                100.0 * j.value("progress", 0.0), j.value("workers", 0), duration_text(j["elapsed"]).c_str(),
                duration_text(j["remaining"]).c_str());
  }
}

// Writes a done job's images to `output` and its statistics to `stats_path` (each if given).
void fetch_results(ServiceClient& client, int64_t id, const std::string& output, const std::string& stats_path) {
  if (!output.empty())
    for (const std::string& p : client.fetch(id, output)) spdlog::info("wrote {}", p);
  if (!stats_path.empty()) {
    client.fetch_stats(id, stats_path);
    spdlog::info("wrote statistics {}", stats_path);
  }
}

// Follows the job until it ends; fetches its images and statistics when done (where asked).
int wait_for(ServiceClient& client, int64_t id, const std::string& output, const std::string& stats_path) {
  double last_shown = -1;
  while (true) {
    const json j = client.call("job", json{{"id", id}});
    const std::string state = j.value("state", "");
    if (state == "done") {
      spdlog::info("job {} is done", id);
      fetch_results(client, id, output, stats_path);
      return k_exit_ok;
    }
    if (state == "failed" || state == "cancelled") {
      spdlog::error("job {} {}: {}", id, state, j.value("reason", ""));
      return k_exit_failure;
    }
    const double progress = j.value("progress", 0.0);
    if (progress != last_shown) {
      spdlog::info("job {}: {} {:.1f}%, {} worker(s)", id, state, 100 * progress, j.value("workers", 0));
      last_shown = progress;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int run_serve(const ServeCommandOptions& o) {
  ServiceOptions s = o.service;
  if (!o.endpoint_file.empty()) {
    if (Status usable = probe_endpoint_file(o.endpoint_file); !usable.ok()) {
      spdlog::error("{}", usable.message());
      return k_exit_bad_input;
    }
    s.on_bound = write_endpoint_file_after(s.on_bound, o.endpoint_file);
  }
  try {
    s.curve = master_socket_keys(s.bind, o.key_path, o.allow_path, s.insecure);
    if (!o.admin_path.empty()) {
      if (!s.curve) throw std::invalid_argument("--admin needs keys (--key and --allow): without them every client is 'local'");
      s.admins = security::read_server_keys(o.key_path, o.admin_path).allowed;
      s.curve->allowed.insert(s.admins.begin(), s.admins.end());
      s.key_names = security::allow_list_names(o.admin_path);
    }
    if (!o.allow_path.empty())
      for (auto& [key, name] : security::allow_list_names(o.allow_path)) s.key_names[key] = name;
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));
  }
  s.stop = install_stop_flag();
  return exit_code(run_service(s));
}

int run_submit(const ClientOptions& c, const SubmitCommandOptions& o) {
  JobSubmission s;
  std::vector<ManifestEntry> files;
  try {
    s = submission_for(o.render, files);  // a bad scene is said before anything is sent
    s.scheduling = o.scheduling;
    s.policy_chosen = o.policy_chosen;
    s.compress = o.compress;
    s.preview_costs = o.preview;
    s.priority = o.priority;
    if (!o.name.empty()) s.name = o.name;
    s.paused = o.paused;
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));
  }
  try {
    ServiceClient client = connect(c);
    size_t uploaded = 0;
    const int64_t id = client.submit(s, files, uploaded);
    if (c.json) std::printf("%s\n", json{{"id", id}}.dump().c_str());
    else std::printf("%lld\n", static_cast<long long>(id));
    std::fflush(stdout);
    spdlog::info("submitted job {} ({} file(s), {} uploaded)", id, files.size(), uploaded);
    if (!o.wait) return k_exit_ok;
    return wait_for(client, id, o.render.output_path, o.stats_path);
  } catch (const ServiceRefusal& e) {
    spdlog::error("{}", e.what());
    return k_exit_bad_input;
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return k_exit_failure;
  }
}

int run_client(const std::string& command, const ClientOptions& c, const JobCommandOptions& o) {
  try {
    ServiceClient client = connect(c);
    if (command == "jobs") {
      const json answer = client.call("jobs", json{{"limit", o.limit}});
      if (c.json) std::printf("%s\n", answer.dump().c_str());
      else print_jobs(answer["jobs"]);
      return k_exit_ok;
    }
    if (command == "job") {
      const json j = client.call("job", json{{"id", o.id}});
      if (c.json) {
        std::printf("%s\n", j.dump().c_str());
        return k_exit_ok;
      }
      print_jobs(json::array({j}));
      std::printf("scene %s, output %s%s\n", j.value("scene", "?").c_str(), j.value("output", "?").c_str(),
                  j.value("reason", "").empty() ? "" : (", " + j.value("reason", "")).c_str());
      for (const json& e : j["history"])
        std::printf("  %.3f  %-20s %s\n", e.value("at", 0.0), e.value("what", "").c_str(), e.value("who_name", "").c_str());
      return k_exit_ok;
    }
    if (command == "wait") return wait_for(client, o.id, o.output, o.stats_path);
    if (command == "fetch") {
      fetch_results(client, o.id, o.output, o.stats_path);
      return k_exit_ok;
    }
    json body{{"id", o.id}};
    if (command == "priority") body["priority"] = o.priority;
    const json answer = client.call(command, body);
    if (c.json) std::printf("%s\n", answer.dump().c_str());
    else spdlog::info("job {}: {}", o.id, command == "priority" ? "priority " + std::to_string(o.priority) : answer.value("state", ""));
    return k_exit_ok;
  } catch (const ServiceRefusal& e) {
    spdlog::error("{}", e.what());
    return k_exit_bad_input;
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));
  }
}

}  // namespace

void add_service_commands(CLI::App& app, ServiceCommands& o) {
  {
    ServeCommandOptions& s = o.serve;
    CLI::App* cmd = app.add_subcommand("serve", "Run a farm service: a job queue that workers and clients share (docs/service.md)");
    cmd->add_option("--state", s.service.state_dir, "Folder of the queue (SQLite), uploaded files, journals and images")
        ->required();
    s.service.bind = k_default_server;
    cmd->add_option("--bind", s.service.bind,
                    std::string("Endpoint for workers and clients (default ") + k_default_server +
                        "); off loopback it needs --key and --allow, or --insecure")
        ->check(endpoint_for(EndpointUse::bind));
    cmd->add_option("--endpoint-file", s.endpoint_file, "Once listening, write the endpoint (port resolved) to this file");
    cmd->add_option("--key", s.key_path, "The service's key pair (from `farm keygen`)");
    cmd->add_option("--allow", s.allow_path, "Public keys of the workers and clients that may connect (.pub, folder or list)");
    cmd->add_option("--admin", s.admin_path, "Public keys that may control every job (a job's owner may always control it)");
    cmd->add_flag("--insecure", s.service.insecure, "Serve a non-loopback endpoint without encryption or authentication");
    cmd->add_option("--http", s.service.http,
                    "Serve the queue's web page (jobs, workers, controls) on ADDRESS:PORT, e.g. 127.0.0.1:0 (0 = any free "
                    "port; the URL is printed)");
    cmd->add_option("--http-token", s.service.http_token,
                    "Token the page asks for (?token= or Authorization: Bearer); required off loopback; whoever has it may "
                    "control every job");
    add_liveness_options(*cmd, s.service.job_defaults.scheduling);
  }
  {
    SubmitCommandOptions& s = o.submit;
    CLI::App* cmd = app.add_subcommand("submit", "Submit a render job to a farm service; prints its id");
    add_render_options(*cmd, s.render);
    // Each worker's and the service's own choices, not a job's.
    cmd->remove_option(cmd->get_option("--no-sandbox"));
    cmd->remove_option(cmd->get_option("--texture-cache"));
    add_scheduling_options(*cmd, s.scheduling, &s.policy_chosen, "--wait-time");
    cmd->add_flag("!--no-preview", s.preview, "With --policy factoring: skip the preview render that predicts block costs");
    cmd->add_flag("--compress,!--no-compress", s.compress, "zstd-compress result pixels (default on)");
    cmd->add_option("--priority", s.priority, "Higher runs first; equal priorities share the workers (default 0)")
        ->transform(in_range(k_min_priority, k_max_priority));
    cmd->add_option("--name", s.name, "Name shown in `farm jobs` (default: the scene's file name)");
    cmd->add_flag("--paused", s.paused, "Submit it paused: it waits for `farm resume`");
    cmd->add_flag("--wait", s.wait, "Follow its progress and write OUTPUT here when it is done");
    cmd->add_option("--stats", s.stats_path, "With --wait: write the run's statistics (JSON, as `farm master --stats`)")
        ->needs("--wait");
    add_client_options(*cmd, o.client, true);
  }
  {
    CLI::App* cmd = app.add_subcommand("jobs", "List a farm service's jobs, newest first");
    cmd->add_option("--limit", o.job.limit, "At most this many (0 = all)");
    add_client_options(*cmd, o.client, true);
  }
  auto with_id = [&](const char* name, const char* help, bool json_output) {
    CLI::App* cmd = app.add_subcommand(name, help);
    cmd->add_option("id", o.job.id, "The job's id (from `farm submit` or `farm jobs`)")->required()->transform(at_least<int64_t>(1));
    add_client_options(*cmd, o.client, json_output);
    return cmd;
  };
  with_id("job", "Show one job of a farm service: state, progress, history", true);
  with_id("pause", "Pause a job: its blocks are taken back from the workers at once", true);
  with_id("resume", "Resume a paused job", true);
  with_id("cancel", "Cancel a job: its workers stop its blocks at once", true);
  with_id("priority", "Set a job's priority", true)
      ->add_option("priority", o.job.priority, "The new priority (higher first)")
      ->required()
      ->transform(in_range(k_min_priority, k_max_priority));
  {
    CLI::App* cmd = with_id("fetch", "Write a done job's image(s) and/or statistics", false);
    CLI::Option* out = cmd->add_option("-o,--output", o.job.output, "Where to write the image (frames: numbered beside it)");
    CLI::Option* stats = cmd->add_option("--stats", o.job.stats_path, "Write the run's statistics (JSON) here");
    cmd->callback([out, stats] {
      if (out->count() == 0 && stats->count() == 0) throw CLI::ValidationError("fetch", "give -o OUT, --stats FILE or both");
    });
  }
  {
    CLI::App* cmd = with_id("wait", "Wait until a job ends (exit 0 if done, 1 if failed or cancelled)", false);
    cmd->add_option("-o,--output", o.job.output, "Also write its image(s) here once done");
    cmd->add_option("--stats", o.job.stats_path, "Also write the run's statistics (JSON) here once done");
  }
}

int run_service_command(const CLI::App& app, const ServiceCommands& o) {
  if (app.got_subcommand("serve")) return run_serve(o.serve);
  if (app.got_subcommand("submit")) return run_submit(o.client, o.submit);
  for (const char* c : {"jobs", "job", "pause", "resume", "cancel", "priority", "fetch", "wait"})
    if (app.got_subcommand(c)) return run_client(c, o.client, o.job);
  return -1;
}

}  // namespace farm
