// A ZeroMQ endpoint the user typed, checked before ZeroMQ sees it. ZeroMQ takes a TCP port
// modulo 65536 (tcp://127.0.0.1:99999 listened on 34463), answers "No such device" for a bind
// to a host name (tcp://localhost:0) and to an IPv6 address unless the socket has IPv6 on.
#pragma once

#include <string>

namespace farm {

enum class EndpointUse { bind, connect };

// What is wrong with `endpoint` for `use`, or "" if nothing is. tcp://HOST:PORT with a port
// from 0 to 65535 (bind: or *; connect: from 1), HOST an IPv4 address, [IPv6], * or an
// interface name to bind, any name to connect; ipc:// and inproc:// as they are.
std::string endpoint_problem(const std::string& endpoint, EndpointUse use);

// True if the endpoint's host is a bracketed IPv6 address: its socket needs ZMQ_IPV6.
bool endpoint_wants_ipv6(const std::string& endpoint);

}  // namespace farm
