#include "launch/worker_launcher.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <sstream>

#include "security/launch_secrets.h"

namespace farm {

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// One word for the remote shell: the host file's paths and names are already plain, quoting
// keeps it so whatever they hold.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void WorkerLauncher::start_ssh(const std::vector<HostSpec>& hosts, const std::string& ssh_command,
                               const LaunchTarget& target, const std::vector<security::CurveKeyPair>& keys) {
  const std::vector<std::string> ssh = split_words(ssh_command.empty() ? "ssh" : ssh_command);
  for (size_t i = 0; i < hosts.size(); ++i) {
    const HostSpec& h = hosts[i];
    std::vector<std::string> argv = ssh;
    // BatchMode: a missing key fails at once instead of prompting; -T: no terminal, so the
    // remote worker's standard input is the channel and its end reaches the worker as EOF.
    argv.insert(argv.end(), {"-o", "BatchMode=yes", "-T"});
    if (h.port) argv.insert(argv.end(), {"-p", std::to_string(*h.port)});
    argv.push_back(h.user.empty() ? h.host : h.user + "@" + h.host);
    std::string remote = "exec " + quoted(h.farm_path.empty() ? target.self_exe : h.farm_path) +
                         " worker --launched --once --connect " + quoted(target.endpoint) + " --name " +
                         quoted(h.label()) + " --give-up-after 60";
    if (h.threads > 0) remote += " --threads " + std::to_string(h.threads);
    if (!h.cache_dir.empty()) remote += " --cache " + quoted(h.cache_dir);
    argv.push_back(remote);
    security::CurveClient secrets{keys[i].public_key, keys[i].secret_key, target.master_key};
    Launch l;
    l.label = h.label();
    try {
      l.process = std::make_unique<ChildProcess>(argv, security::format_launch_secrets(secrets), l.label);
    } catch (const std::exception& e) {
      l.ended = true;
      l.reason = e.what();
      spdlog::error("host {}: cannot start: {}", l.label, l.reason);
    }
    m_launches.push_back(std::move(l));
  }
  m_workers = static_cast<int>(hosts.size());
  spdlog::info("hosts: started {} worker(s) over {}", m_launches.size(), ssh.front());
}

void WorkerLauncher::start_slurm(const LaunchTarget& target, const security::CurveKeyPair& key) {
  m_slurm = true;
  const char* tasks = std::getenv("SLURM_NTASKS");
  const char* cpus = std::getenv("SLURM_CPUS_PER_TASK");
  // --input=all: every task reads the keys; -K0: a worker that fails does not end the step.
  std::vector<std::string> argv = {"srun", "--input=all", "--kill-on-bad-exit=0"};
  if (tasks) argv.push_back(std::string("--ntasks=") + tasks);
  argv.insert(argv.end(), {target.self_exe, "worker", "--launched", "--once", "--connect", target.endpoint,
                           "--give-up-after", "60"});
  if (cpus) argv.insert(argv.end(), {"--threads", cpus});
  security::CurveClient secrets{key.public_key, key.secret_key, target.master_key};
  Launch l;
  l.label = std::string("slurm job ") + (std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "?");
  l.process = std::make_unique<ChildProcess>(argv, security::format_launch_secrets(secrets), l.label);
  m_workers = tasks ? std::atoi(tasks) : 0;
  spdlog::info("slurm: started {} worker task(s) with srun in {}", tasks ? tasks : "the allocation's", l.label);
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
  if (joined) {
    ++n;
  } else if (n > 0) {
    --n;
    ++m_lost;
  }
}

bool WorkerLauncher::check() {
  bool any_running = false;
  for (Launch& l : m_launches) {
    if (l.ended) continue;
    std::optional<int> code = l.process->poll();
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

void WorkerLauncher::stop_all() {
  for (Launch& l : m_launches)
    if (l.process) l.process->stop();
}

}  // namespace farm
