// A relay per site of a host file (`site=NAME`, docs/cli.md): which hosts form each site, where
// a site's relay listens and is reached, and what a launched relay (`farm relay --launched`)
// tells its launcher on its standard output. The launcher (launch/worker_launcher.h) starts the
// relay on the site's first host and points the site's workers at it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "launch/host_file.h"

namespace farm {

// The lines a launched relay writes on its standard output for its launcher, one each, flushed
// (its log lines share that output and never start so):
//   farm-relay-host NAME                      the host it runs on (its host name), just before:
//   farm-relay-bound tcp://0.0.0.0:PORT       its site socket is bound (the resolved endpoint)
//   farm-relay-site-worker joined NAME        a site worker joined it
//   farm-relay-site-worker left NAME          a site worker was forgotten (silent)
// The master sees only the relay; the site's workers reach the launcher this way. A launcher that
// knows the host (a host file's line) ignores the host line; one that does not (a Slurm step,
// placed by srun) points the workers at it.
inline constexpr char k_relay_line_marker[] = "farm-relay-";
inline constexpr char k_relay_host[] = "farm-relay-host ";
inline constexpr char k_relay_bound[] = "farm-relay-bound ";
inline constexpr char k_relay_site_worker_joined[] = "farm-relay-site-worker joined ";
inline constexpr char k_relay_site_worker_left[] = "farm-relay-site-worker left ";

struct Site {
  std::string name;
  std::vector<size_t> hosts;  // indexes into the host list, in its order; the first runs the relay
};

// The sites of `hosts` (from the host file `path`), in the order of their first hosts. Throws
// HostFileError naming the file and the site's first line for a site of more hosts than one
// relay's launch secrets admit (security/launch_secrets.h).
std::vector<Site> sites_of(const std::vector<HostSpec>& hosts, const std::string& path);

// The port of a "farm-relay-bound tcp://ADDRESS:PORT" line, 0 if the line is not one.
int bound_port(const std::string& line);

// The host of a "farm-relay-host NAME" line; "" if the line is not one, or NAME is not a plain
// host name (host_file.h: a worker's --connect carries it).
std::string reported_host(const std::string& line);

// What the relay binds on `host`: every IPv4 address, and every IPv6 one for a host written as
// an IPv6 address (the site's workers reach it at that address).
std::string relay_bind(const HostSpec& host);

// Where the site's workers reach the relay: tcp://HOST:PORT with the host's name as the host
// file writes it (an IPv6 address in brackets); not an ssh alias's HostName.
std::string relay_endpoint(const HostSpec& host, int port);

}  // namespace farm
