#!/usr/bin/env python3
"""A delaying TCP proxy for emulating slow networks on one machine (this kernel has no netem).

Listens on LISTEN (host:port, port 0 = any free one, printed on stdout as "listening on
host:port"), forwards every connection to TARGET, and delays each direction independently:
bytes become available to the far side after `delay` (+ uniform jitter in [0, jitter]) and no
faster than `bandwidth` bytes/s. Byte order is preserved (jitter never reorders a stream).

  tools/net/delay_proxy.py --listen 127.0.0.1:0 --target 127.0.0.1:5555 \\
      --delay-ms 5 --jitter-ms 1 --mbit 10            # both directions
  ... --up-delay-ms 20 --down-mbit 2                  # per direction (up = client -> target)
  ... --mbit 20 --shared-link                         # one 20 Mbit/s link for all connections

By default each connection gets its own bandwidth (as if each had its own line); --shared-link
makes all connections queue on one link per direction, as a site's WAN uplink does.

Presets for the paper's networks: --preset lab (one switch) and --preset dorm (several
switches); their delays and bandwidths are listed at the end of --help and defined in
tools/farmtools/networks.py, the table the sweeps, simulator and report read too.

Fault injection (all off by default; drawn from --seed; each fault is logged on stderr as
"fault KIND conn N ..." so a test can count them):
  --spike-prob P --spike-ms D   each forwarded chunk is held D ms longer with probability P
                                (the stream behind it waits too: order is kept)
  --reset-rate R                R times per second (Poisson), a random open connection is
                                killed with a TCP reset on both sides
  --stall-rate R --stall-s S    R times per second, a random open connection stops forwarding
                                in both directions for S seconds (bytes are kept, then released)
"""
import argparse
import asyncio
import random
import socket
import struct
import sys
import os
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools.networks import PRESETS, describe  # noqa: E402


def log_fault(text):
    print(f"fault {text} t={time.monotonic():.3f}", file=sys.stderr, flush=True)


class Connection:
    """One proxied connection: its two writers (to kill it) and its stall deadline."""

    def __init__(self, number, writers):
        self.number = number
        self.writers = writers
        self.stalled_until = 0.0

    def reset(self):
        for w in self.writers:
            sock = w.get_extra_info("socket")
            try:
                if sock is not None:  # linger 0: close() sends RST instead of FIN
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            w.transport.abort()


class Link:
    """When an emulated link finishes serialising what it was given; shared by the connections
    of a --shared-link proxy, one per direction."""

    def __init__(self):
        self.free_at = 0.0


class Direction:
    def __init__(self, delay_s, jitter_s, bytes_per_s, rng, spike_prob=0.0, spike_s=0.0, conn=None, link=None):
        self.delay = delay_s
        self.jitter = jitter_s
        self.rate = bytes_per_s  # 0 = unlimited
        self.rng = rng
        self.spike_prob = spike_prob
        self.spike = spike_s
        self.conn = conn
        self.link = link or Link()
        self.last_release = 0.0

    def schedule(self, now, size):
        # Serialisation on the bottleneck link, then propagation delay (+ jitter).
        start = max(now, self.link.free_at)
        done = start + (size / self.rate if self.rate > 0 else 0.0)
        self.link.free_at = done
        release = done + self.delay + (self.rng.uniform(0, self.jitter) if self.jitter > 0 else 0.0)
        if self.spike_prob > 0 and self.rng.random() < self.spike_prob:
            release += self.spike
            log_fault(f"spike conn {self.conn.number if self.conn else '?'} {self.spike * 1e3:.0f}ms")
        release = max(release, self.last_release)  # never reorder the byte stream
        self.last_release = release
        return release


