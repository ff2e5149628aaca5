// What the launch tests (launch_test, launch_sites_test, ssh_cluster_test, slurm_cluster_test)
// share: an ssh stand-in, and finding the launched `farm worker` and `farm relay` processes of one
// test on this machine, to prove none is left behind.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace launched_workers {

// An ssh stand-in at `path`: drops the options and the destination and runs the remote command
// with sh here (the same program path, arguments and standard input as real ssh). Returns `path`.
inline std::string write_fake_ssh(const std::string& path) {
  std::ofstream(path) << "#!/bin/sh\nfor a; do last=\"$a\"; done\nexec sh -c \"$last\"\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `farm worker` and `farm relay` processes whose command line contains `marker` (a test's own cache folder or
// endpoint). The launchers (ssh, srun) carry the remote command on their own command lines and
// are not counted: only a worker itself is. `found` (optional) gets "pid: command line" of each,
// for a failing check's message.
inline int count(const std::string& marker, std::string* found = nullptr) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_text((e.path() / "cmdline").string());
    const std::string program = std::filesystem::path(cmd.substr(0, cmd.find('\0'))).filename().string();
    if (program == "ssh" || program == "srun") continue;
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(marker) != std::string::npos &&
        (cmd.find(" worker ") != std::string::npos || cmd.find(" relay ") != std::string::npos)) {
      ++n;
      if (found) *found += name + ": " + cmd + "\n";
    }
  }
  return n;
}

// Waits up to `seconds` for none to be left.
inline bool none_left(const std::string& marker, double seconds = 10) {
  for (double t = 0; t < seconds; t += 0.05) {
    if (count(marker) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The workers count() finds now, one "pid: command line" per line (a failing check's message).
inline std::string listing(const std::string& marker) {
  std::string found;
  count(marker, &found);
  return found.empty() ? "(none)" : found;
}

}  // namespace launched_workers
