// WorkerLauncher's relays (worker_launcher.h): one `farm relay --launched` per site on the site's
// first host, or one srun step on a Slurm allocation's first node; the wait for each to say where
// it listens, and what they say of their site's workers afterwards (the master sees only the relay).
#include <signal.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "launch/farm_command_line.h"
#include "launch/worker_launcher.h"
#include "security/launch_secrets.h"

namespace farm {

void WorkerLauncher::start_relays(const std::vector<HostSpec>& hosts, const std::vector<std::string>& ssh,
                                  const LaunchTarget& target, const std::vector<security::CurveKeyPair>& keys,
                                  const std::vector<SiteRelay>& relays, const std::set<std::string>& worker_names) {
  const auto now = std::chrono::steady_clock::now();
  for (const SiteRelay& r : relays) {
    const HostSpec& h = hosts[r.site.hosts.front()];
    Launch l;
    l.relay = true;
    l.site = r.site.name;
    l.host = h;
    l.public_key = r.key.public_key;
    l.label = "relay of site " + r.site.name + " on " + h.label();
    // Its name at the master is the site's, unless a worker has that name (a host called so).
    l.name = worker_names.count(r.site.name) ? r.site.name + "#relay" : r.site.name;
    l.started = now;
    // --workers 1 (the default): it joins the master as soon as one site worker is there and
    // announces the site again as more come, so a site worker that fails holds nothing up.
    FarmCommandLine command;
    command.role = FarmCommandLine::Role::relay;
    command.connect = target.endpoint;
    command.bind = relay_bind(h);
    command.name = l.name;
    command.cache_dir = h.cache_dir;
    const std::string remote =
        remote_shell_command(command.words(h.farm_path.empty() ? target.self_exe : h.farm_path));
    security::RelayLaunchSecrets secrets{{r.key.public_key, r.key.secret_key, target.master_key}, {}};
    for (size_t i : r.site.hosts) secrets.allowed.insert(keys[i].public_key);
    m_relay_names.insert(l.name);
    m_launch_of[l.name] = m_launches.size();
    start_launch(std::move(l), ssh_argv(ssh, h, remote), security::format_relay_launch_secrets(secrets),
                 k_relay_line_marker);
  }
  m_relays = static_cast<int>(relays.size());
}

void WorkerLauncher::start_slurm_relay(const LaunchTarget& target, const std::string& worker_key,
                                       const security::CurveKeyPair& relay, const std::string& job) {
  Launch l;
  l.relay = true;
  l.label = "relay of " + job;
  l.name = "slurm";  // the tasks' names are HOST-PID: never this
  l.public_key = relay.public_key;
  l.started = std::chrono::steady_clock::now();
  // --relative=0: the allocation's first node, with no node name to look up (-w would need
  // `scontrol show hostnames`); srun chooses, so the relay reports the host it runs on.
  // --overlap: it shares that node's CPUs with the worker step; without it the worker step,
  // asking for every task of the allocation, would wait for the relay's CPU forever.
  // --input=all and -K0 as for the worker step.
  FarmCommandLine command;
  command.role = FarmCommandLine::Role::relay;
  command.connect = target.endpoint;
  command.bind = relay_bind(HostSpec{});
  command.name = l.name;
  std::vector<std::string> argv = {"srun",    "--ntasks=1", "--nodes=1", "--relative=0",
                                   "--overlap", "--input=all", "--kill-on-bad-exit=0"};
  const std::vector<std::string> words = command.words(target.self_exe);
  argv.insert(argv.end(), words.begin(), words.end());
  // All tasks share one key pair: the relay admits that one key.
  security::RelayLaunchSecrets secrets{{relay.public_key, relay.secret_key, target.master_key}, {worker_key}};
  m_relay_names.insert(l.name);
  m_launch_of[l.name] = m_launches.size();
  m_relays = 1;
  start_launch(std::move(l), argv, security::format_relay_launch_secrets(secrets), k_relay_line_marker);
}

void WorkerLauncher::wait_for_relays(const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(m_join_timeout);
  for (;;) {
    bool waiting = false;
    for (size_t i = 0; i < m_launches.size(); ++i) {
      Launch& l = m_launches[i];
      if (!l.relay || l.ended || !l.endpoint.empty()) continue;
      read_relay_lines(i);
      if (!l.endpoint.empty()) {
        spdlog::info("{}: listening, {} connect to {}", l.label, its_workers(), l.endpoint);
      } else if (std::optional<int> code = l.process->poll()) {
        read_relay_lines(i);  // it may have said so just before it ended
        if (l.endpoint.empty()) fail_relay(l, reason_for(l, *code));
      } else {
        waiting = true;
      }
    }
    // Interrupted: the workers are not started either (start_ssh); stop_all ends the relays.
    if (!waiting || (stop && stop->load())) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (Launch& l : m_launches) {
        if (!l.relay || l.ended || !l.endpoint.empty()) continue;
        const std::vector<std::string> tail = l.process->stderr_tail();
        fail_relay(l, "it did not say where it listens within " + std::to_string(static_cast<int>(m_join_timeout)) +
                          " s of starting " + (m_slurm ? "srun" : "ssh") + " (--join-timeout): " +
                          (tail.empty() ? std::string("(no message)") : tail.back()));
      }
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void WorkerLauncher::fail_relay(Launch& l, const std::string& reason) {
  if (l.process) {
    l.process->close_lifeline();
    l.process->signal(SIGKILL);
    l.process->finish();
    l.exit_code = l.process->poll().value_or(-1);
  }
  l.ended = true;
  l.reason = reason;
  spdlog::error("the {}: {}; {} connect to the master directly", l.label, reason, its_workers());
}

bool WorkerLauncher::read_relay_lines(size_t r) {
  Launch& l = m_launches[r];
  if (!l.process) return false;
  bool changed = false;
  for (const std::string& line : l.process->take_marked_lines()) {
    if (const std::string host = reported_host(line); !host.empty()) {
      if (l.host.host.empty()) l.host.host = host;  // a Slurm step's node; a host file's name stands
    } else if (const int port = bound_port(line)) {
      // Without a host (it could not tell it) no endpoint: it is given up at --join-timeout,
      // with its last message.
      if (l.endpoint.empty() && !l.host.host.empty()) l.endpoint = relay_endpoint(l.host, port);
    } else if (line.rfind(k_relay_site_worker_joined, 0) == 0) {
      const std::string name = line.substr(sizeof k_relay_site_worker_joined - 1);
      l.members.insert(name);
      l.seen.insert(name);
      worker_changed(name, true);
      changed = true;
    } else if (line.rfind(k_relay_site_worker_left, 0) == 0) {
      const std::string name = line.substr(sizeof k_relay_site_worker_left - 1);
      if (l.members.erase(name)) worker_changed(name, false);
      changed = true;
    }
  }
  return changed;
}

void WorkerLauncher::relay_ended(Launch& l) {
  // With the job done (exit 0 after it) they saw it through. Otherwise they join the master
  // directly (--fallback) soon: out of the job meanwhile, but not lost.
  for (const std::string& name : l.members) {
    if (l.exit_code == 0) {
      m_joined[name] = 0;
      m_finished.insert(name);
    } else {
      if (int& n = m_joined[name]; n > 0) --n;
      m_falling_back.insert(name);
    }
  }
  l.members.clear();
}

int WorkerLauncher::relay_of(const std::string& site) const {
  for (size_t i = 0; i < m_launches.size(); ++i) {
    const Launch& l = m_launches[i];
    if (l.relay && l.site == site && l.reason.empty() && !l.endpoint.empty()) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace farm
