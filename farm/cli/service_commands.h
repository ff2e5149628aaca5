// `farm serve` and its clients: `submit`, `jobs`, `job`, `pause`, `resume`, `cancel`,
// `priority`, `fetch` and `wait` (docs/service.md). Option parsing and what each prints; the
// service and the calls are farm/service's.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "job/job_spec.h"
#include "scheduler/scheduler_types.h"
#include "service/service.h"

namespace farm {

struct ServeCommandOptions {
  ServiceOptions service;
  std::string endpoint_file;
  std::string key_path, allow_path, admin_path;
};

// What every client command shares: where the service is and how to reach it.
struct ClientOptions {
  std::string server;  // --server, else $FARM_SERVER, else tcp://127.0.0.1:5555
  std::string key_path, server_key_path;
  bool insecure = false;
  double timeout = 30;
  bool json = false;
};

struct SubmitCommandOptions {
  RenderOptions render;
  SchedulerConfig scheduling;
  bool policy_chosen = false;
  bool compress = true;
  bool preview = true;
  int priority = 0;
  std::string name;
  bool paused = false;
  bool wait = false;
  std::string stats_path;    // with --wait: the run's statistics, once done
};

struct JobCommandOptions {
  int64_t id = 0;
  int priority = 0;          // `farm priority ID N`
  std::string output;        // `farm fetch ID -o OUT`, `farm wait ID -o OUT`
  std::string stats_path;    // `farm fetch|wait ID --stats FILE`
  size_t limit = 0;          // `farm jobs --limit`
};

struct ServiceCommands {
  ServeCommandOptions serve;
  ClientOptions client;
  SubmitCommandOptions submit;
  JobCommandOptions job;
};

void add_service_commands(CLI::App& app, ServiceCommands& o);
// The command's exit code if `app` got one of these commands, else -1.
int run_service_command(const CLI::App& app, const ServiceCommands& o);

}  // namespace farm
