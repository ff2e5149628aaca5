// What a launch reads (farm/launch/, farm/security/): host files (hosts, options, IPv6 literals,
// sites, errors located by file and line, bounded input), what a launched relay says, and the
// keys a launched worker or relay reads on its standard input. Launching itself is in launch_test.cpp.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "launch/host_file.h"
#include "launch/site_relays.h"
#include "security/curve_keys.h"
#include "security/launch_secrets.h"

TEST_SUITE_BEGIN("unit");

TEST_CASE("host file: hosts with options and comments, errors name the file and line") {
  auto hosts = farm::parse_host_file(
      "# lab machines\n"
      "alice@node1:2222 threads=8 farm=/opt/farm/bin/farm cache=/scratch/farm  # the fast one\n"
      "\n"
      "node2\n",
      "hosts.txt");
  REQUIRE(hosts.size() == 2);
  CHECK(hosts[0].user == "alice");
  CHECK(hosts[0].host == "node1");
  CHECK(hosts[0].port == 2222);
  CHECK(hosts[0].threads == 8);
  CHECK(hosts[0].farm_path == "/opt/farm/bin/farm");
  CHECK(hosts[0].cache_dir == "/scratch/farm");
  CHECK(hosts[0].label() == "alice@node1:2222");
  CHECK(hosts[1].host == "node2");
  CHECK_FALSE(hosts[1].port.has_value());
  CHECK(hosts[1].line == 4);
  auto error_of = [](const std::string& text) {
    try {
      farm::parse_host_file(text, "h.txt");
    } catch (const farm::HostFileError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error_of("node1\nnode2 threads=0\n").find("h.txt:2: threads must be 1-4096") == 0);
  CHECK(error_of("node1:99999\n").find("h.txt:1: bad port") == 0);
  CHECK(error_of("node1 speed=3\n").find("h.txt:1: unknown key 'speed'") == 0);
  CHECK(error_of("node;rm -rf /\n").find("h.txt:1: bad host name") == 0);
  CHECK(error_of("node1 farm=$(evil)\n").find("a remote shell would interpret") != std::string::npos);
  CHECK(error_of("# nothing\n\n").find("no hosts") != std::string::npos);
}

namespace {
std::string host_file_error(const std::string& text) {
  try {
    farm::parse_host_file(text, "h.txt");
  } catch (const farm::HostFileError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("host file: IPv6 literals in brackets, with or without a port, bare ones and bad ones refused") {
  auto hosts = farm::parse_host_file("root@[::1]:2222 threads=2\n[fe80::1]\n[2001:db8::7]:22\n", "h.txt");
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0].user == "root");
  CHECK(hosts[0].host == "::1");  // what ssh gets, with -p for the port
  CHECK(hosts[0].port == 2222);
  CHECK(hosts[0].label() == "root@[::1]:2222");
  CHECK(hosts[1].host == "fe80::1");
  CHECK_FALSE(hosts[1].port.has_value());
  CHECK(hosts[2].label() == "[2001:db8::7]:22");
  CHECK(host_file_error("::1\n").find("h.txt:1: '::1' looks like an IPv6 address: write it in brackets") == 0);
  CHECK(host_file_error("[::1\n").find("h.txt:1: no ']'") == 0);
  CHECK(host_file_error("[::zz]:22\n").find("h.txt:1: bad IPv6 address '::zz'") == 0);
  CHECK(host_file_error("[::1]22\n").find("h.txt:1: expected ':PORT' after ']'") == 0);
  CHECK(host_file_error("[::1]:0\n").find("h.txt:1: bad port '0'") == 0);
}

TEST_CASE("host file: a key given twice is refused with its line") {
  CHECK(host_file_error("a\nb threads=2 threads=4\n") == "h.txt:2: key 'threads' given twice");
  CHECK(host_file_error("a farm=/x cache=/y farm=/z\n") == "h.txt:1: key 'farm' given twice");
}

TEST_CASE("host file: site=NAME groups hosts into a site, a bad name or a site given twice is refused with its line") {
  auto hosts = farm::parse_host_file(
      "node1 site=lab-A.1\n"
      "node2 threads=2 site=lab-A.1\n"
      "node3\n"
      "alice@[::1]:2222 site=" +
          std::string(farm::k_max_site_name_chars, 'z') + "\n",
      "h.txt");
  REQUIRE(hosts.size() == 4);
  CHECK(hosts[0].site == "lab-A.1");
  CHECK(hosts[1].site == "lab-A.1");
  CHECK(hosts[1].threads == 2);
  CHECK(hosts[2].site.empty());  // no site: straight to the master
  CHECK(hosts[3].site.size() == farm::k_max_site_name_chars);
  CHECK(host_file_error("a\nb site=lab/1\n").find("h.txt:2: bad site name 'lab/1' (letters, digits, '.', '_', '-'") ==
        0);
  CHECK(host_file_error("a site=x;y\n").find("h.txt:1: bad site name 'x;y'") == 0);
  CHECK(host_file_error("a site=-x\n").find("h.txt:1: bad site name '-x'") == 0);  // would read as an option
  CHECK(host_file_error("a site=" + std::string(65, 'z') + "\n").find("h.txt:1: bad site name 'zzz") == 0);
  CHECK(host_file_error("a site=\n").find("h.txt:1: expected key=value, got 'site='") == 0);
  CHECK(host_file_error("a site=x threads=2 site=y\n") == "h.txt:1: key 'site' given twice");
  CHECK(host_file_error("a speed=1\n") == "h.txt:1: unknown key 'speed' (keys: threads, farm, cache, site)");
}

TEST_CASE(
    "host file: sites in the order of their first hosts, a relay's endpoint from its host as written, a site too large "
    "refused") {
  auto hosts = farm::parse_host_file("a site=s2\nb\nc site=s1\nd site=s2\n[::1]:22 site=v6\n", "h.txt");
  const std::vector<farm::Site> sites = farm::sites_of(hosts, "h.txt");
  REQUIRE(sites.size() == 3);
  CHECK(sites[0].name == "s2");
  CHECK(sites[0].hosts == std::vector<size_t>{0, 3});  // the first, a, runs the relay
  CHECK(sites[1].name == "s1");
  CHECK(sites[1].hosts == std::vector<size_t>{2});
  CHECK(farm::relay_bind(hosts[0]) == "tcp://*:0");
  CHECK(farm::relay_endpoint(hosts[0], 4242) == "tcp://a:4242");
  CHECK(farm::relay_bind(hosts[4]) == "tcp://[::]:0");  // an IPv6 host: the relay listens on IPv6 too
  CHECK(farm::relay_endpoint(hosts[4], 4242) == "tcp://[::1]:4242");
  CHECK(farm::sites_of(farm::parse_host_file("a\nb\n", "h.txt"), "h.txt").empty());
  std::string many = "first\n";
  for (size_t i = 0; i <= farm::security::k_max_relay_allowed_keys; ++i)
    many += "n" + std::to_string(i) + " site=big\n";
  std::string what;
  try {
    farm::sites_of(farm::parse_host_file(many, "h.txt"), "h.txt");
  } catch (const farm::HostFileError& e) {
    what = e.what();
  }
  CHECK(what == "h.txt:2: site 'big' has 10001 hosts; one relay serves at most 10000: split it into several sites");
}

TEST_CASE("relay launch lines: the host a relay reports, only a plain host name") {
  CHECK(farm::reported_host("farm-relay-host node17") == "node17");
  CHECK(farm::reported_host("farm-relay-host node17.cluster.example") == "node17.cluster.example");
  CHECK(farm::reported_host("farm-relay-host ") == "");
  CHECK(farm::reported_host("farm-relay-host -oProxyCommand=x") == "");
  CHECK(farm::reported_host("farm-relay-host a b") == "");
  CHECK(farm::reported_host("farm-relay-host " + std::string(256, 'a')) == "");
  CHECK(farm::reported_host("farm-relay-bound tcp://0.0.0.0:41234") == "");
}

TEST_CASE("relay launch lines: the bound port read from a relay's line, anything else is not one") {
  CHECK(farm::bound_port("farm-relay-bound tcp://0.0.0.0:41234") == 41234);
  CHECK(farm::bound_port("farm-relay-bound tcp://[::]:7") == 7);
  CHECK(farm::bound_port("farm-relay-bound tcp://0.0.0.0:0") == 0);
  CHECK(farm::bound_port("farm-relay-bound tcp://0.0.0.0:65536") == 0);
  CHECK(farm::bound_port("farm-relay-bound tcp://0.0.0.0:") == 0);
  CHECK(farm::bound_port("farm-relay-bound ipc:///tmp/x:12") == 0);
  CHECK(farm::bound_port("info: relay listening on tcp://0.0.0.0:41234") == 0);
  CHECK(farm::bound_port("farm-relay-site-worker joined n1") == 0);
}

TEST_CASE("host file: bounded input, long names cut in messages, an unreadable file named with the OS reason") {
  // A 100 KB name is named, not echoed whole.
  const std::string e = host_file_error(std::string(5000, 'x') + "!\n");
  CHECK(e.find("h.txt:1: bad host name 'xxxx") == 0);
  CHECK(e.find("... (5001 bytes)") != std::string::npos);
  CHECK(e.size() < 200);
  CHECK(host_file_error(std::string(100000, 'a') + "\n").find("h.txt:1: line of 100000 bytes (at most 8192)") == 0);
  // /dev/zero is not read at all (it used to grow to gigabytes); a regular file of more than
  // 1 MiB is refused after a bounded read.
  std::string what;
  try {
    farm::read_host_file("/dev/zero");
  } catch (const farm::HostFileError& err) {
    what = err.what();
  }
  CHECK(what == "host file '/dev/zero' is a character device, not a regular file");
  const std::string big = (std::filesystem::temp_directory_path() / "farm_big_hosts.txt").string();
  {
    std::ofstream out(big);
    for (int i = 0; i < 70000; ++i) out << "host" << i << ".example.org\n";
  }
  what.clear();
  try {
    farm::read_host_file(big);
  } catch (const farm::HostFileError& err) {
    what = err.what();
  }
  std::filesystem::remove(big);
  CHECK(what == big + ": larger than 1 MiB: a host file holds one short line per host");
  try {
    farm::read_host_file("/nonexistent/hosts.txt");
  } catch (const farm::HostFileError& err) {
    what = err.what();
  }
  CHECK(what == "cannot open host file '/nonexistent/hosts.txt': No such file or directory");
}

namespace {
// What `read` (a launch-secrets reader) says of `input`, then end of file; "(no error)" if it reads it.
template <typename Reader>
std::string secrets_error(const std::string& input, Reader read) {
  int q[2];
  REQUIRE(::pipe(q) == 0);
  REQUIRE(::write(q[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  ::close(q[1]);
  std::string what = "(no error)";
  try {
    read(q[0]);
  } catch (const farm::security::KeyFileError& e) {
    what = e.what();
  }
  ::close(q[0]);
  return what;
}
}  // namespace

TEST_CASE("launch secrets: written and read back over a pipe, the lifeline untouched, bad input named") {
  using namespace farm::security;
  CurveKeyPair worker = generate_key_pair(), master = generate_key_pair();
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const std::string text = format_launch_secrets({worker.public_key, worker.secret_key, master.public_key}) + "more";
  REQUIRE(::write(p[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  const WorkerLaunchSecrets read = read_launch_secrets(p[0]);
  const CurveClient& got = read.keys;
  CHECK(read.fallback_key.empty());
  CHECK(got.public_key == worker.public_key);
  CHECK(got.secret_key == worker.secret_key);
  CHECK(got.server_key == master.public_key);
  char rest[8] = {};
  CHECK(::read(p[0], rest, 4) == 4);  // what follows "end" is still there
  CHECK(std::string(rest) == "more");
  ::close(p[0]);
  ::close(p[1]);

  auto error_of = [](const std::string& input) { return secrets_error(input, read_launch_secrets); };
  CHECK(error_of("").find("ended at line 1") != std::string::npos);
  CHECK(error_of("hello\n").find("does not start with 'farm-launch-secrets 1'") != std::string::npos);
  CHECK(error_of("farm-launch-secrets 1\nworker-public-key short\n").find("line 2") != std::string::npos);

  // Behind a relay: the relay's key is pinned, and the master's comes as the fallback.
  CurveKeyPair relay = generate_key_pair();
  const std::string behind =
      format_launch_secrets({worker.public_key, worker.secret_key, relay.public_key}, master.public_key);
  CHECK(behind.find("\nfallback-public-key " + master.public_key + "\nend\n") != std::string::npos);
  int q[2];
  REQUIRE(::pipe(q) == 0);
  REQUIRE(::write(q[1], behind.data(), behind.size()) == static_cast<ssize_t>(behind.size()));
  const WorkerLaunchSecrets via_relay = read_launch_secrets(q[0]);
  CHECK(via_relay.keys.server_key == relay.public_key);
  CHECK(via_relay.fallback_key == master.public_key);
  ::close(q[0]);
  ::close(q[1]);
  const std::string head = "farm-launch-secrets 1\nworker-public-key " + worker.public_key + "\nworker-secret-key " +
                           worker.secret_key + "\nmaster-public-key " + relay.public_key + "\n";
  CHECK(error_of(head + "fallback-public-key short\nend\n").find("line 5: expected 'fallback-public-key") !=
        std::string::npos);
  CHECK(error_of(head + "fallback-public-key " + master.public_key + "\nmore\n").find("line 6: expected 'end'") !=
        std::string::npos);
  CHECK(error_of(head + "end?\n").find("line 5: expected 'end'") != std::string::npos);
}

namespace {
std::string relay_secrets_error(const std::string& input) {
  return secrets_error(input, farm::security::read_relay_launch_secrets);
}
}  // namespace

TEST_CASE("relay launch secrets: written and read back over a pipe, the lifeline untouched, bad input named") {
  using namespace farm::security;
  CurveKeyPair relay = generate_key_pair(), master = generate_key_pair(), w1 = generate_key_pair(),
               w2 = generate_key_pair();
  RelayLaunchSecrets sent{{relay.public_key, relay.secret_key, master.public_key}, {w1.public_key, w2.public_key}};
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const std::string text = format_relay_launch_secrets(sent) + "more";
  REQUIRE(::write(p[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  RelayLaunchSecrets got = read_relay_launch_secrets(p[0]);
  CHECK(got.upstream.public_key == relay.public_key);
  CHECK(got.upstream.secret_key == relay.secret_key);
  CHECK(got.upstream.server_key == master.public_key);
  CHECK(got.allowed == sent.allowed);
  char rest[8] = {};
  CHECK(::read(p[0], rest, 4) == 4);  // what follows "end" is still there
  CHECK(std::string(rest) == "more");
  ::close(p[0]);
  ::close(p[1]);

  const std::string head = "farm-relay-launch-secrets 1\nrelay-public-key " + relay.public_key + "\nrelay-secret-key " +
                           relay.secret_key + "\nmaster-public-key " + master.public_key + "\n";
  CHECK(relay_secrets_error(head + "allow-public-key " + w1.public_key + "\nend\n") == "(no error)");
  CHECK(relay_secrets_error("").find("ended at line 1") != std::string::npos);
  // A worker's secrets are not a relay's, and the other way round.
  CHECK(relay_secrets_error(format_launch_secrets({w1.public_key, w1.secret_key, master.public_key}))
            .find("does not start with 'farm-relay-launch-secrets 1'") != std::string::npos);
  int q[2];
  REQUIRE(::pipe(q) == 0);
  const std::string relay_text = format_relay_launch_secrets(sent);
  REQUIRE(::write(q[1], relay_text.data(), relay_text.size()) == static_cast<ssize_t>(relay_text.size()));
  std::string what;
  try {
    read_launch_secrets(q[0]);
  } catch (const KeyFileError& e) {
    what = e.what();
  }
  ::close(q[0]);
  ::close(q[1]);
  CHECK(what.find("does not start with 'farm-launch-secrets 1'") != std::string::npos);
  CHECK(relay_secrets_error("farm-relay-launch-secrets 1\nrelay-public-key short\n") ==
        "launch secrets on standard input, line 2: expected 'relay-public-key <40 Z85 characters>'");
  CHECK(relay_secrets_error(head + "end\n") ==
        "launch secrets on standard input, line 5: 'end' before any 'allow-public-key' line: no site worker could "
        "connect");
  CHECK(relay_secrets_error(head + "allow-public-key nonsense\nend\n") ==
        "launch secrets on standard input, line 5: expected 'allow-public-key <40 Z85 characters>' or 'end'");
  CHECK(relay_secrets_error(head + "allow-public-key " + w1.public_key + "\n")
            .find("ended at line 6 (expected 'end' after the keys") != std::string::npos);
  CHECK(relay_secrets_error(head + std::string(300, 'x') + "\n").find("line too long") != std::string::npos);
  // The writer refuses what the reader would.
  CHECK_THROWS_AS(format_relay_launch_secrets({sent.upstream, {}}), KeyFileError);
}

TEST_SUITE_END();
