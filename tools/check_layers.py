#!/usr/bin/env python3
"""Fails (exit 1) when a farm/ source includes a layer it may not use, or the layers form a cycle.

A layer may use only the layers listed for it (its direct uses, not their closure), so this table,
docs/architecture.md's and the includes agree arrow for arrow; the table must stay acyclic. It
mirrors farm/CMakeLists.txt. `renderer` stands for every folder of the renderer library (scene/,
image/, render/, ...). Usage: check_layers.py FARM_DIR
"""
import os
import re
import sys

RENDERER = "renderer"
USES = {
    "base": [],
    "scheduler": ["base"],
    "security": ["base"],
    "control": ["base", "scheduler"],
    "costs": ["base", "scheduler", RENDERER],
    "protocol": ["base", "scheduler", RENDERER],
    "assets": ["base", "protocol", RENDERER],
    "backend": ["scheduler", RENDERER],
    "job": ["base", "assets", "protocol", "backend", RENDERER],
    "sim": ["base", "scheduler", "control", "costs", RENDERER],
    "live": ["base", RENDERER],
    "master": ["base", "scheduler", "job", "backend", "control", "costs", "protocol", "security", "assets", "live",
               RENDERER],
    "worker": ["scheduler", "job", "backend", "protocol", "security", "assets", RENDERER],
    "launch": ["base", "security"],
    "cli": ["base", "scheduler", "master", "worker", "sim", "job", "backend", "costs", "protocol", "security", "launch",
            RENDERER],
}
# Generated or third-party headers quoted with "" that belong to one layer.
GENERATED = {"messages_generated.h": "protocol"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def closure(layer, seen=None):
    seen = set() if seen is None else seen
    for dep in USES[layer]:
        if dep not in seen:
            seen.add(dep)
            if dep in USES:
                closure(dep, seen)
    return seen


def main(farm_dir):
    renderer_dirs = set(os.listdir(os.path.join(farm_dir, "..", "renderer")))
    problems = [f"tools/check_layers.py: layer '{layer}' reaches itself through its uses (a cycle)"
                for layer in USES if layer in closure(layer)]
    for layer in sorted(os.listdir(farm_dir)):
        path = os.path.join(farm_dir, layer)
        if not os.path.isdir(path):
            continue
        if layer not in USES:
            problems.append(f"farm/{layer}/: a folder that is not a known layer (add it to tools/check_layers.py)")
            continue
        allowed = set(USES[layer]) | {layer}
        for name in sorted(os.listdir(path)):
            if not name.endswith((".h", ".cpp")):
                continue
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target in GENERATED:
                        ok = GENERATED[target] == layer
                        used = GENERATED[target]
                    else:
                        used = target.split("/")[0] if "/" in target else layer
                        if used in USES:
                            ok = used in allowed
                        elif used in renderer_dirs:
                            ok, used = RENDERER in allowed, RENDERER + f" ({used}/)"
                        else:
                            ok = False
                    if not ok:
                        problems.append(f"farm/{layer}/{name}:{number}: includes \"{target}\": layer '{layer}' may not use {used} "
                                        f"(it may use: {', '.join(sorted(allowed - {layer})) or 'nothing'})")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "farm")))
