#include "security/curve_keys.h"
#include "base/file_checks.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace farm::security {

namespace {

namespace fs = std::filesystem;

constexpr size_t k_max_key_file_bytes = 16 << 20;  // a list of ~400k keys; anything larger is not a key file

struct KeyLine {
  int line = 0;
  std::string label;  // "", "public-key" or "secret-key"
  std::string key;
};

std::string read_text(const std::string& path) {
  // stat() first: a FIFO or device would block the read forever.
  if (Status regular = check_regular_file(path, "key file"); !regular.ok()) throw KeyFileError(regular.message());
  std::ifstream f(path, std::ios::binary);
  if (!f) throw KeyFileError("cannot read key file '" + path + "': " + std::strerror(errno));
  std::string text;
  char buffer[4096];
  while (f.read(buffer, sizeof buffer) || f.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(f.gcount()));
    if (text.size() > k_max_key_file_bytes) throw KeyFileError("key file '" + path + "' is too large to be a key file");
  }
  return text;
}

// Never echoes the text itself: it may be (part of) a secret key.
std::string why_not_a_key(const std::string& text) {
  if (text.size() != 40) return "expected a 40-character Z85 key, found " + std::to_string(text.size()) + " characters";
  return "expected a Z85 key, found characters outside the Z85 alphabet";
}

// '#' is a Z85 character, so a key may begin with it: a word is a comment start only if it
// is not itself a key.
std::vector<KeyLine> parse_key_lines(const std::string& path, const std::string& text) {
  std::vector<KeyLine> out;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string w; words >> w;) {
      if (w.front() == '#' && !is_z85_key(w)) break;
      tokens.push_back(w);
    }
    if (tokens.empty()) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    KeyLine k;
    k.line = number;
    if (tokens.size() == 2 && (tokens[0] == "public-key" || tokens[0] == "secret-key")) {
      k.label = tokens[0];
      k.key = tokens[1];
    } else if (tokens.size() == 1) {
      k.key = tokens[0];
    } else {
      throw KeyFileError(where + "expected a key, or 'public-key KEY' / 'secret-key KEY'");
    }
    if (!is_z85_key(k.key)) throw KeyFileError(where + why_not_a_key(k.key));
    out.push_back(k);
  }
  return out;
}

std::string public_from_secret(const std::string& secret) {
  char pub[41] = {};
  if (zmq_curve_public(pub, secret.c_str()) != 0)
    throw std::runtime_error(std::string("cannot derive a public key: ") + zmq_strerror(errno));
  return pub;
}

// Creates `path` with `mode` and no chance of writing through an existing file or symlink.
void write_new_file(const std::string& path, const std::string& text, mode_t mode, bool force) {
  if (force && ::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw KeyFileError("cannot replace '" + path + "': " + std::strerror(errno));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) throw KeyFileExists("'" + path + "' exists");
    throw KeyFileError("cannot write '" + path + "': " + std::strerror(errno));
  }
  // The umask may have taken bits away; the mode asked for is the one that must hold.
  bool ok = ::fchmod(fd, mode) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    ::unlink(path.c_str());
    throw KeyFileError("cannot write '" + path + "': " + std::strerror(saved ? saved : errno));
  }
}

}  // namespace

bool is_z85_key(const std::string& text) {
  static const std::string k_alphabet =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  if (text.size() != 40 || text.find_first_not_of(k_alphabet) != std::string::npos) return false;
  uint8_t bytes[32];  // the decoder also rejects 5-character groups that overflow 32 bits
  return zmq_z85_decode(bytes, text.c_str()) != nullptr;
}

CurveKeyPair generate_key_pair() {
  if (!zmq_has("curve")) throw std::runtime_error("this libzmq was built without CURVE support");
  char pub[41] = {}, sec[41] = {};
  if (zmq_curve_keypair(pub, sec) != 0)
    throw std::runtime_error(std::string("cannot generate a key pair: ") + zmq_strerror(errno));
  return {pub, sec};
}

