// The host file of `farm render --hosts FILE`: one worker host per line,
//
//   [user@]host[:port] [threads=N] [farm=PATH] [cache=DIR]    # comment
//
// `threads` defaults to all cores of the host, `farm` to this binary's path (the same install
// on every host), `cache` to the worker's default cache folder.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace farm {

struct HostFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HostSpec {
  std::string user;          // empty = ssh's default
  std::string host;          // a name or address ssh understands (an alias of its config too)
  std::optional<int> port;   // ssh port
  int threads = 0;           // 0 = all cores of the host
  std::string farm_path;     // empty = this binary's path
  std::string cache_dir;     // empty = the worker's default
  int line = 0;              // where it was written
  // "user@host:port" as written, for messages.
  std::string label() const;
};

// Throws HostFileError naming the file and line of anything malformed; an empty list is an error.
std::vector<HostSpec> read_host_file(const std::string& path);
std::vector<HostSpec> parse_host_file(const std::string& text, const std::string& path);

}  // namespace farm
