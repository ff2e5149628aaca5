#include "cli/socket_keys.h"

#include <spdlog/spdlog.h>

#include "security/curve_keys.h"
#include "security/endpoint_kind.h"

namespace farm {

std::optional<security::CurveServer> master_socket_keys(const std::string& bind, const std::string& key_path,
                                                        const std::string& allow_path, bool insecure) {
  const bool keyed = !key_path.empty() || !allow_path.empty();
  if (keyed && insecure) throw SocketKeysError("--insecure contradicts --key/--allow: pass one or the other");
  if (!keyed) {
    if (security::is_loopback_endpoint(bind)) return std::nullopt;
    if (insecure) {
      spdlog::warn("--insecure: serving {} WITHOUT encryption or authentication; anyone who can reach it can join",
                   bind);
      return std::nullopt;
    }
    throw SocketKeysError("--bind " + bind +
                          " is reachable from the network, so the master needs keys: pass --key MASTER.key and "
                          "--allow WORKER.pub|FOLDER|LIST (make keys with `farm keygen NAME`), or --insecure to serve "
                          "without encryption on purpose");
  }
  if (key_path.empty()) throw SocketKeysError("--allow needs --key MASTER.key (the master's own key pair)");
  if (allow_path.empty())
    throw SocketKeysError("--key needs --allow WORKER.pub|FOLDER|LIST: the workers' public keys that may connect");
  security::CurveServer s = security::read_server_keys(key_path, allow_path);
  spdlog::info("CURVE on: {} worker key(s) allowed", s.allowed.size());
  return s;
}

std::optional<security::CurveClient> worker_socket_keys(const std::string& connect, const std::string& key_path,
                                                        const std::string& master_key_path, bool insecure) {
  const bool keyed = !key_path.empty() || !master_key_path.empty();
  if (keyed && insecure) throw SocketKeysError("--insecure contradicts --key/--master-key: pass one or the other");
  if (!keyed) {
    if (security::is_loopback_endpoint(connect)) return std::nullopt;
    if (insecure) {
      spdlog::warn("--insecure: talking to {} WITHOUT encryption or authentication of the master", connect);
      return std::nullopt;
    }
    throw SocketKeysError("--connect " + connect +
                          " is not a loopback endpoint, so the worker needs keys: pass --key WORKER.key and "
                          "--master-key MASTER.pub (make keys with `farm keygen NAME`), or --insecure to connect "
                          "without encryption on purpose");
  }
  if (key_path.empty()) throw SocketKeysError("--master-key needs --key WORKER.key (this worker's own key pair)");
  if (master_key_path.empty()) throw SocketKeysError("--key needs --master-key MASTER.pub (the master's public key)");
  return security::read_client_keys(key_path, master_key_path);
}

RelayKeys relay_socket_keys(const std::string& connect, const std::string& bind, const std::string& key_path,
                            const std::string& master_key_path, const std::string& allow_path, bool insecure) {
  const bool keyed = !key_path.empty() || !master_key_path.empty() || !allow_path.empty();
  if (keyed && insecure)
    throw SocketKeysError("--insecure contradicts --key/--master-key/--allow: pass one or the other");
  if (!key_path.empty() && master_key_path.empty() && allow_path.empty())
    throw SocketKeysError("--key needs --master-key MASTER.pub (towards the master) and/or --allow WORKER.pub|FOLDER|LIST "
                          "(for the site's workers)");
  if (key_path.empty() && keyed)
    throw SocketKeysError("--master-key and --allow need --key RELAY.key (the relay's own key pair)");
  RelayKeys keys;
  if (!master_key_path.empty()) {
    keys.upstream = security::read_client_keys(key_path, master_key_path);
  } else if (!security::is_loopback_endpoint(connect)) {
    if (!insecure) {
      throw SocketKeysError("--connect " + connect +
                            " is not a loopback endpoint, so the relay needs keys: pass --key RELAY.key and "
                            "--master-key MASTER.pub (make keys with `farm keygen NAME`), or --insecure to connect "
                            "without encryption on purpose");
    }
    spdlog::warn("--insecure: talking to {} WITHOUT encryption or authentication of the master", connect);
  }
  if (!allow_path.empty()) {
    keys.site = security::read_server_keys(key_path, allow_path);
    spdlog::info("CURVE on for the site: {} worker key(s) allowed", keys.site->allowed.size());
  } else if (!security::is_loopback_endpoint(bind)) {
    if (!insecure) {
      throw SocketKeysError("--bind " + bind +
                            " is reachable from the network, so the relay needs keys: pass --key RELAY.key and "
                            "--allow WORKER.pub|FOLDER|LIST (make keys with `farm keygen NAME`), or --insecure to "
                            "serve without encryption on purpose");
    }
    spdlog::warn("--insecure: serving {} WITHOUT encryption or authentication; anyone who can reach it can join", bind);
  }
  return keys;
}

}  // namespace farm
