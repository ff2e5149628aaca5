#include "launch/worker_launcher.h"

#include <spdlog/spdlog.h>

#include <signal.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "launch/farm_command_line.h"
#include "security/launch_secrets.h"

namespace farm {

std::vector<std::string> WorkerLauncher::ssh_argv(const std::vector<std::string>& ssh, const HostSpec& h,
                                                  const std::string& remote) {
  std::vector<std::string> argv = ssh;
  // BatchMode: a missing key fails at once instead of prompting; -T: no terminal, so the
  // remote process's standard input is the channel and its end reaches it as EOF.
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-T"});
  if (h.port) argv.insert(argv.end(), {"-p", std::to_string(*h.port)});
  argv.push_back(h.user.empty() ? h.host : h.user + "@" + h.host);
  argv.push_back(remote);
  return argv;
}

void WorkerLauncher::start_launch(Launch l, const std::vector<std::string>& argv, const std::string& secrets,
                                  const std::string& stdout_marker) {
  try {
    l.process = std::make_unique<ChildProcess>(argv, secrets, l.label, stdout_marker);
  } catch (const std::exception& e) {
    l.ended = true;
    l.reason = e.what();
    spdlog::error("{} {}: cannot start: {}", l.relay ? "the" : "host", l.label, l.reason);
  }
  m_launches.push_back(std::move(l));
}

void WorkerLauncher::start_ssh(const std::vector<HostSpec>& hosts, const std::vector<std::string>& ssh,
                               const LaunchTarget& target, const std::vector<security::CurveKeyPair>& keys,
                               const std::vector<SiteRelay>& relays, const std::atomic<bool>* stop) {
  // Every worker's name first: a relay's name at the master must differ from them all.
  std::vector<std::string> names;
  std::map<std::string, int> times_listed;
  for (const HostSpec& h : hosts) {
    const int n = ++times_listed[h.label()];
    names.push_back(n == 1 ? h.label() : h.label() + "#" + std::to_string(n));
  }
  if (!relays.empty() && !(stop && stop->load())) {
    // All relays at once, then one bounded wait: a slow site must not hold up the others' start.
    start_relays(hosts, ssh, target, keys, relays, std::set<std::string>(names.begin(), names.end()));
    wait_for_relays(stop);
  }
  const size_t first_worker = m_launches.size();
  for (size_t i = 0; i < hosts.size(); ++i) {
    // Ctrl-C or SIGTERM while thousands of hosts start: none more.
    if (stop && stop->load()) {
      spdlog::warn("hosts: interrupted after starting {} of {}", i, hosts.size());
      break;
    }
    const HostSpec& h = hosts[i];
    Launch l;
    l.label = names[i];
    l.name = names[i];
    l.site = h.site;
    l.via = h.site.empty() ? -1 : relay_of(h.site);
    // A site's workers pin their relay's key; without one (no site, or its relay failed) the master's.
    const std::string endpoint = l.via >= 0 ? m_launches[l.via].endpoint : target.endpoint;
    const std::string server_key = l.via >= 0 ? m_launches[l.via].public_key : target.master_key;
    FarmCommandLine command;
    command.connect = endpoint;
    command.name = l.name;
    command.threads = h.threads;
    command.cache_dir = h.cache_dir;
    // Behind a relay: the master to fall back on if the relay dies (its key rides in the secrets).
    if (l.via >= 0) command.fallback = target.endpoint;
    const std::string remote =
        remote_shell_command(command.words(h.farm_path.empty() ? target.self_exe : h.farm_path));
    security::CurveClient secrets{keys[i].public_key, keys[i].secret_key, server_key};
    const std::string fallback_key = l.via >= 0 ? target.master_key : std::string();
    m_launch_of[l.name] = m_launches.size();
    start_launch(std::move(l), ssh_argv(ssh, h, remote), security::format_launch_secrets(secrets, fallback_key));
  }
  // --join-timeout counts from here: no join is heard while thousands of hosts start (the
  // master's loop waits for this), so the first ones must not be held to account for it.
  const auto all_started = std::chrono::steady_clock::now();
  for (size_t i = first_worker; i < m_launches.size(); ++i) m_launches[i].started = all_started;
  m_workers = static_cast<int>(m_launches.size() - first_worker);
  spdlog::info("hosts: started {} worker(s){} over {}", m_workers,
               m_relays ? " and " + std::to_string(m_relays) + " relay(s)" : std::string(), ssh.front());
}

void WorkerLauncher::start_slurm(const LaunchTarget& target, const security::CurveKeyPair& key, int tasks,
                                 int cpus_per_task, const std::optional<security::CurveKeyPair>& relay,
                                 const std::atomic<bool>* stop) {
  m_slurm = true;
  const std::string job = std::string("slurm job ") + (std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "?");
  int via = -1;
  if (relay) {
    start_slurm_relay(target, key.public_key, *relay, job);
    wait_for_relays(stop);
    if (stop && stop->load()) return;  // no worker step; stop_all ends the relay's
    if (m_launches.back().reason.empty() && !m_launches.back().endpoint.empty())
      via = static_cast<int>(m_launches.size() - 1);
  }
  // The tasks pin the relay's key when they go through it, else the master's.
  const std::string endpoint = via >= 0 ? m_launches[via].endpoint : target.endpoint;
  const std::string server_key = via >= 0 ? m_launches[via].public_key : target.master_key;
  // --input=all: every task reads the keys; -K0: a worker that fails does not end the step.
  std::vector<std::string> argv = {"srun", "--input=all", "--kill-on-bad-exit=0"};
  if (tasks > 0) argv.push_back("--ntasks=" + std::to_string(tasks));
  FarmCommandLine command;
  command.connect = endpoint;
  command.threads = cpus_per_task;
  if (via >= 0) command.fallback = target.endpoint;  // if the relay dies
  const std::vector<std::string> words = command.words(target.self_exe);
  argv.insert(argv.end(), words.begin(), words.end());
  security::CurveClient secrets{key.public_key, key.secret_key, server_key};
  Launch l;
  l.label = job;
  l.via = via;
  l.started = std::chrono::steady_clock::now();
  m_workers = tasks;
  // Through start_launch: an srun that cannot be run is reported as a failed launch (the master
  // then ends the job: no worker is running), not thrown out of the master's bound callback.
  start_launch(std::move(l), argv, security::format_launch_secrets(secrets, via >= 0 ? target.master_key : ""));
  if (m_launches.back().process)
    spdlog::info("slurm: started {} worker task(s) with srun in {}{}",
                 tasks > 0 ? std::to_string(tasks) : "the allocation's", job,
                 via >= 0 ? ", through its relay at " + endpoint : std::string());
}

std::string WorkerLauncher::reason_for(const Launch& l, int code) const {
  const std::vector<std::string> tail = l.process ? l.process->stderr_tail() : std::vector<std::string>{};
  const std::string last = tail.empty() ? "(no message)" : tail.back();
  if (!m_slurm && code == 255) return "ssh failed: " + last;
  if (code == 127)
    return std::string("the farm binary was not found there (") +
           (m_slurm ? "the nodes run it at this machine's path" : "set farm=PATH in the host file") + "): " + last;
  if (code == 2) return "refused (another farm version, or bad keys): " + last;
  return std::string(l.relay ? "the relay" : "its worker") + " exited with code " + std::to_string(code) + ": " + last;
}

void WorkerLauncher::worker_changed(const std::string& name, bool joined) {
  int& n = m_joined[name];
  if (auto it = m_launch_of.find(name); it != m_launch_of.end() && joined) m_launches[it->second].joined = true;
  if (joined) {
    ++n;
    if (m_falling_back.erase(name)) m_fell_back.insert(name);  // its relay ended; now at the master
  } else if (n > 0) {
    --n;
    if (!m_relay_names.count(name)) ++m_lost;  // a relay's site workers are counted by name
  }
}

void WorkerLauncher::give_up_on_silent(Launch& l) {
  l.process->close_lifeline();
  l.process->signal(SIGKILL);
  l.process->finish();
  l.ended = true;
  l.exit_code = l.process->poll().value_or(-1);
  const std::vector<std::string> tail = l.process->stderr_tail();
  l.reason = "no worker joined within " + std::to_string(static_cast<int>(m_join_timeout)) +
             " s of starting ssh (the host accepts no connection or does not answer; --join-timeout): " +
             (tail.empty() ? std::string("(no message)") : tail.back());
  spdlog::error("host {}: {}; the render goes on with the others", l.label, l.reason);
}

bool WorkerLauncher::check() {
  bool any_running = false;
  bool site_changed = false;
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < m_launches.size(); ++i) {
    Launch& l = m_launches[i];
    if (l.ended) continue;
    if (l.relay) site_changed = read_relay_lines(i) || site_changed;
    std::optional<int> code = l.process->poll();
    // A site worker joins its relay, which tells us (read_relay_lines), so the same timeout holds.
    if (!code && !m_slurm && !l.relay && !l.joined && now - l.started > std::chrono::duration<double>(m_join_timeout)) {
      give_up_on_silent(l);
      continue;
    }
    if (!code) {
      // A relay alone renders nothing; the workers behind one that ended join the master (--fallback).
      any_running = any_running || !l.relay;
      continue;
    }
    l.ended = true;
    l.exit_code = *code;
    if (l.relay) {
      site_changed = read_relay_lines(i) || site_changed;  // its last words
      site_changed = site_changed || !l.members.empty();
      relay_ended(l);
    }
    if (*code != 0) {
      l.reason = reason_for(l, *code);
      spdlog::error("{} {}: {}; {}", l.relay ? "the" : "host", l.label, l.reason,
                    l.relay ? its_workers() + " join the master directly" : "the render goes on with the others");
    }
  }
  if (site_changed) spdlog::info("{}", progress());
  return any_running;  // every worker is the child of a launch: none running, none rendering
}

