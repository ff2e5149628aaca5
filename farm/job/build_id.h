// Identifies this build: to peers (the Hello/Welcome checks and the journal: a master and its
// workers must run the same farm) and to people (`farm --version`, packages).
#pragma once

#include <string>

namespace farm {

// The project's version (CMake's project(VERSION)), e.g. "0.1.0".
std::string farm_version();
// The source commit it was built from (`git describe --always --dirty`), "unknown" outside git.
std::string farm_commit();
// What peers compare: version, commit and compile time.
std::string farm_build_id();
// `farm --version`: "farm 0.1.0 (commit ..., built ..., compiler ...)".
std::string farm_version_text();

}  // namespace farm
