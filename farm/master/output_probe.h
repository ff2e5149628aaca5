// Probing where a job will write, before any work is done: a render that would fail at the end
// (a read-only folder, no permission, a journal that cannot be reopened) is refused at the start,
// naming the path and the OS's reason, instead of after hours of rendering.
#pragma once

#include <string>

namespace farm {

// Creates and at once removes a file beside `path` (in its folder), so nothing is left behind.
// If `path` exists, it is also opened for writing (and left as it is). Throws
// std::invalid_argument "cannot write the WHAT 'PATH': cannot create a file in 'DIR': REASON"
// (or "cannot open it for writing: REASON"), REASON being strerror(errno).
void probe_writable(const std::string& path, const std::string& what);

}  // namespace farm
