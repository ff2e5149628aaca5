#include "launch/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <stdexcept>

namespace farm {

namespace {

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& stdin_text, std::string label,
                           std::string stdout_marker)
    : m_label(std::move(label)), m_marker(std::move(stdout_marker)) {
  // in: its standard input; err: its standard error (and output without a marker); out: its
  // standard output with a marker; exec_error: closed by a successful exec, carries errno if
  // exec fails, so that a missing program is told apart from a program that exits 127 (ssh's
  // remote "command not found").
  int in[2] = {-1, -1}, err[2] = {-1, -1}, out[2] = {-1, -1}, exec_error[2] = {-1, -1};
  const bool own_stdout = !m_marker.empty();
  auto close_all = [&] {
    for (int fd : {in[0], in[1], err[0], err[1], out[0], out[1], exec_error[0], exec_error[1]})
      if (fd >= 0) ::close(fd);
  };
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || (own_stdout && ::pipe2(out, O_CLOEXEC) != 0) ||
      ::pipe2(exec_error, O_CLOEXEC) != 0) {
    close_all();
    throw std::runtime_error("cannot create a pipe for " + m_label);
  }
  // Built before fork(): the child of a multithreaded process should not allocate.
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  const pid_t parent = ::getpid();
  m_pid = ::fork();
  if (m_pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphans, even when the master is SIGKILLed
    if (::getppid() != parent) ::_exit(1);
    // A process group of its own, signalled whole: an ssh wrapper script's children (or ones
    // that ignore SIGTERM) held the output pipe open, and a stop waited for them for 30 s.
    ::setpgid(0, 0);
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(own_stdout ? out[1] : err[1], STDOUT_FILENO);  // the worker logs to either: both get the host's label
    ::dup2(err[1], STDERR_FILENO);
    ::execvp(cargs[0], cargs.data());
    const int e = errno;
    (void)!::write(exec_error[1], &e, sizeof e);
    ::_exit(127);
  }
  if (m_pid > 0) ::setpgid(m_pid, m_pid);  // also here: whichever runs first, the group exists
  // The child's ends: ours must not hold them open, or their readers would never see the end.
  for (int* fd : {&in[0], &err[1], &out[1], &exec_error[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (m_pid < 0) {
    close_all();
    throw std::runtime_error("cannot start '" + argv.front() + "' for " + m_label);
  }
  int exec_errno = 0;
  ssize_t got;
  while ((got = ::read(exec_error[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  exec_error[0] = -1;
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    close_all();
    ::waitpid(m_pid, nullptr, 0);
    m_pid = -1;
    throw std::runtime_error("cannot run '" + argv.front() + "': " + std::strerror(exec_errno));
  }
  m_stdin = in[1];
  // Its output is drained while its input is written: a child that talks before it has read
  // everything must not block on a full pipe while we block on ours.
  m_reader = std::thread([this, fd = err[0]] { read_lines(fd, false); });
  if (own_stdout) {
    m_out_reader = std::thread([this, fd = out[0]] { read_lines(fd, true); });
  } else {
    m_stdout_closed = true;  // nothing to wait for
  }
  // The whole text fits in the pipe (a relay's keys for a large site pass 64 KiB), so the write
  // cannot block on an ssh that has not started reading yet (a host that hangs); at most the
  // system's pipe-max-size (1 MiB by default), which the largest secrets stay under.
  if (stdin_text.size() > 60000) (void)::fcntl(m_stdin, F_SETPIPE_SZ, static_cast<int>(stdin_text.size() + 4096));
  // A child that died before reading its keys must not kill us with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  size_t written = 0;
  while (written < stdin_text.size()) {
    const ssize_t n = ::write(m_stdin, stdin_text.data() + written, stdin_text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // it is gone; poll() will say how
    written += static_cast<size_t>(n);
  }
}

ChildProcess::~ChildProcess() { stop(0.5); }

void ChildProcess::read_lines(int fd, bool is_stdout) {
  std::string pending;
  char buf[4096];
  // Kept: standard error's last lines (a failing host's reason), standard output's marked ones.
  auto keep = [&](std::string line) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!is_stdout) {
      m_tail.push_back(std::move(line));
      if (m_tail.size() > 20) m_tail.pop_front();
    } else if (line.rfind(m_marker, 0) == 0 && m_marked.size() < k_max_marked_lines) {
      m_marked.push_back(std::move(line));
    }
  };
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (line.empty()) continue;
      std::fprintf(stderr, "[%s] %s\n", m_label.c_str(), line.c_str());
      keep(std::move(line));
    }
  }
  if (!pending.empty()) keep(pending);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    (is_stdout ? m_stdout_closed : m_stderr_closed) = true;
  }
  m_stderr_closed_cv.notify_all();
  ::close(fd);
}

std::optional<int> ChildProcess::poll() {
  if (m_exit || m_pid <= 0) return m_exit;
  int status = 0;
  if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
    m_exit = exit_code_of(status);
    // Its last words may still be in the pipes: give the readers a moment to reach EOF, so that
    // a reason built from stderr_tail() (or a marked line) has them (bounded: a grandchild may
    // hold a pipe open).
    std::unique_lock<std::mutex> lock(m_mutex);
    m_stderr_closed_cv.wait_for(lock, std::chrono::milliseconds(500),
                                [&] { return m_stderr_closed && m_stdout_closed; });
  }
  return m_exit;
}

void ChildProcess::close_lifeline() {
  if (m_stdin >= 0) {
    ::close(m_stdin);  // the lifeline: a worker that still runs stops by itself
    m_stdin = -1;
  }
}

void ChildProcess::signal(int signal_number) {
  if (m_pid > 0 && !poll()) ::kill(-m_pid, signal_number);  // the whole group (see start)
}

void ChildProcess::finish() {
  if (m_pid > 0) {
    // The group even when its leader has exited: what is left of it may hold the output pipe,
    // which the reader waits on. Its id stays reserved while any member lives.
    ::kill(-m_pid, SIGKILL);
    if (!poll()) {
      int status = 0;
      if (::waitpid(m_pid, &status, 0) == m_pid) m_exit = exit_code_of(status);
    }
  }
  if (m_reader.joinable()) m_reader.join();
  if (m_out_reader.joinable()) m_out_reader.join();
}

void ChildProcess::stop(double grace_seconds) { stop_children({this}, grace_seconds, grace_seconds); }

void stop_children(const std::vector<ChildProcess*>& children, double exit_seconds, double term_seconds) {
  for (ChildProcess* c : children) c->close_lifeline();
  auto wait_all = [&](double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      bool running = false;
      for (ChildProcess* c : children) running = running || (c->pid() > 0 && !c->poll());
      if (!running || std::chrono::steady_clock::now() >= until) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  wait_all(exit_seconds);
  for (ChildProcess* c : children) c->signal(SIGTERM);
  wait_all(term_seconds);
  for (ChildProcess* c : children) c->finish();
}

std::vector<std::string> ChildProcess::stderr_tail() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return {m_tail.begin(), m_tail.end()};
}

std::vector<std::string> ChildProcess::take_marked_lines() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<std::string> lines;
  lines.swap(m_marked);
  return lines;
}

bool ChildProcess::stdout_closed() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_stdout_closed;
}

}  // namespace farm
