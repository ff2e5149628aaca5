// Checks on files named by the user, made before any work: an input must be a regular file
// (a FIFO or a device would block a reader forever), an output's folder must take a new file.
// Each refusal names the path and the OS reason (strerror).
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace farm {

// strerror(err), thread-safe.
std::string os_reason(int err);

// Ok if `path` is a regular file. Only stat()s it, never opens it, so a FIFO cannot block.
// `what` names the file for the message ("scene file", "key file", "host file", ...).
Status check_regular_file(const std::string& path, const std::string& what);

// Ok if `path` can be written: its folder exists and takes a new file (a probe file is
// created beside it and removed again, so a read-only folder or file system is found before
// rendering), and `path` itself, if it exists, is a regular file that opens for writing
// (opened without truncating: its content is untouched). `what` as above ("output image").
// The probe file holds k_probe_bytes, so a full disk is found too, not only a read-only one.
inline constexpr size_t k_probe_bytes = 64 * 1024;
Status probe_writable(const std::string& path, const std::string& what);

// The part of probe_writable that is `path`'s own: its folder exists, and `path`, if it exists,
// is a regular file that opens for writing. For many names in one folder (an animation's
// frames) once the folder itself has passed probe_writable: a stat each, no probe file.
Status check_writable_name(const std::string& path, const std::string& what);

}  // namespace farm
