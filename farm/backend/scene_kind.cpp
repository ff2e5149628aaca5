#include "backend/scene_kind.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace farm {

SceneKind scene_kind(const std::string& scene_path) {
  std::string ext = std::filesystem::path(scene_path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".pov" ? SceneKind::povray : SceneKind::native;
}

const char* scene_kind_name(SceneKind kind) { return kind == SceneKind::povray ? "povray" : "native"; }

}  // namespace farm