std::string WorkerLauncher::progress() const {
  int joined_now = 0;
  for (const auto& [name, n] : m_joined) joined_now += n > 0 && !m_relay_names.count(name);
  int failed = 0;
  for (const Launch& l : m_launches) failed += !l.reason.empty();
  const std::string started = m_slurm ? (m_workers > 0 ? std::to_string(m_workers) + " tasks" : std::string("all tasks"))
                                      : std::to_string(m_workers) + " started";
  return std::string(m_slurm ? "slurm: " : "hosts: ") + started +
         (m_relays ? ", " + std::to_string(m_relays) + (m_relays == 1 ? " relay" : " relays") : std::string()) + ", " +
         std::to_string(joined_now) + " joined, " + std::to_string(m_lost) + " lost" +
         (failed ? ", " + std::to_string(failed) + " failed" : "");
}

std::string WorkerLauncher::failures() const {
  std::string out;
  for (const Launch& l : m_launches)
    if (!l.reason.empty()) out += "  " + l.label + ": " + l.reason + "\n";
  return out;
}

std::string WorkerLauncher::its_workers() const { return m_slurm ? "its worker tasks" : "its site's workers"; }

std::string WorkerLauncher::route_of(const Launch& l) const {
  const bool relay_died = l.via >= 0 && m_launches[l.via].ended && m_launches[l.via].exit_code != 0;
  if (m_slurm) {
    if (relay_died)
      return m_fell_back.empty() ? " (through the allocation's relay, which ended)"
                                 : " (through the allocation's relay, then straight to the master: the relay ended)";
    if (l.via >= 0) return " (through the allocation's relay)";
    return m_relays ? " (straight to the master: the allocation's relay failed)" : "";
  }
  if (relay_died)
    return " (through the relay of site " + l.site +
           (m_fell_back.count(l.name) ? ", then straight to the master: the relay ended)" : ", which ended)");
  if (l.via >= 0) return " (through the relay of site " + l.site + ")";
  return l.site.empty() ? "" : " (straight to the master: its site's relay failed)";
}

