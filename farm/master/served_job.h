// One job as a serving endpoint's owner serves it: its scene, manifest and settings, its
// controller (scheduler, statistics), the frame store, the journal, the live view, and what each
// message of a worker in it means. It knows the peers through the endpoint but does not own them
// or the socket: its host does (the one-shot `farm master` today; the service of issue 40, which
// serves several jobs on one endpoint, next). What it cannot decide alone (a peer is gone for
// good) it asks its host.
#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "assets/asset_manifest.h"
#include "backend/backend_descriptor.h"
#include "control/job_controller.h"
#include "control/recall_supervisor.h"
#include "job/job_identity.h"
#include "job/run_status.h"
#include "master/frame_store.h"
#include "master/job_journal.h"
#include "master/live_publisher.h"
#include "master/master_options.h"
#include "master/progress.h"
#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"
#include "serving/serving_endpoint.h"

namespace farm {

// What a job asks of whoever serves its peers.
class JobHost {
 public:
  virtual ~JobHost() = default;
  // The job is done with this peer for good (silent past its liveness, its scene failed there
  // after loading elsewhere, quarantined): no more messages to it.
  virtual void drop(WorkerId worker) = 0;
};

class ServedJob {
 public:
  using Clock = std::chrono::steady_clock;

  // `options` outlive the job. Its clock starts now (the scheduler's time and the makespan).
  ServedJob(const MasterOptions& options, JobHost& host);

  // Everything that needs no socket and writes nothing: the scene, its files, the settings, the
  // block grid, the preview. A refusal here leaves no file behind.
  RunStatus setup();
  // The live view (--http, or MasterOptions::keep_live_view), if asked for.
  RunStatus start_live_view();
  // The job's live view kept for the host's server (keep_live_view), once started; else null.
  std::shared_ptr<LiveView> live_view() const { return m_view; }
  // Once the host's socket is bound: the files of the job (trace, journal) and the state they feed.
  RunStatus open(ServingEndpoint& endpoint);
  // Why setup(), open() or finish() failed, as it was logged ("" if they did not).
  const std::string& failure() const { return m_failure; }

  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  const Scheduler& scheduler() const { return m_job->scheduler(); }
  const SchedulerConfig& config() const { return m_config; }
  const rt::RenderSettings& render_settings() const { return m_desc.settings; }
  size_t frame_count() const { return m_frames.size(); }
  bool done() const { return m_job->scheduler().done(); }

  // A peer of this job said Hello (joined, or again with new counts): it joins the scheduler and
  // is welcomed.
  void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before);
  void on_message(ServedPeer& peer, proto::Message& message);
  // Cut off for its bad messages: it leaves as a dead worker would.
  void on_quarantined(ServedPeer& peer);
  void heard(WorkerId worker, double t) { m_job->heard(worker, t); }
  void round_trip(WorkerId worker, double seconds) { m_job->round_trip(worker, seconds); }
  void bytes_out(WorkerId worker, size_t bytes) { m_job->bytes_out(worker, bytes); }
  // The host forgets the peer: the job's own bookkeeping of it goes too.
  void forget(WorkerId worker);
  // The host moves the worker out of this job (to another job, or the job is paused or
  // cancelled): it leaves the scheduler as a worker that left cleanly, and its blocks go back to
  // the pool. `tell`: JobDone to it, so it stops rendering them (a worker moved to another job is
  // told by that job's Welcome instead).
  void release(WorkerId worker, bool tell);
  // The peers that are in this job (joined it and not forgotten or released).
  const std::set<WorkerId>& members() const { return m_members; }
  // Whether the worker holds a lease of this job (a block handed to it and not yet settled).
  bool holds_blocks(WorkerId worker) const { return !m_job->scheduler().attempts_of(worker).empty(); }
  // What the service's dispatch asks: blocks not yet handed out, and whether an idle worker would
  // get a copy of an outstanding one (the pool drained, results missing, copies allowed).
  bool has_pending() const { return m_job->scheduler().pending_blocks() > 0; }
  bool wants_copies() const;
  double progress() const;  // fraction of the job's pixels committed
  // Why the worker sits this job out (benched for failures, or it refused the job), "" if it does not.
  std::string sits_out(WorkerId worker) const {
    auto it = m_sit_out_why.find(worker);
    return it == m_sit_out_why.end() ? std::string() : it->second;
  }


