#!/usr/bin/env python3
"""What textures cost: load time, render time and peak memory of `farm single` with 2 threads on
the textured Sponza (OBJ + 17 JPEGs) and DamagedHelmet (glTF, four 2048^2 JPEGs), each with its
textures (texture cache capped at 1024 MiB, and at 128 MiB) and without them (the same geometry with
one grey material), measured side by side in one run, median of --reps.
Needs ../shared/scenes. Writes results/bench_textures.md.
Usage: tools/bench/textured_scenes.py [--farm PATH] [--reps N] [--out FILE]"""
import argparse, os, re, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "scenes")

SPONZA_CAMERA = "[camera]\nposition = [-12.0, 4.0, 0.0]\nlook_at = [10.0, 6.0, 0.0]\nfov = 60.0\n"
SPONZA_LIGHT = "[[light]]\ntype = \"point\"\nposition = [0.0, 12.0, 0.0]\nintensity = 300\n"


def untextured_toml(mesh, camera, extra):
    """The same geometry with one grey material: what the textures add is the difference."""
    return (f"[render]\nwidth = 640\nheight = 480\nspp = 16\nmax_depth = 4\n{camera}{extra}"
            "[[material]]\nname = \"grey\"\ntype = \"diffuse\"\nalbedo = 0.6\n"
            f"[[object]]\ntype = \"mesh\"\npath = \"{mesh}\"\nmaterial = \"grey\"\n")


def run(farm, scene, extra_args):
    # The meshes lie in ../shared/scenes, outside the generated scene's folder: an asset folder.
    out = subprocess.run([farm, "single", scene, "-o", os.devnull + ".exr", "--threads", "2", "--assets", SHARED] + extra_args,
                         capture_output=True, text=True)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        raise RuntimeError(f"farm single {scene} failed:\n{text}")
    value = lambda key: float(re.search(key + r"\s+([0-9.]+)", text).group(1))
    return value("Load time"), value("Render time"), value("Peak memory")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "results/bench_textures.md"))
    a = ap.parse_args()
    if not os.path.isdir(SHARED):
        print("skipped: ../shared/scenes is absent", file=sys.stderr)
        return 0
    sponza = os.path.join(SHARED, "sponza-dabrovic/sponza.obj")
    helmet = os.path.join(SHARED, "damaged-helmet/DamagedHelmet.gltf")
    tmp = tempfile.mkdtemp()
    sponza_textured = os.path.join(tmp, "sponza.toml")
    with open(sponza_textured, "w") as f:
        f.write("[render]\nwidth = 640\nheight = 480\nspp = 16\nmax_depth = 4\n" + SPONZA_CAMERA + SPONZA_LIGHT +
                f"[[object]]\ntype = \"mesh\"\npath = \"{sponza}\"\nsmooth = false\n")
    sponza_plain = os.path.join(tmp, "sponza_plain.toml")
    with open(sponza_plain, "w") as f:
        f.write(untextured_toml(sponza, SPONZA_CAMERA, SPONZA_LIGHT))
    helmet_plain = os.path.join(tmp, "helmet_plain.toml")
    with open(helmet_plain, "w") as f:
        f.write(untextured_toml(helmet, "[camera]\nposition = [1.0, 0.86, 2.9]\nlook_at = [0, 0, 0]\nfov = 39.6\n",
                                "[environment]\ncolor = [1, 1, 1]\n"))
    cases = [
        ("Sponza", "textured, cache 1024 MiB", sponza_textured, []),
        ("Sponza", "textured, cache 128 MiB", sponza_textured, ["--texture-cache", "128"]),
        ("Sponza", "one grey material", sponza_plain, []),
        ("DamagedHelmet", "textured, cache 1024 MiB", helmet_plain.replace("_plain", "_textured"), []),
        ("DamagedHelmet", "textured, cache 128 MiB", helmet_plain.replace("_plain", "_textured"), ["--texture-cache", "128"]),
        ("DamagedHelmet", "one grey material", helmet_plain, []),
    ]
    # The textured helmet: the glTF imported whole, with the plain version's camera and sky.
    with open(helmet_plain.replace("_plain", "_textured"), "w") as f:
        f.write(f"[import]\npath = \"{helmet}\"\n[render]\nwidth = 640\nheight = 480\nspp = 16\nmax_depth = 4\n"
                "[camera]\nposition = [1.0, 0.86, 2.9]\nlook_at = [0, 0, 0]\nfov = 39.6\n[environment]\ncolor = [1, 1, 1]\n")
    rows = {i: [] for i in range(len(cases))}
    for rep in range(a.reps):  # interleaved, so machine noise hits every case alike
        for i, (_, _, scene, extra) in enumerate(cases):
            rows[i].append(run(a.farm, scene, extra))
            print(f"rep {rep + 1}: {cases[i][0]} {cases[i][1]}: {rows[i][-1]}", file=sys.stderr)
    with open(a.out, "w") as f:
        f.write("# What textures cost\n\n")
        f.write(f"Command: `tools/bench/textured_scenes.py --reps {a.reps}`  \n")
        f.write("`farm single` with `--threads 2`, 640x480, 16 spp, path tracing, max depth 4; median of "
                f"{a.reps} interleaved runs on this 2-core machine. Load time: parsing meshes and opening textures "
                "(texels are decoded lazily, during the render, into OpenImageIO's tile cache); peak memory: the "
                "process's maximum resident set.\n\n")
        f.write("| scene | textures | load (s) | render (s) | peak memory (MiB) |\n|---|---|---|---|---|\n")
        for i, (name, what, _, _) in enumerate(cases):
            load, render, peak = (statistics.median(r[k] for r in rows[i]) for k in range(3))
            f.write(f"| {name} | {what} | {load:.3f} | {render:.2f} | {peak:.1f} |\n")
    print("wrote " + a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
