#include "cli/endpoint_file.h"

#include <spdlog/spdlog.h>

#include "base/file_checks.h"
#include "base/file_write.h"

namespace farm {

Status probe_endpoint_file(const std::string& path) { return probe_writable(path, "endpoint file"); }

std::function<void(const std::string&)> write_endpoint_file_after(std::function<void(const std::string&)> then,
                                                                 const std::string& path) {
  return [then = std::move(then), path](const std::string& endpoint) {
    if (then) then(endpoint);
    if (Status written = write_file_replacing(path, endpoint + "\n", "endpoint file"); !written.ok())
      spdlog::error("{}", written.message());
  };
}

}  // namespace farm
