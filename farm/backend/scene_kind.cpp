#include "backend/scene_kind.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "backend/povray_renderer.h"

namespace farm {

SceneKind scene_kind(const std::string& scene_path) {
  std::string ext = std::filesystem::path(scene_path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".pov") return SceneKind::povray;
  if (ext == ".blend") return SceneKind::blender;
  return SceneKind::native;
}

const char* scene_kind_name(SceneKind kind) {
  switch (kind) {
    case SceneKind::povray: return "povray";
    case SceneKind::blender: return "blender";
    case SceneKind::native: break;
  }
  return "native";
}

int renders_per_thread(SceneKind kind) { return kind == SceneKind::povray ? k_povray_renders_per_thread : 1; }

}  // namespace farm
