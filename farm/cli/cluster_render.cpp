#include "cli/cluster_render.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "base/memory.h"
#include "base/limits.h"
#include "cli/exit_codes.h"
#include "launch/advertise.h"
#include "launch/site_relays.h"
#include "launch/ssh_probe.h"
#include "launch/worker_launcher.h"
#include "security/curve_keys.h"

namespace farm {

namespace {

// The port of a bound endpoint "tcp://0.0.0.0:PORT".
std::string port_of(const std::string& endpoint) { return endpoint.substr(endpoint.rfind(':') + 1); }

// A Slurm count from the environment: 0 if unset, the number if it is one in 1..`max`, and
// nullopt (with the error logged) otherwise: a bad value is a usage error here, not a refusal
// of every worker later.
std::optional<int> slurm_count(const char* variable, int max) {
  const char* value = std::getenv(variable);
  if (!value) return 0;
  const std::string v = value;
  if (!v.empty() && v.size() <= 9 && v.find_first_not_of("0123456789") == std::string::npos) {
    const int n = std::stoi(v);
    if (n >= 1 && n <= max) return n;
  }
  spdlog::error("--slurm: {}='{}' is not a whole number from 1 to {}", variable, shown(v), max);
  return std::nullopt;
}

// Whether `program` can be started as execvp would (a '/' in it: that file; else a PATH search).
std::string cannot_run(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return ::access(program.c_str(), X_OK) == 0 ? "" : std::strerror(errno);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return "";
    start = end + 1;
  }
  return "not found in PATH";
}

// The address the workers connect to: --advertise, or the one that routes to the first host
// ssh resolves (probed concurrently, bounded in time, abandoned on Ctrl-C). nullopt if stopped.
std::optional<AdvertisedAddress> advertised_address(const RenderCommandOptions& o, const std::vector<HostSpec>& hosts,
                                                    const std::atomic<bool>* stop) {
  if (!o.advertise.empty()) return AdvertisedAddress{o.advertise, "--advertise"};
  std::vector<std::string> names;
  for (const HostSpec& h : hosts) names.push_back(h.host);
  SshProbeResult probe;
  if (!hosts.empty()) probe = probe_ssh_hostnames(ssh_words(o.ssh_command), names, stop);
  if (probe.stopped || (stop && stop->load())) return std::nullopt;
  if (!probe.timed_out.empty())
    spdlog::warn("ssh -G gave no answer in {:g} s for {} host(s) (first: {}): using their names as written",
                 k_probe_seconds, probe.timed_out.size(), shown(probe.timed_out.front()));
  return pick_advertised_address(probe.asked, [&](const std::string& host) {
    auto it = probe.hostname.find(host);
    return it == probe.hostname.end() ? host : it->second;
  });
}

}  // namespace

