#!/usr/bin/env python3
"""Fails (exit 1) when a source of renderer/ or farm/ includes a layer it may not use, when the
table lists a use that no include draws, or when the layers form a cycle.

Every top folder of renderer/ and of farm/ is a layer (a static library, see the two
CMakeLists.txt). A layer may use only the layers listed for it: its direct uses, not their
closure, and every listed use is drawn by some include, so this table, docs/architecture.md's and
the includes agree arrow for arrow; the table must stay acyclic. A farm/ source names a renderer
layer by its include path (`scene/...`), as the build's include directories do, so the two
libraries must not share a folder name.
Usage: check_layers.py [ROOT]  (ROOT holds renderer/ and farm/; default: this repository)
"""
import os
import re
import sys

USES = {
    # The renderer, bottom to top.
    "renderer/math": [],
    "renderer/embree": [],
    "renderer/image": [],
    "renderer/scene": ["renderer/math"],
    "renderer/sampling": ["renderer/math", "renderer/scene"],
    "renderer/shading": ["renderer/math", "renderer/sampling", "renderer/scene", "renderer/image"],
    "renderer/mesh": ["renderer/math", "renderer/scene"],
    "renderer/world": ["renderer/embree", "renderer/mesh", "renderer/sampling", "renderer/scene", "renderer/shading"],
    "renderer/integrators": ["renderer/math", "renderer/sampling", "renderer/shading", "renderer/world"],
    "renderer/render": ["renderer/math", "renderer/sampling", "renderer/scene", "renderer/world", "renderer/integrators"],
    # The farm, bottom to top.
    "farm/base": [],
    "farm/scheduler": ["farm/base"],
    "farm/security": ["farm/base"],
    "farm/session": [],
    "farm/control": ["farm/base", "farm/scheduler"],
    "farm/costs": ["farm/base", "farm/scheduler", "renderer/scene", "renderer/world", "renderer/render"],
    "farm/protocol": ["farm/base", "farm/scheduler", "renderer/scene", "renderer/image"],
    "farm/transport": ["farm/protocol", "farm/security"],
    "farm/serving": ["farm/base", "farm/scheduler", "farm/protocol", "farm/transport"],
    "farm/assets": ["farm/base", "farm/protocol", "renderer/scene"],
    "farm/backend": ["farm/scheduler", "renderer/scene", "renderer/image", "renderer/world", "renderer/render"],
    "farm/job": ["farm/base", "farm/assets", "farm/protocol", "farm/backend", "renderer/scene", "renderer/image"],
    "farm/sim": ["farm/base", "farm/scheduler", "farm/control", "farm/costs", "renderer/scene"],
    "farm/live": ["farm/base", "renderer/image"],
    "farm/queue": ["farm/base"],
    "farm/master": ["farm/base", "farm/scheduler", "farm/job", "farm/backend", "farm/control", "farm/costs",
                    "farm/protocol", "farm/transport", "farm/serving", "farm/security", "farm/assets", "farm/live", "renderer/image"],
    "farm/worker": ["farm/base", "farm/scheduler", "farm/job", "farm/backend", "farm/protocol", "farm/transport", "farm/security", "farm/assets",
                    "farm/session", "renderer/world"],
    "farm/relay": ["farm/base", "farm/scheduler", "farm/control", "farm/job", "farm/protocol", "farm/transport", "farm/security", "farm/assets",
                   "farm/session", "farm/serving"],
    "farm/service": ["farm/base", "farm/scheduler", "farm/job", "farm/backend", "farm/control", "farm/protocol", "farm/transport",
                     "farm/serving", "farm/security", "farm/assets", "farm/queue", "farm/live", "farm/master", "renderer/scene"],
    "farm/launch": ["farm/base", "farm/security"],
    "farm/cli": ["farm/base", "farm/scheduler", "farm/service", "farm/master", "farm/worker", "farm/relay", "farm/sim", "farm/job", "farm/backend",
                 "farm/costs", "farm/transport", "farm/security", "farm/launch", "renderer/scene", "renderer/image",
                 "renderer/world", "renderer/render"],
}
LIBRARIES = ("renderer", "farm")
# Generated headers quoted with "" that belong to one layer.
GENERATED = {"messages_generated.h": "farm/protocol"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def closure(layer, seen=None):
    seen = set() if seen is None else seen
    for dep in USES.get(layer, []):
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen


def folders(root, library):
    path = os.path.join(root, library)
    return sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))


def sources(root, library, folder):
    for directory, _, names in sorted(os.walk(os.path.join(root, library, folder))):
        for name in sorted(names):
            if name.endswith((".h", ".cpp")):
                yield os.path.join(directory, name)


def main(root):
    problems = [f"tools/check_layers.py: layer '{layer}' reaches itself through its uses (a cycle)"
                for layer in USES if layer in closure(layer)]
    problems += [f"tools/check_layers.py: layer '{layer}' uses '{dep}', which is not a layer"
                 for layer, deps in USES.items() for dep in deps if dep not in USES]
    # Which layer an include path's first folder names, as seen from each library.
    renderer_dirs = folders(root, "renderer")
    farm_dirs = folders(root, "farm")
    problems += [f"farm/{d}/ and renderer/{d}/: one folder name in both libraries (includes could not tell them apart)"
                 for d in sorted(set(renderer_dirs) & set(farm_dirs))]
    reach = {"renderer": {d: f"renderer/{d}" for d in renderer_dirs}}
    reach["farm"] = dict(reach["renderer"], **{d: f"farm/{d}" for d in farm_dirs})
    seen = {layer: set() for layer in USES}  # the uses the includes draw
    for library in LIBRARIES:
        for folder in folders(root, library):
            layer = f"{library}/{folder}"
            if layer not in USES:
                problems.append(f"{layer}/: a folder that is not a known layer (add it to tools/check_layers.py)")
                continue
            allowed = set(USES[layer]) | {layer}
            for path in sources(root, library, folder):
                shown = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target in GENERATED:
                            used = GENERATED[target]
                        elif "/" in target:
                            first = target.split("/")[0]
                            used = reach[library].get(first, f"{first}/ (no such layer)")
                        else:
                            used = layer  # a header beside the source
                        seen[layer].add(used)
                        if used not in allowed:
                            may = ", ".join(sorted(allowed - {layer})) or "nothing"
                            problems.append(f"{shown}:{number}: includes \"{target}\": layer '{layer}' may not use "
                                            f"{used} (it may use: {may})")
    # The table lists what is used, not more: an arrow no include draws is a stale arrow.
    problems += [f"tools/check_layers.py: layer '{layer}' lists '{dep}', but none of its files includes it"
                 for layer in USES if os.path.isdir(os.path.join(root, layer))
                 for dep in USES[layer] if dep not in seen[layer]]
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
