"""Rendering for tools/bench/convergence.py: the scene each case needs, and one image with our
renderer and with Cycles at a given spp and seed (or, with --reanalyze, the files of an earlier
run). Imported by convergence.py.
"""
import json
import os
import shlex

import numpy as np

from bench import scene_gen
from compare import compare_images  # read_rgb
from compare import cycles_compare  # wrapper_scene, blender_command, run, our_render_seconds, rel

REF_SEEDS = (1, 2)   # the two halves of each reference
TEST_SEED = 0
from farmtools import ROOT
rel = cycles_compare.rel


class RenderError(RuntimeError):
    pass


def prepare_scene(case, work, write=True):
    """Generates what the scene needs (OBJ on a floor, sky image); returns the scene file path.
    write=False only names the files (--reanalyze)."""
    name = case["name"]
    info = {}
    if not write:
        if "sky_image" in case:
            case["env_image"] = os.path.join(work, f"{name}_sky.exr")
        return (os.path.join(work, f"{name}.obj") if "generate" in case else rel(case["scene"])), info
    if "generate" in case:
        g = case["generate"]
        obj = os.path.join(work, f"{name}.obj")
        info["mesh"] = scene_gen.mesh_on_floor(
            rel(g["mesh"]), obj, float(g.get("height", 1.0)), float(g.get("rotate_y", 0.0)),
            tuple(g.get("mesh_albedo", (0.6, 0.6, 0.6))), tuple(g.get("floor_albedo", (0.5, 0.5, 0.5))),
            float(g.get("floor_size", 40.0)))
        scene = obj
    else:
        scene = rel(case["scene"])
    if "sky_image" in case:
        s = dict(case["sky_image"])
        path = os.path.join(work, f"{name}_sky.exr")
        info["sky"] = scene_gen.sky_image(path, **s)
        case["env_image"] = path
    return scene, info


def start_scene(case, args):
    """The start of a scene's run, fixed-spp or adaptive: clears its log (unless --reanalyze),
    prepares its files and prints what was generated. Returns (name, work folder, log path, scene)."""
    name, work = case["name"], args.work_dir
    log = os.path.join(work, f"{name}_log.txt")
    if not args.reanalyze and os.path.exists(log):
        os.remove(log)
    scene, info = prepare_scene(case, work, write=not args.reanalyze)
    if info:
        print(f"  generated: {json.dumps(info)}", flush=True)
    return name, work, log, scene


def asset_args(scene, work):
    """--assets for the folders our wrapper scene (in the work folder) refers to outside it: farm
    single reads a mesh or glTF only under the scene file's folder or an --assets folder."""
    d = os.path.dirname(os.path.abspath(scene))
    return [] if d == os.path.abspath(work) else ["--assets", d]


def render_command(who, case, scene, spp, seed, tag, args, work, extra=()):
    """The command for one image and its files: {'exr', 'js', 'meta', 'cmd'}. `extra` is appended
    (e.g. ours' --noise-threshold, Cycles' --adaptive-threshold)."""
    name = case["name"]
    c = dict(case, spp=spp)
    exr = os.path.join(work, f"{name}_{who}_{tag}.exr")
    js = os.path.join(work, f"{name}_{who}_{tag}.json")
    meta = os.path.join(work, f"{name}_{who}_{tag}.meta.json")
    if who == "ours":
        wrapper = os.path.join(work, f"{name}_scene.toml")
        text = cycles_compare.wrapper_scene(c, scene)
        if not os.path.exists(wrapper) or open(wrapper).read() != text:
            with open(wrapper, "w") as f:
                f.write(text)
        fields = {k: c[k] for k in ("width", "height", "spp", "max_depth", "threads")}
        fields.update(farm=shlex.quote(args.farm), scene=shlex.quote(wrapper), out=shlex.quote(exr),
                      stats=shlex.quote(js))
        cmd = shlex.split(c["ours_command"].format(**fields)) + ["--seed", str(seed)] + \
            asset_args(scene, work) + [str(a) for a in c["ours_args"]]
    else:
        cmd = cycles_compare.blender_command(c, scene, exr, js) + ["--seed", str(seed)]
    return {"exr": exr, "js": js, "meta": meta, "cmd": cmd + [str(a) for a in extra]}


