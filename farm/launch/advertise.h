// Which address of this machine the launched workers should connect to.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace farm {

struct AdvertisedAddress {
  std::string address;  // IPv4 or a name
  std::string reason;   // how it was chosen, for the log
};

// The local address the kernel would use to reach the first host that resolves (a UDP
// "connect", nothing is sent); failing that, the first non-loopback IPv4 address that is up.
// `resolve` turns a host as written into the name to route to (e.g. what ssh connects to);
// it is called host by host only until one routes. Throws std::runtime_error if there is none.
AdvertisedAddress pick_advertised_address(const std::vector<std::string>& hosts,
                                          const std::function<std::string(const std::string&)>& resolve);

}  // namespace farm
