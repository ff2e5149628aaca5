#include "security/launch_secrets.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

#include "security/curve_keys.h"

namespace farm::security {

std::string format_launch_secrets(const CurveClient& k, const std::string& fallback_key) {
  return "farm-launch-secrets 1\nworker-public-key " + k.public_key + "\nworker-secret-key " + k.secret_key +
         "\nmaster-public-key " + k.server_key + "\n" +
         (fallback_key.empty() ? std::string() : "fallback-public-key " + fallback_key + "\n") + "end\n";
}

std::string format_relay_launch_secrets(const RelayLaunchSecrets& k) {
  if (k.allowed.empty() || k.allowed.size() > k_max_relay_allowed_keys)
    throw KeyFileError("relay launch secrets: " + std::to_string(k.allowed.size()) + " site worker key(s) (1 to " +
                       std::to_string(k_max_relay_allowed_keys) + ")");
  std::string text = "farm-relay-launch-secrets 1\nrelay-public-key " + k.upstream.public_key + "\nrelay-secret-key " +
                     k.upstream.secret_key + "\nmaster-public-key " + k.upstream.server_key + "\n";
  for (const std::string& key : k.allowed) text += "allow-public-key " + key + "\n";
  return text + "end\n";
}

namespace {

// One line, byte by byte: reading ahead would swallow what follows on the lifeline.
bool read_line(int fd, std::string& line) {
  line.clear();
  for (;;) {
    char c;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    if (line.size() >= 200) throw KeyFileError("launch secrets on standard input: line too long");
    line += c;
  }
}

// The lines of one block of secrets, counted, each error naming its line.
class SecretsLines {
 public:
  // `expected`: what an early end says was expected ("5 lines", ...); `who`: "worker", "relay".
  SecretsLines(int fd, std::string expected, std::string who)
      : m_fd(fd), m_expected(std::move(expected)), m_who(std::move(who)) {}

  const std::string& next() {
    ++m_number;
    if (!read_line(m_fd, m_line))
      throw KeyFileError("launch secrets on standard input ended at line " + std::to_string(m_number) + " (expected " +
                         m_expected + " from the command that launched this " + m_who + ")");
    return m_line;
  }
  // The key after "NAME " on `line` (the current one), or "" if the line is not that.
  static std::string key_of(const std::string& line, const std::string& name) {
    const std::string prefix = name + " ";
    if (line.rfind(prefix, 0) != 0 || !is_z85_key(line.substr(prefix.size()))) return "";
    return line.substr(prefix.size());
  }
  // The next line as "NAME <key>"; throws naming the line otherwise.
  std::string key(const std::string& name) {
    std::string k = key_of(next(), name);
    if (k.empty()) throw error("expected '" + name + " <40 Z85 characters>'");
    return k;
  }
  KeyFileError error(const std::string& what) const {
    return KeyFileError("launch secrets on standard input, line " + std::to_string(m_number) + ": " + what);
  }

 private:
  int m_fd;
  std::string m_expected, m_who, m_line;
  int m_number = 0;
};

}  // namespace

WorkerLaunchSecrets read_launch_secrets(int fd) {
  WorkerLaunchSecrets s;
  CurveClient& k = s.keys;
  SecretsLines lines(fd, "5 or 6 lines", "worker");
  if (lines.next() != "farm-launch-secrets 1")
    throw KeyFileError("standard input does not start with 'farm-launch-secrets 1' (was this worker launched by a "
                       "farm master over ssh or srun?)");
  k.public_key = lines.key("worker-public-key");
  k.secret_key = lines.key("worker-secret-key");
  k.server_key = lines.key("master-public-key");
  std::string line = lines.next();
  if (line.rfind("fallback-public-key ", 0) == 0) {
    s.fallback_key = SecretsLines::key_of(line, "fallback-public-key");
    if (s.fallback_key.empty()) throw lines.error("expected 'fallback-public-key <40 Z85 characters>'");
    line = lines.next();
  }
  if (line != "end") throw lines.error("expected 'end'");
  return s;
}

RelayLaunchSecrets read_relay_launch_secrets(int fd) {
  RelayLaunchSecrets k;
  SecretsLines lines(fd, "'end' after the keys", "relay");
  if (lines.next() != "farm-relay-launch-secrets 1")
    throw KeyFileError(
        "standard input does not start with 'farm-relay-launch-secrets 1' (was this relay launched by "
        "a farm master over ssh?)");
  k.upstream.public_key = lines.key("relay-public-key");
  k.upstream.secret_key = lines.key("relay-secret-key");
  k.upstream.server_key = lines.key("master-public-key");
  for (;;) {
    const std::string& line = lines.next();
    if (line == "end") break;
    const std::string key = SecretsLines::key_of(line, "allow-public-key");
    if (key.empty()) throw lines.error("expected 'allow-public-key <40 Z85 characters>' or 'end'");
    if (k.allowed.size() >= k_max_relay_allowed_keys)
      throw lines.error("more than " + std::to_string(k_max_relay_allowed_keys) + " site worker keys");
    k.allowed.insert(key);
  }
  // An allow-list that admits nobody is surely a mistake (as for --allow).
  if (k.allowed.empty()) throw lines.error("'end' before any 'allow-public-key' line: no site worker could connect");
  return k;
}

}  // namespace farm::security