def reuse_files(paths, args):
    """--reuse-from: copies the files of an earlier run's work folder (same names) into this one;
    raises RenderError if one is absent."""
    import shutil
    for p in paths:
        src = os.path.join(args.reuse_from, os.path.basename(p))
        if not os.path.exists(src):
            raise RenderError(f"--reuse-from: {src} is absent")
        shutil.copy2(src, p)


def reused(job, args):
    """The meta of a render taken from --reuse-from's folder (copied next to this run's files): its
    times are that run's; 'exr' names the copy, 'cmd' the command that made the original."""
    reuse_files((job["exr"], job["js"], job["meta"]), args)
    with open(job["meta"]) as f:
        r = json.load(f)
    r.update(exr=job["exr"], reused_from=args.reuse_from)
    with open(job["meta"], "w") as f:
        json.dump(r, f)
    return r


def render_pair(case, scene, spp, seed, tag, args, work, log, repeat=1, extra=None, whos=("ours", "cycles"),
                reuse=()):
    """Renders one image with each renderer, `repeat` times keeping the fastest time; returns
    {'ours': {...}, 'cycles': {...}}. The repeats alternate between the renderers (ours, Cycles,
    ours, ...) so that a slow spell of the machine hits both alike. `tag` names the files (a str,
    or a dict per renderer); `extra` is a dict per renderer of arguments appended to its command;
    `whos` the renderers to run (both by default). The renderers in `reuse` are not run when
    args.reuse_from is set: their files (image, times, meta) are copied from that folder."""
    name = case["name"]
    jobs = {}
    for who in whos:
        t = tag[who] if isinstance(tag, dict) else tag
        jobs[who] = dict(render_command(who, case, scene, spp, seed, t, args, work, (extra or {}).get(who, ())),
                         times=[], first=None)
    out = {}
    if getattr(args, "reuse_from", None) and not args.reanalyze:
        for who in [w for w in whos if w in reuse]:
            out[who] = reused(jobs.pop(who), args)
        if not jobs:
            return out
    if args.reanalyze:
        for who, j in jobs.items():
            if not os.path.exists(j["exr"]):
                raise RenderError(f"--reanalyze: {j['exr']} is absent")
            with open(j["meta"]) as f:
                out[who] = json.load(f)
        return out
    for i in range(repeat):
        # Each repeat renders the same image again (same seed, deterministic on both sides): only
        # the fastest time counts, so that a burst of other load on the machine does not.
        for who, j in jobs.items():
            for p in (j["exr"], j["js"]):
                if os.path.exists(p):
                    os.remove(p)
            try:
                wall = cycles_compare.run(j["cmd"], log)
            except RuntimeError as e:
                raise RenderError(f"{name}: {who} render failed, {e}") from None
            if who == "ours":
                secs, bvh = cycles_compare.our_render_seconds(j["js"], wall)
                j["times"].append({"seconds": secs, "bvh_seconds": bvh, "wall": wall})
            else:
                with open(j["js"]) as f:
                    t = json.load(f)
                j["times"].append({"seconds": t["render_seconds"], "pt_seconds": t.get("sample_seconds"),
                                   "setup_seconds": t.get("setup_seconds"), "wall": wall})
            if repeat > 1:
                img = compare_images.read_rgb(j["exr"])
                if j["first"] is None:
                    j["first"] = img
                elif not np.array_equal(img, j["first"]):
                    d = float(np.sqrt(np.mean((img - j["first"]) ** 2)))
                    print(f"  note: {who} {tag} repeat {i + 1} differs from the first render (RMSE {d:.2g})", flush=True)
    for who, j in jobs.items():
        times = j["times"]
        r = {k: min((t[k] for t in times if t.get(k) is not None), default=None) for k in times[0]}
        r["seconds_all"] = [t["seconds"] for t in times]
        if who == "cycles":
            r["pt_seconds_all"] = [t["pt_seconds"] for t in times]
        r.update(exr=j["exr"], spp=spp, seed=seed, cmd=shlex.join(j["cmd"]).replace(ROOT + os.sep, ""),  # from ROOT
                 extra=[str(a) for a in (extra or {}).get(who, ())])
        with open(j["meta"], "w") as f:
            json.dump(r, f)
        out[who] = r
    return out
