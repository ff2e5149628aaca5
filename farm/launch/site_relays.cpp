#include "launch/site_relays.h"

#include <map>

#include "security/launch_secrets.h"

namespace farm {

std::vector<Site> sites_of(const std::vector<HostSpec>& hosts, const std::string& path) {
  std::vector<Site> sites;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].site.empty()) continue;
    auto [it, fresh] = index.emplace(hosts[i].site, sites.size());
    if (fresh) sites.push_back({hosts[i].site, {}});
    sites[it->second].hosts.push_back(i);
  }
  for (const Site& s : sites) {
    if (s.hosts.size() > security::k_max_relay_allowed_keys)
      throw HostFileError(path + ":" + std::to_string(hosts[s.hosts.front()].line) + ": site '" + s.name + "' has " +
                          std::to_string(s.hosts.size()) + " hosts; one relay serves at most " +
                          std::to_string(security::k_max_relay_allowed_keys) + ": split it into several sites");
  }
  return sites;
}

int bound_port(const std::string& line) {
  const std::string prefix = k_relay_bound;
  if (line.rfind(prefix, 0) != 0) return 0;
  const std::string endpoint = line.substr(prefix.size());
  const size_t colon = endpoint.rfind(':');
  if (endpoint.rfind("tcp://", 0) != 0 || colon == std::string::npos) return 0;
  const std::string port = endpoint.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return 0;
  const int p = std::stoi(port);
  return p >= 1 && p <= 65535 ? p : 0;
}

std::string reported_host(const std::string& line) {
  const std::string prefix = k_relay_host;
  if (line.rfind(prefix, 0) != 0) return "";
  const std::string name = line.substr(prefix.size());
  return plain_name(name) ? name : "";
}

std::string relay_bind(const HostSpec& host) {
  // Port 0: any free one; the relay says which. "*" binds IPv4 only.
  return host.host.find(':') != std::string::npos ? "tcp://[::]:0" : "tcp://*:0";
}

std::string relay_endpoint(const HostSpec& host, int port) {
  const std::string name = host.host.find(':') != std::string::npos ? "[" + host.host + "]" : host.host;
  return "tcp://" + name + ":" + std::to_string(port);
}

}  // namespace farm
