// The master's ZeroMQ ROUTER socket, set up for many workers and hostile peers: unroutable
// sends fail loudly, slow consumers cost bounded memory, oversized messages are cut off.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "security/socket_security.h"

namespace farm {

// Binds `bind` (CURVE when `curve` is set; its ZAP handler must already run). `max_block` is
// the largest block side a result can have. Throws zmq::error_t if it cannot bind.
std::unique_ptr<zmq::socket_t> open_router_socket(zmq::context_t& ctx, const std::string& bind,
                                                  const std::optional<security::CurveServer>& curve, int max_block);

}  // namespace farm
