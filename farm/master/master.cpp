#include "master/master_state.h"

#include "base/file_checks.h"
#include "base/memory.h"
#include "backend/povray_renderer.h"
#include "backend/scene_kind.h"
#include "backend/whole_frame.h"
#include "transport/endpoint_check.h"
#include "transport/flow.h"
#include "security/endpoint_kind.h"

namespace farm {
namespace master_detail {

// Everything that needs no socket and writes nothing: a refusal here leaves no file behind.
RunStatus Master::setup() {
  try {
    check_job_output_paths(m_o);
    m_desc = load_scene_desc(m_o.render, m_whole_frame_reasons);
    m_frames = frames_to_render(m_o.render, m_desc);
    if (!check_frame_outputs(m_o, m_frames)) {
      spdlog::error("interrupted: no image written");
      return RunStatus::failure;
    }
    rt::AssetSearch search;
    search.dirs = m_o.render.asset_dirs;
    m_manifest = build_manifest(m_o.render.scene_path, m_desc, search);
    for (const ManifestEntry& e : m_manifest) m_by_hash[e.ref.hash] = &e;
    m_encoding = encoding_for_output(m_o.render.output_path);
    m_settings = job_settings(m_desc, m_o.render.camera, m_o.render.scene_path, m_o.render.renderer_options);
    m_settings.renderer_memory_mib = m_o.render.renderer_memory_mib;
    m_settings.renderer_seconds = m_o.render.renderer_seconds;
    m_backend = describe_backend(scene_kind_of(m_settings), m_settings.renderer_options);
    m_job_identity = make_job_identity(m_manifest, m_settings, m_frames, m_encoding, !m_whole_frame_reasons.empty());
    m_job_id = m_job_identity.id;

    const rt::RenderSettings& s = m_desc.settings;
    m_config = m_o.scheduling;
    m_config.width = s.width;
    m_config.height = s.height;
    m_config.frames = m_frames;
    if (!m_whole_frame_reasons.empty()) {
      // Any policy and block size give one block per frame on this grid; fixed says so plainly.
      m_config.grid = whole_frame_grid(s.width, s.height);
      if (!m_o.policy_chosen) m_config.policy = PolicyKind::fixed;
      m_config.block_size = m_config.grid;
      spdlog::info("{}", whole_frame_notice(m_backend.kind == SceneKind::povray ? "povray" : "Blender",
                                            m_whole_frame_reasons));
    } else if (m_backend.kind == SceneKind::povray) {
      m_config.grid = m_backend.grid;
      if (!m_o.policy_chosen) {
        m_config.policy = PolicyKind::fixed;
        const bool block_chosen = m_config.block_size > 0;
        if (!block_chosen) m_config.block_size = povray_default_block(s.width, s.height, m_config.grid);
        spdlog::info("a POV-Ray job: policy fixed{} (POV-Ray's measured best; --policy to choose another)",
                     block_chosen ? "" : ", blocks of " + std::to_string(m_config.block_size) + " (at least " +
                                             std::to_string(k_povray_min_blocks) + " blocks where it can)");
      }
    }
    m_config.block_size = initial_block_size(m_config);
    m_config.result_bytes_per_pixel = static_cast<double>(proto::bytes_per_pixel(m_encoding));
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return run_status_of(e);
  }
  try {
    if (m_config.policy == PolicyKind::factoring && m_o.preview_costs && m_backend.preview_costs) {
      PreviewResult preview = preview_block_cost(m_desc, m_frames.front(), m_config);
      spdlog::info("preview for the factoring policy's block costs: {}x{}, 1 spp, {:.2f} s (--no-preview to skip)",
                   preview.width, preview.height, preview.wall_seconds);
    }
  } catch (const std::exception& e) {
    // The preview is the first to load the meshes and images: a bad one is found here, before
    // any socket is bound or worker joins, and said as the scene's fault.
    const RunStatus status = run_status_of(e);
    if (status == RunStatus::bad_input)
      spdlog::error("{}", e.what());
    else
      spdlog::error("the preview render failed: {}", error_text(e));
    return status;
  }
  return RunStatus::ok;
}

// Once the sockets are bound: the files of the job (trace, journal) and the state they feed. A
// master that cannot bind has created nothing (no empty journal to refuse the next run).
RunStatus Master::open_job() {
  try {
    if (!m_o.trace_path.empty()) {
      m_trace = std::make_unique<std::ofstream>(m_o.trace_path);
      if (!*m_trace) throw std::runtime_error("cannot write the trace to '" + m_o.trace_path + "': " + os_reason(errno));
    }
    m_job = std::make_unique<JobController>(m_config, m_trace.get());
    m_store = std::make_unique<FrameStore>(m_desc.settings.width, m_desc.settings.height, m_frames, m_encoding);
    JobJournalOptions j;
    j.enabled = m_o.journal;
    j.path = job_journal_path(m_o);
    j.resume = m_o.resume;
    j.fresh = m_o.fresh;
    j.sync_interval = m_o.journal_sync;
    m_journal = std::make_unique<JobJournal>(j, m_job_identity, m_frames, proto::bytes_per_pixel(m_encoding), *m_store,
                                             m_job->scheduler());
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return run_status_of(e);
  }
  if (m_live) m_live->maybe_publish(now(), *m_job);
  return RunStatus::ok;
}

RunStatus Master::open_socket(const std::optional<security::CurveServer>& curve) {
  // The ZAP handler is bound before the socket, so no handshake can come before it.
  if (std::string why = endpoint_problem(m_o.bind, EndpointUse::bind); !why.empty()) {
    spdlog::error("the endpoint to bind: {}", why);  // a driver other than the CLI (whose check says the same)
    return RunStatus::bad_input;
  }
  if (curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, curve->allowed);
  try {
    m_endpoint = std::make_unique<ServingEndpoint>(open_router_socket(m_ctx, m_o.bind, curve, m_config.block_size),
                                                   static_cast<ServingHandler&>(*this),
                                                   "master");
  } catch (const zmq::error_t& e) {
    // The OS refused (address in use, not this machine's): a failure, not a bad command line.
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return RunStatus::failure;
  }
  return RunStatus::ok;
}

// Why the job must stop now ("" to go on): Ctrl-C, the caller, or no worker for too long.
std::string Master::abort_reason() {
  if (m_o.stop && m_o.stop->load()) return "interrupted";
  if (!m_block_failure.empty()) return m_block_failure;
  // Every connected worker sits out and one was benched for failing blocks or refused the job as
  // sent: none will render the rest (the journal keeps what was done, for --resume once the
  // workers are mended).
  if (!m_last_out_for_the_job.empty() && !m_endpoint->peers().empty() &&
      m_sitting_out.size() == m_endpoint->peers().size()) {
    return "no worker left to render the job: every connected worker sits it out, the last " + m_last_out_for_the_job;
  }
  if (m_o.should_abort)
    if (std::string why = m_o.should_abort(); !why.empty()) return why;
  const double t = now();
  if (m_job->scheduler().live_workers() > 0) {
    m_alone_since = t;
  } else if (m_o.give_up_after > 0 && t - m_alone_since >= m_o.give_up_after) {
    return fmt::format("no worker for {:g} s (--give-up-after)", m_o.give_up_after);
  }
  return "";
}

RunStatus Master::run() {
  // Keys first: the CLI refuses a command line that would expose the master before any work
  // (cli/socket_keys.h); this guards every other driver.
  if (!m_o.curve && !m_o.insecure && !security::is_loopback_endpoint(m_o.bind)) {
    spdlog::error("refusing to serve {} without keys: it is reachable from the network", m_o.bind);
    return RunStatus::bad_input;
  }
  // The first step that fails ends the job: bad input (exit 2) or a failure (exit 1).
  RunStatus started = setup();
  if (started == RunStatus::ok) started = open_socket(m_o.curve);
  if (started == RunStatus::ok) started = start_live_view();
  if (started == RunStatus::ok) started = open_job();
  if (started != RunStatus::ok) return started;
  struct Linger {  // on every way out once the live view runs
    Master& m;
    ~Linger() { m.linger_live_view(); }
  } linger{*this};
  const Scheduler& scheduler = m_job->scheduler();
  std::string endpoint = m_endpoint->socket().get(zmq::sockopt::last_endpoint);
  spdlog::info("master listening on {} ({}x{}, {} frame(s), {} blocks of {}, policy {})", endpoint,
               m_desc.settings.width, m_desc.settings.height, m_frames.size(), scheduler.pending_blocks(),
               scheduler.config().block_size, scheduler.policy().name());
  if (m_o.on_bound) m_o.on_bound(endpoint);
  m_progress.start(scheduler.total_pixels());

  while (!scheduler.done()) {
    if (!m_scene_failure.empty()) {
      spdlog::error("{}: no image written{}", m_scene_failure, m_journal->stop_hint(scheduler.completed_blocks()));
      live_finished("failed: " + m_scene_failure);
      return RunStatus::bad_input;
    }
    if (std::string why = abort_reason(); !why.empty()) {
      spdlog::error("{}: no image written{}", why, m_journal->stop_hint(scheduler.completed_blocks()));
      live_finished("failed: " + why);
      return RunStatus::failure;
    }
    const double t = now();
    const double interval = m_o.scheduling.heartbeat_interval;
    if (t - m_last_heartbeat >= interval) heartbeat_round();
    double next = std::min(scheduler.next_deadline(), m_last_heartbeat + interval);
    long timeout_ms = static_cast<long>(std::clamp((next - t) * 1000.0, 0.0, static_cast<double>(k_poll_slice.count())));
    zmq::pollitem_t items[] = {{static_cast<void*>(m_endpoint->socket()), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, std::chrono::milliseconds(timeout_ms));
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    m_endpoint->receive(now());  // drains everything waiting (within a budget) before ticking again
    for (WorkerId id : m_job->tick(now())) {
      spdlog::warn("worker {} is silent for {:.1f} s: declared dead, its blocks go back to the pool", id,
                   interval * m_o.scheduling.liveness);
      forget(id);
    }
    m_journal->sync_if_due();
    m_progress.update(now(), scheduler.completed_pixels(), scheduler.completed_blocks(), scheduler.outstanding_blocks(),
                      scheduler.live_workers(), m_sitting_out.size(), m_job->stats().accepted_rays());
    if (m_live) m_live->maybe_publish(now(), *m_job);
  }
  return finish();
}

RunStatus Master::start_live_view() {
  if (m_o.http.empty()) return RunStatus::ok;
  try {
    m_live = LivePublisher::start(m_o.http, m_o.http_token, m_o.render.scene_path, m_desc.settings.width,
                                  m_desc.settings.height, m_frames.front(), static_cast<int>(m_frames.size()),
                                  m_encoding, m_o.http_hosts);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return run_status_of(e);  // a bad address or a missing token; cannot listen: a failure
  }
  spdlog::info("live view: {}", m_live->url());
  return RunStatus::ok;
}

void Master::linger_live_view() {
  if (!m_live || m_o.http_linger <= 0) return;
  spdlog::info("live view: serving the final state for {:g} s more", m_o.http_linger);
  m_live->linger(m_o.http_linger, m_o.stop);
}

void Master::live_finished(const std::string& outcome) {
  if (m_live) m_live->finish(now(), *m_job, outcome);
}

RunStatus Master::finish() {
  const double makespan = now();
  m_progress.done(makespan);
  for (const auto& [identity, peer] : m_endpoint->peers()) send(identity, proto::JobDone{m_job_id});
  // Let JobDone leave before the socket closes (LINGER 0 would discard it).
  m_endpoint->socket().set(zmq::sockopt::linger, k_final_linger_ms);
  const bool journal_whole = m_journal->close();
  std::vector<std::string> written;
  try {
    written = m_store->write_all(m_o.render.output_path, m_frames.size() > 1);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    if (journal_whole) {
      spdlog::error("every rendered block is kept in the journal '{}': make room (or fix the path) and run the same "
                    "command with --resume to write the image without rendering again", m_journal->path());
    }
    live_finished("failed: " + error_text(e));
    return RunStatus::failure;
  }
  for (const std::string& p : written) spdlog::info("wrote {}", p);
  live_finished("complete in " + fixed(makespan, 3) + " s");
  m_journal->remove_unless(m_o.keep_journal);
  bool outputs_whole = write_job_outputs(
      m_o, m_desc.settings, m_frames, *m_store, *m_job, makespan,
      {json_field("bad_messages", m_endpoint->quarantine().bad_messages()),
       json_raw_field("quarantined_peers", m_endpoint->quarantine().json()),
       json_field("dropped_frames", m_endpoint->quarantine().dropped_frames()),
       json_field("resumed_blocks", m_journal->resumed_blocks()), json_field("journal_epoch", m_journal->epoch()),
       json_field("messages_in", m_endpoint->messages_in()), json_field("messages_out", m_endpoint->messages_out()),
       json_field("recalls", m_recalls.recalls()), json_field("recalled_blocks", m_recalls.recalled_blocks())});
  const Scheduler& s = m_job->scheduler();
  spdlog::info("done in {:.3f} s: {} blocks, {} reassigned, {} late results dropped, {} bad messages ignored", makespan,
               s.completed_blocks(), s.reassignments(), s.late_results(), m_endpoint->quarantine().bad_messages());
  if (m_endpoint->quarantine().size()) {
    spdlog::info("{} peer(s) quarantined, {} of their frames dropped unread", m_endpoint->quarantine().size(),
                 m_endpoint->quarantine().dropped_frames());
  }
  if (m_trace) {
    m_trace->close();
    if (!*m_trace) {
      spdlog::error("the trace '{}' is incomplete: a write to it failed (is the disk full?)", m_o.trace_path);
      outputs_whole = false;
    }
  }
  return outputs_whole ? RunStatus::ok : RunStatus::failure;
}

}  // namespace master_detail

RunStatus run_master(const MasterOptions& options) {
  try {
    return master_detail::Master(options).run();
  } catch (const std::exception& e) {
    spdlog::error("master failed: {}", error_text(e));
    return RunStatus::failure;
  }
}

}  // namespace farm

