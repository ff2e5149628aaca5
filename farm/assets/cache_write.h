// Writing into the worker's cache. A failure here is this machine's (disk full, quota,
// permissions, a read-only file system), never the master's: messages name the path and the
// OS reason, and nothing half-written stays behind to keep the disk full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace farm {

// Writes `size` bytes to `tmp` (created, must not exist), then renames it to `path`, so a
// crash never leaves a truncated `path`; `path` gets the permissions `mode` (less the umask). On
// any failure `tmp` is removed and the Status says "cannot write 'TMP': <strerror>" (or "cannot
// rename ... to ...: <strerror>").
Status write_file_via(const std::string& tmp, const std::string& path, const uint8_t* data, size_t size,
                      unsigned mode = 0644);

// Creates `dir` (and parents), then writes and removes a file of one block in it: whether the
// cache can take anything at all, asked before the worker joins. An empty file would not do:
// a full file system still creates one.
Status probe_writable_dir(const std::string& dir);

// A name part no other process writing the same folder uses: the pid alone is not one when the
// folder is shared by processes in other PID namespaces (containers, or the cluster tests' hosts,
// whose workers were all pid 7) or by other machines (a cache on a network file system).
const std::string& process_tag();

}  // namespace farm
