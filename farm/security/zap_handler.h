// The master's ZAP handler (ZeroMQ RFC 27): libzmq asks it, for every CURVE handshake on a
// socket of the same context, whether the client's long-term public key may connect.
//
// It fails closed: only mechanism CURVE with a key in the allow-list gets "200"; any other
// mechanism, a malformed request or an internal error gets "400". The handler must outlive
// the sockets it guards: by default libzmq admits every CURVE client when no handler is bound.
// apply() (socket_security.h) also sets ZMQ_ZAP_ENFORCE_DOMAIN, which refuses instead (a draft
// option, honoured by Debian 12's libzmq 4.3.4; tests/farm/security/security_test.cpp checks it), and
// the handler's socket stays bound until its destructor in any case.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace farm::security {

struct ZapReply {
  std::string request_id;
  std::string status_code;  // "200" or "400"
  std::string status_text;
  std::string user_id;      // the admitted key (Z85), seen by the master as the "User-Id" property
  std::string refused_key;  // Z85 key refused, empty if none or none could be read
  std::string peer_address;
};

// The answer to one request, given its frames after the REP envelope: version, request id,
// domain, address, routing id, mechanism, credentials...
ZapReply answer_zap_request(const std::vector<std::string>& frames, const std::set<std::string>& allowed_z85);

class ZapHandler {
 public:
  // Binds inproc://zeromq.zap.01 in `ctx` (before the guarded socket binds, so no handshake
  // can slip past) and serves requests on a thread. Throws zmq::error_t if it cannot bind.
  ZapHandler(zmq::context_t& ctx, std::set<std::string> allowed_z85);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  uint64_t refusals() const { return m_refusals.load(); }

 private:
  void serve();
  void reply(const std::string& request_id, const ZapReply& r);
  void log_refusal(const ZapReply& r);

  const std::set<std::string> m_allowed;
  zmq::socket_t m_socket;
  std::atomic<bool> m_stop{false};
  std::atomic<uint64_t> m_refusals{0};
  // Log rate limit: each key once, and at most k_logs_per_window new lines per window.
  std::set<std::string> m_logged_keys;
  std::chrono::steady_clock::time_point m_window_start;
  int m_logs_in_window = 0;
  uint64_t m_unlogged = 0;
  std::thread m_thread;  // last: starts once everything above is ready
};

}  // namespace farm::security
