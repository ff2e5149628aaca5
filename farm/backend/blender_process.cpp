#include "backend/blender_process.h"
#include "backend/text_file.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "backend/renderer_process.h"
#include "scene/scene_desc.h"

namespace farm {

namespace {

const char k_bridge[] =
#include "blender_bridge.inc"
    ;

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

BlenderProcess::BlenderProcess(const std::string& scene_path, const std::vector<std::string>& bridge_args,
                               const RendererLimits& limits)
    : m_scratch(std::make_unique<ScratchFolder>()), m_limits(limits) {
  // One socket both ways: a send to a Blender that died fails with EPIPE (MSG_NOSIGNAL) instead of
  // killing the worker with SIGPIPE, and its end reads EOF once the process is gone.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    throw std::runtime_error(std::string("cannot make a socket pair for blender: ") + std::strerror(errno));
  }
  m_to = m_from = high_fd(pair[0]);
  const int child = high_fd(pair[1]);
  m_log = m_scratch->path() + "/blender.log";
  const std::string scene = std::filesystem::absolute(scene_path).lexically_normal().string();
  std::vector<std::string> command = {"blender", "-b", "--factory-startup", "--disable-autoexec", "-noaudio", scene,
                                      "--python-expr", k_bridge, "--", "--expect", scene};
  command.insert(command.end(), bridge_args.begin(), bridge_args.end());
  Confinement confinement;
  // The .blend's folder: the files it reads lie there or below (job_spec checks, the worker ships).
  confinement.readable = {std::filesystem::path(scene).parent_path().string()};
  confinement.config = {"/etc/fonts"};
  confinement.scratch = m_scratch->path();
  confinement.workdir = m_scratch->path();
  RendererSpawn spawn;
  spawn.argv = confined_command(confinement, command);
  spawn.workdir = confinement.workdir;
  spawn.fds = {{0, child}, {3, child}};
  spawn.output_path = m_log;
  spawn.memory_bytes = memory_bytes(limits);
  // Blender's own temporary files (its blender_XXXX folder) go to the scratch folder, with it.
  if (sandbox_disabled()) spawn.env = {"HOME=" + m_scratch->path(), "TMPDIR=" + m_scratch->path()};
  try {
    m_pid = spawn_renderer(spawn);
  } catch (const std::runtime_error& e) {
    ::close(child);
    ::close(m_to);
    m_to = m_from = -1;
    m_pid = -1;
    if (std::string(e.what()).find("not found on PATH") != std::string::npos) {
      throw std::runtime_error("Blender is not installed here (no 'blender' on PATH): install Debian's blender package");
    }
    throw std::runtime_error(std::string("cannot start blender: ") + e.what());
  }
  ::close(child);
  // Until it is ready, a failure here must not leave it running (no destructor for a throw).
  struct EndOnThrow {
    BlenderProcess& p;
    bool armed = true;
    ~EndOnThrow() {
      if (!armed || p.m_pid <= 0) return;
      kill_renderer(p.m_pid);
      reap_renderer(p.m_pid);
      p.m_pid = -1;
      ::close(p.m_to);
      p.m_to = p.m_from = -1;
    }
  } end_on_throw{*this};
  const int limit_ms = static_cast<int>(std::min<uint64_t>(uint64_t{time_limit_seconds(limits)} * 1000, 1u << 30));
  std::string first;
  try {
    first = read_line(limit_ms);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.find("within") != std::string::npos) {
      throw std::runtime_error("blender did not load '" + scene_path + "' within " +
                               std::to_string(time_limit_seconds(limits)) +
                               " s, the job's time limit for one renderer run");
    }
    std::string complaint = blender_complaint(read_text(m_log));
    // A crash report is written into the scratch folder, which is gone with it: not worth naming.
    if (complaint.find("blender.crash.txt") != std::string::npos) complaint.clear();
    // How it ended comes first when it crashed or met its memory limit (`what` then names the
    // signal and the limit); its last error lines are context, not the cause: a damaged file may
    // make it complain of one datablock and then crash on another.
    const bool crashed = what.find("killed by signal") != std::string::npos;
    if (complaint.empty()) {
      complaint = what;
    } else if (crashed) {
      complaint = what + "; its last words before: " + complaint;
    }
    // Blender that cannot even start (its libraries do not fit the memory limit) is this
    // machine's trouble, not the scene's.
    if (complaint.find("error while loading shared libraries") != std::string::npos) {
      throw std::runtime_error("blender cannot start: " + complaint + " (each Blender may use " +
                               std::to_string(memory_bytes(limits) >> 20) + " MiB of memory, the job's renderer memory limit)");
    }
    throw rt::SceneError(scene_path + ": Blender: " + complaint);
  }
  ::unlink(m_log.c_str());
  if (first.rfind("error ", 0) == 0) throw rt::SceneError(scene_path + ": " + first.substr(6));
  if (first != "ready") throw std::runtime_error("blender's bridge answered '" + first.substr(0, 200) + "' when starting");
  end_on_throw.armed = false;
}

BlenderProcess::~BlenderProcess() {
  if (m_to >= 0) ::close(m_to);
  if (m_pid > 0) {
    // Nothing in Blender is worth waiting for: the block it may be rendering is abandoned.
    kill_renderer(m_pid);
    reap_renderer(m_pid);
  }
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
    kill_renderer(m_pid);  // a bridge that closed its end but lingers is no use either
    status = reap_renderer(m_pid);
    if (m_interrupted) {
    } else if (WIFSIGNALED(status)) {
      how = "was killed by signal " + std::to_string(WTERMSIG(status));
    } else if (WIFEXITED(status) && !sandbox_disabled() && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 65) {
      // bwrap ends with 128 + N when what it ran was killed by signal N.
      how = "was killed by signal " + std::to_string(WEXITSTATUS(status) - 128);
    } else if (WIFEXITED(status)) {
      how = "exited with status " + std::to_string(WEXITSTATUS(status));
    }
  }
  m_pid = -1;
  // Blender out of memory crashes or exits: name the limit it had (not when it was killed).
  const bool killed = m_interrupted || how.find("signal 9") != std::string::npos;
  return "blender (the bridge process) " + how + " while " + doing +
         (killed ? "" : " (each Blender may use " + std::to_string(memory_bytes(m_limits) >> 20) + " MiB of memory, the job's renderer memory limit)");
}

std::string BlenderProcess::read_line(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const size_t newline = m_pending.find('\n');
    if (newline != std::string::npos) {
      std::string line = m_pending.substr(0, newline);
      m_pending.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{m_from, POLLIN, 0};
    const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count()) + 1) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      throw std::runtime_error(died("its answer was awaited: no answer within " + std::to_string(timeout_ms / 1000) +
                                    " s, the job's time limit for one renderer run"));
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
  return read_line(static_cast<int>(std::min<uint64_t>(uint64_t{time_limit_seconds(m_limits)} * 1000, 1u << 30)));
}

}  // namespace farm
