// CURVE key files: generating a key pair and reading/writing it as text.
//
//   NAME.key  (mode 0600)          NAME.pub
//   # comment lines                # comment lines
//   public-key <40 Z85 chars>      <40 Z85 chars>
//   secret-key <40 Z85 chars>
//
// A public-key file (and an allow-list) holds bare Z85 keys, one per line, '#' starts a
// comment; a "public-key KEY" line is also accepted so a .key file can serve as a .pub.
// Every reader throws KeyFileError naming the file (and line) on anything malformed: a key
// that half-parses must never turn into an open door.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace farm::security {

// A key file (or launch secrets) that is missing, malformed or of the wrong kind, or a key file
// that cannot be written where the user asked: the user's input (docs/architecture.md, Errors,
// as an output refused before any work). Failures of this machine (no CURVE in libzmq, no key
// pair generated) are std::runtime_error.
struct KeyFileError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A key file that would be written exists already (the caller may offer to replace it).
struct KeyFileExists : KeyFileError {
  using KeyFileError::KeyFileError;
};

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
};

// 40 characters of the Z85 alphabet that decode to 32 bytes.
bool is_z85_key(const std::string& text);

// A fresh key pair from libzmq (libsodium). Throws if libzmq was built without CURVE.
CurveKeyPair generate_key_pair();

// Writes BASE.key (0600) and BASE.pub. Without `force` an existing file of either name is an
// error and nothing is written; with it both are replaced. Throws KeyFileError.
void write_key_files(const std::string& base, const CurveKeyPair& keys, bool force);

// The secret key file's pair; the public key is derived from the secret and must match the
// "public-key" line if there is one.
CurveKeyPair read_secret_key_file(const std::string& path);

// Exactly one public key (a NAME.pub, or the public half of a NAME.key).
std::string read_public_key_file(const std::string& path);

// Z85 public keys from a key file, a file of keys (one per line) or a folder of *.pub files.
// An empty result is an error: an allow-list that admits nobody is surely a mistake.
std::set<std::string> read_allow_list(const std::string& file_or_dir);
// The names an allow-list gives its keys, for people to read: a file holding one key names it
// by the file's stem (alice.pub: "alice"). Keys of a file of several keys are not named.
std::map<std::string, std::string> allow_list_names(const std::string& file_or_dir);

// The first characters of a key, enough to tell keys apart in logs without printing them whole.
std::string key_prefix(const std::string& z85_key);

}  // namespace farm::security