std::string WorkerLauncher::fate_of(const Launch& l) const {
  if (!l.reason.empty()) return "failed: " + l.reason;
  if (m_slurm && !l.relay)
    return (l.ended ? "the srun step ended (exit " + std::to_string(l.exit_code) + ")" : "the srun step ran to the end") +
           route_of(l);
  auto it = m_joined.find(l.name);
  const bool present = (it != m_joined.end() && it->second > 0) || m_finished.count(l.name);
  if (l.relay) {
    // Interrupted before it said where it listens: its site's workers were not started.
    if (l.endpoint.empty()) return "it had not said where it listens when the job ended";
    const std::string where = "listened on " + l.endpoint + ", " + std::to_string(l.seen.size()) +
                              (m_slurm ? " worker task(s)" : " site worker(s)") + " joined it; ";
    if (l.joined)
      return where + (present ? "joined the job, in it to the end" : "joined the job, then lost during the render");
    return where + (l.ended ? "it ended (exit " + std::to_string(l.exit_code) + ") before joining the job"
                            : "never joined the job (it joins once a site worker reaches it)");
  }
  if (!l.joined)
    return (l.ended ? "its ssh ended (exit " + std::to_string(l.exit_code) + ") before its worker joined"
                    : "its worker had not joined when the job ended") +
           route_of(l);
  return (present ? "joined, in the job to the end" : "joined, then lost during the render") + route_of(l);
}

std::string WorkerLauncher::summary() const {
  std::string out;
  for (const Launch& l : m_launches) out += "  " + l.label + ": " + fate_of(l) + "\n";
  // Slurm tasks and workers started by hand (m_finished: Slurm tasks whose relay saw the job through).
  for (const auto& [name, n] : m_joined)
    if (!m_launch_of.count(name))
      out += "  worker " + name + ": " +
             (n > 0 || m_finished.count(name) ? "joined, in the job to the end" : "joined, then lost during the render") +
             "\n";
  return out;
}

int WorkerLauncher::workers_in_job() const {
  int n = 0;
  for (const auto& [name, times] : m_joined) n += times > 0 && !m_relay_names.count(name);
  return n;
}

void WorkerLauncher::stop_all() {
  std::vector<ChildProcess*> children;
  for (Launch& l : m_launches)
    if (l.process) children.push_back(l.process.get());
  stop_children(children, 2.0, 2.0);
}

}  // namespace farm
