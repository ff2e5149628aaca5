// Writing a whole file so that a failure is seen and leaves nothing half-written: the bytes go
// to a temporary file beside the target, every write() and the close() are checked, and only
// then is it renamed over the target. A full disk or a quota leaves the old file (or none) and
// an error naming the path and the OS reason; a stream's silently dropped bytes cannot happen.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace farm {

// `what` names the file for the message ("statistics file", "cost map", ...).
Status write_file_replacing(const std::string& path, std::string_view content, const std::string& what);

}  // namespace farm
