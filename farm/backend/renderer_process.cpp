#include "backend/renderer_process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace farm {

namespace {

// Everything the child needs, made before the fork: between fork and exec only async-signal-safe
// calls are allowed (the farm has many threads; one of them may hold malloc's lock).
struct ForkPlan {
  std::string program;  // resolved path
  std::vector<char*> argv, envp;
  const char* workdir = nullptr;
  std::vector<std::pair<int, int>> fds;  // child <- parent
  int null_fd = -1;
  rlim_t memory = 0;
  pid_t parent = 0;
  // Filled in by the spawner thread.
  pid_t pid = -1;
  int error = 0;
  bool done = false;
};

[[noreturn]] void child_exec(const ForkPlan& p, int report_fd) {
  // Out of the way of the descriptors placed below.
  const int report = ::fcntl(report_fd, F_DUPFD_CLOEXEC, 100);
  if (report < 0) ::_exit(127);
  auto fail = [&](int err) {
    (void)!::write(report, &err, sizeof err);
    ::_exit(127);
  };
  ::setpgid(0, 0);
  // Dies with the farm: the spawner thread lives as long as the farm's process.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != p.parent) ::_exit(127);  // the farm ended before the line above
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, nullptr);  // the farm ignores it; the renderer should not
  if (p.memory > 0) {
    const rlimit limit{p.memory, p.memory};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) fail(errno);
  }
  // Sources first out of the way (to 100+), so that placing one never overwrites another.
  int moved[16];
  const size_t n = std::min<size_t>(p.fds.size(), 16);
  for (size_t i = 0; i < n; ++i) {
    moved[i] = ::fcntl(p.fds[i].second, F_DUPFD, 100);
    if (moved[i] < 0) fail(errno);
  }
  bool placed[3] = {false, false, false};
  int highest = 2;
  for (size_t i = 0; i < n; ++i) {
    const int target = p.fds[i].first;
    if (::dup2(moved[i], target) < 0) fail(errno);
    if (target < 3) placed[target] = true;
    highest = std::max(highest, target);
  }
  for (int fd = 0; fd < 3; ++fd) {
    if (!placed[fd] && ::dup2(p.null_fd, fd) < 0) fail(errno);
  }
  // Everything else closed at exec (the report pipe too: it stays open until then).
  if (::close_range(static_cast<unsigned>(highest) + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = highest + 1; fd < 4096; ++fd) {
      if (fd != report) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  if (p.workdir && ::chdir(p.workdir) != 0) fail(errno);
  ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  fail(errno);
  ::_exit(127);  // not reached: fail() ends the child
}

void fork_now(ForkPlan& p) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    p.error = errno;
    return;
  }
  const pid_t pid = ::fork();
  if (pid == 0) child_exec(p, report[1]);
  ::close(report[1]);
  if (pid < 0) {
    p.error = errno;
    ::close(report[0]);
    return;
  }
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before anyone kills it
  int err = 0;
  ssize_t got = 0;
  while ((got = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof err)) {
    p.error = err;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  p.pid = pid;
}

// The one thread that forks every renderer. Never ends (nor is it destroyed) before the process.
class Spawner {
 public:
  static Spawner& get() {
    static Spawner* s = new Spawner;  // never deleted: its thread may be waiting at exit
    return *s;
  }
  void run(ForkPlan& plan) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_queue.push_back(&plan);
    m_cv.notify_all();
    m_cv.wait(lock, [&] { return plan.done; });
  }

 private:
  Spawner() { std::thread([this] { loop(); }).detach(); }
  void loop() {
    std::unique_lock<std::mutex> lock(m_mutex);
    for (;;) {
      m_cv.wait(lock, [&] { return !m_queue.empty(); });
      ForkPlan* plan = m_queue.front();
      m_queue.pop_front();
      lock.unlock();
      fork_now(*plan);
      lock.lock();
      plan->done = true;
      m_cv.notify_all();
    }
  }
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<ForkPlan*> m_queue;
};

// Every renderer started and not yet reaped.
std::mutex g_live_mutex;
std::vector<pid_t> g_live;
bool g_stopping = false;  // kill_all_renderers() was called: the process is ending

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string find_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) return "";
    start = colon + 1;
  }
}

pid_t spawn_renderer(const RendererSpawn& spawn) {
  if (spawn.argv.empty()) throw std::runtime_error("cannot run an empty command");
  if (spawn.fds.size() > 16) throw std::runtime_error("too many descriptors for a renderer");
  ForkPlan plan;
  plan.program = find_on_path(spawn.argv[0]);
  if (plan.program.empty()) throw std::runtime_error("cannot run '" + spawn.argv[0] + "': not found on PATH");
  for (const std::string& a : spawn.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  // The farm's environment, with the spawn's own settings in place of the same names.
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(spawn.env.begin(), spawn.env.end(),
                                      [&](const std::string& s) { return s.compare(0, name.size() + 1, name + "=") == 0; });
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), spawn.env.begin(), spawn.env.end());
  for (const std::string& e : env) plan.envp.push_back(const_cast<char*>(e.c_str()));
  plan.envp.push_back(nullptr);
  if (!spawn.workdir.empty()) plan.workdir = spawn.workdir.c_str();
  Fd null_fd{::open("/dev/null", O_RDWR | O_CLOEXEC)};
  if (null_fd.fd < 0) throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  plan.null_fd = null_fd.fd;
  Fd output;
  plan.fds = spawn.fds;
  if (!spawn.output_path.empty()) {
    output.fd = ::open(spawn.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (output.fd < 0) {
      throw std::runtime_error("cannot write '" + spawn.output_path + "': " + std::strerror(errno));
    }
    plan.fds.emplace_back(1, output.fd);
    plan.fds.emplace_back(2, output.fd);
  }
  plan.memory = static_cast<rlim_t>(spawn.memory_bytes);
  plan.parent = ::getpid();
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    if (g_stopping) throw std::runtime_error("cannot run '" + spawn.argv[0] + "': the farm is stopping");
  }
  Spawner::get().run(plan);
  if (plan.pid < 0) {
    throw std::runtime_error("cannot run '" + spawn.argv[0] + "': " + std::strerror(plan.error ? plan.error : EAGAIN));
  }
  std::lock_guard<std::mutex> lock(g_live_mutex);
  g_live.push_back(plan.pid);
  if (g_stopping) kill_renderer(plan.pid);  // forked while the farm began to stop
  return plan.pid;
}

void kill_renderer(pid_t pid) {
  if (pid <= 0) return;
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // in case it left its group (bwrap's sandbox makes a session of its own inside)
}

bool await_renderer(pid_t pid, double seconds) {
  if (seconds > 0) {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      bool ended = false;
      for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{pidfd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30)));
        if (ready > 0) {
          ended = true;
          break;
        }
        if (ready < 0 && errno != EINTR) break;
      }
      ::close(pidfd);
      if (!ended) {
        kill_renderer(pid);
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
        }
        return false;
      }
      return true;
    }
  }
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  return true;
}

void kill_all_renderers() {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  g_stopping = true;
  for (pid_t pid : g_live) kill_renderer(pid);
}

bool renderers_stopping() {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return g_stopping;
}

int reap_renderer(pid_t pid) {
  {
    // Forgotten before it is reaped: a kill must never reach a reused pid.
    std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.erase(std::remove(g_live.begin(), g_live.end(), pid), g_live.end());
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  return "ended (status " + std::to_string(status) + ")";
}

}  // namespace farm
