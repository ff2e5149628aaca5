// The master's state, shared by its two halves: master.cpp (setup, the loop, the end of the job)
// and master_messages.cpp (what it does with each message from a worker). Private to farm/master.
#pragma once

#include "master/master.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <zmq.hpp>

#include "assets/asset_manifest.h"
#include "assets/content_hash.h"
#include "backend/backend_descriptor.h"
#include "base/json_text.h"
#include "base/limits.h"
#include "control/job_controller.h"
#include "costs/preview_cost_map.h"
#include "image/image_io.h"
#include "job/job_identity.h"
#include "job/job_settings.h"
#include "master/frame_store.h"
#include "master/job_journal.h"
#include "master/job_outputs.h"
#include "master/live_publisher.h"
#include "master/progress.h"
#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"
#include "transport/sockets.h"
#include "control/recall_supervisor.h"
#include "security/socket_security.h"
#include "security/zap_handler.h"
#include "serving/serving_endpoint.h"

namespace farm::master_detail {

using Clock = std::chrono::steady_clock;

// The master serves its workers through a ServingEndpoint and decides, as its handler, what each
// of their messages means for the job.
class Master : private ServingHandler {
 public:
  explicit Master(const MasterOptions& o)
      : m_o(o),
        m_start(Clock::now()),
        m_recalls(o.recall, o.recall_below, o.scheduling.heartbeat_interval * o.scheduling.liveness) {}
  RunStatus run();

 private:
  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  RunStatus setup();
  RunStatus open_job();
  RunStatus open_socket(const std::optional<security::CurveServer>& curve);
  bool send(const std::string& identity, const proto::Message& m) { return m_endpoint->send(identity, m); }
  // ServingHandler: what the endpoint's messages mean for the job.
  void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) override;
  void on_heard(ServedPeer& peer, double t) override { m_job->heard(peer.id, t); }
  void on_message(ServedPeer& peer, proto::Message& message) override;
  void on_quarantined(ServedPeer& peer) override;
  void on_round_trip(ServedPeer& peer, double seconds) override { m_job->round_trip(peer.id, seconds); }
  void on_sent(const ServedPeer& peer, size_t bytes) override { m_job->bytes_out(peer.id, bytes); }
  bool stop_reading() override { return m_job->scheduler().done(); }
  void welcome(const ServedPeer& peer);
  void on_request(ServedPeer& peer, const proto::WorkRequest& m);
  // Seed 002's supervisor (MasterOptions::recall, control/recall_supervisor.h): true when the
  // relay's request waits for a recall's answer; sends the Recall it decides on.
  bool recall_for(const ServedPeer& dry, const proto::WorkRequest& m);
  void on_released(ServedPeer& peer, const proto::Released& m);
  void on_result(ServedPeer& peer, proto::Result& r);
  void on_asset_request(ServedPeer& peer, const proto::AssetRequest& m);
  void on_block_failed(ServedPeer& peer, const proto::BlockFailed& m);
  void on_error(ServedPeer& peer, const proto::Error& m);
  void heartbeat_round();
  // The master's side of a worker that is gone (declared dead, failed, quarantined).
  void forget(WorkerId worker);
  std::string abort_reason();
  RunStatus finish();

  const MasterOptions& m_o;
  Clock::time_point m_start;
  rt::SceneDesc m_desc;
  std::vector<std::string> m_whole_frame_reasons;  // why each frame is one block (backend/whole_frame.h)
  std::vector<int> m_frames;
  std::vector<ManifestEntry> m_manifest;
  std::map<std::string, const ManifestEntry*> m_by_hash;
  proto::PixelEncoding m_encoding = proto::PixelEncoding::srgb8;
  proto::JobSettings m_settings;  // what every worker renders
  BackendDescriptor m_backend;    // its renderer, decided once from the scene
  JobIdentity m_job_identity;
  uint64_t m_job_id = 0;
  SchedulerConfig m_config;  // the options' scheduling, completed from the job (size, frames, costs)
  std::unique_ptr<std::ofstream> m_trace;  // --trace: every scheduler call, for replay tests
  std::unique_ptr<JobController> m_job;
  std::unique_ptr<FrameStore> m_store;
  std::unique_ptr<JobJournal> m_journal;
  zmq::context_t m_ctx;
  // Declared between the context and the socket: it must outlive the socket it guards (fail closed).
  std::unique_ptr<security::ZapHandler> m_zap;
  std::unique_ptr<ServingEndpoint> m_endpoint;  // its workers and relays, by routing identity
  RecallSupervisor m_recalls;  // recalls between relays, as the simulator makes them
  double m_last_heartbeat = -1;
  double m_alone_since = 0;  // since when no worker is live (--give-up-after)
  std::string m_scene_failure;  // a worker's report that the scene is bad: the job ends
  bool m_scene_loaded_somewhere = false;  // some worker loaded it: a failure is then that worker's
  std::set<WorkerId> m_sitting_out;  // connected workers that cannot take part (renderer missing, other version)
  // Set when a block's renders failed k_max_block_failures times (JobController::block_failed):
  // the job ends with it instead of retrying forever.
  std::string m_block_failure;
  // Why the last worker that sits out for the job's sake does: benched for failures, or it
  // refused the job as sent (any worker of its build would); "" if none did. Sitting out for its
  // own sake (its renderer missing or another version) does not count: another worker may come.
  std::string m_last_out_for_the_job;
  Progress m_progress;
  std::unique_ptr<LivePublisher> m_live;  // --http: the live view's server and what feeds it
  RunStatus start_live_view();
  void live_finished(const std::string& outcome);
  void linger_live_view();
};

}  // namespace farm::master_detail
