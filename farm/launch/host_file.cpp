#include "launch/host_file.h"
#include "base/file_checks.h"

#include <fstream>
#include <sstream>

namespace farm {

std::string HostSpec::label() const {
  return (user.empty() ? "" : user + "@") + host + (port ? ":" + std::to_string(*port) : "");
}

namespace {

// Characters a host or user name may hold: nothing a remote shell or ssh would interpret.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 255 || s[0] == '-') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}

bool plain_path(const std::string& s) {
  if (s.empty() || s.size() > 4096) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string("/._-+~").find(c) != std::string::npos)) return false;
  return true;
}

}  // namespace

std::vector<HostSpec> parse_host_file(const std::string& text, const std::string& path) {
  std::vector<HostSpec> hosts;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
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
      if (!plain_name(h.user)) throw HostFileError(where + "bad user name in '" + first + "'");
    }
    if (size_t colon = dest.rfind(':'); colon != std::string::npos) {
      const std::string port = dest.substr(colon + 1);
      dest = dest.substr(0, colon);
      int p = 0;
      try {
        size_t used = 0;
        p = std::stoi(port, &used);
        if (used != port.size()) p = 0;
      } catch (const std::exception&) {
        p = 0;
      }
      if (p < 1 || p > 65535) throw HostFileError(where + "bad port '" + port + "' (1-65535)");
      h.port = p;
    }
    if (!plain_name(dest)) throw HostFileError(where + "bad host name '" + dest + "' (letters, digits, '.', '-', '_')");
    h.host = dest;
    for (std::string word; words >> word;) {
      const size_t eq = word.find('=');
      const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (eq == std::string::npos || value.empty())
        throw HostFileError(where + "expected key=value, got '" + word + "' (keys: threads, farm, cache)");
      if (key == "threads") {
        try {
          size_t used = 0;
          h.threads = std::stoi(value, &used);
          if (used != value.size()) h.threads = -1;
        } catch (const std::exception&) {
          h.threads = -1;
        }
        if (h.threads < 1 || h.threads > 4096) throw HostFileError(where + "threads must be 1-4096, got '" + value + "'");
      } else if (key == "farm" || key == "cache") {
        if (!plain_path(value))
          throw HostFileError(where + key + " path '" + value + "' has characters a remote shell would interpret");
        (key == "farm" ? h.farm_path : h.cache_dir) = value;
      } else {
        throw HostFileError(where + "unknown key '" + key + "' (keys: threads, farm, cache)");
      }
    }
    hosts.push_back(std::move(h));
  }
  if (hosts.empty()) throw HostFileError(path + ": no hosts (one per line: [user@]host[:port] [threads=N] [farm=PATH] [cache=DIR])");
  return hosts;
}

std::vector<HostSpec> read_host_file(const std::string& path) {
  // stat() first: a FIFO or device would block the read forever.
  if (Status regular = check_regular_file(path, "host file"); !regular.ok()) throw HostFileError(regular.message());
  std::ifstream in(path);
  if (!in) throw HostFileError("cannot read the host file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_host_file(text.str(), path);
}

}  // namespace farm
