#include "security/zap_handler.h"

#include <spdlog/spdlog.h>
#include <zmq.h>

#include "security/curve_keys.h"

namespace farm::security {

namespace {

constexpr int k_logs_per_window = 10;
constexpr auto k_log_window = std::chrono::seconds(60);
constexpr size_t k_max_logged_keys = 4096;  // bounded memory under a flood of fresh keys

ZapReply deny(ZapReply r, const std::string& why) {
  r.status_code = "400";
  r.status_text = why;
  r.user_id.clear();
  return r;
}

}  // namespace

ZapReply answer_zap_request(const std::vector<std::string>& frames, const std::set<std::string>& allowed_z85) {
  ZapReply r;
  if (frames.size() > 1) r.request_id = frames[1];
  if (frames.size() > 3) r.peer_address = frames[3];
  if (frames.size() < 6 || frames[0] != "1.0") return deny(r, "malformed ZAP request");
  if (frames[5] != "CURVE") return deny(r, "mechanism " + frames[5].substr(0, 16) + " is not allowed");
  if (frames.size() != 7 || frames[6].size() != 32) return deny(r, "malformed CURVE credentials");
  char z85[41] = {};
  if (!zmq_z85_encode(z85, reinterpret_cast<const uint8_t*>(frames[6].data()), 32))
    return deny(r, "malformed CURVE credentials");
  if (!allowed_z85.count(z85)) {
    r.refused_key = z85;
    return deny(r, "key not in the allow-list");
  }
  r.status_code = "200";
  r.status_text = "OK";
  r.user_id = z85;
  return r;
}

ZapHandler::ZapHandler(zmq::context_t& ctx, std::set<std::string> allowed_z85)
    : m_allowed(std::move(allowed_z85)),
      m_socket(ctx, zmq::socket_type::rep),
      m_window_start(std::chrono::steady_clock::now()) {
  m_socket.set(zmq::sockopt::linger, 0);
  m_socket.bind("inproc://zeromq.zap.01");
  // The socket moves to the serving thread; thread creation is the memory barrier libzmq needs.
  m_thread = std::thread([this] { serve(); });
}

ZapHandler::~ZapHandler() {
  m_stop.store(true);
  if (m_thread.joinable()) m_thread.join();
}

void ZapHandler::serve() {
  while (!m_stop.load()) {
    std::vector<std::string> frames;
    try {
      zmq::pollitem_t item{static_cast<void*>(m_socket), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));  // wakes up to see m_stop
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t part;
      do {
        if (!m_socket.recv(part, zmq::recv_flags::dontwait)) break;
        if (frames.size() < 16) frames.emplace_back(static_cast<const char*>(part.data()), part.size());
      } while (part.more());
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      continue;  // EINTR and the like: nothing was received, nothing is owed
    }
    if (frames.empty()) continue;
    ZapReply r;
    try {
      r = answer_zap_request(frames, m_allowed);
    } catch (...) {
      // Whatever went wrong, the answer is no (and REP owes an answer before the next request).
      r = deny(ZapReply{}, "internal error");
      r.request_id = frames.size() > 1 ? frames[1] : std::string();
    }
    if (r.status_code != "200") ++m_refusals;  // before the reply: whoever sees the refusal sees the count
    reply(r.request_id, r);
    try {
      if (r.status_code != "200") log_refusal(r);
    } catch (...) {
      // Logging must not end the thread: every later handshake would then stall unanswered.
    }
  }
}

void ZapHandler::reply(const std::string& request_id, const ZapReply& r) {
  try {
    m_socket.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    m_socket.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    m_socket.send(zmq::buffer(r.status_code), zmq::send_flags::sndmore);
    m_socket.send(zmq::buffer(r.status_text), zmq::send_flags::sndmore);
    m_socket.send(zmq::buffer(r.user_id), zmq::send_flags::sndmore);
    m_socket.send(zmq::str_buffer(""), zmq::send_flags::none);  // no metadata
  } catch (const zmq::error_t& e) {
    // An unanswered request stalls that handshake until libzmq's handshake timeout: still closed.
    spdlog::debug("cannot answer a ZAP request: {}", e.what());
  }
}

void ZapHandler::log_refusal(const ZapReply& r) {
  const std::string key = r.refused_key.empty() ? "(" + r.status_text + ")" : r.refused_key;
  if (m_logged_keys.count(key)) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - m_window_start > k_log_window) {
    if (m_unlogged) spdlog::warn("refused {} more connection(s) with other keys (not logged one by one)", m_unlogged);
    m_window_start = now;
    m_logs_in_window = 0;
    m_unlogged = 0;
  }
  if (m_logs_in_window >= k_logs_per_window || m_logged_keys.size() >= k_max_logged_keys) {
    ++m_unlogged;
    return;
  }
  ++m_logs_in_window;
  m_logged_keys.insert(key);
  if (r.refused_key.empty()) {
    spdlog::warn("refused a connection from {}: {}", r.peer_address.empty() ? "(unknown)" : r.peer_address,
                 r.status_text);
  } else {
    spdlog::warn("refused a worker with CURVE key {} from {}: not among the worker keys this master allows (logged once per key)",
                 key_prefix(r.refused_key), r.peer_address.empty() ? "(unknown)" : r.peer_address);
  }
}

}  // namespace farm::security
