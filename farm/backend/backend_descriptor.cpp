#include "backend/backend_descriptor.h"

#include "backend/povray_renderer.h"

namespace farm {

BackendDescriptor describe_backend(SceneKind kind, const std::vector<std::string>& renderer_options) {
  BackendDescriptor d;
  d.kind = kind;
  d.renders_per_thread = renders_per_thread(kind);
  d.preview_costs = kind == SceneKind::native;
  if (kind == SceneKind::povray) d.grid = povray_grid(renderer_options);
  return d;
}

}  // namespace farm
