// The host file of `farm render --hosts FILE`: one worker host per line,
//
//   [user@]host[:port] [threads=N] [farm=PATH] [cache=DIR] [site=NAME]    # comment
//   [user@][IPv6-address][:port] ...                                        # an IPv6 literal, in brackets
//
// `threads` defaults to all cores of the host, `farm` to this binary's path (the same install
// on every host), `cache` to the worker's default cache folder. Hosts with the same `site` form
// a site, served by one relay on the site's first host (launch/site_relays.h); hosts without
// one connect to the master directly.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace farm {

// Bounds on the input: a host file is a list of short lines, and anything else (a binary, a
// device, /dev/zero) is refused after a bounded read instead of filling memory.
constexpr size_t k_max_host_file_bytes = size_t{1} << 20;
constexpr size_t k_max_host_line_bytes = 8192;  // a farm= path may be 4096
// Longer names and values are cut to this in messages.
constexpr size_t k_max_shown_chars = 64;
// A site name is a relay's name at the master and a word on a remote command line: short and plain.
constexpr size_t k_max_site_name_chars = 64;

// Whether `s` is a plain host or user name: letters, digits, '.', '-', '_', at most 255, not
// starting with '-': nothing a remote shell or ssh would interpret.
bool plain_name(const std::string& s);

// `s` as a message shows it: at most k_max_shown_chars, then "... (N bytes)".
std::string shown(const std::string& s);

struct HostFileError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct HostSpec {
  std::string user;          // empty = ssh's default
  std::string host;          // a name or address ssh understands (an alias of its config too);
                             // an IPv6 address without its brackets
  std::optional<int> port;   // ssh port
  int threads = 0;           // 0 = all cores of the host
  std::string farm_path;     // empty = this binary's path
  std::string cache_dir;     // empty = the worker's default
  std::string site;          // empty = no site: the worker connects to the master directly
  int line = 0;              // where it was written
  // "user@host:port" as written ("user@[v6]:port"), for messages.
  std::string label() const;
};

// Throws HostFileError naming the file and line of anything malformed (a key given twice too);
// an empty list, a file past k_max_host_file_bytes or a line past k_max_host_line_bytes is an error.
std::vector<HostSpec> read_host_file(const std::string& path);
std::vector<HostSpec> parse_host_file(const std::string& text, const std::string& path);

}  // namespace farm
