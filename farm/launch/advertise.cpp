#include "launch/advertise.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace farm {

namespace {

std::string text(const in_addr& a) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

bool is_loopback(const in_addr& a) { return (ntohl(a.s_addr) >> 24) == 127; }

// The source address of a route to `host`, or "" if it does not resolve or route.
std::string route_source(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || !found) return "";
  std::string out;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 && !is_loopback(local.sin_addr))
      out = text(local.sin_addr);
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return out;
}

}  // namespace

AdvertisedAddress pick_advertised_address(const std::vector<std::string>& hosts,
                                          const std::function<std::string(const std::string&)>& resolve) {
  for (const std::string& h : hosts) {
    const std::string target = resolve(h);
    if (std::string a = route_source(target); !a.empty()) return {a, "the address that routes to " + target};
  }
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
      const in_addr a = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
      if (is_loopback(a)) continue;
      AdvertisedAddress out{text(a), std::string("the first address of this machine (interface ") + i->ifa_name +
                                         "): no host name resolved here"};
      ::freeifaddrs(list);
      return out;
    }
    ::freeifaddrs(list);
  }
  throw std::runtime_error("this machine has no non-loopback IPv4 address the hosts could reach: pass --advertise ADDRESS");
}

}  // namespace farm
