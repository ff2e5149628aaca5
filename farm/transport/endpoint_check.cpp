#include "transport/endpoint_check.h"

#include <arpa/inet.h>
#include <net/if.h>

#include <cctype>

namespace farm {

namespace {

constexpr const char* k_tcp = "tcp://";

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_ipv4(const std::string& host) {
  in_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1;
}

bool is_bracketed_ipv6(const std::string& host) {
  if (host.size() < 3 || host.front() != '[' || host.back() != ']') return false;
  in6_addr a{};
  return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a) == 1;
}

}  // namespace

bool endpoint_wants_ipv6(const std::string& endpoint) {
  if (endpoint.rfind(k_tcp, 0) != 0) return false;
  const std::string rest = endpoint.substr(6);
  const size_t colon = rest.rfind(':');
  return colon != std::string::npos && is_bracketed_ipv6(rest.substr(0, colon));
}

std::string endpoint_problem(const std::string& endpoint, EndpointUse use) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return "";
  const std::string example = use == EndpointUse::bind ? "tcp://127.0.0.1:5555 or tcp://*:5555" : "tcp://HOST:5555";
  if (endpoint.rfind(k_tcp, 0) != 0) return "'" + endpoint + "' is not a tcp:// endpoint (e.g. " + example + ")";
  const std::string rest = endpoint.substr(6);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return "'" + endpoint + "' needs a host and a port (e.g. " + example + ")";
  }
  const std::string host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (use == EndpointUse::bind && port == "*") {
    // any free port
  } else if (!all_digits(port) || port.size() > 5 || std::stoi(port) > 65535 ||
             (use == EndpointUse::connect && std::stoi(port) == 0)) {
    const std::string allowed = use == EndpointUse::bind ? "0 to 65535, or * for any free one" : "1 to 65535";
    return "'" + endpoint + "': port '" + port + "' is not a TCP port (" + allowed + ")";
  }
  if (host.front() == '[' && !is_bracketed_ipv6(host)) {
    return "'" + endpoint + "': '" + host + "' is not an IPv6 address";
  }
  if (use == EndpointUse::bind && host != "*" && !is_ipv4(host) && !is_bracketed_ipv6(host) &&
      ::if_nametoindex(host.c_str()) == 0) {
    return "'" + endpoint + "': '" + host +
           "' is not an address or a network interface of this machine (a bind takes an IP address, an interface name "
           "or *; tcp://127.0.0.1:PORT listens for this machine only)";
  }
  return "";
}

}  // namespace farm
