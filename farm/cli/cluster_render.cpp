#include "cli/cluster_render.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "cli/exit_codes.h"
#include "launch/advertise.h"
#include "launch/worker_launcher.h"
#include "security/curve_keys.h"

namespace farm {

namespace {

// The host name ssh resolves `host` to (`ssh -G`: its HostName after the configuration), or
// `host` itself if ssh cannot say.
std::string ssh_hostname(const std::string& ssh_command, const std::string& host) {
  const std::string command = (ssh_command.empty() ? std::string("ssh") : ssh_command) + " -G " + host + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return host;
  std::string found = host;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string l(line);
    if (l.rfind("hostname ", 0) == 0) {
      found = l.substr(9);
      while (!found.empty() && (found.back() == '\n' || found.back() == '\r' || found.back() == ' ')) found.pop_back();
    }
  }
  ::pclose(pipe);
  return found.empty() ? host : found;
}

// The port of a bound endpoint "tcp://0.0.0.0:PORT".
std::string port_of(const std::string& endpoint) { return endpoint.substr(endpoint.rfind(':') + 1); }

}  // namespace

int run_cluster_render(const RenderCommandOptions& o, const std::string& self_exe) {
  std::vector<HostSpec> hosts;
  if (o.slurm) {
    if (!std::getenv("SLURM_JOB_ID")) {
      spdlog::error("--slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set): run it under salloc or sbatch");
      return k_exit_bad_input;
    }
  } else {
    try {
      hosts = read_host_file(o.hosts_path);
    } catch (const HostFileError& e) {
      spdlog::error("{}", e.what());
      return k_exit_bad_input;
    }
  }
  // Keys for this job only: the master's pair (or the user's --key), and one pair per host (one
  // for all Slurm tasks); --allow adds the keys of workers started by hand.
  security::CurveKeyPair master_keys;
  std::set<std::string> also_allowed;
  try {
    master_keys = o.master.key_path.empty() ? security::generate_key_pair()
                                            : security::read_secret_key_file(o.master.key_path);
    if (!o.master.allow_path.empty()) also_allowed = security::read_allow_list(o.master.allow_path);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return k_exit_bad_input;
  }
  std::vector<security::CurveKeyPair> worker_keys(o.slurm ? 1 : hosts.size());
  for (auto& k : worker_keys) k = security::generate_key_pair();

  MasterOptions m = o.master;
  m.bind = "tcp://*:*";
  m.curve = security::CurveServer{master_keys.secret_key, also_allowed};
  for (const auto& k : worker_keys) m.curve->allowed.insert(k.public_key);
  m.stop = install_stop_flag();

  WorkerLauncher launcher;
  std::string advertised;
  m.on_bound = [&](const std::string& endpoint) {
    // What ssh will connect to: a host file may name aliases of the ssh configuration.
    std::vector<std::string> names;
    for (const HostSpec& h : hosts) names.push_back(h.host);
    AdvertisedAddress a{o.advertise, "--advertise"};
    if (a.address.empty())
      a = pick_advertised_address(names, [&](const std::string& host) { return ssh_hostname(o.ssh_command, host); });
    advertised = "tcp://" + a.address + ":" + port_of(endpoint);
    spdlog::info("workers connect to {} ({})", advertised, a.reason);
    LaunchTarget target{advertised, master_keys.public_key, self_exe};
    if (o.slurm)
      launcher.start_slurm(target, worker_keys.front());
    else
      launcher.start_ssh(hosts, o.ssh_command, target, worker_keys);
  };
  m.on_worker_change = [&](const std::string& name, bool joined) {
    launcher.worker_changed(name, joined);
    spdlog::info("{}", launcher.progress());
  };
  m.should_abort = [&]() -> std::string {
    if (launcher.check()) return {};
    if (!launcher.failures().empty()) spdlog::error("every host failed:\n{}", launcher.failures());
    return "no host is running a worker any more";
  };
  RunStatus status = RunStatus::failure;
  try {
    status = run_master(m);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
  // Workers stop after JobDone by themselves; closing the lifelines makes sure of it.
  launcher.stop_all();
  spdlog::info("{}", launcher.progress());
  return exit_code(status);
}

}  // namespace farm
