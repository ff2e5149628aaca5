#include "security/socket_security.h"

#include <spdlog/spdlog.h>
#include <zmq.h>

#include "security/curve_keys.h"
#include "security/endpoint_kind.h"

namespace farm::security {

namespace {

void require_curve() {
  if (!zmq_has("curve")) throw SecurityConfigError("this libzmq was built without CURVE: keys cannot be used");
}

}  // namespace

std::optional<CurveServer> server_security(const std::string& bind, const std::string& key_path,
                                           const std::string& allow_path, bool insecure) {
  const bool keyed = !key_path.empty() || !allow_path.empty();
  if (keyed && insecure) throw SecurityConfigError("--insecure contradicts --key/--allow: pass one or the other");
  if (!keyed) {
    if (is_loopback_endpoint(bind)) return std::nullopt;
    if (insecure) {
      spdlog::warn("--insecure: serving {} WITHOUT encryption or authentication; anyone who can reach it can join",
                   bind);
      return std::nullopt;
    }
    throw SecurityConfigError(
        "--bind " + bind +
        " is reachable from the network, so the master needs keys: pass --key MASTER.key and "
        "--allow WORKER.pub|FOLDER|LIST (make keys with `farm keygen NAME`), or --insecure to serve without "
        "encryption on purpose");
  }
  if (key_path.empty()) throw SecurityConfigError("--allow needs --key MASTER.key (the master's own key pair)");
  if (allow_path.empty())
    throw SecurityConfigError("--key needs --allow WORKER.pub|FOLDER|LIST: the workers' public keys that may connect");
  require_curve();
  CurveServer s;
  s.secret_key = read_secret_key_file(key_path).secret_key;
  s.allowed = read_allow_list(allow_path);
  spdlog::info("CURVE on: {} worker key(s) allowed", s.allowed.size());
  return s;
}

std::optional<CurveClient> client_security(const std::string& connect, const std::string& key_path,
                                           const std::string& master_key_path, bool insecure) {
  const bool keyed = !key_path.empty() || !master_key_path.empty();
  if (keyed && insecure) throw SecurityConfigError("--insecure contradicts --key/--master-key: pass one or the other");
  if (!keyed) {
    if (is_loopback_endpoint(connect)) return std::nullopt;
    if (insecure) {
      spdlog::warn("--insecure: talking to {} WITHOUT encryption or authentication of the master", connect);
      return std::nullopt;
    }
    throw SecurityConfigError(
        "--connect " + connect +
        " is not a loopback endpoint, so the worker needs keys: pass --key WORKER.key and "
        "--master-key MASTER.pub (make keys with `farm keygen NAME`), or --insecure to connect without encryption on "
        "purpose");
  }
  if (key_path.empty()) throw SecurityConfigError("--master-key needs --key WORKER.key (this worker's own key pair)");
  if (master_key_path.empty())
    throw SecurityConfigError("--key needs --master-key MASTER.pub (the master's public key)");
  require_curve();
  CurveClient c;
  CurveKeyPair own = read_secret_key_file(key_path);
  c.public_key = own.public_key;
  c.secret_key = own.secret_key;
  c.server_key = read_public_key_file(master_key_path);
  return c;
}

void apply(zmq::socket_t& socket, const CurveServer& server) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, server.secret_key);
  socket.set(zmq::sockopt::zap_domain, "farm");
  // Refuse, not admit, if no ZAP handler answers. A draft option: Debian 12's libzmq honours it
  // (security_test.cpp checks); where it is unknown the ZapHandler's lifetime is the guard.
  constexpr int k_zap_enforce_domain = 93;  // ZMQ_ZAP_ENFORCE_DOMAIN
  int one = 1;
  (void)zmq_setsockopt(static_cast<void*>(socket), k_zap_enforce_domain, &one, sizeof one);
}

void apply(zmq::socket_t& socket, const CurveClient& client) {
  socket.set(zmq::sockopt::curve_serverkey, client.server_key);
  socket.set(zmq::sockopt::curve_publickey, client.public_key);
  socket.set(zmq::sockopt::curve_secretkey, client.secret_key);
}

}  // namespace farm::security
