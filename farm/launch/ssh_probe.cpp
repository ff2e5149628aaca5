#include "launch/ssh_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <sstream>

namespace farm {

std::vector<std::string> ssh_words(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  if (out.empty()) out.push_back("ssh");
  return out;
}

namespace {

struct Probe {
  std::string host;
  pid_t pid = -1;
  int out = -1;  // its standard output
  std::string text;
  bool done = false;
};

// Starts `argv` with standard output to a pipe (returned in `out`), standard error and input
// to /dev/null. Returns the errno of a failed exec (0 = started).
int start(const std::vector<std::string>& argv, pid_t& pid, int& out) {
  int o[2], exec_error[2];
  if (::pipe2(o, O_CLOEXEC) != 0) return errno;
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(o[0]);
    ::close(o[1]);
    return e;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(o[1], STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execvp(cargs[0], cargs.data());
    const int e = errno;
    (void)!::write(exec_error[1], &e, sizeof e);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(o[1]);
  ::close(exec_error[1]);
  if (pid < 0) {
    ::close(o[0]);
    ::close(exec_error[0]);
    return fork_errno;
  }
  int e = 0;
  ssize_t got;
  while ((got = ::read(exec_error[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  if (got == static_cast<ssize_t>(sizeof e)) {
    ::close(o[0]);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
    return e;
  }
  out = o[0];
  return 0;
}

std::string hostname_line(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("hostname ", 0) == 0) {
      std::string found = line.substr(9);
      while (!found.empty() && (found.back() == '\r' || found.back() == ' ')) found.pop_back();
      return found;
    }
  return "";
}

// Ends every probe still running (SIGKILL: it has had its time) and reaps all.
void end_all(std::vector<Probe>& probes) {
  for (Probe& p : probes) {
    if (p.out >= 0) ::close(p.out);
    p.out = -1;
    if (p.pid > 0) {
      ::kill(p.pid, SIGKILL);  // done or not: one that closed its output and lingers must not block us
      ::waitpid(p.pid, nullptr, 0);
      p.pid = -1;
    }
  }
}

}  // namespace

SshProbeResult probe_ssh_hostnames(const std::vector<std::string>& ssh, const std::vector<std::string>& hosts,
                                   const std::atomic<bool>* stop, double seconds) {
  SshProbeResult result;
  std::set<std::string> seen;
  std::vector<Probe> probes;
  for (const std::string& h : hosts) {
    if (probes.size() == k_max_probes) break;
    if (!seen.insert(h).second) continue;
    if (stop && stop->load()) break;
    Probe p;
    p.host = h;
    std::vector<std::string> argv = ssh;
    argv.insert(argv.end(), {"-G", h});
    if (const int e = start(argv, p.pid, p.out); e != 0) {
      end_all(probes);
      throw SshCommandError("--ssh-command: cannot run '" + ssh.front() + "': " + std::strerror(e));
    }
    result.asked.push_back(h);
    probes.push_back(std::move(p));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Probe*> owners;
    for (Probe& p : probes)
      if (p.out >= 0) {
        fds.push_back({p.out, POLLIN, 0});
        owners.push_back(&p);
      }
    if (fds.empty()) break;
    if (stop && stop->load()) {
      result.stopped = true;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    if (::poll(fds.data(), fds.size(), k_poll_ms) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      // ssh -G prints a few KB; more is not ssh -G (and must not fill memory).
      if (n > 0 && owners[i]->text.size() < 1 << 20) {
        owners[i]->text.append(buf, static_cast<size_t>(n));
        continue;
      }
      ::close(owners[i]->out);
      owners[i]->out = -1;
      owners[i]->done = true;
      if (std::string name = hostname_line(owners[i]->text); !name.empty()) result.hostname[owners[i]->host] = name;
    }
  }
  for (const Probe& p : probes)
    if (!p.done && !result.stopped) result.timed_out.push_back(p.host);
  end_all(probes);
  return result;
}

}  // namespace farm
