#include "launch/farm_command_line.h"

#include "launch/shell_quote.h"

#include <string_view>

namespace farm {

std::vector<std::string> FarmCommandLine::words(const std::string& program) const {
  std::vector<std::string> w = {program, role == Role::worker ? "worker" : "relay"};
  if (launched) w.push_back("--launched");
  // One job: a launched process serves the job it was started for and exits.
  w.insert(w.end(), {"--once", "--connect", connect});
  if (!bind.empty()) w.insert(w.end(), {"--bind", bind});
  if (!name.empty()) w.insert(w.end(), {"--name", name});
  w.insert(w.end(), {"--give-up-after", k_launched_give_up_seconds});
  if (threads > 0) w.insert(w.end(), {"--threads", std::to_string(threads)});
  if (prefetch >= 0) w.insert(w.end(), {"--prefetch", std::to_string(prefetch)});
  if (!cache_dir.empty()) w.insert(w.end(), {"--cache", cache_dir});
  if (!fallback.empty()) w.insert(w.end(), {"--fallback", fallback});
  if (no_sandbox) w.push_back("--no-sandbox");
  return w;
}

namespace {

// A word the shell reads as itself: left plain, so the command reads well in logs.
bool plain_word(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
    if (!safe) return false;
  }
  return true;
}

}  // namespace

std::string remote_shell_command(const std::vector<std::string>& words) {
  std::string command = "exec";
  for (const std::string& w : words) command += " " + (plain_word(w) ? w : shell_quoted(w));
  return command;
}

}  // namespace farm
