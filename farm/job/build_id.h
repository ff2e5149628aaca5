// Identifies this build to peers (version + compile time), for the Hello/Welcome checks and
// the journal: a master and its workers must run the same farm.
#pragma once

#include <string>

namespace farm {

std::string farm_build_id();

}  // namespace farm
