// CURVE security (farm/security): key files, loopback detection, the ZAP handler's answers,
// and end to end over tcp://127.0.0.1 with ephemeral ports: an allowed worker renders the
// same image as `farm single`; an unknown key, a plaintext client and a client pinning the
// wrong master key get nothing at all; a network endpoint without keys is refused.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <zmq.hpp>

#include "test_paths.h"
#include "farm/farm_fixture.h"
#include "farm/process.h"
#include "protocol/protocol.h"
#include "security/curve_keys.h"
#include "security/endpoint_kind.h"
#include "security/socket_security.h"
#include "security/zap_handler.h"

TEST_SUITE_BEGIN("integration");

namespace fs = std::filesystem;
using test_process::Child;
namespace sec = farm::security;

namespace {

using namespace farm_fixture;  // the shared scene, Fixture, start_master, start_worker, endpoint_from

// Writes NAME.key / NAME.pub in the fixture's folder (or `sub` below it) and returns the pair.
sec::CurveKeyPair keys(const Fixture& f, const std::string& name, const std::string& sub = "") {
  fs::create_directories(f.dir / sub);
  sec::CurveKeyPair k = sec::generate_key_pair();
  sec::write_key_files((f.dir / sub / name).string(), k, false);
  return k;
}

std::string text_of(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// --- A raw DEALER that speaks the protocol, with libzmq's monitor on it ---------------------

struct Probe {
  bool received = false;
  std::vector<int> events;  // ZMQ_EVENT_* seen by the monitor, in order
  int count(int event) const { return static_cast<int>(std::count(events.begin(), events.end(), event)); }
};

struct ProbeKeys {
  std::string public_key, secret_key, server_key;  // all empty = the NULL mechanism (plaintext)
};

// Connects, sends a valid Hello (and a WorkRequest unless `hello_only`), then listens for
// `listen_seconds`, or until `done` says enough has been seen.
Probe probe(const std::string& endpoint, const ProbeKeys& keys, const std::string& name, double listen_seconds,
            bool hello_only = false, const std::function<bool(const Probe&)>& done = {}) {
  static int monitors = 0;
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  if (!keys.server_key.empty()) {
    s.set(zmq::sockopt::curve_serverkey, keys.server_key);
    s.set(zmq::sockopt::curve_publickey, keys.public_key);
    s.set(zmq::sockopt::curve_secretkey, keys.secret_key);
  }
  const std::string monitor_ep = "inproc://security-test-monitor-" + std::to_string(++monitors);
  REQUIRE(zmq_socket_monitor(s.handle(), monitor_ep.c_str(), ZMQ_EVENT_ALL) == 0);
  zmq::socket_t monitor(ctx, zmq::socket_type::pair);
  monitor.set(zmq::sockopt::linger, 0);
  monitor.connect(monitor_ep);
  s.connect(endpoint);
  farm::proto::Hello hello;
  hello.build_id = "security-test";
  hello.worker_name = name;
  std::vector<uint8_t> bytes = farm::proto::encode(farm::proto::Message{hello});
  (void)s.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  if (!hello_only) {
    bytes = farm::proto::encode(farm::proto::Message{farm::proto::WorkRequest{4}});
    (void)s.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
  Probe p;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(listen_seconds);
  while (std::chrono::steady_clock::now() < deadline && !(done && done(p))) {
    zmq::pollitem_t items[] = {{s.handle(), 0, ZMQ_POLLIN, 0}, {monitor.handle(), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(20));
    zmq::message_t m;
    while (s.recv(m, zmq::recv_flags::dontwait)) p.received = true;
    while (monitor.recv(m, zmq::recv_flags::dontwait)) {
      // Event frame: uint16 event + uint32 value, then a frame with the endpoint.
      if (!m.more() || m.size() < 2) continue;  // not an event header: out of step, skip it
      uint16_t event = 0;
      std::memcpy(&event, m.data(), sizeof event);
      p.events.push_back(event);
      zmq::message_t address;
      if (m.more()) (void)monitor.recv(address, zmq::recv_flags::dontwait);
    }
  }
  zmq_socket_monitor(s.handle(), nullptr, 0);
  return p;
}

bool handshake_failed(const Probe& p) {
  return p.count(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) + p.count(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) +
             p.count(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) >
         0;
}

// The refusal scenario shared by the unknown-key, plaintext and wrong-master-key cases: the
// intruder gets nothing and the expected handshake failure, an allowed raw client (the
// control: the probe itself works) is answered, and a legitimate worker still finishes the
// job with a byte-identical image while the intruder never appears among the workers.
struct Refusal {
  std::string master_log, stats;
  Probe intruder;
  std::string events_text;  // for failure messages
};

Refusal run_refusal(const std::string& name,
                    const std::function<ProbeKeys(const Fixture&, const sec::CurveKeyPair& master,
                                                  const sec::CurveKeyPair& worker)>& intruder_keys) {
  Fixture f(name);
  const sec::CurveKeyPair master_keys = keys(f, "master"), worker_keys = keys(f, "worker");
  const std::string out = f.path("farm.png"), stats = f.path("stats.json");
  auto master =
      start_master(f, out, {"--key", f.path("master.key"), "--allow", f.path("worker.pub"), "--stats", stats});
  const std::string ep = endpoint_from(*master);
  REQUIRE(!ep.empty());
  Refusal r;
  // Twice, on two connections: a retry must be refused (and, for the master's log, not logged) again.
  const ProbeKeys keys = intruder_keys(f, master_keys, worker_keys);
  r.intruder = probe(ep, keys, "intruder", 1.5);
  Probe again = probe(ep, keys, "intruder", 5.0, false, handshake_failed);
  r.intruder.received |= again.received;
  r.intruder.events.insert(r.intruder.events.end(), again.events.begin(), again.events.end());
  for (int e : r.intruder.events) r.events_text += std::to_string(e) + " ";
  Probe control = probe(ep, {worker_keys.public_key, worker_keys.secret_key, master_keys.public_key}, "control", 10,
                        /*hello_only=*/true, [](const Probe& p) { return p.received; });
  CHECK(control.received);
  CHECK(control.count(ZMQ_EVENT_HANDSHAKE_SUCCEEDED) >= 1);
  auto worker = start_worker(f, ep, "good", {"--key", f.path("worker.key"), "--master-key", f.path("master.pub")});
  CHECK(master->wait(60) == 0);
  CHECK(worker->wait(20) == 0);
  CHECK(test_process::same_file(out, f.reference));
  r.master_log = master->log();
  r.stats = text_of(stats);
  CHECK(r.stats.find("\"name\": \"good\"") != std::string::npos);
  CHECK(r.stats.find("intruder") == std::string::npos);  // never joined, never counted
  CHECK_FALSE(r.intruder.received);
  CHECK(r.intruder.count(ZMQ_EVENT_HANDSHAKE_SUCCEEDED) == 0);
  return r;
}

}  // namespace

TEST_CASE("security: an allow-list names its keys by their files (alice.pub: alice), not those of a file of several" *
          doctest::test_suite("unit")) {
  const fs::path dir = fs::temp_directory_path() / ("farm_names_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "allowed");
  const sec::CurveKeyPair alice = sec::generate_key_pair(), bob = sec::generate_key_pair(), carol = sec::generate_key_pair();
  sec::write_key_files((dir / "allowed" / "alice").string(), alice, false);
  sec::write_key_files((dir / "allowed" / "bob").string(), bob, false);
  const std::map<std::string, std::string> names = sec::allow_list_names((dir / "allowed").string());
  CHECK(names == std::map<std::string, std::string>{{alice.public_key, "alice"}, {bob.public_key, "bob"}});
  // A list of several keys admits them all but names none of them (no file names a person).
  { std::ofstream(dir / "team.txt") << alice.public_key << "\n" << carol.public_key << "\n"; }
  CHECK(sec::read_allow_list((dir / "team.txt").string()).size() == 2);
  CHECK(sec::allow_list_names((dir / "team.txt").string()).empty());
  CHECK(sec::allow_list_names((dir / "allowed" / "bob.pub").string()) ==
        std::map<std::string, std::string>{{bob.public_key, "bob"}});
  fs::remove_all(dir);
}

TEST_CASE("security: loopback endpoints are told apart from network ones" * doctest::test_suite("unit")) {
  for (const char* ep :
       {"tcp://127.0.0.1:5555", "tcp://127.0.0.1:*", "tcp://127.1.2.3:9", "tcp://localhost:5555", "tcp://[::1]:5555",
        "ipc:///tmp/farm.sock", "inproc://farm", "tcp://10.0.0.1;127.0.0.1:5555"}) {
    CAPTURE(ep);
    CHECK(sec::is_loopback_endpoint(ep));
  }
  for (const char* ep :
       {"tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://192.168.1.10:5555", "tcp://master-host:5555", "tcp://eth0:5555",
        "tcp://[::]:5555", "tcp://128.0.0.1:5555", "tcp://127.0.0.1.example.com:1", "tcp://127.0.0.1;10.0.0.1:5555",
        "udp://127.0.0.1:5555", "pgm://eth0;239.0.0.1:5555", "", "tcp://", "127.0.0.1:5555"}) {
    CAPTURE(ep);
    CHECK_FALSE(sec::is_loopback_endpoint(ep));
  }
}

TEST_CASE("security: the ZAP answer admits only CURVE with an allowed key (fail closed)" * doctest::test_suite("unit")) {
  const sec::CurveKeyPair allowed = sec::generate_key_pair(), other = sec::generate_key_pair();
  const std::set<std::string> list = {allowed.public_key};
  auto raw = [](const std::string& z85) {
    std::string bytes(32, '\0');
    REQUIRE(zmq_z85_decode(reinterpret_cast<uint8_t*>(bytes.data()), z85.c_str()) != nullptr);
    return bytes;
  };
  auto request = [&](const std::string& mechanism, const std::string& credentials) {
    return std::vector<std::string>{"1.0", "7", "farm", "127.0.0.1", "", mechanism, credentials};
  };
  sec::ZapReply ok = sec::answer_zap_request(request("CURVE", raw(allowed.public_key)), list);
  CHECK(ok.status_code == "200");
  CHECK(ok.request_id == "7");
  CHECK(ok.user_id == allowed.public_key);
  sec::ZapReply unknown = sec::answer_zap_request(request("CURVE", raw(other.public_key)), list);
  CHECK(unknown.status_code == "400");
  CHECK(unknown.refused_key == other.public_key);
  CHECK(sec::answer_zap_request({"1.0", "7", "farm", "127.0.0.1", "", "NULL"}, list).status_code == "400");
  CHECK(sec::answer_zap_request(request("PLAIN", raw(allowed.public_key)), list).status_code == "400");
  CHECK(sec::answer_zap_request(request("CURVE", raw(allowed.public_key).substr(0, 31)), list).status_code == "400");
  CHECK(sec::answer_zap_request(request("CURVE", ""), list).status_code == "400");
  CHECK(sec::answer_zap_request({"2.0", "7", "farm", "127.0.0.1", "", "CURVE", raw(allowed.public_key)}, list)
            .status_code == "400");
  auto extra = request("CURVE", raw(allowed.public_key));
  extra.push_back("more");
  CHECK(sec::answer_zap_request(extra, list).status_code == "400");
  CHECK(sec::answer_zap_request({}, list).status_code == "400");
  CHECK(sec::answer_zap_request({"1.0"}, list).status_code == "400");
  CHECK(sec::answer_zap_request(request("CURVE", raw(allowed.public_key)), {}).status_code == "400");
}

TEST_CASE("security: a CURVE server socket admits nobody without the ZAP handler, and only allowed keys with it" * doctest::test_suite("unit")) {
  const sec::CurveKeyPair server = sec::generate_key_pair(), allowed = sec::generate_key_pair(),
                          stranger = sec::generate_key_pair();
  const sec::CurveServer config{server.secret_key, {allowed.public_key}};
  auto received = [](zmq::socket_t& router, int wait_ms) {
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(wait_ms));
    return (item.revents & ZMQ_POLLIN) != 0;
  };
  const ProbeKeys as_allowed{allowed.public_key, allowed.secret_key, server.public_key};
  {
    // No handler bound: ZMQ_ZAP_ENFORCE_DOMAIN (set by apply) must refuse rather than admit.
    zmq::context_t ctx;
    zmq::socket_t router(ctx, zmq::socket_type::router);
    router.set(zmq::sockopt::linger, 0);
    sec::apply(router, config);
    router.bind("tcp://127.0.0.1:*");
    Probe p = probe(router.get(zmq::sockopt::last_endpoint), as_allowed, "no-handler", 1.0, true, handshake_failed);
    CHECK(handshake_failed(p));
    CHECK(p.count(ZMQ_EVENT_HANDSHAKE_SUCCEEDED) == 0);
    CHECK_FALSE(received(router, 200));
  }
  {
    zmq::context_t ctx;
    sec::ZapHandler zap(ctx, config.allowed);
    zmq::socket_t router(ctx, zmq::socket_type::router);
    router.set(zmq::sockopt::linger, 0);
    sec::apply(router, config);
    router.bind("tcp://127.0.0.1:*");
    const std::string ep = router.get(zmq::sockopt::last_endpoint);
    Probe bad = probe(ep, {stranger.public_key, stranger.secret_key, server.public_key}, "stranger", 5.0, true,
                      handshake_failed);
    CHECK(bad.count(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) >= 1);
    CHECK_FALSE(received(router, 200));
    CHECK(zap.refusals() >= 1);
    Probe good = probe(ep, as_allowed, "allowed", 5.0, true,
                       [](const Probe& p) { return p.count(ZMQ_EVENT_HANDSHAKE_SUCCEEDED) > 0; });
    CHECK(good.count(ZMQ_EVENT_HANDSHAKE_SUCCEEDED) >= 1);
    CHECK(received(router, 5000));
  }
}

TEST_CASE("security: keygen writes a 0600 secret key and a public key, and never overwrites by accident") {
  auto dir = test_paths::temp_dir("security_keygen");
  const std::string base = (dir / "alice").string();
  REQUIRE(test_process::run({k_farm, "keygen", base}, (dir / "a.log").string()) == 0);
  struct stat st {};
  REQUIRE(::stat((base + ".key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const sec::CurveKeyPair pair = sec::read_secret_key_file(base + ".key");
  CHECK(sec::read_public_key_file(base + ".pub") == pair.public_key);
  CHECK(sec::read_allow_list(dir.string()) == std::set<std::string>{pair.public_key});
  CHECK(text_of(base + ".pub").find(pair.secret_key) == std::string::npos);

  // A second run refuses and leaves both files as they were.
  const std::string key_before = text_of(base + ".key"), pub_before = text_of(base + ".pub");
  CHECK(test_process::run({k_farm, "keygen", base}, (dir / "b.log").string()) == 2);
  CHECK(text_of((dir / "b.log").string()).find("--force") != std::string::npos);
  CHECK(text_of(base + ".key") == key_before);
  CHECK(text_of(base + ".pub") == pub_before);
  // Only the .pub present still refuses, and writes no .key beside it.
  const std::string bob = (dir / "bob").string();
  { std::ofstream(bob + ".pub") << "keep me\n"; }
  CHECK(test_process::run({k_farm, "keygen", bob}, (dir / "c.log").string()) == 2);
  CHECK_FALSE(fs::exists(bob + ".key"));
  CHECK(text_of(bob + ".pub") == "keep me\n");

  // --force replaces both with a new pair, the secret again 0600 even if it was made readable.
  ::chmod((base + ".key").c_str(), 0644);
  REQUIRE(test_process::run({k_farm, "keygen", base, "--force"}, (dir / "d.log").string()) == 0);
  REQUIRE(::stat((base + ".key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(sec::read_secret_key_file(base + ".key").public_key != pair.public_key);

  // An unwritable place is a clear error naming the path.
  const std::string nowhere = (dir / "no" / "such" / "folder" / "carol").string();
  CHECK(test_process::run({k_farm, "keygen", nowhere}, (dir / "e.log").string()) == 2);
  std::string e = text_of((dir / "e.log").string());
  CHECK(e.find(nowhere + ".key") != std::string::npos);
  CHECK(e.find("No such file or directory") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("security: a worker with an allowed key renders byte-identically to farm single over CURVE") {
  Fixture f("security_render");
  keys(f, "master");
  keys(f, "w1", "allowed");
  keys(f, "w2", "allowed");
  // The allow-list as a folder of .pub files; the worker .key files beside them are not read.
  const std::string out = f.path("farm.png"), stats = f.path("stats.json");
  auto master = start_master(
      f, out, {"--key", f.path("master.key"), "--allow", f.path("allowed"), "--block", "8", "--stats", stats});
  CHECK(master->log().find("CURVE on: 2 worker key(s) allowed") != std::string::npos);
  const std::string ep = endpoint_from(*master);
  // One worker (with the second key of the folder): a job this small may end before a second joins.
  auto worker = start_worker(f, ep, "w2", {"--key", f.path("allowed/w2.key"), "--master-key", f.path("master.pub")});
  CHECK(master->wait(60) == 0);
  CHECK(worker->wait(20) == 0);
  CHECK(test_process::same_file(out, f.reference));
  CHECK(master->log().find("refused") == std::string::npos);
  CHECK(text_of(stats).find("\"name\": \"w2\"") != std::string::npos);
}

TEST_CASE("security: a client whose key is not allowed gets nothing and the master logs it once") {
  Refusal r = run_refusal("security_unknown_key",
                          [](const Fixture& f, const sec::CurveKeyPair& master, const sec::CurveKeyPair&) {
                            sec::CurveKeyPair stranger = keys(f, "stranger");
                            return ProbeKeys{stranger.public_key, stranger.secret_key, master.public_key};
                          });
  // The ZAP handler said no (400) to both connections (libzmq 4.3 does not retry by itself
  // after an authentication failure), and the master logged the key once.
  INFO("client monitor events: " << r.events_text);
  CHECK(r.intruder.count(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) >= 2);
  INFO(r.master_log);
  std::regex refused("refused a worker with CURVE key [^ ]+\\.\\.\\. from");
  auto hits =
      std::distance(std::sregex_iterator(r.master_log.begin(), r.master_log.end(), refused), std::sregex_iterator());
  CHECK(hits == 1);
}

TEST_CASE("security: a plaintext (NULL mechanism) client gets nothing from a CURVE master") {
  Refusal r = run_refusal("security_plaintext", [](const Fixture&, const sec::CurveKeyPair&, const sec::CurveKeyPair&) {
    return ProbeKeys{};
  });
  INFO("client monitor events: " << r.events_text);
  // Mechanism mismatch. Which failure the client's monitor names depends on who notices first:
  // FAILED_PROTOCOL when the client reads the master's CURVE greeting, FAILED_NO_DETAIL when
  // the master has already dropped the connection (seen under AddressSanitizer's slowdown in
  // CI, on all 11 connection attempts of that run). Either way the handshake failed; that nothing
  // was received and no handshake succeeded is checked by run_refusal.
  CHECK(r.intruder.count(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) + r.intruder.count(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) >=
        1);
}

TEST_CASE("security: a client pinning the wrong master key gets nothing, even with an allowed key of its own") {
  Refusal r = run_refusal("security_wrong_server_key",
                          [](const Fixture& f, const sec::CurveKeyPair&, const sec::CurveKeyPair& worker) {
                            sec::CurveKeyPair impostor = keys(f, "impostor");
                            return ProbeKeys{worker.public_key, worker.secret_key, impostor.public_key};
                          });
  // The master cannot open the client's HELLO (it was boxed for another key) and drops the
  // connection mid-handshake; the client sees the handshake fail (libzmq reports no detail).
  INFO("client monitor events: " << r.events_text);
  CHECK(r.intruder.count(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) +
            r.intruder.count(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) >=
        1);
}

TEST_CASE("security: a farm worker the master refuses says why instead of retrying silently") {
  Fixture f("security_worker_diagnosis");
  keys(f, "master");
  keys(f, "worker");
  keys(f, "stranger");
  auto master = start_master(f, f.path("farm.png"), {"--key", f.path("master.key"), "--allow", f.path("worker.pub")});
  const std::string ep = endpoint_from(*master);
  auto stranger =
      start_worker(f, ep, "stranger", {"--key", f.path("stranger.key"), "--master-key", f.path("master.pub")});
  auto plain = start_worker(f, ep, "plain");
  auto fooled = start_worker(f, ep, "fooled", {"--key", f.path("worker.key"), "--master-key", f.path("stranger.pub")});
  // Generous limits: they cost nothing when the words come, and a loaded machine is slow to start.
  CHECK(stranger->wait_for_log("the master refused this worker's key", 30));
  CHECK(plain->wait_for_log("disagree on encryption", 30));
  CHECK(fooled->wait_for_log("is the master key this worker trusts the master's own public key?", 30));
  CHECK(master->wait_for_log("refused a worker with CURVE key", 30));
  CHECK(master->log().find("joined") == std::string::npos);
}

TEST_CASE("security: a network endpoint without keys exits 2 and says what to pass, --insecure allows it") {
  Fixture f("security_required");
  const std::string log = f.path("m.log");
  CHECK(test_process::run({k_farm, "master", f.scene, "-o", f.path("x.png"), "--bind", "tcp://*:0"}, log, 20) == 2);
  std::string text = text_of(log);
  INFO(text);
  CHECK(text.find("--key") != std::string::npos);
  CHECK(text.find("--allow") != std::string::npos);
  CHECK(text.find("--insecure") != std::string::npos);
  CHECK(text.find("listening on") == std::string::npos);

  const std::string wlog = f.path("w.log");
  CHECK(test_process::run({k_farm, "worker", "--connect", "tcp://192.0.2.1:5555", "--cache", f.cache()}, wlog, 20) ==
        2);
  text = text_of(wlog);
  CHECK(text.find("--master-key") != std::string::npos);
  CHECK(text.find("--insecure") != std::string::npos);

  // With --insecure the security check passes (this run then stops at its bad output name).
  const std::string ilog = f.path("i.log");
  CHECK(test_process::run({k_farm, "master", f.scene, "-o", f.path("x.jpg"), "--bind", "tcp://*:0", "--insecure"}, ilog,
                          20) == 2);
  text = text_of(ilog);
  CHECK(text.find("WITHOUT encryption") != std::string::npos);
  CHECK(text.find("'.jpg'") != std::string::npos);
  // Half a key configuration is refused too.
  CHECK(test_process::run({k_farm, "master", f.scene, "-o", f.path("x.png"), "--bind", "tcp://127.0.0.1:*", "--allow",
                           f.path("nothing.pub")},
                          log, 20) == 2);
}

TEST_CASE("security: bad key files exit 2 and name the file") {
  Fixture f("security_bad_keys");
  keys(f, "master");
  keys(f, "worker");
  { std::ofstream(f.path("short.key")) << "secret-key abc\n"; }
  { std::ofstream(f.path("notz85.key")) << "secret-key " << std::string(40, '"') << "\n"; }
  { std::ofstream(f.path("bad.pub")) << "# a list\n" << std::string(39, 'a') << "\n"; }
  { std::ofstream(f.path("empty.pub")) << "# nobody\n"; }
  const std::string out = f.path("x.png");
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{"master", f.scene, "-o", out, "--key", f.path("short.key"), "--allow", f.path("worker.pub")}, "short.key"},
      {{"master", f.scene, "-o", out, "--key", f.path("notz85.key"), "--allow", f.path("worker.pub")}, "notz85.key"},
      {{"master", f.scene, "-o", out, "--key", f.path("master.pub"), "--allow", f.path("worker.pub")}, "master.pub"},
      {{"master", f.scene, "-o", out, "--key", f.path("master.key"), "--allow", f.path("bad.pub")}, "bad.pub:2"},
      {{"master", f.scene, "-o", out, "--key", f.path("master.key"), "--allow", f.path("empty.pub")}, "empty.pub"},
      {{"master", f.scene, "-o", out, "--key", f.path("missing.key"), "--allow", f.path("worker.pub")}, "missing.key"},
      {{"worker", "--connect", "tcp://127.0.0.1:9", "--key", f.path("notz85.key"), "--master-key",
        f.path("master.pub")},
       "notz85.key"},
      {{"worker", "--connect", "tcp://127.0.0.1:9", "--key", f.path("worker.key"), "--master-key", f.path("bad.pub")},
       "bad.pub:2"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<std::string> args = {k_farm};
    args.insert(args.end(), cases[i].args.begin(), cases[i].args.end());
    if (args[1] == "master") args.insert(args.end(), {"--bind", "tcp://127.0.0.1:*"});
    const std::string log = f.path("case" + std::to_string(i) + ".log");
    CAPTURE(cases[i].named);
    CHECK(test_process::run(args, log, 20) == 2);
    std::string text = text_of(log);
    INFO(text);
    CHECK(text.find(cases[i].named) != std::string::npos);
    CHECK(text.find(std::string(40, '"')) == std::string::npos);  // never echoes key material
  }
}

TEST_SUITE_END();
