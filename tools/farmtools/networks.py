"""The emulated networks, in one table: every tool that names a network (clusters.toml, tools/sweep
--networks, the delaying proxy's --preset, the simulator's cluster files, plots and report) reads
its delay and bandwidth from here, so a preset cannot mean one thing to the proxy and another to
the plots.

A network name is "loopback" (direct, no proxy), a preset below, or "<N>ms" / "<N>ms/<M>mbit"
(one-way delay, bandwidth cap per direction). A per-worker mix as the sweep CSV writes it
("lab:4,dorm:2") is understood where only its delay matters.
"""
import math
import re
from typing import NamedTuple


class Link(NamedTuple):
    delay_ms: float   # one way, each direction
    jitter_ms: float  # extra uniform delay in [0, jitter], each direction
    mbit: float       # bandwidth cap per direction, 0 = none


# The paper's networks (section 4.3): the lab behind one switch, the dormitory behind several.
PRESETS = {
    "lab": Link(delay_ms=0.1, jitter_ms=0.0, mbit=100.0),
    "dorm": Link(delay_ms=2.0, jitter_ms=1.0, mbit=10.0),
}

NETWORK_RE = re.compile(r"^(\d+(?:\.\d+)?)ms(?:/(\d+(?:\.\d+)?)mbit)?$")


def proxy_args(network, where="network"):
    """delay_proxy.py arguments for a network name, None for a direct (loopback) connection;
    an unknown name exits naming `where` (the option or file entry it came from)."""
    if network == "loopback":
        return None
    if network in PRESETS:
        return ["--preset", network]
    m = NETWORK_RE.match(network)
    if not m:
        raise SystemExit(f"{where}: unknown network {network!r} (loopback, {', '.join(PRESETS)}, "
                         "<N>ms or <N>ms/<M>mbit)")
    args = ["--delay-ms", m.group(1)]
    if m.group(2):
        args += ["--mbit", m.group(2)]
    return args


def one_way_delay_ms(network):
    """One-way delay of a network name, for ordering tables and plots by latency; a per-worker mix
    ('lab:4,dorm:2') takes its slowest link; an unknown name sorts last (inf)."""
    delays = []
    for part in (network or "").split(","):
        name = part.split(":")[0].strip()
        if name == "loopback":
            delays.append(0.0)
        elif name in PRESETS:
            delays.append(PRESETS[name].delay_ms)
        else:
            m = re.match(r"(\d+(?:\.\d+)?)\s*ms", name)
            delays.append(float(m.group(1)) if m else math.inf)
    return max(delays) if delays else math.inf


def describe(name):
    """A preset in words, for reports and help texts: '2 ms + up to 1 ms jitter and 10 Mbit/s'."""
    p = PRESETS[name]
    jitter = f" + up to {p.jitter_ms:g} ms jitter and" if p.jitter_ms else " one way and"
    return f"{p.delay_ms:g} ms{jitter} {p.mbit:g} Mbit/s"
