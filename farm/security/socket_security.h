// The CURVE settings of a master's or worker's socket. Which security a command line asks for
// (keys, plaintext on loopback, plaintext on purpose) is decided and worded in cli/socket_keys.h;
// this layer holds the keys and applies them.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <zmq.hpp>

namespace farm::security {

struct CurveServer {
  std::string secret_key;         // Z85: the master's own
  std::set<std::string> allowed;  // Z85 public keys of the workers that may connect
};

struct CurveClient {
  std::string public_key, secret_key;  // Z85: the worker's own pair
  std::string server_key;              // Z85: the master's public key, pinned
};

// Whether this libzmq can do CURVE at all.
bool curve_available();

// The master's side from its key pair file and the workers' public keys (a .pub, a folder of
// them or a list); the worker's side from its key pair file and the master's .pub. Throw
// KeyFileError naming the file (and line) that is wrong, std::runtime_error if CURVE is missing.
CurveServer read_server_keys(const std::string& key_path, const std::string& allow_path);
CurveClient read_client_keys(const std::string& key_path, const std::string& master_key_path);

// Socket options; call before bind/connect.
void apply(zmq::socket_t& socket, const CurveServer& server);
void apply(zmq::socket_t& socket, const CurveClient& client);

}  // namespace farm::security
