#include "launch/host_file.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include "base/limits.h"
#include "base/file_checks.h"

namespace farm {

std::string HostSpec::label() const {
  // An IPv6 address keeps its brackets, so that a port after it stays readable.
  const std::string name = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return (user.empty() ? "" : user + "@") + name + (port ? ":" + std::to_string(*port) : "");
}

std::string shown(const std::string& s) {
  if (s.size() <= k_max_shown_chars) return s;
  return s.substr(0, k_max_shown_chars) + "... (" + std::to_string(s.size()) + " bytes)";
}

bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 255 || s[0] == '-') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}

namespace {

bool plain_path(const std::string& s) {
  if (s.empty() || s.size() > 4096) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string("/._-+~").find(c) != std::string::npos)) return false;
  return true;
}

// Letters, digits, '.', '_', '-', not first (it would read as an option on the relay's command
// line), at most k_max_site_name_chars.
bool plain_site(const std::string& s) {
  if (s.empty() || s.size() > k_max_site_name_chars || s[0] == '-') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}

// 1-65535, or 0 if `text` is not such a number.
int port_number(const std::string& text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  const int p = std::stoi(text);
  return p <= 65535 ? p : 0;
}

// "host", "host:port", "[v6]" or "[v6]:port" (after the user) into `h`; throws with `where`.
void parse_destination(const std::string& dest, const std::string& first, const std::string& where, HostSpec& h) {
  std::string name = dest, port;
  if (!dest.empty() && dest[0] == '[') {
    const size_t close = dest.find(']');
    if (close == std::string::npos) throw HostFileError(where + "no ']' after the IPv6 address in '" + shown(first) + "'");
    name = dest.substr(1, close - 1);
    in6_addr a{};
    if (::inet_pton(AF_INET6, name.c_str(), &a) != 1)
      throw HostFileError(where + "bad IPv6 address '" + shown(name) + "' in '" + shown(first) + "'");
    const std::string rest = dest.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') throw HostFileError(where + "expected ':PORT' after ']' in '" + shown(first) + "'");
    if (!rest.empty()) port = rest.substr(1), h.port = 0;
  } else if (std::count(dest.begin(), dest.end(), ':') > 1) {
    throw HostFileError(where + "'" + shown(dest) + "' looks like an IPv6 address: write it in brackets, [ADDRESS] or [ADDRESS]:PORT");
  } else if (size_t colon = dest.find(':'); colon != std::string::npos) {
    name = dest.substr(0, colon);
    port = dest.substr(colon + 1);
    h.port = 0;
  } else if (!plain_name(dest)) {
    throw HostFileError(where + "bad host name '" + shown(dest) + "' (letters, digits, '.', '-', '_')");
  }
  if (h.port) {
    h.port = port_number(port);
    if (*h.port == 0) throw HostFileError(where + "bad port '" + shown(port) + "' (1-65535)");
  }
  if (dest[0] != '[' && !plain_name(name))
    throw HostFileError(where + "bad host name '" + shown(name) + "' (letters, digits, '.', '-', '_')");
  h.host = name;
}

void parse_option(const std::string& word, const std::string& where, std::set<std::string>& seen, HostSpec& h) {
  const size_t eq = word.find('=');
  const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
  if (eq == std::string::npos || value.empty())
    throw HostFileError(where + "expected key=value, got '" + shown(word) + "' (keys: threads, farm, cache, site)");
  if (key != "threads" && key != "farm" && key != "cache" && key != "site")
    throw HostFileError(where + "unknown key '" + shown(key) + "' (keys: threads, farm, cache, site)");
  // A second value would silently win over the first: refuse rather than guess.
  if (!seen.insert(key).second) throw HostFileError(where + "key '" + key + "' given twice");
  if (key == "threads") {
    const bool digits = value.size() <= 4 && value.find_first_not_of("0123456789") == std::string::npos;
    h.threads = digits ? std::stoi(value) : -1;
    if (h.threads < 1 || h.threads > k_max_threads) {
      throw HostFileError(where + "threads must be 1-" + std::to_string(k_max_threads) + ", got '" + shown(value) + "'");
    }
  } else if (key == "site") {
    if (!plain_site(value))
      throw HostFileError(where + "bad site name '" + shown(value) +
                          "' (letters, digits, '.', '_', '-', not first; at most " +
                          std::to_string(k_max_site_name_chars) + " characters)");
    h.site = value;
  } else {
    if (!plain_path(value))
      throw HostFileError(where + key + " path '" + shown(value) + "' has characters a remote shell would interpret");
    (key == "farm" ? h.farm_path : h.cache_dir) = value;
  }
}

}  // namespace

std::vector<HostSpec> parse_host_file(const std::string& text, const std::string& path) {
  std::vector<HostSpec> hosts;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (line.size() > k_max_host_line_bytes)
      throw HostFileError(where + "line of " + std::to_string(line.size()) + " bytes (at most " +
                          std::to_string(k_max_host_line_bytes) + ")");
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    HostSpec h;
    h.line = number;
    std::string dest = first;
    if (size_t at = dest.find('@'); at != std::string::npos) {
      h.user = dest.substr(0, at);
      dest = dest.substr(at + 1);
      if (!plain_name(h.user)) throw HostFileError(where + "bad user name in '" + shown(first) + "'");
    }
    parse_destination(dest, first, where, h);
    std::set<std::string> seen;
    for (std::string word; words >> word;) parse_option(word, where, seen, h);
    hosts.push_back(std::move(h));
  }
  if (hosts.empty())
    throw HostFileError(
        path + ": no hosts (one per line: [user@]host[:port] [threads=N] [farm=PATH] [cache=DIR] [site=NAME])");
  return hosts;
}

std::vector<HostSpec> read_host_file(const std::string& path) {
  // stat() first: a FIFO or device would block the open or the read forever.
  if (Status regular = check_regular_file(path, "host file"); !regular.ok()) throw HostFileError(regular.message());
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw HostFileError("cannot read the host file '" + path + "': " + std::strerror(errno));
  // Read no more than the limit (and one byte to see it passed): /dev/zero or a huge file is
  // refused after a bounded read, not loaded whole.
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw HostFileError("cannot read the host file '" + path + "': " + std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > k_max_host_file_bytes) {
      ::close(fd);
      throw HostFileError(path + ": larger than " + std::to_string(k_max_host_file_bytes >> 20) +
                          " MiB: a host file holds one short line per host");
    }
  }
  ::close(fd);
  return parse_host_file(text, path);
}

}  // namespace farm