void write_key_files(const std::string& base, const CurveKeyPair& keys, bool force) {
  const std::string key_path = base + ".key", pub_path = base + ".pub";
  const std::string name = fs::path(base).filename().string();
  // Check both first: a refused run must leave nothing half-written.
  if (!force) {
    for (const std::string& p : {key_path, pub_path}) {
      std::error_code ec;
      if (fs::symlink_status(p, ec).type() != fs::file_type::not_found) throw KeyFileExists("'" + p + "' exists");
    }
  }
  std::string secret_text = "# farm CURVE key pair '" + name + "'. Keep this file private (mode 0600);\n";
  secret_text += "# give others " + name + ".pub instead.\n";
  secret_text += "public-key " + keys.public_key + "\nsecret-key " + keys.secret_key + "\n";
  write_new_file(key_path, secret_text, 0600, force);
  write_new_file(pub_path, "# farm CURVE public key '" + name + "'\n" + keys.public_key + "\n", 0644, force);
}

CurveKeyPair read_secret_key_file(const std::string& path) {
  std::vector<KeyLine> lines = parse_key_lines(path, read_text(path));
  CurveKeyPair pair;
  std::string stated_public;
  for (const KeyLine& k : lines) {
    const std::string where = path + ":" + std::to_string(k.line) + ": ";
    if (k.label == "secret-key") {
      if (!pair.secret_key.empty()) throw KeyFileError(where + "a second secret key");
      pair.secret_key = k.key;
    } else if (k.label == "public-key") {
      stated_public = k.key;
    } else {
      throw KeyFileError(where + "expected 'public-key KEY' or 'secret-key KEY' (is this a .pub file? pass NAME.key)");
    }
  }
  if (pair.secret_key.empty())
    throw KeyFileError("key file '" + path + "' holds no secret key (pass NAME.key, not NAME.pub)");
  pair.public_key = public_from_secret(pair.secret_key);
  if (!stated_public.empty() && stated_public != pair.public_key)
    throw KeyFileError("key file '" + path + "': its public key does not belong to its secret key");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077))
    spdlog::warn("secret key file '{}' is readable by others (mode {:o}); chmod 600 it", path, st.st_mode & 0777);
  return pair;
}

std::string read_public_key_file(const std::string& path) {
  std::string key;
  for (const KeyLine& k : parse_key_lines(path, read_text(path))) {
    if (k.label == "secret-key") continue;  // a .key file also names its public half
    if (!key.empty()) throw KeyFileError(path + ":" + std::to_string(k.line) + ": more than one public key");
    key = k.key;
  }
  if (key.empty()) throw KeyFileError("key file '" + path + "' holds no public key");
  return key;
}

namespace {

// The files of an allow-list: the file itself, or a folder's *.pub files.
std::vector<std::string> allow_list_files(const std::string& file_or_dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(file_or_dir, ec)) {
    // Only *.pub: a folder that also holds secret keys must not have them read.
    for (const auto& entry : fs::directory_iterator(file_or_dir, ec))
      if (entry.path().extension() == ".pub") files.push_back(entry.path().string());
    if (ec) throw KeyFileError("cannot list '" + file_or_dir + "': " + ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(file_or_dir);
  }
  return files;
}

}  // namespace

std::set<std::string> read_allow_list(const std::string& file_or_dir) {
  std::set<std::string> keys;
  for (const std::string& f : allow_list_files(file_or_dir)) {
    for (const KeyLine& k : parse_key_lines(f, read_text(f))) {
      if (k.label == "secret-key")
        throw KeyFileError(f + ":" + std::to_string(k.line) +
                           ": a secret key in an allow-list; list NAME.pub files only");
      keys.insert(k.key);
    }
  }
  if (keys.empty()) throw KeyFileError("allow-list '" + file_or_dir + "' names no public key");
  return keys;
}

std::map<std::string, std::string> allow_list_names(const std::string& file_or_dir) {
  std::map<std::string, std::string> names;
  for (const std::string& f : allow_list_files(file_or_dir)) {
    const std::vector<KeyLine> keys = parse_key_lines(f, read_text(f));
    if (keys.size() == 1 && keys.front().label != "secret-key") names[keys.front().key] = fs::path(f).stem().string();
  }
  return names;
}

std::string key_prefix(const std::string& z85_key) {
  return z85_key.substr(0, 8) + "...";
}

}  // namespace farm::security
