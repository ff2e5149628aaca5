// Which security a master or worker socket gets, from its endpoint and the command line:
// CURVE whenever keys are given; plaintext on loopback without keys; on any other endpoint
// keys are required unless --insecure says plaintext on purpose.
#pragma once

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <zmq.hpp>

namespace farm::security {

// A command line that cannot be served securely: the message says what to pass.
struct SecurityConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CurveServer {
  std::string secret_key;         // Z85: the master's own
  std::set<std::string> allowed;  // Z85 public keys of the workers that may connect
};

struct CurveClient {
  std::string public_key, secret_key;  // Z85: the worker's own pair
  std::string server_key;              // Z85: the master's public key, pinned
};

// Empty = plaintext. Throws SecurityConfigError or KeyFileError (both name what is wrong).
std::optional<CurveServer> server_security(const std::string& bind, const std::string& key_path,
                                           const std::string& allow_path, bool insecure);
std::optional<CurveClient> client_security(const std::string& connect, const std::string& key_path,
                                           const std::string& master_key_path, bool insecure);

// Socket options; call before bind/connect.
void apply(zmq::socket_t& socket, const CurveServer& server);
void apply(zmq::socket_t& socket, const CurveClient& client);

}  // namespace farm::security
