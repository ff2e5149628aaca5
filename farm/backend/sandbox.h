// Every POV-Ray and Blender process the farm starts (a worker's blocks, `farm single`, the
// master's look at a .blend) runs confined: a scene is a program (POV-Ray's #fopen/#write, a
// .blend parsed by a large C program), not data. The confinement is bubblewrap (Debian's `bwrap`,
// the sandbox Flatpak uses), set up here as a command line; docs/sandbox.md says what it confines.
//
// Inside, the renderer sees /usr (its binary, libraries, Python, include files) and its own
// configuration under /etc read-only, the folders it is given read-only (the job's files), one
// writable scratch folder (its outputs), a private /tmp, /proc and /dev of its own, and nothing
// else: no network, no other process, no /home, no cache, no /etc/passwd. Paths keep their names
// inside, so a renderer's messages name the files the user knows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace farm {

// What a job may ask of each renderer process, and what it gets by default. Per process: one
// POV-Ray block (or probe) at a time, one Blender for the job's life (each block's render and
// the scene's load are timed separately).
struct RendererLimits {
  uint64_t memory_mib = 0;  // its address space (RLIMIT_AS); 0: k_default_renderer_memory_mib
  uint32_t seconds = 0;     // one run: a POV-Ray block or probe, a Blender load or block; 0: the default
};
// 8 GiB: a large production scene fits; a damaged .blend that asks for 13 GB is stopped before
// the machine swaps. A job that needs more says so (--renderer-memory).
// (The most a job may ask is in base/limits.h.)
constexpr uint64_t k_default_renderer_memory_mib = 8192;
// 30 minutes for one block, parse or scene load: a parse that never ends costs that, not the job.
constexpr uint32_t k_default_renderer_seconds = 1800;
uint64_t memory_bytes(const RendererLimits& limits);
uint32_t time_limit_seconds(const RendererLimits& limits);

// The operator's explicit choice (`--no-sandbox`) to run renderers unconfined on a machine
// where the sandbox cannot be set up. Process-wide; set once at start-up.
void set_sandbox_disabled(bool disabled);
bool sandbox_disabled();

// Empty if renderers can be confined here (bwrap runs and can make its namespaces; checked once
// per process), else why not, in words that say what to do.
std::string sandbox_problem();
// sandbox_problem() unless the operator disabled the sandbox: what refuses a POV-Ray or Blender
// job on this machine ("" when it can run them).
std::string renderer_refusal();

struct Confinement {
  std::vector<std::string> readable;  // folders (or files) the renderer may read; absolute
  std::vector<std::string> config;    // system configuration it needs ("/etc/povray"), if present
  std::string scratch;                // the one folder it may write; absolute
  std::string workdir;                // where it starts
};

// The command line that runs `command` (its first word a program on PATH) confined, or, with
// the sandbox disabled, `command` itself with HOME and TMPDIR in the scratch folder.
std::vector<std::string> confined_command(const Confinement& c, const std::vector<std::string>& command);

// What `argv` (a renderer asked for its version) prints, run unconfined (it reads no scene) in a
// scratch folder that is its HOME and TMPDIR; nullopt if it cannot run, ends with 127 or takes
// longer than `seconds`.
std::optional<std::string> unconfined_output(const std::vector<std::string>& argv, double seconds);

// A new folder $TMPDIR/farm-scratch-XXXXXX of this process, removed with all it holds when this
// goes. Throws std::runtime_error if it cannot be made.
class ScratchFolder {
 public:
  ScratchFolder();
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

}  // namespace farm
