#include "job/build_id.h"

namespace farm {

std::string farm_build_id() { return std::string("farm-0.1 ") + __DATE__ + " " + __TIME__; }

}  // namespace farm
