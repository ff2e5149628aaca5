#!/usr/bin/env python3
"""Fails (exit 1) when a farm/ source includes a layer it may not use.

The layers and what each may use directly mirror farm/CMakeLists.txt; a layer may also use
whatever its allowed layers use (the closure). `renderer` stands for every folder of the
renderer library (scene/, image/, render/, ...). Usage: check_layers.py FARM_DIR
"""
import os
import re
import sys

RENDERER = "renderer"
USES = {
    "base": [],
    "scheduler": ["base"],
    "security": ["base"],
    "control": ["scheduler"],
    "costs": ["scheduler", RENDERER],
    "protocol": ["scheduler", RENDERER],
    "assets": ["protocol"],
    "backend": ["scheduler", RENDERER],
    "job": ["assets", "protocol", "backend", RENDERER],
    "sim": ["control", "costs", RENDERER],
    "live": ["base", RENDERER],
    "master": ["job", "control", "costs", "protocol", "security", "assets", "live"],
    "worker": ["job", "protocol", "security", "assets"],
    "launch": ["security"],
    "cli": ["master", "worker", "sim", "job", "launch"],
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
    problems = []
    for layer in sorted(os.listdir(farm_dir)):
        path = os.path.join(farm_dir, layer)
        if not os.path.isdir(path):
            continue
        if layer not in USES:
            problems.append(f"farm/{layer}/: a folder that is not a known layer (add it to tools/check_layers.py)")
            continue
        allowed = closure(layer) | {layer}
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
