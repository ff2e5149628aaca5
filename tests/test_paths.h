// Paths the tests need: the project's own scenes and the optional shared third-party scenes.
#pragma once

#include <filesystem>
#include <string>

#include <unistd.h>

namespace test_paths {

inline std::string project(const std::string& rel) { return std::string(FARM_SOURCE_DIR) + "/" + rel; }

// ../shared/scenes beside the checkout; tests that need it skip (and say so) when absent.
inline std::string shared_scenes() { return FARM_SHARED_SCENES; }
inline bool have_shared_scenes() { return std::filesystem::is_directory(FARM_SHARED_SCENES); }

// A fresh temporary directory for one test.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("farm_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace test_paths
