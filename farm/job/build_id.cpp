#include "job/build_id.h"

#include "farm_version.inc"  // FARM_VERSION, FARM_COMMIT (version_stamp.cmake, at every build)

namespace farm {

std::string farm_version() { return FARM_VERSION; }

std::string farm_commit() { return FARM_COMMIT; }

std::string farm_build_id() {
  return std::string("farm-") + FARM_VERSION + " " + FARM_COMMIT + " " + __DATE__ + " " + __TIME__;
}

std::string farm_version_text() {
#if defined(__clang__)
  const std::string compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = std::string("gcc ") + __VERSION__;
#else
  const std::string compiler = "unknown compiler";
#endif
  return std::string("farm ") + FARM_VERSION + " (commit " + FARM_COMMIT + ", built " + __DATE__ + " " + __TIME__ +
         ", " + compiler + ")";
}

}  // namespace farm
