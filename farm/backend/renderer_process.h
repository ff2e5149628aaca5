// Starting and ending the renderer processes (povray, blender, their bwrap): each in a process
// group of its own, with a memory limit, and bound to the farm's life. A process the farm
// starts must not outlive it, whatever way the farm ends (SIGTERM, Ctrl-C, SIGKILL, a crash):
// the kernel's parent-death signal (PR_SET_PDEATHSIG) does that, but it fires when the *thread*
// that forked ends, so every renderer is forked by one thread that lives as long as the process.
// bwrap's --die-with-parent carries the signal on into the sandbox.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace farm {

struct RendererSpawn {
  std::vector<std::string> argv;  // argv[0]: a program on PATH or a path
  std::string workdir;            // "" = the farm's own
  // Child descriptor <- the farm's descriptor (dup2). Descriptors not named are closed, but for
  // 0, 1 and 2, which are /dev/null unless named.
  std::vector<std::pair<int, int>> fds;
  std::string output_path;   // if set, stdout and stderr go to this new file (0600)
  uint64_t memory_bytes = 0;  // RLIMIT_AS; 0 = none
  std::vector<std::string> env;  // "NAME=VALUE" set on top of the farm's environment
};

// The program PATH finds for `program` (itself if it holds a '/'); "" if none.
std::string find_on_path(const std::string& program);

// Starts it; returns its pid, or throws std::runtime_error ("cannot run 'povray': No such file
// or directory"). The pid is also its process group's id.
pid_t spawn_renderer(const RendererSpawn& spawn);

// SIGKILL to its whole process group.
void kill_renderer(pid_t pid);
// For a process that is ending (a command stopped by a signal): SIGKILL to every renderer it
// started and has not reaped, and from now on to any that starts (one being forked at this
// moment among them), so that every wait returns and every scratch folder is removed on the way
// out. A later spawn_renderer() throws.
void kill_all_renderers();
// Whether kill_all_renderers() was called: a renderer that ends now was ended on purpose.
bool renderers_stopping();

// Waits for it to end without reaping it (so its pid cannot be reused while others may still
// signal it). With `seconds` > 0, a process still running then is killed (its group); returns
// false if it was. EINTR is retried.
bool await_renderer(pid_t pid, double seconds);
// Reaps an ended process; returns its wait status.
int reap_renderer(pid_t pid);

// "exit 3", "killed by signal 9 (SIGKILL)"
std::string describe_status(int status);

}  // namespace farm