async def pump(reader, writer, direction, chunk):
    queue = asyncio.Queue()

    async def deliver():
        while True:
            item = await queue.get()
            if item is None:
                break
            release, data = item
            wait = release - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            while direction.conn and direction.conn.stalled_until > time.monotonic():
                await asyncio.sleep(direction.conn.stalled_until - time.monotonic())
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    task = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(chunk)
            if not data:
                break
            queue.put_nowait((direction.schedule(time.monotonic(), len(data)), data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait(None)
    try:
        await task
    except (ConnectionError, OSError):
        pass


OPEN_CONNECTIONS = {}  # number -> Connection, for the fault injectors
SHARED_LINKS = {}  # "up"/"down" -> Link with --shared-link
CONNECTION_COUNT = 0


async def inject(rate, rng, fault):
    """Applies `fault` to a random open connection, `rate` times per second on average."""
    while True:
        await asyncio.sleep(rng.expovariate(rate))
        if OPEN_CONNECTIONS:
            fault(OPEN_CONNECTIONS[rng.choice(sorted(OPEN_CONNECTIONS))])


def reset_fault(conn):
    log_fault(f"reset conn {conn.number}")
    OPEN_CONNECTIONS.pop(conn.number, None)
    conn.reset()


def stall_fault(seconds):
    def stall(conn):
        log_fault(f"stall conn {conn.number} {seconds:.3f}s")
        conn.stalled_until = max(conn.stalled_until, time.monotonic() + seconds)
    return stall


async def handle(client_reader, client_writer, args, rng):
    try:
        target_reader, target_writer = await asyncio.open_connection(args.target_host, args.target_port)
    except OSError:
        client_writer.close()
        return
    global CONNECTION_COUNT
    CONNECTION_COUNT += 1
    conn = Connection(CONNECTION_COUNT, (client_writer, target_writer))
    OPEN_CONNECTIONS[conn.number] = conn
    spike = dict(spike_prob=args.spike_prob, spike_s=args.spike_ms / 1e3, conn=conn)
    up = Direction(args.up_delay / 1e3, args.up_jitter / 1e3, args.up_rate, rng, link=SHARED_LINKS.get("up"), **spike)
    down = Direction(args.down_delay / 1e3, args.down_jitter / 1e3, args.down_rate, rng, link=SHARED_LINKS.get("down"),
                     **spike)
    # Small chunks keep the bandwidth emulation smooth for large transfers.
    try:
        await asyncio.gather(pump(client_reader, target_writer, up, args.chunk),
                             pump(target_reader, client_writer, down, args.chunk))
    finally:
        OPEN_CONNECTIONS.pop(conn.number, None)
    for w in (client_writer, target_writer):
        try:
            w.close()
        except OSError:
            pass


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="presets: " + "; ".join(f"{n} = {describe(n)}" for n in PRESETS))
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--target", required=True)
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--delay-ms", type=float, default=0.0, help="one-way delay, both directions")
    ap.add_argument("--jitter-ms", type=float, default=0.0, help="extra uniform delay in [0, jitter]")
    ap.add_argument("--mbit", type=float, default=0.0, help="bandwidth cap per direction (0 = none)")
    for d in ("up", "down"):
        ap.add_argument(f"--{d}-delay-ms", type=float)
        ap.add_argument(f"--{d}-jitter-ms", type=float)
        ap.add_argument(f"--{d}-mbit", type=float)
    ap.add_argument("--shared-link", action="store_true",
                    help="all connections share one link per direction (its bandwidth), like a site's uplink")
    ap.add_argument("--chunk", type=int, default=16384)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spike-prob", type=float, default=0.0, help="probability that a chunk gets a delay spike")
    ap.add_argument("--spike-ms", type=float, default=0.0, help="length of a delay spike")
    ap.add_argument("--reset-rate", type=float, default=0.0, help="connection resets per second (whole proxy)")
    ap.add_argument("--stall-rate", type=float, default=0.0, help="stalls per second (whole proxy)")
    ap.add_argument("--stall-s", type=float, default=0.0, help="length of a stall in seconds")
    args = ap.parse_args(argv)
    if not 0 <= args.spike_prob <= 1 or args.spike_ms < 0 or args.reset_rate < 0 or args.stall_rate < 0 or args.stall_s < 0:
        ap.error("fault probabilities must be in [0, 1], rates and lengths >= 0")
    base = dict(delay_ms=args.delay_ms, jitter_ms=args.jitter_ms, mbit=args.mbit)
    if args.preset:
        base.update(PRESETS[args.preset]._asdict())
    for d in ("up", "down"):
        delay = getattr(args, f"{d}_delay_ms")
        jitter = getattr(args, f"{d}_jitter_ms")
        mbit = getattr(args, f"{d}_mbit")
        setattr(args, f"{d}_delay", base["delay_ms"] if delay is None else delay)
        setattr(args, f"{d}_jitter", base["jitter_ms"] if jitter is None else jitter)
        rate_mbit = base["mbit"] if mbit is None else mbit
        setattr(args, f"{d}_rate", rate_mbit * 1e6 / 8)
        if getattr(args, f"{d}_delay") < 0 or getattr(args, f"{d}_jitter") < 0 or rate_mbit < 0:
            ap.error("delays, jitter and bandwidth must be >= 0")
    host, _, port = args.listen.rpartition(":")
    args.listen_host, args.listen_port = host or "127.0.0.1", int(port)
    host, _, port = args.target.rpartition(":")
    args.target_host, args.target_port = host.replace("tcp://", "") or "127.0.0.1", int(port)
    return args


async def main(argv):
    args = parse(argv)
    if args.shared_link:
        SHARED_LINKS.update(up=Link(), down=Link())
    rng = random.Random(args.seed)
    server = await asyncio.start_server(lambda r, w: handle(r, w, args, rng), args.listen_host, args.listen_port)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"listening on {host}:{port}", flush=True)
    faults = random.Random(args.seed + 1)  # its own stream: faults do not shift the jitter draws
    injectors = []
    if args.reset_rate > 0:
        injectors.append(asyncio.ensure_future(inject(args.reset_rate, faults, reset_fault)))
    if args.stall_rate > 0 and args.stall_s > 0:
        injectors.append(asyncio.ensure_future(inject(args.stall_rate, faults, stall_fault(args.stall_s))))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1:]))
    except KeyboardInterrupt:
        pass
