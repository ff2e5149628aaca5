// The farm's two ZeroMQ sockets, set up in one place for every side that uses them: a ROUTER
// that serves many peers (the master; a relay's site side) and a DEALER that joins one (a worker;
// a relay's upstream side).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "security/handshake_watch.h"
#include "security/socket_security.h"

namespace farm {

// A ROUTER for many workers and hostile peers: unroutable sends fail loudly, slow consumers
// cost bounded memory, oversized messages are cut off. Binds `bind` (CURVE when `curve` is set;
// its ZAP handler must already run). `max_block` is the largest block side a result can have.
// Throws zmq::error_t if it cannot bind.
std::unique_ptr<zmq::socket_t> open_router_socket(zmq::context_t& ctx, const std::string& bind,
                                                  const std::optional<security::CurveServer>& curve, int max_block);

// A DEALER connected to `connect` (CURVE when `curve` is set), watched by `handshakes` when
// given (why a join fails). Throws std::runtime_error naming the endpoint if it cannot connect.
std::unique_ptr<zmq::socket_t> open_dealer_socket(zmq::context_t& ctx, const std::string& connect,
                                                  const std::optional<security::CurveClient>& curve,
                                                  security::HandshakeWatch* handshakes);

}  // namespace farm
