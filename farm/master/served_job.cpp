// A served job's life outside its messages (served_job.h): setup, its files, the live view, the
// turn of the host's loop, and the end of the job. Its messages: served_job_messages.cpp.
#include <filesystem>
#include "master/served_job.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "backend/povray_renderer.h"
#include "backend/scene_kind.h"
#include "backend/whole_frame.h"
#include "base/file_checks.h"
#include "base/json_text.h"
#include "base/memory.h"
#include "costs/preview_cost_map.h"
#include "image/image_io.h"
#include "job/job_settings.h"
#include "master/job_outputs.h"
#include "protocol/pixel_codec.h"

namespace farm {

ServedJob::ServedJob(const MasterOptions& options, JobHost& host)
    : m_o(options),
      m_host(host),
      m_start(Clock::now()),
      m_recalls(options.recall, options.recall_below, options.scheduling.heartbeat_interval * options.scheduling.liveness) {}

void ServedJob::refuse(const std::string& why) {
  spdlog::error("{}", why);
  m_failure = why;
}

RunStatus ServedJob::setup() {
  try {
    check_job_output_paths(m_o);
    m_desc = load_scene_desc(m_o.render, m_whole_frame_reasons);
    m_frames = frames_to_render(m_o.render, m_desc);
    if (!check_frame_outputs(m_o, m_frames)) {
      refuse("interrupted: no image written");
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
    // A service's job: its queue id mixed in (splitmix64's finaliser), so two submissions of the
    // same scene and settings are told apart by the workers; its journal keeps the identity.
    if (m_o.service_job != 0) {
      uint64_t z = m_job_id ^ (m_o.service_job * 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      m_job_id = (z ^ (z >> 31)) | 1;  // never 0: 0 means "no job" to a worker
    }

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
    m_config.result_bytes_per_pixel = static_cast<double>(result_bytes_per_pixel());
  } catch (const std::exception& e) {
    refuse(error_text(e));
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
    refuse(status == RunStatus::bad_input ? std::string(e.what()) : "the preview render failed: " + error_text(e));
    return status;
  }
  return RunStatus::ok;
}

RunStatus ServedJob::open(ServingEndpoint& endpoint) {
  m_endpoint = &endpoint;
  try {
    if (!m_o.trace_path.empty()) {
      m_trace = std::make_unique<std::ofstream>(m_o.trace_path);
      if (!*m_trace) throw std::runtime_error("cannot write the trace to '" + m_o.trace_path + "': " + os_reason(errno));
    }
    m_job = std::make_unique<JobController>(m_config, m_trace.get());
    m_store = std::make_unique<FrameStore>(m_desc.settings.width, m_desc.settings.height, m_frames, m_encoding,
                                           m_settings.channels, m_desc.output_attributes);
    JobJournalOptions j;
    j.enabled = m_o.journal;
    j.path = job_journal_path(m_o);
    j.resume = m_o.resume;
    j.fresh = m_o.fresh;
    j.sync_interval = m_o.journal_sync;
    m_journal = std::make_unique<JobJournal>(j, m_job_identity, m_frames, result_bytes_per_pixel(), *m_store,
                                             m_job->scheduler());
  } catch (const std::exception& e) {
    refuse(error_text(e));
    return run_status_of(e);
  }
  if (m_live) m_live->maybe_publish(now(), *m_job);
  m_progress.start(m_job->scheduler().total_pixels());
  return RunStatus::ok;
}

RunStatus ServedJob::start_live_view() {
  if (m_o.http.empty()) {
    if (m_o.keep_live_view && !m_live) {
      m_view = std::make_shared<LiveView>(m_desc.settings.width, m_desc.settings.height);
      // The scene's file name: its path is the host's business (the service's state folder).
      m_live = std::make_unique<LivePublisher>(*m_view, std::filesystem::path(m_o.render.scene_path).filename().string(), m_frames.front(),
                                               static_cast<int>(m_frames.size()), m_encoding);
    }
    return RunStatus::ok;
  }
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

void ServedJob::linger_live_view() {
  if (!m_live || m_o.http_linger <= 0) return;
  spdlog::info("live view: serving the final state for {:g} s more", m_o.http_linger);
  m_live->linger(m_o.http_linger, m_o.stop);
}

void ServedJob::live_finished(const std::string& outcome) {
  if (m_live) m_live->finish(now(), *m_job, outcome);
}

std::string ServedJob::abort_reason(size_t peers, bool& bad_scene) const {
  bad_scene = !m_scene_failure.empty();
  if (bad_scene) return m_scene_failure;
  if (!m_block_failure.empty()) return m_block_failure;
  // Every connected worker sits out and one was benched for failing blocks or refused the job as
  // sent: none will render the rest (the journal keeps what was done, for --resume once the
  // workers are mended).
  if (!m_last_out_for_the_job.empty() && peers > 0 && m_sitting_out.size() == peers) {
    return "no worker left to render the job: every connected worker sits it out, the last " + m_last_out_for_the_job;
  }
  return "";
}

std::vector<WorkerId> ServedJob::tick(double t) { return m_job->tick(t); }

bool ServedJob::wants_copies() const {
  const Scheduler& s = m_job->scheduler();
  return s.pending_blocks() == 0 && s.outstanding_blocks() > 0 && m_config.max_copies > 1;
}

double ServedJob::progress() const {
  const Scheduler& s = m_job->scheduler();
  return s.total_pixels() > 0 ? static_cast<double>(s.completed_pixels()) / static_cast<double>(s.total_pixels()) : 0.0;
}


void ServedJob::turn() {
  const Scheduler& scheduler = m_job->scheduler();
  m_journal->sync_if_due();
  m_progress.update(now(), scheduler.completed_pixels(), scheduler.completed_blocks(), scheduler.outstanding_blocks(),
                    scheduler.live_workers(), m_sitting_out.size(), m_job->stats().accepted_rays());
  if (m_live) m_live->maybe_publish(now(), *m_job);
}

void ServedJob::failed(const std::string& why) {
  spdlog::error("{}: no image written{}", why, m_journal->stop_hint(m_job->scheduler().completed_blocks()));
  live_finished("failed: " + why);
}

RunStatus ServedJob::finish(const std::function<std::vector<std::string>()>& served_stats) {
  const double makespan = now();
  m_makespan = makespan;
  m_progress.done(makespan);
  for (WorkerId member : m_members) m_endpoint->send(member, proto::JobDone{m_job_id});
  const bool journal_whole = m_journal->close();
  std::vector<std::string> written;
  try {
    written = m_store->write_all(m_o.render.output_path, m_frames.size() > 1);
  } catch (const std::exception& e) {
    refuse(error_text(e));
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
  std::vector<std::string> fields = served_stats();
  fields.insert(fields.end(), {json_field("resumed_blocks", m_journal->resumed_blocks()),
                               json_field("journal_epoch", m_journal->epoch()), json_field("recalls", m_recalls.recalls()),
                               json_field("recalled_blocks", m_recalls.recalled_blocks())});
  bool outputs_whole = write_job_outputs(m_o, m_desc.settings, m_frames, *m_store, *m_job, makespan, fields);
  if (m_trace) {
    m_trace->close();
    if (!*m_trace) {
      spdlog::error("the trace '{}' is incomplete: a write to it failed (is the disk full?)", m_o.trace_path);
      outputs_whole = false;
    }
  }
  return outputs_whole ? RunStatus::ok : RunStatus::failure;
}

}  // namespace farm
