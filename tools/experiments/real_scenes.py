"""The paper's own scenes rendered by POV-Ray 3.7 itself (Debian's povray-examples), as the
sweep names them. A name is the scene and the options it is rendered with, so rows of one name
always compare like with like; the options travel as `--renderer-options` to `farm single` and to
the master (docs/povray.md).

desk.pov is rendered at its default clock: desk.ini's 4-frame chain (frames 1-3 render image maps
that frame 4 reads) needs each frame's output as the next frame's input, which a farm job does not
have; the scene's own frame with clock 0 shows a grey picture in the picture frame instead. Its
textures use `crand`, whose random graininess follows render order: its farm images cannot equal
`farm single`'s (docs/povray.md), so its byte identity is recorded but not required.
"""
import os
import shutil

EXAMPLES = "/usr/share/doc/povray/examples/advanced"

# name -> (file, POV-Ray options). chess2 with the anti-aliasing the paper's timings imply
# (320x240 took it 197 s on a P-III 800; here +A0.3 takes 23 CPU-s, no anti-aliasing 6 s; the
# smoke run uses it without, as +A0.3 costs seconds even at 64x48); desk with its desk.ini's
# settings (anti-aliasing off).
SCENES = {
    "chess2.pov": (os.path.join(EXAMPLES, "chess2.pov"), "+A0.3"),
    "chess2.pov-A": (os.path.join(EXAMPLES, "chess2.pov"), "-A"),
    "desk.pov": (os.path.join(EXAMPLES, "desk", "desk.pov"), "-A"),
}
NOT_EXACT = {"desk.pov": "crand"}  # name -> why its farm image cannot equal farm single's


def is_real(name):
    return name in SCENES


def path(name):
    return SCENES[name][0]


def exact(name):
    """False for a scene whose farm image cannot equal farm single's (NOT_EXACT)."""
    return name not in NOT_EXACT


def farm_args(name):
    """The farm options a real scene is rendered with (none for the farm's own scenes)."""
    return ["--renderer-options", SCENES[name][1]] if name in SCENES else []


def missing():
    """Why the real scenes cannot be rendered here, or None: povray and the examples are needed."""
    if shutil.which("povray") is None:
        return "povray is not installed (tools/setup.sh installs it)"
    absent = [p for p, _ in SCENES.values() if not os.path.exists(p)]
    if absent:
        return "POV-Ray's example scenes are missing (" + ", ".join(absent) + "; package povray-examples)"
    return None
