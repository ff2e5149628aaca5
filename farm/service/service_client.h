// A client of a farm service (`farm submit`, `farm jobs`, ...): one DEALER, calls answered in
// order. Submitting uploads the files the service lacks (content-addressed: a file it holds
// from any earlier job is not sent again), then the submission. No job logic here: the calls'
// meaning is the service's (service_calls.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "assets/asset_manifest.h"
#include "security/handshake_watch.h"
#include "security/socket_security.h"
#include "service/job_submission.h"

namespace farm {

// The service said no: its reason, as it said it.
struct ServiceRefusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ServiceClient {
 public:
  // `timeout`: seconds to wait for each answer (a call unanswered: std::runtime_error saying so).
  ServiceClient(const std::string& endpoint, const std::optional<security::CurveClient>& curve, double timeout);
  ~ServiceClient();

  // The answer's body; throws ServiceRefusal with the service's reason if it refused.
  nlohmann::json call(const std::string& command, const nlohmann::json& body, std::vector<uint8_t> data = {},
                      std::vector<uint8_t>* data_out = nullptr);
  // Uploads what the service lacks of `files` (read from each entry's path), then submits;
  // returns the job id. `uploaded`: how many files were sent.
  int64_t submit(JobSubmission submission, const std::vector<ManifestEntry>& files, size_t& uploaded);
  // Writes every image of a done job under `output` (one image: `output` itself; several frames:
  // output's name numbered as `farm render` numbers them); returns the paths written.
  std::vector<std::string> fetch(int64_t id, const std::string& output);
  // Writes a done job's statistics (the JSON of `farm master --stats`) to `path`.
  void fetch_stats(int64_t id, const std::string& path);

 private:
  std::string m_endpoint;
  double m_timeout;
  uint64_t m_next_call = 1;
  zmq::context_t m_ctx;
  std::unique_ptr<security::HandshakeWatch> m_handshakes;
  std::unique_ptr<zmq::socket_t> m_socket;
};

}  // namespace farm
