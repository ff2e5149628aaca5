// Why a connection to the master does not come up: libzmq's socket monitor reports handshake
// failures that are otherwise silent (a refused key or a wrong pinned master key look, from
// the worker's side, like a master that never answers).
#pragma once

#include <string>
#include <zmq.hpp>

namespace farm::security {

class HandshakeWatch {
 public:
  explicit HandshakeWatch(zmq::context_t& ctx) : m_ctx(ctx) {}
  // Watches `socket` (call before it connects) instead of the previous one. Never throws: a
  // watch that cannot start only costs the diagnosis, not the connection.
  void attach(zmq::socket_t& socket);
  // Non-blocking. A sentence for the user when the handshake fails in a new way (the same
  // failure on every retry is reported once), else "".
  std::string poll();

 private:
  zmq::context_t& m_ctx;
  zmq::socket_t m_monitor;  // PAIR connected to the watched socket's monitor
  std::string m_last;       // last failure reported; cleared by a successful handshake
  int m_attached = 0;
};

}  // namespace farm::security
