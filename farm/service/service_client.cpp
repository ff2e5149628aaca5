#include "service/service_client.h"

#include <fmt/format.h>

#include <filesystem>

#include "assets/content_hash.h"
#include "base/file_write.h"
#include "protocol/protocol.h"
#include "transport/sockets.h"

namespace farm {

using nlohmann::json;

ServiceClient::ServiceClient(const std::string& endpoint, const std::optional<security::CurveClient>& curve, double timeout)
    : m_endpoint(endpoint), m_timeout(timeout) {
  m_handshakes = std::make_unique<security::HandshakeWatch>(m_ctx);
  m_socket = open_dealer_socket(m_ctx, endpoint, curve, m_handshakes.get());
}

ServiceClient::~ServiceClient() {
  if (m_socket) m_socket->set(zmq::sockopt::linger, 0);
}

json ServiceClient::call(const std::string& command, const json& body, std::vector<uint8_t> data,
                         std::vector<uint8_t>* data_out) {
  proto::ServiceCall c;
  c.call = m_next_call++;
  c.command = command;
  c.body = body.dump();
  c.data = std::move(data);
  const std::vector<uint8_t> bytes = proto::encode(c);
  m_socket->send(zmq::buffer(bytes), zmq::send_flags::none);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(m_timeout);
  std::string handshake_trouble;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw std::runtime_error("no answer from a farm service at " + m_endpoint + " within " + fmt::format("{:g}", m_timeout) +
                               " s (is `farm serve` running there?" +
                               (handshake_trouble.empty() ? std::string(")") : "; " + handshake_trouble + ")"));
    }
    zmq::pollitem_t items[] = {{static_cast<void*>(*m_socket), 0, ZMQ_POLLIN, 0}};
    zmq::poll(items, 1, std::min(left, std::chrono::milliseconds(100)));
    if (std::string trouble = m_handshakes->poll(); !trouble.empty()) handshake_trouble = trouble;
    if (!(items[0].revents & ZMQ_POLLIN)) continue;
    zmq::message_t frame;
    if (!m_socket->recv(frame, zmq::recv_flags::dontwait)) continue;
    proto::Decoded d = proto::decode(static_cast<const uint8_t*>(frame.data()), frame.size());
    if (!d.message) throw std::runtime_error("the farm service at " + m_endpoint + " sent a bad answer: " + d.error);
    if (const auto* e = std::get_if<proto::Error>(&*d.message))
      throw ServiceRefusal("the farm service at " + m_endpoint + " refused: " + e->message);
    const auto* r = std::get_if<proto::ServiceReply>(&*d.message);
    if (!r || r->call != c.call) continue;  // a heartbeat, or the answer to an abandoned call
    json answer = json::parse(r->body, nullptr, false);
    if (answer.is_discarded()) throw std::runtime_error("the farm service at " + m_endpoint + " answered with bad JSON");
    if (!r->ok) throw ServiceRefusal(answer.value("error", std::string("refused, without a reason")));
    if (data_out) *data_out = r->data;
    return answer;
  }
}

int64_t ServiceClient::submit(JobSubmission submission, const std::vector<ManifestEntry>& files, size_t& uploaded) {
  uploaded = 0;
  submission.files.clear();
  for (const ManifestEntry& e : files) submission.files.push_back(e.ref);
  const json spec = json::parse(submission_json(submission));
  for (int round = 0; round < 3; ++round) {
    json answer = call("submit", spec);
    if (answer.contains("id")) return answer["id"].get<int64_t>();
    for (const json& hash : answer.value("missing", json::array())) {
      const std::string h = hash.get<std::string>();
      const ManifestEntry* entry = nullptr;
      for (const ManifestEntry& e : files)
        if (e.ref.hash == h) entry = &e;
      if (!entry) throw std::runtime_error("the farm service asked for a file this job does not have (" + h + ")");
      std::optional<std::vector<uint8_t>> bytes = read_file_bytes(entry->path, size_t{1} << 40);
      if (!bytes) throw std::runtime_error("cannot read '" + entry->path + "'");
      if (content_hash(*bytes) != h) throw std::runtime_error("'" + entry->path + "' changed while it was being submitted");
      const json upload{{"hash", h}, {"size", bytes->size()}};  // before the bytes are moved into the call
      call("upload", upload, std::move(*bytes));
      ++uploaded;
    }
  }
  throw std::runtime_error("the farm service kept asking for the job's files after they were uploaded");
}

std::vector<std::string> ServiceClient::fetch(int64_t id, const std::string& output) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  size_t count = 1;
  for (size_t index = 0; index < count; ++index) {
    std::vector<uint8_t> data;
    json answer = call("fetch", json{{"id", id}, {"index", index}}, {}, &data);
    count = answer.value("count", size_t{1});
    if (content_hash(data) != answer.value("hash", std::string()))
      throw std::runtime_error("image " + std::to_string(index + 1) + " of job " + std::to_string(id) +
                               " arrived damaged (its hash differs)");
    // One image: OUT itself; frames: their numbered names beside OUT.
    const std::string name = answer.value("name", std::string());
    const fs::path path = count == 1 ? fs::path(output) : fs::path(output).parent_path() / fs::path(name).filename();
    if (Status s = write_file_replacing(path.string(), std::string_view(reinterpret_cast<const char*>(data.data()), data.size()),
                                        "the image");
        !s.ok())
      throw std::runtime_error(s.message());
    written.push_back(path.string());
  }
  return written;
}

void ServiceClient::fetch_stats(int64_t id, const std::string& path) {
  std::vector<uint8_t> data;
  json answer = call("stats", json{{"id", id}}, {}, &data);
  if (content_hash(data) != answer.value("hash", std::string()))
    throw std::runtime_error("the statistics of job " + std::to_string(id) + " arrived damaged (their hash differs)");
  if (Status s = write_file_replacing(path, std::string_view(reinterpret_cast<const char*>(data.data()), data.size()),
                                      "statistics file");
      !s.ok())
    throw std::runtime_error(s.message());
}

}  // namespace farm