  // Why the job must end now, as far as the job itself knows ("" to go on): a scene every worker
  // would fail on (`bad_scene` set), a block that failed too often, every one of its `peers`
  // sitting it out.
  std::string abort_reason(size_t peers, bool& bad_scene) const;
  // Workers declared dead at `t` (the host drops them); blocks go back to the pool.
  std::vector<WorkerId> tick(double t);
  // The loop's turn: journal sync, progress line, live view.
  void turn();
  // The job ended without its image: `why` ("interrupted", the abort reason); says so, with the
  // journal's hint.
  void failed(const std::string& why);
  // The job's blocks are all in: JobDone to its peers, the image and the other outputs written.
  // `served_stats` gives the host's counters for the statistics (quarantine, messages), asked
  // for once the last messages are sent.
  RunStatus finish(const std::function<std::vector<std::string>()>& served_stats);
  double makespan() const { return m_makespan; }  // once finished: its last block's time
  void linger_live_view();

 private:
  bool send(const std::string& identity, const proto::Message& m) { return m_endpoint->send(identity, m); }
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
  void live_finished(const std::string& outcome);
  void refuse(const std::string& why);  // logs it and keeps it for failure()

  const MasterOptions& m_o;
  JobHost& m_host;
  Clock::time_point m_start;
  ServingEndpoint* m_endpoint = nullptr;
  rt::SceneDesc m_desc;
  std::vector<std::string> m_whole_frame_reasons;  // why each frame is one block (backend/whole_frame.h)
  std::vector<int> m_frames;
  std::vector<ManifestEntry> m_manifest;
  std::map<std::string, const ManifestEntry*> m_by_hash;
  proto::PixelEncoding m_encoding = proto::PixelEncoding::srgb8;
  // Floats each result's pixel carries after its colour, and its bytes on the wire (pixel_codec.h).
  int carried_floats() const { return m_encoding == proto::PixelEncoding::float32 ? proto::carried_floats(m_settings) : 0; }
  size_t result_bytes_per_pixel() const { return proto::bytes_per_pixel(m_encoding, carried_floats()); }
  proto::JobSettings m_settings;  // what every worker renders
  BackendDescriptor m_backend;    // its renderer, decided once from the scene
  JobIdentity m_job_identity;
  uint64_t m_job_id = 0;
  SchedulerConfig m_config;  // the options' scheduling, completed from the job (size, frames, costs)
  std::unique_ptr<std::ofstream> m_trace;  // --trace: every scheduler call, for replay tests
  std::unique_ptr<JobController> m_job;
  std::unique_ptr<FrameStore> m_store;
  std::unique_ptr<JobJournal> m_journal;
  RecallSupervisor m_recalls;  // recalls between relays, as the simulator makes them
  std::string m_scene_failure;  // a worker's report that the scene is bad: the job ends
  bool m_scene_loaded_somewhere = false;  // some worker loaded it: a failure is then that worker's
  std::string m_failure;
  std::set<WorkerId> m_members;     // the peers in this job (all of a one-shot master's)
  std::map<WorkerId, std::string> m_sit_out_why;  // why each of m_sitting_out does
  std::set<WorkerId> m_sitting_out;  // connected workers that cannot take part (renderer missing, other version)
  // Set when a block's renders failed k_max_block_failures times (JobController::block_failed):
  // the job ends with it instead of retrying forever.
  std::string m_block_failure;
  // Why the last worker that sits out for the job's sake does: benched for failures, or it
  // refused the job as sent (any worker of its build would); "" if none did. Sitting out for its
  // own sake (its renderer missing or another version) does not count: another worker may come.
  std::string m_last_out_for_the_job;
  Progress m_progress;
  double m_makespan = 0;
  std::shared_ptr<LiveView> m_view;       // keep_live_view: shown by the host's server
  std::unique_ptr<LivePublisher> m_live;  // --http: the live view's server and what feeds it
};

}  // namespace farm
