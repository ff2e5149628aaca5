#include "transport/sockets.h"

#include <algorithm>
#include <stdexcept>

#include "transport/endpoint_check.h"
#include "transport/flow.h"
#include "protocol/pixel_codec.h"

namespace farm {

std::unique_ptr<zmq::socket_t> open_router_socket(zmq::context_t& ctx, const std::string& bind,
                                                  const std::optional<security::CurveServer>& curve, int max_block) {
  auto socket = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::router);
  if (curve) security::apply(*socket, *curve);
  socket->set(zmq::sockopt::linger, 0);            // shut down at once
  socket->set(zmq::sockopt::router_mandatory, 1);  // unroutable sends fail loudly
  socket->set(zmq::sockopt::sndhwm, k_router_hwm);  // bounded memory for slow consumers
  socket->set(zmq::sockopt::rcvhwm, k_router_hwm);
  // The largest legal inbound message is one result of the largest block (float, every channel).
  const int64_t max_block_bytes =
      static_cast<int64_t>(max_block) * max_block *
      proto::bytes_per_pixel(proto::PixelEncoding::float32, static_cast<int>(proto::k_max_output_channels - 3));
  socket->set(zmq::sockopt::maxmsgsize, std::max<int64_t>(max_block_bytes + (1 << 20), 8 << 20));
  if (endpoint_wants_ipv6(bind)) socket->set(zmq::sockopt::ipv6, 1);  // else [::1] is "No such device"
  socket->bind(bind);
  return socket;
}

std::unique_ptr<zmq::socket_t> open_dealer_socket(zmq::context_t& ctx, const std::string& connect,
                                                  const std::optional<security::CurveClient>& curve,
                                                  security::HandshakeWatch* handshakes) {
  auto socket = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::dealer);
  socket->set(zmq::sockopt::linger, 0);
  socket->set(zmq::sockopt::maxmsgsize, int64_t{1} << 31);  // assets can be large
  socket->set(zmq::sockopt::sndhwm, k_dealer_send_hwm);  // flow.h: never reached, never dropped
  if (curve) security::apply(*socket, *curve);
  if (handshakes) handshakes->attach(*socket);
  if (endpoint_wants_ipv6(connect)) socket->set(zmq::sockopt::ipv6, 1);
  try {
    socket->connect(connect);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot connect to '" + connect + "': " + e.what() + " (expected tcp://HOST:PORT)");
  }
  return socket;
}

}  // namespace farm
