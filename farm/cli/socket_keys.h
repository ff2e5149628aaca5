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

// A command line that cannot be served securely, or a key file that cannot be read: the
// message says what to pass or which file is wrong.
struct SocketKeysError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `farm master --bind --key --allow --insecure`. Empty = plaintext.
std::optional<security::CurveServer> master_socket_keys(const std::string& bind, const std::string& key_path,
                                                        const std::string& allow_path, bool insecure);
// `farm worker --connect --key --master-key --insecure`. Empty = plaintext.
std::optional<security::CurveClient> worker_socket_keys(const std::string& connect, const std::string& key_path,
                                                        const std::string& master_key_path, bool insecure);

}  // namespace farm
