#include "security/endpoint_kind.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace farm::security {

namespace {

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  // IPv6 literals come bracketed in tcp:// endpoints: tcp://[::1]:5555.
  std::string bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, bare.c_str(), &v6) != 1) return false;
  if (std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0) return true;
  // ::ffff:127.x.y.z is IPv4 loopback seen through an IPv6 socket.
  if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;
  return false;
}

}  // namespace

bool is_loopback_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  std::string address = endpoint.substr(6);
  // "tcp://source;destination" (a connect with a source address): the peer is the destination.
  if (size_t semicolon = address.rfind(';'); semicolon != std::string::npos) address = address.substr(semicolon + 1);
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  return is_loopback_host(address.substr(0, colon));
}

}  // namespace farm::security
