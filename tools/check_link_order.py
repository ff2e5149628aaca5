#!/usr/bin/env python3
"""Fails (exit 1) when a built executable would take tinygltf's symbols from libdraco: libdraco
(assimp's dependency) exports an older copy of tinygltf's classes with another object layout, and
the runtime linker takes a symbol from the first library in the executable's dependency order
(DT_NEEDED, breadth first). So wherever libdraco is a direct dependency, libtinygltf must be one
too, listed before it; and an executable that uses glTF must list libtinygltf itself.
Usage: check_link_order.py EXECUTABLE...   (reads `readelf -d`)
"""
import subprocess
import sys


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


def problem(path):
    libs = needed(path)
    position = {name.split(".so")[0]: i for i, name in enumerate(libs)}
    gltf, draco = position.get("libtinygltf"), position.get("libdraco")
    if gltf is None:
        return f"{path}: libtinygltf is not among its direct dependencies ({', '.join(libs)})"
    if draco is not None and draco < gltf:
        return f"{path}: libdraco comes before libtinygltf in its dependencies: glTF calls would reach draco's copy"
    return None


def main(paths):
    problems = [p for p in map(problem, paths) if p]
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