int run_cluster_render(const RenderCommandOptions& o, const std::string& self_exe) {
  // First: Ctrl-C and SIGTERM are honoured from here on, in every step below.
  const std::atomic<bool>* stop = install_stop_flag();
  std::vector<HostSpec> hosts;
  int slurm_tasks = 0, slurm_cpus = 0;
  if (o.slurm) {
    if (const char* job = std::getenv("SLURM_JOB_ID"); !job || !*job) {
      spdlog::error("--slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set, or empty): run it under salloc or sbatch");
      return k_exit_bad_input;
    }
    const std::optional<int> tasks = slurm_count("SLURM_NTASKS", 1 << 20),
                             cpus = slurm_count("SLURM_CPUS_PER_TASK", k_max_threads);
    if (!tasks || !cpus) return k_exit_bad_input;
    slurm_tasks = *tasks;
    slurm_cpus = *cpus;
  } else {
    try {
      hosts = read_host_file(o.hosts_path);
    } catch (const HostFileError& e) {
      spdlog::error("{}", e.what());
      return k_exit_bad_input;
    }
    const std::string ssh = ssh_words(o.ssh_command).front();
    if (std::string why = cannot_run(ssh); !why.empty()) {
      spdlog::error("--ssh-command: cannot run '{}': {}", shown(ssh), why);
      return k_exit_bad_input;
    }
  }
  // A relay per site of the host file (site=NAME): one participant of the master for the site.
  std::vector<SiteRelay> relays;
  try {
    for (Site& site : sites_of(hosts, o.hosts_path)) relays.push_back({std::move(site), {}});
  } catch (const HostFileError& e) {
    spdlog::error("{}", e.what());
    return k_exit_bad_input;
  }
  // Keys for this job only: the master's pair (or the user's --key), one pair per host (one for
  // all Slurm tasks) and one per site's relay (or the allocation's); --allow adds the keys of
  // workers started by hand.
  security::CurveKeyPair master_keys;
  std::set<std::string> also_allowed;
  try {
    master_keys = o.key_path.empty() ? security::generate_key_pair() : security::read_secret_key_file(o.key_path);
    if (!o.allow_path.empty()) also_allowed = security::read_allow_list(o.allow_path);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));  // a bad key file: 2; no CURVE here: 1
  }
  std::vector<security::CurveKeyPair> worker_keys(o.slurm ? 1 : hosts.size());
  for (auto& k : worker_keys) {
    if (stop->load()) break;  // thousands of hosts: key generation is interruptible too
    k = security::generate_key_pair();
  }
  for (SiteRelay& r : relays) {
    if (stop->load()) break;
    r.key = security::generate_key_pair();
  }
  std::optional<security::CurveKeyPair> slurm_relay;
  if (o.slurm_relay) slurm_relay = security::generate_key_pair();

  MasterOptions m = o.master;
  if (!o.advertise.empty()) m.http_hosts.push_back(o.advertise);  // the live view answers to it too
  m.bind = "tcp://*:*";
  m.curve = security::CurveServer{master_keys.secret_key, also_allowed};
  // The workers' keys too, those behind a relay included: a site whose relay fails (or an
  // allocation's) connects straight to the master.
  for (const auto& k : worker_keys) m.curve->allowed.insert(k.public_key);
  for (const SiteRelay& r : relays) m.curve->allowed.insert(r.key.public_key);
  if (slurm_relay) m.curve->allowed.insert(slurm_relay->public_key);
  m.stop = stop;

  WorkerLauncher launcher(o.join_timeout);
  bool ssh_unusable = false;
  m.on_bound = [&](const std::string& endpoint) {
    std::optional<AdvertisedAddress> a;
    try {
      a = advertised_address(o, hosts, stop);
    } catch (const SshCommandError& e) {
      spdlog::error("{}", e.what());
      ssh_unusable = true;
      return;
    }
    // Interrupted while probing: the master's loop sees the flag next; nothing is launched.
    if (!a || stop->load()) return;
    const std::string advertised = "tcp://" + a->address + ":" + port_of(endpoint);
    spdlog::info("workers connect to {} ({})", advertised, a->reason);
    LaunchTarget target{advertised, master_keys.public_key, self_exe};
    if (o.slurm)
      launcher.start_slurm(target, worker_keys.front(), slurm_tasks, slurm_cpus, slurm_relay, stop);
    else
      launcher.start_ssh(hosts, ssh_words(o.ssh_command), target, worker_keys, relays, stop);
  };
  m.on_worker_change = [&](const std::string& name, bool joined) {
    launcher.worker_changed(name, joined);
    spdlog::info("{}", launcher.progress());
  };
  m.should_abort = [&]() -> std::string {
    if (ssh_unusable) return "the ssh command cannot be run";
    // A worker still in the job renders on, whatever became of the process that started it.
    if (launcher.check() || launcher.workers_in_job() > 0) return {};
    if (!launcher.failures().empty()) spdlog::error("every host failed:\n{}", launcher.failures());
    return "no host is running a worker any more";
  };
  RunStatus status = RunStatus::failure;
  try {
    status = run_master(m);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
  }
  // Workers stop after JobDone by themselves; closing the lifelines makes sure of it.
  launcher.stop_all();
  spdlog::info("{}", launcher.progress());
  if (std::string fates = launcher.summary(); !fates.empty())
    spdlog::info("what became of each host{}:\n{}", relays.empty() && !slurm_relay ? "" : " and relay", fates);
  return ssh_unusable ? k_exit_bad_input : exit_code(status);
}

}  // namespace farm
