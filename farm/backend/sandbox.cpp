#include "backend/sandbox.h"
#include "backend/text_file.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "backend/renderer_process.h"

namespace farm {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_disabled{false};

bool under(const fs::path& path, const fs::path& folder) {
  const std::string p = path.lexically_normal().string(), f = folder.lexically_normal().string();
  return p == f || (p.size() > f.size() && p.compare(0, f.size(), f) == 0 && (f.back() == '/' || p[f.size()] == '/'));
}

}  // namespace

uint64_t memory_bytes(const RendererLimits& limits) {
  return (limits.memory_mib ? limits.memory_mib : k_default_renderer_memory_mib) << 20;
}

uint32_t time_limit_seconds(const RendererLimits& limits) {
  return limits.seconds ? limits.seconds : k_default_renderer_seconds;
}

void set_sandbox_disabled(bool disabled) { g_disabled = disabled; }
bool sandbox_disabled() { return g_disabled; }

std::vector<std::string> confined_command(const Confinement& c, const std::vector<std::string>& command) {
  if (g_disabled) return command;
  std::vector<std::string> a = {"bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
                                "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", c.scratch,
                                "--setenv", "TMPDIR", c.scratch, "--setenv", "LANG", "C.UTF-8",
                                "--ro-bind", "/usr", "/usr"};
  // The top-level folders a merged /usr links into it; on other systems, the folders themselves.
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    std::error_code ec;
    if (fs::is_symlink(top, ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(top, ec).string(), top});
    } else if (fs::is_directory(top, ec)) {
      a.insert(a.end(), {"--ro-bind", top, top});
    }
  }
  a.insert(a.end(), {"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/alternatives",
                     "/etc/alternatives", "--ro-bind-try", "/etc/localtime", "/etc/localtime"});
  for (const std::string& path : c.config) a.insert(a.end(), {"--ro-bind-try", path, path});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});
  for (const std::string& path : c.readable) {
    if (!under(path, "/usr")) a.insert(a.end(), {"--ro-bind", path, path});
  }
  a.insert(a.end(), {"--bind", c.scratch, c.scratch});
  // A renderer found elsewhere on PATH (an operator's own build) is seen where it lies.
  std::string program = command.empty() ? "" : find_on_path(command.front());
  if (!program.empty()) {
    program = fs::absolute(program).lexically_normal().string();
    if (!under(program, "/usr")) a.insert(a.end(), {"--ro-bind", program, program});
  }
  if (!c.workdir.empty()) a.insert(a.end(), {"--chdir", c.workdir});
  a.push_back("--");
  if (!command.empty()) {
    a.push_back(program.empty() ? command.front() : program);
    a.insert(a.end(), command.begin() + 1, command.end());
  }
  return a;
}

std::string sandbox_problem() {
  static std::once_flag once;
  static std::string problem;
  std::call_once(once, [] {
    const std::string instead = " (docs/sandbox.md says how to run renderers unconfined instead, and what that means)";
    if (find_on_path("bwrap").empty()) {
      problem = "POV-Ray and Blender run only inside a sandbox, and bubblewrap is not installed here (no 'bwrap' on PATH): "
                "install Debian's bubblewrap package" + instead;
      return;
    }
    const std::string fix = ": bubblewrap needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                            "user.max_user_namespaces > 0, a container that allows them)" + instead;
    try {
      ScratchFolder scratch;
      const std::string log = scratch.path() + "/.check.log";
      Confinement c;
      c.scratch = scratch.path();
      c.workdir = scratch.path();
      RendererSpawn spawn;
      const bool was = g_disabled.exchange(false);
      spawn.argv = confined_command(c, {"true"});
      g_disabled = was;
      spawn.output_path = log;
      const pid_t pid = spawn_renderer(spawn);
      const bool ended = await_renderer(pid, 60);
      const int status = reap_renderer(pid);
      if (!ended || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string said = read_text(log);
        while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
        problem = "POV-Ray and Blender run only inside a sandbox, and bubblewrap cannot make one here (" +
                  (ended ? describe_status(status) : std::string("no answer in 60 s")) + (said.empty() ? "" : ": " + said.substr(0, 300)) +
                  ")" + fix;
      }
    } catch (const std::exception& e) {
      problem = std::string("POV-Ray and Blender run only inside a sandbox, which cannot be set up here (") + e.what() + ")" + fix;
    }
  });
  return problem;
}

std::optional<std::string> unconfined_output(const std::vector<std::string>& argv, double seconds) {
  try {
    ScratchFolder scratch;
    RendererSpawn spawn;
    spawn.argv = argv;
    spawn.workdir = scratch.path();
    spawn.output_path = scratch.path() + "/output.log";
    spawn.env = {"HOME=" + scratch.path(), "TMPDIR=" + scratch.path()};
    const pid_t pid = spawn_renderer(spawn);
    const bool ended = await_renderer(pid, seconds);
    const int status = reap_renderer(pid);
    if (!ended || !WIFEXITED(status) || WEXITSTATUS(status) == 127) return std::nullopt;
    return read_text(spawn.output_path);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

std::string renderer_refusal() { return g_disabled ? "" : sandbox_problem(); }

ScratchFolder::ScratchFolder() {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::string pattern = (tmp / "farm-scratch-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    throw std::runtime_error("cannot make a scratch folder in " + tmp.string() + ": " + std::strerror(errno));
  }
  // The sandbox's user may differ from ours inside its namespace, but it is mapped to ours.
  m_path = fs::absolute(pattern).lexically_normal().string();
}

ScratchFolder::~ScratchFolder() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

}  // namespace farm
