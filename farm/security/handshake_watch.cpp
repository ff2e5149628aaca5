#include "security/handshake_watch.h"

#include <zmq.h>

#include <cstdint>
#include <cstring>

namespace farm::security {

namespace {

std::string describe(uint16_t event, uint32_t value) {
  switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return "the master refused this worker's key (status " + std::to_string(value) +
             "): is this worker's public key among those the master allows?";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        return "the master and this worker disagree on encryption: one has CURVE keys, the other not";
      return "the handshake broke the protocol (libzmq error " + std::to_string(value) + ")";
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      return "the master closed the connection during the handshake; with keys, is the master key this worker "
             "trusts the master's own public key?";
    default:
      return {};
  }
}

}  // namespace

void HandshakeWatch::attach(zmq::socket_t& socket) {
  try {
    const std::string endpoint = "inproc://farm-handshake-watch-" + std::to_string(reinterpret_cast<uintptr_t>(this)) +
                                 "-" + std::to_string(++m_attached);
    const int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                       ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), events) != 0) return;
    m_monitor = zmq::socket_t(m_ctx, zmq::socket_type::pair);
    m_monitor.set(zmq::sockopt::linger, 0);
    m_monitor.connect(endpoint);
  } catch (const zmq::error_t&) {
    m_monitor = zmq::socket_t();
  }
}

std::string HandshakeWatch::poll() {
  if (!m_monitor) return {};
  std::string report;
  try {
    zmq::message_t header;
    while (m_monitor.recv(header, zmq::recv_flags::dontwait)) {
      // Each event is two frames: uint16 event + uint32 value, then the endpoint.
      zmq::message_t address;
      if (header.more()) (void)m_monitor.recv(address, zmq::recv_flags::dontwait);
      if (header.size() < 6) continue;
      uint16_t event = 0;
      uint32_t value = 0;
      std::memcpy(&event, header.data(), sizeof event);
      std::memcpy(&value, static_cast<const char*>(header.data()) + 2, sizeof value);
      if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        m_last.clear();
        continue;
      }
      // Retries after a specific failure often end without detail: keep the specific one.
      if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && !m_last.empty()) continue;
      std::string what = describe(event, value);
      if (!what.empty() && what != m_last) report = m_last = what;
    }
  } catch (const zmq::error_t&) {
  }
  return report;
}

}  // namespace farm::security
