// Scene files: parsing hostile TOML gives a SceneError (or std::invalid_argument), never a crash
// or a hang (libFuzzer's -timeout catches the latter).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "scene/scene_desc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  rt::AssetSearch search;  // no folders: mesh and texture paths resolve nowhere
  try {
    rt::parse_scene_string(text, "/nonexistent/fuzz.toml", search);
  } catch (const rt::SceneError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
