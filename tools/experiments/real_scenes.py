"""Scenes rendered by other renderers through the farm's backends, as the sweep names them: the
paper's own scenes under POV-Ray 3.7 (Debian's povray-examples) and a Cycles scene made by Blender
itself (tools/blender/make_test_scene.py). A name is the scene and the options it is rendered
with, so rows of one name always compare like with like; the options travel to `farm single` and
to the master (docs/povray.md, docs/blender.md).

desk.pov is rendered at its default clock: desk.ini's 4-frame chain (frames 1-3 render image maps
that frame 4 reads) needs each frame's output as the next frame's input, which a farm job does not
have; the scene's own frame with clock 0 shows a grey picture in the picture frame instead. Its
textures use `crand`, whose random graininess follows render order: its farm images cannot equal
`farm single`'s (docs/povray.md), so its byte identity is recorded but not required.
"""
import os
import shutil
import subprocess

from farmtools import ROOT
EXAMPLES = "/usr/share/doc/povray/examples/advanced"
MADE = os.path.join(ROOT, "build", "real-scenes")  # scenes made here (untracked)

# name -> (renderer, file, farm options). chess2 with the anti-aliasing the paper's timings imply
# (320x240 took it 197 s on a P-III 800; here +A0.3 takes 23 CPU-s, no anti-aliasing 6 s; the
# smoke run uses it without, as +A0.3 costs seconds even at 64x48); desk with its desk.ini's
# settings (anti-aliasing off). cube.blend: Blender's default cube, glossy, on a textured plane;
# its frame 1 (the file has two).
SCENES = {
    "chess2.pov": ("povray", os.path.join(EXAMPLES, "chess2.pov"), ["--renderer-options", "+A0.3"]),
    "chess2.pov-A": ("povray", os.path.join(EXAMPLES, "chess2.pov"), ["--renderer-options", "-A"]),
    "desk.pov": ("povray", os.path.join(EXAMPLES, "desk", "desk.pov"), ["--renderer-options", "-A"]),
    "cube.blend": ("blender", os.path.join(MADE, "cube", "cube.blend"), ["--frame", "1"]),
}
NOT_EXACT = {"desk.pov": "crand"}  # name -> why its farm image cannot equal farm single's


def is_real(name):
    return name in SCENES


def path(name):
    return SCENES[name][1]


def describe(name):
    """'chess2.pov --renderer-options +A0.3': the file and the options a name stands for."""
    return " ".join([os.path.basename(path(name))] + SCENES[name][2])


def exact(name):
    """False for a scene whose farm image cannot equal farm single's (NOT_EXACT)."""
    return name not in NOT_EXACT


def farm_args(name):
    """The farm options a real scene is rendered with (none for the farm's own scenes)."""
    return list(SCENES[name][2]) if name in SCENES else []


def missing(names):
    """Why `names` cannot all be rendered here, or None. Makes the Blender scene when needed."""
    for renderer in sorted({SCENES[n][0] for n in names}):
        if shutil.which(renderer) is None:
            return f"{renderer} is not installed (tools/setup.sh installs it)"
    absent = [path(n) for n in names if SCENES[n][0] == "povray" and not os.path.exists(path(n))]
    if absent:
        return "POV-Ray's example scenes are missing (" + ", ".join(absent) + "; package povray-examples)"
    for n in names:
        if SCENES[n][0] == "blender" and not os.path.exists(path(n)):
            r = subprocess.run(["blender", "-b", "--factory-startup", "-P",
                                os.path.join(ROOT, "tools/blender/make_test_scene.py"), "--", path(n)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0 or not os.path.exists(path(n)):
                return f"Blender could not make {path(n)}: {r.stdout[-500:]}"
    return None
