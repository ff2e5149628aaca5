#include "backend/blender_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "scene/scene_desc.h"

extern char** environ;

namespace farm {

namespace {

const char k_bridge[] =
#include "blender_bridge.inc"
    ;

// Loading a large .blend can take long; a Blender that says nothing for this long is stuck.
constexpr int k_start_timeout_ms = 300 * 1000;

std::atomic<uint64_t> g_log_counter{0};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Blender's complaint in its log: the "Error:" lines (e.g. "Error: File format is not supported
// in file '...'"), else its last lines.
std::string blender_complaint(const std::string& log) {
  std::istringstream in(log);
  std::string errors, last;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line == "Blender quit") continue;
    if (line.find("Error") != std::string::npos || line.find("error") != std::string::npos) {
      errors += (errors.empty() ? "" : " ") + line;
    }
    last = line;
  }
  std::string out = errors.empty() ? last : errors;
  return out.substr(0, 600);
}

// Moves `fd` to a number of 10 or more, close-on-exec, so that placing the child's 0 and 3 never
// collides with it.
int high_fd(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  if (moved < 0) throw std::runtime_error(std::string("cannot set up a pipe to blender: ") + std::strerror(errno));
  return moved;
}

}  // namespace

BlenderProcess::BlenderProcess(const std::string& scene_path, const std::vector<std::string>& bridge_args) {
  // One socket both ways: a send to a Blender that died fails with EPIPE (MSG_NOSIGNAL) instead of
  // killing the worker with SIGPIPE, and its end reads EOF once the process is gone.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    throw std::runtime_error(std::string("cannot make a socket pair for blender: ") + std::strerror(errno));
  }
  m_to = m_from = high_fd(pair[0]);
  const int child = high_fd(pair[1]);
  m_log = (std::filesystem::temp_directory_path() /
           ("farm-blender-" + std::to_string(::getpid()) + "-" + std::to_string(g_log_counter++) + ".log"))
              .string();
  const std::string scene = std::filesystem::absolute(scene_path).string();
  std::vector<std::string> args = {"blender", "-b", "--factory-startup", "--disable-autoexec", "-noaudio", scene,
                                   "--python-expr", k_bridge, "--", "--expect", scene};
  args.insert(args.end(), bridge_args.begin(), bridge_args.end());
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child, 0);
  posix_spawn_file_actions_adddup2(&actions, child, 3);
  posix_spawn_file_actions_addopen(&actions, 1, m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawnp(&m_pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child);
  if (rc != 0) {
    m_pid = -1;
    ::close(m_to);
    m_to = m_from = -1;
    if (rc == ENOENT) throw std::runtime_error("Blender is not installed here (no 'blender' on PATH): install Debian's blender package");
    throw std::runtime_error(std::string("cannot start blender: ") + std::strerror(rc));
  }
  pollfd p{m_from, POLLIN, 0};
  int ready = 0;
  while ((ready = ::poll(&p, 1, k_start_timeout_ms)) < 0 && errno == EINTR) {
  }
  if (ready == 0) {
    ::kill(m_pid, SIGKILL);
    throw std::runtime_error("blender did not load '" + scene_path + "' within " +
                             std::to_string(k_start_timeout_ms / 1000) + " s");
  }
  std::string first;
  try {
    first = read_line();
  } catch (const std::runtime_error&) {
    const std::string complaint = blender_complaint(read_text(m_log));
    ::unlink(m_log.c_str());
    throw rt::SceneError(scene_path + ": Blender: " + (complaint.empty() ? "exited while loading the scene" : complaint));
  }
  ::unlink(m_log.c_str());
  if (first.rfind("error ", 0) == 0) throw rt::SceneError(scene_path + ": " + first.substr(6));
  if (first != "ready") throw std::runtime_error("blender's bridge answered '" + first.substr(0, 200) + "' when starting");
}

BlenderProcess::~BlenderProcess() {
  if (m_to >= 0) ::close(m_to);
  if (m_pid > 0) {
    // Nothing in Blender is worth waiting for: the block it may be rendering is abandoned.
    ::kill(m_pid, SIGKILL);
    while (::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  ::unlink(m_log.c_str());
}

void BlenderProcess::interrupt() {
  m_interrupted = true;
  // The socket stays open (no fd reuse race): the waiting recv returns 0, the next send fails.
  if (m_from >= 0) ::shutdown(m_from, SHUT_RDWR);
}

std::string BlenderProcess::died(const std::string& doing) {
  int status = 0;
  std::string how = m_interrupted ? "was stopped by the farm (its block is no longer wanted)" : "ended";
  if (m_pid > 0) {
    ::kill(m_pid, SIGKILL);  // a bridge that closed its end but lingers is no use either
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (m_interrupted) {
    } else if (WIFSIGNALED(status)) {
      how = "was killed by signal " + std::to_string(WTERMSIG(status));
    } else if (WIFEXITED(status)) {
      how = "exited with status " + std::to_string(WEXITSTATUS(status));
    }
  }
  m_pid = -1;
  return "blender (the bridge process) " + how + " while " + doing;
}

std::string BlenderProcess::read_line() {
  for (;;) {
    const size_t newline = m_pending.find('\n');
    if (newline != std::string::npos) {
      std::string line = m_pending.substr(0, newline);
      m_pending.erase(0, newline + 1);
      return line;
    }
    char buf[4096];
    const ssize_t n = ::recv(m_from, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(died("its answer was awaited"));
    m_pending.append(buf, static_cast<size_t>(n));
    if (m_pending.size() > (size_t{16} << 20)) throw std::runtime_error(died("answering with an over-long line"));
  }
}

std::string BlenderProcess::request(const std::string& line) {
  if (!alive()) throw std::runtime_error("blender is not running");
  const std::string out = line + "\n";
  size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(m_to, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(died("a request was sent"));
    sent += static_cast<size_t>(n);
  }
  return read_line();
}

}  // namespace farm
