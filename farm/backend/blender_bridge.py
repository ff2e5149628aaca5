# The farm's bridge inside one `blender -b SCENE.blend --python-expr <this file> -- ARGS` process
# (farm/backend/blender_process.cpp starts it; docs/blender.md explains the choices).
#
# It loads the .blend once, sets it up for exact block renders and then serves requests, one per
# line on stdin, replying one line each on file descriptor 3:
#   info                          -> "info <json>": size, frames, samples, engine, files it reads
#   render FRAME X Y W H PATH     -> "ok" once PATH holds the block (X, Y from the image's top
#                                    left), or "error <message>"
# Blender's own output goes to a log until the scene is loaded, then to /dev/null: a render
# prints a line per sample, which nobody reads.
#
# Arguments after "--": --expect PATH (the .blend the farm meant: Blender goes on with its
# default scene when a file cannot be read), --pixels linear|display8|layers, --threads N and the
# overrides --width, --height, --samples, --camera (absent: the .blend's own).
import json
import os
import sys

import bpy


def reply(line):
    os.write(3, (line.replace("\n", " ") + "\n").encode("utf-8", "replace"))


def arguments():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    out = {}
    for i in range(0, len(argv) - 1, 2):
        out[argv[i].lstrip("-")] = argv[i + 1]
    return out


def scene_files(scene):
    """Every external file the .blend reads, with the datablock that names it, as Blender sees
    them (bpy.utils.blend_paths is the authority; the datablock loop only names the referrer)."""
    named = {}
    collections = [("image", bpy.data.images), ("library", bpy.data.libraries),
                   ("font", bpy.data.fonts), ("volume", bpy.data.volumes),
                   ("cache file", bpy.data.cache_files), ("movie clip", bpy.data.movieclips),
                   ("sound", bpy.data.sounds), ("text", bpy.data.texts)]
    problems = []
    for kind, items in collections:
        for item in items:
            path = getattr(item, "filepath", "")
            if not path or path == "<builtin>" or getattr(item, "packed_file", None) is not None:
                continue
            if kind == "image" and item.source not in ("FILE",):
                if item.source in ("SEQUENCE", "TILED", "MOVIE"):
                    problems.append("%s '%s' is an image %s, which the farm does not ship yet"
                                    % (kind, item.name, item.source.lower()))
                continue
            if kind == "text" and item.is_in_memory:
                continue
            named[bpy.path.abspath(path, library=item.library)] = (kind, item.name, path)
    files = []
    for path in bpy.utils.blend_paths(absolute=True, packed=False, local=False):
        kind, name, raw = named.get(path, ("path", "the .blend", path))
        files.append({"path": path, "raw": raw, "kind": kind, "name": name})
    return files, problems


def inexact_settings(scene):
    """Settings whose pixels a block cannot hold as the full frame would: refused, naming them."""
    r = scene.render
    out = []
    if r.use_stamp:
        out.append("scene '%s': Output > Metadata > Burn Into Image is on: Blender would burn its banner "
                   "(with the file's path and the render's date and time) into every block, so the farm's "
                   "image would differ from a single render's; turn Burn Into Image off" % scene.name)
    return out


def whole_frame_settings(scene):
    """Settings whose pixels only a whole frame holds, as the full frame would: the farm renders
    such a scene a frame per block."""
    out = []
    if scene.render.use_freestyle:
        out.append("scene '%s': Render > Freestyle is on: Freestyle draws its lines within the region "
                   "rendered, so in blocks they would break at every block's edge" % scene.name)
    return out


def info(scene):
    r = scene.render
    files, problems = scene_files(scene)
    problems = inexact_settings(scene) + problems
    cameras = [o.name for o in scene.objects if o.type == "CAMERA"]
    return {
        "version": bpy.app.version_string,
        "engine": r.engine,
        "width": r.resolution_x * r.resolution_percentage // 100,
        "height": r.resolution_y * r.resolution_percentage // 100,
        "frame_start": scene.frame_start,
        "frame_end": scene.frame_end,
        "frame_step": scene.frame_step,
        "samples": scene.cycles.samples if r.engine == "CYCLES" else 0,
        "camera": scene.camera.name if scene.camera else "",
        "cameras": cameras,
        "multiview": bool(r.use_multiview),
        "files": files,
        "problems": problems,
        "whole_frame": whole_frame_settings(scene),
        # The .blend's own output format, before set_up changes it: the farm then writes every
        # view layer's every pass into one multi-layer EXR, as Blender would.
        "multilayer": r.image_settings.file_format == "OPEN_EXR_MULTILAYER",
        "view_layer": bpy.context.view_layer.name,
    }


