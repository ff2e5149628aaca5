// Scenes and processes of other renderers for the backend tests: whether a renderer is here, a
// .blend made by Blender itself, and the renderer processes a farm run started (to kill them).
#pragma once

#include <dirent.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "farm_fixture.h"

namespace backend_scenes {

namespace fs = std::filesystem;

inline bool have_program(const std::string& name) {
  return test_process::run({"/bin/sh", "-c", "command -v " + name}, "/dev/null") == 0;
}

// Makes tools/blender/make_test_scene.py's scene in `dir` with Blender (scene.blend, checker.png
// beside it): WIDTHxHEIGHT, SAMPLES Cycles samples, frames 1..2.
inline std::string make_blender_scene(const fs::path& dir, int width, int height, int samples) {
  const std::string scene = (dir / "scene.blend").string();
  REQUIRE(test_process::run({"/usr/bin/env", "blender", "-b", "--factory-startup", "-P",
                             test_paths::project("tools/blender/make_test_scene.py"), "--", scene, std::to_string(width),
                             std::to_string(height), std::to_string(samples)},
                            (dir / "make.log").string(), 120) == 0);
  REQUIRE(fs::exists(dir / "checker.png"));
  return scene;
}

// The processes below `root` (children, grandchildren, ...) whose command name is `comm`.
inline std::vector<pid_t> descendants_named(pid_t root, const std::string& comm) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::map<pid_t, std::string> names;
  if (DIR* proc = ::opendir("/proc")) {
    while (dirent* e = ::readdir(proc)) {
      const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
      if (pid <= 0) continue;
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      if (!std::getline(stat, line)) continue;
      // pid (comm) state ppid ...: comm may hold spaces, so read around its parentheses.
      const size_t open = line.find('('), close = line.rfind(')');
      if (open == std::string::npos || close == std::string::npos) continue;
      names[pid] = line.substr(open + 1, close - open - 1);
      std::istringstream rest(line.substr(close + 2));
      std::string state;
      pid_t ppid = 0;
      rest >> state >> ppid;
      children[ppid].push_back(pid);
    }
    ::closedir(proc);
  }
  std::vector<pid_t> found, todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      if (names[c] == comm) found.push_back(c);
      todo.push_back(c);
    }
  }
  return found;
}

}  // namespace backend_scenes
