// Is a ZeroMQ endpoint reachable only from this machine? Loopback endpoints may run without
// CURVE (local mode, tests, experiments); every other endpoint needs keys or --insecure.
#pragma once

#include <string>

namespace farm::security {

// True for tcp:// on 127.0.0.0/8, ::1 or "localhost", and for ipc:// and inproc://.
// Anything else (tcp://*, an interface name, a host name, another transport, a malformed
// endpoint) is treated as reachable from the network: the safe answer when unsure.
bool is_loopback_endpoint(const std::string& endpoint);

}  // namespace farm::security