def set_up(scene, args):
    r = scene.render
    c = scene.cycles
    # Exact blocks: every pixel must be what the full frame's render gives it.
    c.use_adaptive_sampling = False  # the noise estimate would stop a pixel by its neighbours
    c.use_denoising = False          # the denoiser reads a neighbourhood across block edges
    c.time_limit = 0                 # a time limit makes the sample count depend on the clock
    c.device = "CPU"
    r.use_compositing = False        # filters such as blur or glare read across block edges
    r.use_sequencer = False
    r.dither_intensity = 0           # dithering noise depends on the position in the written block
    r.use_persistent_data = True     # the scene is synced once, not per block
    layers = args.get("pixels", "linear") == "layers"
    if not layers:
        r.use_single_layer = True    # the active view layer, as one image
    # (pixels=layers keeps the .blend's own choice: every view layer that renders, or the active one.)
    r.threads_mode = "FIXED"
    r.threads = max(1, int(args.get("threads", "1")))
    if "width" in args or "height" in args:
        r.resolution_percentage = 100
        r.resolution_x = int(args.get("width", r.resolution_x))
        r.resolution_y = int(args.get("height", r.resolution_y))
    if "samples" in args:
        c.samples = int(args["samples"])
    if args.get("camera"):
        scene.camera = bpy.data.objects[args["camera"]]
    settings = r.image_settings
    if layers:
        # Every pass of every view layer that renders, with Blender's own names.
        settings.file_format = "OPEN_EXR_MULTILAYER"
        settings.color_depth = "32"
        settings.exr_codec = "NONE"
    elif args.get("pixels", "linear") == "display8":
        # Blender's own view transform, look and exposure into 8-bit values (as its PNG output).
        settings.file_format = "PNG"
        settings.color_mode = "RGB"
        settings.color_depth = "8"
        settings.compression = 0
    else:
        settings.file_format = "OPEN_EXR"  # scene-linear floats, as Blender's EXR output
        settings.color_mode = "RGBA"
        settings.color_depth = "32"
        settings.exr_codec = "NONE"


def render(scene, frame, x, y, w, h, path):
    r = scene.render
    width = r.resolution_x * r.resolution_percentage // 100
    height = r.resolution_y * r.resolution_percentage // 100
    if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > width or y + h > height:
        raise ValueError("block %dx%d at %d,%d is outside the %dx%d image" % (w, h, x, y, width, height))
    scene.frame_set(frame)
    whole = x == 0 and y == 0 and w == width and h == height
    r.use_border = not whole
    r.use_crop_to_border = True
    # Blender's border is in fractions of the image from its bottom left corner.
    r.border_min_x = x / width
    r.border_max_x = (x + w) / width
    r.border_min_y = (height - y - h) / height
    r.border_max_y = (height - y) / height
    r.filepath = path
    r.use_file_extension = False
    bpy.ops.render.render(write_still=True)


def main():
    args = arguments()
    scene = bpy.context.scene
    expected = os.path.realpath(args.get("expect", ""))
    if not bpy.data.filepath or os.path.realpath(bpy.data.filepath) != expected:
        reply("error Blender could not read '%s' as a .blend file" % expected)
        return
    try:
        facts = info(scene)
        set_up(scene, args)
    except Exception as e:
        reply("error %s" % e)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    sys.stdout.flush()
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    reply("ready")
    for line in sys.stdin:
        words = line.split(" ", 6)
        try:
            if words[0].strip() == "info":
                reply("info " + json.dumps(facts))
            elif words[0] == "render" and len(words) == 7:
                frame, x, y, w, h = (int(v) for v in words[1:6])
                render(scene, frame, x, y, w, h, words[6].rstrip("\n"))
                reply("ok")
            else:
                reply("error unknown request '%s'" % line.strip()[:80])
        except Exception as e:
            reply("error %s" % e)


main()
