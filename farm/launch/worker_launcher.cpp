#include "launch/worker_launcher.h"

#include <spdlog/spdlog.h>

#include <signal.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "security/launch_secrets.h"

namespace farm {

namespace {

// One word for the remote shell: the host file's paths and names are already plain, quoting
// keeps it so whatever they hold.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void WorkerLauncher::start_ssh(const std::vector<HostSpec>& hosts, const std::vector<std::string>& ssh,
                               const LaunchTarget& target, const std::vector<security::CurveKeyPair>& keys,
                               const std::atomic<bool>* stop) {
  std::map<std::string, int> times_listed;
  for (size_t i = 0; i < hosts.size(); ++i) {
    // Ctrl-C or SIGTERM while thousands of hosts start: none more.
    if (stop && stop->load()) {
      spdlog::warn("hosts: interrupted after starting {} of {}", i, hosts.size());
      break;
    }
    const HostSpec& h = hosts[i];
    const int n = ++times_listed[h.label()];
    const std::string name = n == 1 ? h.label() : h.label() + "#" + std::to_string(n);
    std::vector<std::string> argv = ssh;
    // BatchMode: a missing key fails at once instead of prompting; -T: no terminal, so the
    // remote worker's standard input is the channel and its end reaches the worker as EOF.
    argv.insert(argv.end(), {"-o", "BatchMode=yes", "-T"});
    if (h.port) argv.insert(argv.end(), {"-p", std::to_string(*h.port)});
    argv.push_back(h.user.empty() ? h.host : h.user + "@" + h.host);
    std::string remote = "exec " + quoted(h.farm_path.empty() ? target.self_exe : h.farm_path) +
                         " worker --launched --once --connect " + quoted(target.endpoint) + " --name " +
                         quoted(name) + " --give-up-after 60";
    if (h.threads > 0) remote += " --threads " + std::to_string(h.threads);
    if (!h.cache_dir.empty()) remote += " --cache " + quoted(h.cache_dir);
    argv.push_back(remote);
    security::CurveClient secrets{keys[i].public_key, keys[i].secret_key, target.master_key};
    Launch l;
    l.label = name;
    l.name = name;
    m_launch_of[name] = m_launches.size();
    try {
      l.process = std::make_unique<ChildProcess>(argv, security::format_launch_secrets(secrets), l.label);
    } catch (const std::exception& e) {
      l.ended = true;
      l.reason = e.what();
      spdlog::error("host {}: cannot start: {}", l.label, l.reason);
    }
    m_launches.push_back(std::move(l));
  }
  // --join-timeout counts from here: no join is heard while thousands of hosts start (the
  // master's loop waits for this), so the first ones must not be held to account for it.
  const auto all_started = std::chrono::steady_clock::now();
  for (Launch& l : m_launches) l.started = all_started;
  m_workers = static_cast<int>(m_launches.size());
  spdlog::info("hosts: started {} worker(s) over {}", m_launches.size(), ssh.front());
}

void WorkerLauncher::start_slurm(const LaunchTarget& target, const security::CurveKeyPair& key, int tasks,
                                 int cpus_per_task) {
  m_slurm = true;
  // --input=all: every task reads the keys; -K0: a worker that fails does not end the step.
  std::vector<std::string> argv = {"srun", "--input=all", "--kill-on-bad-exit=0"};
  if (tasks > 0) argv.push_back("--ntasks=" + std::to_string(tasks));
  argv.insert(argv.end(), {target.self_exe, "worker", "--launched", "--once", "--connect", target.endpoint,
                           "--give-up-after", "60"});
  if (cpus_per_task > 0) argv.insert(argv.end(), {"--threads", std::to_string(cpus_per_task)});
  security::CurveClient secrets{key.public_key, key.secret_key, target.master_key};
  Launch l;
  l.label = std::string("slurm job ") + (std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "?");
  l.started = std::chrono::steady_clock::now();
  l.process = std::make_unique<ChildProcess>(argv, security::format_launch_secrets(secrets), l.label);
  m_workers = tasks;
  spdlog::info("slurm: started {} worker task(s) with srun in {}", tasks > 0 ? std::to_string(tasks) : "the allocation's",
               l.label);
  m_launches.push_back(std::move(l));
}

std::string WorkerLauncher::reason_for(const Launch& l, int code) const {
  const std::vector<std::string> tail = l.process ? l.process->stderr_tail() : std::vector<std::string>{};
  const std::string last = tail.empty() ? "(no message)" : tail.back();
  if (!m_slurm && code == 255) return "ssh failed: " + last;
  if (code == 127) return "the farm binary was not found there (set farm=PATH in the host file): " + last;
  if (code == 2) return "refused (another farm version, or bad keys): " + last;
  return "its worker exited with code " + std::to_string(code) + ": " + last;
}

void WorkerLauncher::worker_changed(const std::string& name, bool joined) {
  int& n = m_joined[name];
  if (auto it = m_launch_of.find(name); it != m_launch_of.end() && joined) m_launches[it->second].joined = true;
  if (joined) {
    ++n;
  } else if (n > 0) {
    --n;
    ++m_lost;
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
  const auto now = std::chrono::steady_clock::now();
  for (Launch& l : m_launches) {
    if (l.ended) continue;
    std::optional<int> code = l.process->poll();
    if (!code && !m_slurm && !l.joined &&
        now - l.started > std::chrono::duration<double>(m_join_timeout)) {
      give_up_on_silent(l);
      continue;
    }
    if (!code) {
      any_running = true;
      continue;
    }
    l.ended = true;
    l.exit_code = *code;
    if (*code != 0) {
      l.reason = reason_for(l, *code);
      spdlog::error("host {}: {}; the render goes on with the others", l.label, l.reason);
    }
  }
  return any_running;  // every worker is the child of a launch: none running, none rendering
}

std::string WorkerLauncher::progress() const {
  int joined_now = 0;
  for (const auto& [name, n] : m_joined) joined_now += n > 0;
  int failed = 0;
  for (const Launch& l : m_launches) failed += !l.reason.empty();
  const std::string started = m_slurm ? (m_workers > 0 ? std::to_string(m_workers) + " tasks" : std::string("all tasks"))
                                      : std::to_string(m_workers) + " started";
  return std::string(m_slurm ? "slurm: " : "hosts: ") + started + ", " + std::to_string(joined_now) + " joined, " +
         std::to_string(m_lost) + " lost" + (failed ? ", " + std::to_string(failed) + " failed" : "");
}

std::string WorkerLauncher::failures() const {
  std::string out;
  for (const Launch& l : m_launches)
    if (!l.reason.empty()) out += "  " + l.label + ": " + l.reason + "\n";
  return out;
}

std::string WorkerLauncher::summary() const {
  std::string out;
  for (const Launch& l : m_launches) {
    std::string fate;
    if (!l.reason.empty()) {
      fate = "failed: " + l.reason;
    } else if (m_slurm) {
      fate = l.ended ? "the srun step ended (exit " + std::to_string(l.exit_code) + ")" : "the srun step ran to the end";
    } else if (!l.joined) {
      fate = l.ended ? "its ssh ended (exit " + std::to_string(l.exit_code) + ") before its worker joined"
                     : "its worker had not joined when the job ended";
    } else {
      auto it = m_joined.find(l.name);
      const bool present = it != m_joined.end() && it->second > 0;
      fate = present ? "joined, in the job to the end" : "joined, then lost during the render";
    }
    out += "  " + l.label + ": " + fate + "\n";
  }
  for (const auto& [name, n] : m_joined)
    if (!m_launch_of.count(name))
      out += "  worker " + name + ": " + (n > 0 ? "joined, in the job to the end" : "joined, then lost during the render") + "\n";
  return out;
}

int WorkerLauncher::workers_in_job() const {
  int n = 0;
  for (const auto& [name, times] : m_joined) n += times > 0;
  return n;
}

void WorkerLauncher::stop_all() {
  // All at once, with one grace period: thousands of hosts must not mean thousands of waits.
  for (Launch& l : m_launches)
    if (l.process) l.process->close_lifeline();
  auto wait_all = [&](double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      bool running = false;
      for (Launch& l : m_launches) running = running || (l.process && !l.process->poll());
      if (!running || std::chrono::steady_clock::now() >= until) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  wait_all(2.0);
  for (Launch& l : m_launches)
    if (l.process) l.process->signal(SIGTERM);
  wait_all(2.0);
  for (Launch& l : m_launches)
    if (l.process) l.process->finish();
}

}  // namespace farm
