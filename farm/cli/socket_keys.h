// Which security a master's or worker's socket gets, from its endpoint and its flags: CURVE
// whenever keys are given; plaintext on loopback without keys; on any other endpoint keys are
// required unless --insecure asks for plaintext on purpose. Decided here, before any work, so a
// command line that would expose a master or trust any master fails first, in the flags' words.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "security/socket_security.h"

namespace farm {

// A command line that cannot be served securely: the message says what to pass (a user error,
// like the KeyFileError a key file that cannot be read throws).
struct SocketKeysError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// `farm master --bind --key --allow --insecure`. Empty = plaintext. Throws SocketKeysError,
// security::KeyFileError, or std::runtime_error (no CURVE in this libzmq).
std::optional<security::CurveServer> master_socket_keys(const std::string& bind, const std::string& key_path,
                                                        const std::string& allow_path, bool insecure);
// `farm worker --connect --key --master-key --insecure`. Empty = plaintext.
std::optional<security::CurveClient> worker_socket_keys(const std::string& connect, const std::string& key_path,
                                                        const std::string& master_key_path, bool insecure);

// `farm relay --connect --bind --key --master-key --allow --insecure`: the relay's own key pair
// serves both sides; upstream it is a worker (keys with --master-key, or a loopback --connect),
// downstream a master (keys with --allow, or a loopback --bind).
struct RelayKeys {
  std::optional<security::CurveClient> upstream;
  std::optional<security::CurveServer> site;
};
RelayKeys relay_socket_keys(const std::string& connect, const std::string& bind, const std::string& key_path,
                            const std::string& master_key_path, const std::string& allow_path, bool insecure);

}  // namespace farm
