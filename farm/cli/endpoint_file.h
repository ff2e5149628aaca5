// `--endpoint-file PATH` of `farm master` and `farm relay`: the endpoint it listens on, written
// to PATH (one line, replaced whole) once the socket is bound, for scripts that start a farm with
// port * and must learn the port without reading the log's wording (tools/farmtools/local_farm.py).
#pragma once

#include <functional>
#include <string>

#include "base/status.h"

namespace farm {

// Whether PATH can be written (before any work, as every output is probed).
Status probe_endpoint_file(const std::string& path);

// `then` followed by writing the endpoint to `path` (an error there is logged: the farm goes on).
std::function<void(const std::string&)> write_endpoint_file_after(std::function<void(const std::string&)> then,
                                                                 const std::string& path);

}  // namespace farm
