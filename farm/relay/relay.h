// `farm relay`: one participant of a job for a whole site (docs/relays.md). Upstream it is a
// worker of its master (or of a relay above it): it joins, fetches the scene and its assets
// once for the site, and leases blocks in bulk, enough that its workers never wait on the link
// to the master. Downstream it is a master to the site's workers, which cannot tell the
// difference: the same Welcome, assets from the relay's cache, blocks from its queue
// (control/relay_queue.h), results passed upstream unchanged (the master checks and assembles them,
// so the image stays the master's, byte for byte).
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "job/run_status.h"
#include "security/socket_security.h"

namespace farm {

struct RelayOptions {
  std::string connect;  // the master (or a relay above), e.g. tcp://master:5555
  std::string bind;     // where the site's workers connect, e.g. tcp://*:5556
  // CURVE on each side, decided by the CLI (cli/socket_keys.h) as for a worker upstream and a
  // master downstream. Empty = plaintext: refused off loopback unless `insecure`.
  std::optional<security::CurveClient> upstream_curve;
  std::optional<security::CurveServer> site_curve;
  bool insecure = false;
  std::string name;       // shown by the master; empty = relay-host-pid
  // The site's render threads, announced to the master when the relay joins it (the master's
  // policy sizes and counts leases by them: at most 2 x threads + 8 at once). 0 = join once
  // `workers` site workers have said hello, announcing their threads.
  int threads = 0;
  int workers = 1;
  // Unstarted blocks held beyond what the site's workers hold, at least: they cover the round trip
  // to the master (a worker that finishes takes one at once while the relay asks for more); more
  // when the measured round trip at the site's pace needs more (relay_spare).
  int spare = 4;
  std::string cache_dir;       // the site's copy of the job's files; empty = default_cache_dir()
  bool once = false;           // exit after one job
  double give_up_after = 0;    // > 0: exit 1 after this long without a master (waiting for the site
                               // workers before joining one counts: docs/relays.md, Failures)
  const std::atomic<bool>* stop = nullptr;
  // Called once the site socket is bound, with the actual endpoint (port resolved).
  std::function<void(const std::string& endpoint)> on_bound;
  // Called when a site worker (by its name) joins the relay or is forgotten, silent: the master
  // sees only the relay, so a launcher learns of the site's workers here.
  std::function<void(const std::string& name, bool joined)> on_site_worker_change;
  // >= 0: the end of this file stops the relay with a failure (a launched relay's standard
  // input, its lifeline: the launcher, and so the job, is gone). -1: none.
  int lifeline_fd = -1;
};

// ok after a job (with once) or when stopped; failure when the master is lost for good or the
// cache cannot be used; bad_input for a master of another protocol or an endpoint that cannot be
// served.
RunStatus run_relay(const RelayOptions& options);

}  // namespace farm
