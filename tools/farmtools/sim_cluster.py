"""The one writer of `farm sim` / `farm plan` cluster files (the format of docs/cli.md, "farm sim";
parsed by farm/sim/cluster_spec.cpp, which also rejects unknown keys).

    text = cluster_text([{"name": "lab", "count": 4, "speed": (0.5, 1.0), "startup": 0.5}],
                        network={"latency_ms": 0.1}, per_block_overhead_ms=0.15, comment="...")
    write_cluster(path, groups, ...)          # the same text, written to `path`

Groups and sites are dicts of keys as the file spells them, written in the order given. Values:
an int as itself; a float with 6 significant digits (`:.6g`, what every tool wrote before); a
(low, high) pair as `[low, high]`, or as one number if low == high; a string quoted; a bool as
true/false.
"""
import json


def toml_value(v):
    """One value as the cluster file writes it (see the module docstring)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for anything a name holds
    if isinstance(v, (tuple, list)) and len(v) == 2:
        lo, hi = v
        return toml_value(lo) if lo == hi else f"[{toml_value(lo)}, {toml_value(hi)}]"
    raise TypeError(f"a cluster file value is a number, a string, a bool or a (low, high) pair, not {v!r}")


def _table(header, entries):
    lines = [header] if header else []
    for key, value in entries.items():
        if value is not None:  # None: leave the key out (the file's default)
            lines.append(f"{key} = {toml_value(value)}")
    return lines + [""]


def cluster_text(groups, sites=(), network=None, per_block_overhead_ms=None, comment=None):
    """The cluster file's text: optional comment lines, per_block_overhead_ms, [network] (the
    links' defaults), one [[site]] per site, one [[group]] per group."""
    if not groups:
        raise ValueError("a cluster file needs at least one [[group]]")
    out = [f"# {line}" for line in comment.splitlines()] if comment else []
    if per_block_overhead_ms is not None:
        out.append(f"per_block_overhead_ms = {toml_value(per_block_overhead_ms)}")
    if out:
        out.append("")
    if network:
        out += _table("[network]", network)
    for s in sites:
        out += _table("[[site]]", s)
    for g in groups:
        out += _table("[[group]]", g)
    return "\n".join(out)


def write_cluster(path, groups, **kw):
    """Writes cluster_text(groups, **kw) to `path`; returns `path`."""
    with open(path, "w") as f:
        f.write(cluster_text(groups, **kw))
    return path
