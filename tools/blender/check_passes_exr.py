#!/usr/bin/python3
"""Issue 41's checks of the farm's multi-layer EXRs against Blender and oiiotool.

    /usr/bin/python3 tools/blender/check_passes_exr.py --farm build/farm/farm

Our renderer: scenes/cornell.toml, small, with every pass and adaptive sampling on, by `farm single`
and by `farm render` (2 workers, blocks of 13): the two files must be byte-identical. Then
`oiiotool --info -v` must list the 18 channels, and `blender -b` must open the file as one layer,
ViewLayer, whose Image node (the compositor's) offers every pass as an output: Combined, Alpha,
Denoising Albedo, Normal, Depth, Position, IndexOB, IndexMA, Debug Sample Count, Variance (what a
denoise node tree is wired from: docs/passes.md).

A .blend (tools/blender/make_test_scene.py, then make_passes_scene.py: OpenEXR MultiLayer, two view
layers, diffuse colour, normal, depth, indexes, AO, mist, sample count and Cryptomatte) by
`farm render` (2 workers, blocks of 13) and by `farm single`: byte-identical files, and every channel
of them bit for bit Blender's own multi-layer EXR of the full frame (`blender -b -f 1`), with the
same Cryptomatte names and manifests. That comparison reads the files with OpenImageIO's Python
module (Debian's python3-openimageio).

Exit 0 if all passed, 1 if not, 77 (printing "skipped: ...") without blender, oiiotool or the module.
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

EXPECTED_CHANNELS = (
    ["ViewLayer.Combined." + c for c in "RGBA"]
    + ["ViewLayer.Denoising Albedo." + c for c in "RGB"]
    + ["ViewLayer.Normal." + c for c in "XYZ"]
    + ["ViewLayer.Depth.Z"]
    + ["ViewLayer.Position." + c for c in "XYZ"]
    + ["ViewLayer.IndexOB.X", "ViewLayer.IndexMA.X", "ViewLayer.Debug Sample Count.X", "ViewLayer.Variance.X"]
)
EXPECTED_OUTPUTS = ["Combined", "Alpha", "Denoising Albedo", "Normal", "Depth", "Position", "IndexOB", "IndexMA",
                    "Debug Sample Count", "Variance"]

# Run inside Blender: the compositor's Image node for the file, and its outputs.
BLENDER_SCRIPT = """
import bpy, sys
image = bpy.data.images.load(sys.argv[sys.argv.index('--') + 1])
scene = bpy.context.scene
scene.use_nodes = True
node = scene.node_tree.nodes.new('CompositorNodeImage')
node.image = image
print('FARM-LAYER', node.layer)
print('FARM-OUTPUTS', '|'.join(o.name for o in node.outputs if o.enabled))
"""


def run(args, log):
    with open(log, "w") as out:
        return subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, timeout=240).returncode


def run_blender(args, log):
    with open(log, "w") as out:
        return subprocess.run(["blender", "-b", "--factory-startup"] + args, stdout=out, stderr=subprocess.STDOUT,
                              timeout=240).returncode


def differing_channels(ours, theirs):
    """What differs between two multi-layer EXRs, channel by channel by name, bit for bit; and
    their Cryptomatte metadata."""
    import numpy as np
    import OpenImageIO as oiio
    a, b = oiio.ImageBuf(ours), oiio.ImageBuf(theirs)
    na, nb = list(a.spec().channelnames), list(b.spec().channelnames)
    if sorted(na) != sorted(nb):
        return [f"the channels differ: only ours {sorted(set(na) - set(nb))}, only Blender's {sorted(set(nb) - set(na))}"]
    pa, pb = a.get_pixels(oiio.FLOAT), b.get_pixels(oiio.FLOAT)
    out = []
    for i, name in enumerate(na):
        j = nb.index(name)
        diff = int((pa[:, :, i].view(np.uint32) != pb[:, :, j].view(np.uint32)).sum())
        if diff:
            out.append(f"channel {name}: {diff} pixels differ from Blender's own")
    meta = [{p.name: p.value for p in x.spec().extra_attribs if p.name.startswith("cryptomatte/")} for x in (a, b)]
    if meta[0] != meta[1]:
        out.append(f"the Cryptomatte metadata differ: ours {sorted(meta[0])}, Blender's {sorted(meta[1])}")
    elif not meta[0]:
        out.append("no Cryptomatte metadata in Blender's own file: the scene did not enable it")
    print(f"the .blend: {len(na)} channels, each bit for bit Blender's own; {len(meta[0])} Cryptomatte entries equal")
    return out


def check_blend(farm, tmp):
    base, blend = os.path.join(tmp, "base.blend"), os.path.join(tmp, "passes.blend")
    if run_blender(["-P", os.path.join(HERE, "make_test_scene.py"), "--", base, "64", "48", "4"], base + ".log") != 0 or \
            run_blender([base, "-P", os.path.join(HERE, "make_passes_scene.py"), "--", blend], blend + ".log") != 0:
        return ["could not make the .blend with passes (see the logs)"]
    own = os.path.join(tmp, "own_")
    run_blender([blend, "-o", own + "####", "-f", "1"], own + "log")
    own += "0001.exr"
    farm_exr, single_exr = os.path.join(tmp, "blend_farm.exr"), os.path.join(tmp, "blend_single.exr")
    if run([farm, "render", blend, "-o", farm_exr, "--frame", "1", "--workers", "2", "--policy", "fixed", "--block",
            "13", "--threads", "1"], farm_exr + ".log") != 0:
        return ["farm render of the .blend failed:\n" + open(farm_exr + ".log").read()]
    if run([farm, "single", blend, "-o", single_exr, "--frame", "1", "--threads", "1"], single_exr + ".log") != 0:
        return ["farm single of the .blend failed:\n" + open(single_exr + ".log").read()]
    failures = [] if filecmp.cmp(farm_exr, single_exr, shallow=False) else ["the .blend: farm render's EXR differs from single's"]
    if not os.path.exists(own):
        return failures + ["Blender did not write its own render of the .blend"]
    return failures + differing_channels(farm_exr, own)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", required=True)
    args = ap.parse_args()
    for tool in ("blender", "oiiotool"):
        if not shutil.which(tool):
            print(f"skipped: {tool} is not installed")
            return 77
    try:
        import numpy  # noqa: F401
        import OpenImageIO  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (install python3-openimageio and python3-numpy; run with /usr/bin/python3)")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="farm_passes_") as tmp:
        scene = os.path.join(ROOT, "scenes", "cornell.toml")
        common = ["--width", "64", "--height", "48", "--spp", "16", "--passes", "all", "--noise-threshold", "0.05",
                  "--threads", "1"]
        single, farm = os.path.join(tmp, "single.exr"), os.path.join(tmp, "farm.exr")
        if run([args.farm, "single", scene, "-o", single] + common, single + ".log") != 0:
            print(open(single + ".log").read())
            return 1
        if run([args.farm, "render", scene, "-o", farm, "--workers", "2", "--policy", "fixed", "--block", "13"] + common,
               farm + ".log") != 0:
            print(open(farm + ".log").read())
            return 1
        if not filecmp.cmp(single, farm, shallow=False):
            failures.append("farm render's EXR differs from farm single's")
        info = subprocess.run(["oiiotool", "--info", "-v", single], capture_output=True, text=True).stdout
        listed = next((line.split(":", 1)[1] for line in info.splitlines() if "channel list:" in line), "")
        channels = [c.strip() for c in listed.split(",") if c.strip()]
        if sorted(channels) != sorted(EXPECTED_CHANNELS):
            failures.append(f"oiiotool lists channels {channels}, expected {EXPECTED_CHANNELS}")
        script = os.path.join(tmp, "open_exr.py")
        with open(script, "w") as f:
            f.write(BLENDER_SCRIPT)
        said = subprocess.run(["blender", "-b", "--factory-startup", "--python", script, "--", single],
                              capture_output=True, text=True, timeout=240).stdout
        layer = next((line.split(" ", 1)[1] for line in said.splitlines() if line.startswith("FARM-LAYER ")), None)
        outputs = next((line.split(" ", 1)[1].split("|") for line in said.splitlines()
                        if line.startswith("FARM-OUTPUTS ")), [])
        if layer != "ViewLayer":
            failures.append(f"Blender reads layer {layer!r}, expected 'ViewLayer'\n{said}")
        missing = [o for o in EXPECTED_OUTPUTS if o not in outputs]
        if missing:
            failures.append(f"Blender's Image node lacks the outputs {missing} (it has {outputs})")
        else:
            print(f"Blender opens it as layer {layer} with outputs: {', '.join(outputs)}")
        failures += check_blend(args.farm, tmp)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: farm == single ({len(EXPECTED_CHANNELS)} channels), oiiotool and Blender read every pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
