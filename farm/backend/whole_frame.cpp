#include "backend/whole_frame.h"

#include <algorithm>

#include "scene/scene_desc.h"
#include "scheduler/block.h"

namespace farm {

int whole_frame_grid(int width, int height) { return std::max(width, height); }

void check_whole_frame_size(const std::string& scene, const std::vector<std::string>& reasons, int width, int height) {
  if (reasons.empty() || std::max(width, height) <= k_max_block_side) return;
  throw rt::SceneError(reasons.front() + ": such a scene's frames are rendered whole, one block each, and a block is at "
                       "most " + std::to_string(k_max_block_side) + " pixels a side; this image is " +
                       std::to_string(width) + "x" + std::to_string(height) + " (" + scene + ")");
}

std::string whole_frame_notice(const std::string& renderer, const std::vector<std::string>& reasons) {
  std::string why;
  for (const std::string& r : reasons) why += (why.empty() ? "" : "; ") + r;
  return "each frame is rendered whole, as one block, by one " + renderer +
         " on one thread (a farm spreads frames, not blocks; farm single uses one thread too), "
         "because the scene's pixels would otherwise depend on the region rendered: " + why;
}

}  // namespace farm
