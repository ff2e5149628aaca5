// `farm serve`: a long-lived farm service. One ZeroMQ endpoint serves workers (the protocol, keys
// and allow-lists of `farm master`) and clients (`farm submit`, `farm jobs`, ...: ServiceCall
// messages) alike; a state folder holds the durable queue (queue/job_store.h, SQLite), the
// uploaded files (content-addressed, as a worker's cache keeps them) and each job's journal and
// images. Every job is a ServedJob (master/served_job.h), the very one `farm master` serves;
// this host decides which job a worker serves (control/job_dispatch.h) and moves it between
// jobs between blocks. docs/service.md.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "job/run_status.h"
#include "master/master_options.h"
#include "security/socket_security.h"

namespace farm {

struct ServiceOptions {
  std::string state_dir;                      // created if missing
  std::string bind = "tcp://127.0.0.1:5555";  // not loopback: needs `curve`, or `insecure`
  std::optional<security::CurveServer> curve;  // keys of workers and clients that may connect
  bool insecure = false;
  // Z85 public keys that may pause, resume, cancel and reprioritise any job (a job's owner may
  // always control its own).
  std::set<std::string> admins;
  // Names of keys, for people to read (the allow-lists' file names: alice.pub is "alice"); a
  // job's owner is shown by its name where it has one, else by its key's first characters.
  std::map<std::string, std::string> key_names;
  // What every job is served with: heartbeats and liveness (its scheduling's other fields come
  // from each submission).
  MasterOptions job_defaults;
  // The service's page (live/queue_server.h): "ADDRESS:PORT" (port 0: any free one), "" = none.
  // Off loopback it needs a token; whoever has the token may control every job from the page.
  std::string http;
  std::string http_token;
  uint64_t max_upload_bytes = uint64_t{16} << 30;  // the files of one submission, together
  size_t max_unfinished_jobs = 10000;              // queued, running and paused at once
  std::function<void(const std::string&)> on_bound;  // the endpoint, its port resolved
  const std::atomic<bool>* stop = nullptr;            // set: the service stops (jobs resume at restart)
};

// Serves until stopped: ok; failure (cannot bind, the database failed); bad_input (the state
// folder or keys unusable).
RunStatus run_service(const ServiceOptions& options);

}  // namespace farm
