#include "job/run_status.h"

#include <stdexcept>

#include "scene/scene_desc.h"

namespace farm {

RunStatus run_status_of(const std::exception& e) {
  if (dynamic_cast<const rt::SceneError*>(&e) || dynamic_cast<const std::invalid_argument*>(&e))
    return RunStatus::bad_input;
  return RunStatus::failure;
}

}  // namespace farm
