# Renders a glTF/OBJ scene with Blender Cycles (CPU) under our renderer's conventions, so that
# the two images can be compared pixel by pixel (tools/compare/compare_images.py).
#
#   blender -b --factory-startup -P tools/compare/cycles_render.py -- --scene S --out O.exr ...
#
# Conventions (all vectors on the command line are in OUR coordinates: the file's own Y-up):
# - Axes: both Blender importers turn Y-up into Z-up, Blender (x, y, z) = file (x, -z, y);
#   --camera, --sun and the environment rotation are converted the same way.
# - Depth: our max_depth D counts the hit that does direct lighting (D = 1: direct light only);
#   Cycles' max_bounces B = 0 is already direct light only, so B = D - 1 (see --bounces-offset).
# - Pixel filter: --filter/--filter-width as our [render] filter/filter_width (default ours:
#   Blackman-Harris over a 3-px support). Cycles' "filter_width" of Blackman-Harris is half the
#   support (its table builder doubles it), so it gets width / 2: our default is its default 1.5.
# - Emission: MTL Ke / glTF emissive become Principled "Emission" (strength 1), a radiance in
#   W/(m^2 sr) as ours. Cycles meshes emit from both faces, ours from the front face only (glTF
#   doubleSided: both), so emission is masked on back faces unless the material is two-sided.
# - Sun: Cycles' sun strength is the irradiance in W/m^2 on a surface facing it (with angle 0
#   the light is a delta light whose eval factor is 1), the same as our directional
#   `intensity`: mapped 1:1.
import sys
import time
import json
import math
import argparse

import numpy
if "bool" not in vars(numpy):  # Debian 12's glTF importer uses numpy.bool (gone in numpy 1.24)
    numpy.bool = bool

import bpy
from mathutils import Matrix, Vector


def parse_args():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    p = argparse.ArgumentParser(prog="cycles_render.py")
    p.add_argument("--scene", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--spp", type=int, default=16)
    p.add_argument("--max-depth", type=int, default=8, help="OUR max_depth (see header)")
    p.add_argument("--bounces-offset", type=int, default=-1,
                   help="Cycles bounces = max-depth + this (default -1: same paths as ours)")
    p.add_argument("--threads", type=int, default=0, help="0 = all cores")
    cam = p.add_mutually_exclusive_group()
    cam.add_argument("--camera", help="px,py,pz:lx,ly,lz:ux,uy,uz:fov_y_degrees (our coordinates)")
    cam.add_argument("--file-camera", action="store_true", help="the glTF's own camera")
    p.add_argument("--env", default="0,0,0", help="uniform background radiance R,G,B")
    p.add_argument("--env-image", help="lat-long HDR image (our convention, see world_image)")
    p.add_argument("--env-strength", type=float, default=1.0)
    p.add_argument("--env-rotation", type=float, default=0.0, help="degrees, as our [environment] rotation")
    p.add_argument("--sun", action="append", default=[], help="dx,dy,dz:irradiance (direction of travel)")
    p.add_argument("--lambert", action="store_true",
                   help="shade plain dielectric Principled BSDFs (no specular, metal, transmission) "
                        "as ours does MTL Kd-only materials: Lambertian Diffuse BSDF, or Emission "
                        "alone when emissive")
    p.add_argument("--no-tf-transmission", action="store_true",
                   help="OBJ: undo the importer's Transmission = 1 from MTL 'Tf 1 1 1' (3ds Max exports)")
    p.add_argument("--dedup-faces", action="store_true",
                   help="delete faces that repeat another face's corners (McGuire's Cornell box has two)")
    p.add_argument("--two-sided-emission", action="store_true", help="keep Cycles' two-sided emitters")
    # COMPAT: point/spot W = 4 pi * cd, sun W/m^2 = lux; Cycles turns a point light's W back
    # into W/4pi per steradian, so cd -> W/sr and lux -> W/m^2 one to one, as ours reads them.
    p.add_argument("--gltf-lighting", default="COMPAT", choices=["SPEC", "COMPAT", "RAW"],
                   help="glTF importer's punctual-light unit conversion (SPEC divides by 683 lm/W)")
    p.add_argument("--no-file-lights", action="store_true", help="drop the glTF's own lights")
    p.add_argument("--time-out", help="JSON file for the render seconds")
    p.add_argument("--seed", type=int, default=0, help="Cycles' sampling seed (default 0)")
    p.add_argument("--filter", default="blackman-harris", choices=["box", "blackman-harris"],
                   help="pixel filter, as our [render] filter (default blackman-harris, ours and Cycles')")
    p.add_argument("--filter-width", type=float, default=None,
                   help="our filter_width: the whole support in pixels (default 3 for blackman-harris, 1 for box)")
    p.add_argument("--adaptive-threshold", type=float, default=0.0,
                   help="Cycles' adaptive sampling noise threshold (its default is 0.01); 0 = adaptive "
                        "sampling off (the default here: --spp samples in every pixel). With it, --spp is "
                        "the most samples a pixel takes")
    p.add_argument("--adaptive-min-samples", type=int, default=0,
                   help="with --adaptive-threshold: Cycles' adaptive_min_samples (0 = automatic, its default)")
    p.add_argument("--sample-count-out",
                   help="also write a multilayer EXR with Cycles' Debug Sample Count pass (samples each "
                        "pixel took) to this file; enabling the pass may cost time, so not for timed runs")
    args = p.parse_args(argv)
    if args.filter_width is None:
        args.filter_width = 3.0 if args.filter == "blackman-harris" else 1.0
    return args


def vec3(text):
    v = [float(x) for x in text.split(",")]
    if len(v) != 3:
        raise SystemExit(f"expected x,y,z, got {text!r}")
    return v


def to_blender(v):
    """Our Y-up vector -> Blender Z-up (what the importers do to the geometry)."""
    return Vector((v[0], -v[2], v[1]))


def import_scene(path):
    low = path.lower()
    if low.endswith((".gltf", ".glb")):
        kw = {"filepath": path}
        props = bpy.ops.import_scene.gltf.get_rna_type().properties
        if "export_import_convert_lighting_mode" in props:
            kw["export_import_convert_lighting_mode"] = ARGS.gltf_lighting
        bpy.ops.import_scene.gltf(**kw)
    elif low.endswith(".obj"):
        # 3.4 has the C++ importer (wm.obj_import, since 3.2) and the legacy Python add-on
        # (import_scene.obj); both give the same Principled materials for MTL files (checked on
        # the Cornell box: Kd -> Base Color, Ks -> Specular, Ns -> Roughness 1 - sqrt(Ns/1000),
        # Ke -> Emission, strength 1). The C++ one is faster and has no add-on to enable.
        if hasattr(bpy.ops.wm, "obj_import"):
            bpy.ops.wm.obj_import(filepath=path)
        else:
            bpy.ops.import_scene.obj(filepath=path)
    else:
        raise SystemExit(f"unsupported scene file {path} (want .gltf, .glb or .obj)")


def set_camera(scene, spec):
    parts = spec.split(":")
    if len(parts) != 4:
        raise SystemExit("--camera wants px,py,pz:lx,ly,lz:ux,uy,uz:fov")
    pos, look, up = (to_blender(vec3(x)) for x in parts[:3])
    fov = float(parts[3])
    forward = (look - pos).normalized()
    right = forward.cross(up).normalized()
    true_up = right.cross(forward)
    # Blender cameras look down their local -Z with +Y up; build the same basis as ours.
    rot = Matrix((right, true_up, -forward)).transposed()
    data = bpy.data.cameras.new("compare_camera")
    data.sensor_fit = "VERTICAL"  # our fov is vertical whatever the aspect
    data.angle_y = math.radians(fov)
    data.clip_start, data.clip_end = 1e-4, 1e6
    obj = bpy.data.objects.new("compare_camera", data)
    obj.matrix_world = Matrix.Translation(pos) @ rot.to_4x4()
    scene.collection.objects.link(obj)
    scene.camera = obj


def world_image(nodes, links, bg):
    # Our lat-long map (renderer/shading/environment.cpp), direction d in our Y-up frame:
    #   u = (atan2(d.x, -d.z) - rotation) / 2pi  (u = 0 looks along -Z, 0.25 along +X),
    #   v = acos(d.y) / pi                        (the top row is straight up).
    # Cycles' Environment Texture, b in Blender's frame: u = 0.5 - atan2(b.y, b.x) / 2pi,
    # v = 1 - acos(b.z) / pi with v = 0 the bottom row, so the rows already agree. With
    # b = (d.x, -d.z, d.y): atan2(d.x, -d.z) = pi/2 - atan2(b.y, b.x), so our
    # u = 0.25 - (atan2(b.y, b.x) + rotation) / 2pi, which Cycles gives for the direction
    # rotated about +Z by 90 degrees + rotation before the lookup.
    coords = nodes.new("ShaderNodeTexCoord")
    mapping = nodes.new("ShaderNodeMapping")
    mapping.vector_type = "POINT"
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, math.radians(90.0 + ARGS.env_rotation))
    tex = nodes.new("ShaderNodeTexEnvironment")
    tex.image = bpy.data.images.load(ARGS.env_image)
    tex.image.colorspace_settings.name = "Linear"  # HDR radiance as stored
    tex.interpolation = "Closest"  # ours looks up the nearest texel, unfiltered
    tex.projection = "EQUIRECTANGULAR"
    links.new(coords.outputs["Generated"], mapping.inputs["Vector"])
    links.new(mapping.outputs["Vector"], tex.inputs["Vector"])
    links.new(tex.outputs["Color"], bg.inputs["Color"])


def set_world(scene):
    world = bpy.data.worlds.new("compare_world")
    world.use_nodes = True
    nodes, links = world.node_tree.nodes, world.node_tree.links
    bg = nodes["Background"]
    bg.inputs["Strength"].default_value = ARGS.env_strength
    if ARGS.env_image:
        world_image(nodes, links, bg)
    else:
        bg.inputs["Color"].default_value = (*vec3(ARGS.env), 1.0)
    scene.world = world


def add_sun(scene, spec):
    d, irradiance = spec.split(":")
    data = bpy.data.lights.new("compare_sun", "SUN")
    data.energy = float(irradiance)
    data.angle = 0.0  # a delta light, as our directional light
    obj = bpy.data.objects.new("compare_sun", data)
    # A sun shines along its local -Z.
    obj.rotation_mode = "QUATERNION"
    obj.rotation_quaternion = Vector((0, 0, -1)).rotation_difference(to_blender(vec3(d)).normalized())
    scene.collection.objects.link(obj)


def adjust_materials(is_obj):
    for mat in bpy.data.materials:
        if not mat.use_nodes:
            continue
        nt = mat.node_tree
        for node in list(nt.nodes):
            if node.type != "BSDF_PRINCIPLED":
                continue
            if ARGS.no_tf_transmission and is_obj:
                # 3ds Max's exporter writes "Tf 1 1 1" (no transmission filter) on every
                # material, and Blender 3.4's OBJ importer turns Tf into Transmission = 1:
                # Sponza in Cycles became rough glass everywhere (dark, with caustic fireflies).
                node.inputs["Transmission"].default_value = 0.0
            out_links = [l for l in nt.links if l.from_node == node]
            emit = node.inputs["Emission"]
            emissive = emit.is_linked or any(c > 0 for c in emit.default_value[:3])
            one_sided = not ARGS.two_sided_emission and (is_obj or mat.use_backface_culling)
            if emissive and one_sided:
                # Back faces: emission * (1 - Backfacing) = 0, as our one-sided emitters.
                geo = nt.nodes.new("ShaderNodeNewGeometry")
                mix = nt.nodes.new("ShaderNodeMixRGB")
                mix.blend_type = "MIX"
                links_in = [l.from_socket for l in nt.links if l.to_socket == emit]
                if links_in:
                    nt.links.new(links_in[0], mix.inputs["Color1"])
                else:
                    mix.inputs["Color1"].default_value = emit.default_value
                mix.inputs["Color2"].default_value = (0, 0, 0, 1)
                nt.links.new(geo.outputs["Backfacing"], mix.inputs["Fac"])
                nt.links.new(mix.outputs["Color"], emit)
            plain = (not node.inputs["Metallic"].is_linked and node.inputs["Metallic"].default_value == 0
                     and not node.inputs["Specular"].is_linked and node.inputs["Specular"].default_value == 0
                     and not node.inputs["Transmission"].is_linked
                     and node.inputs["Transmission"].default_value == 0)
            if ARGS.lambert and plain:
                # Principled's diffuse is Disney's (retro-reflection rises with roughness);
                # ours is Lambert. Diffuse BSDF with roughness 0 is Lambert.
                diff = nt.nodes.new("ShaderNodeBsdfDiffuse")
                diff.inputs["Roughness"].default_value = 0.0
                base = node.inputs["Base Color"]
                if base.is_linked:
                    nt.links.new(base.links[0].from_socket, diff.inputs["Color"])
                else:
                    diff.inputs["Color"].default_value = base.default_value
                shader = diff.outputs["BSDF"]
                if emissive:
                    # Ours makes a material with emission a pure emitter (no reflection).
                    em = nt.nodes.new("ShaderNodeEmission")
                    em.inputs["Strength"].default_value = node.inputs["Emission Strength"].default_value
                    if emit.is_linked:
                        nt.links.new(emit.links[0].from_socket, em.inputs["Color"])
                    else:
                        em.inputs["Color"].default_value = emit.default_value
                    shader = em.outputs["Emission"]
                for l in out_links:
                    nt.links.new(shader, l.to_socket)


def dedup_faces():
    # A face listed twice (coincident triangles) gives Cycles shadow acne: its rays skip only
    # the primitive they leave, so they hit the twin at t ~ 0. Ours offsets ray origins along
    # the normal and never sees the twin.
    import bmesh
    removed = 0
    for mesh in {o.data for o in bpy.data.objects if o.type == "MESH"}:
        bm = bmesh.new()
        bm.from_mesh(mesh)
        seen, dup = set(), []
        for f in bm.faces:
            key = frozenset(tuple(round(c, 6) for c in v.co) for v in f.verts)
            (dup.append(f) if key in seen else seen.add(key))
        bmesh.ops.delete(bm, geom=dup, context="FACES_ONLY")
        bm.to_mesh(mesh)
        bm.free()
        removed += len(dup)
    print(f"cycles_render: removed {removed} duplicate face(s)")


def configure(scene):
    r = scene.render
    r.engine = "CYCLES"
    r.resolution_x, r.resolution_y, r.resolution_percentage = ARGS.width, ARGS.height, 100
    r.pixel_aspect_x = r.pixel_aspect_y = 1
    r.film_transparent = False
    r.use_compositing = False
    r.use_sequencer = False
    r.threads_mode = "FIXED" if ARGS.threads > 0 else "AUTO"
    if ARGS.threads > 0:
        r.threads = ARGS.threads
    vs = scene.view_settings
    vs.view_transform, vs.look, vs.exposure, vs.gamma = "Standard", "None", 0.0, 1.0
    img = r.image_settings
    img.file_format, img.color_mode, img.color_depth, img.exr_codec = "OPEN_EXR", "RGB", "32", "ZIP"

    c = scene.cycles
    c.device = "CPU"
    c.samples = ARGS.spp
    c.use_adaptive_sampling = ARGS.adaptive_threshold > 0
    if ARGS.adaptive_threshold > 0:
        c.adaptive_threshold = ARGS.adaptive_threshold
        c.adaptive_min_samples = ARGS.adaptive_min_samples
    if ARGS.sample_count_out:
        scene.view_layers[0].cycles.pass_debug_sample_count = True
    c.use_denoising = False
    c.seed, c.use_animated_seed = ARGS.seed, False
    bounces = max(0, ARGS.max_depth + ARGS.bounces_offset)
    c.max_bounces = c.diffuse_bounces = c.glossy_bounces = c.transmission_bounces = bounces
    c.volume_bounces = bounces
    c.transparent_max_bounces = 64  # our alpha cut-outs cost no depth
    c.min_light_bounces = 0
    c.filter_glossy = 0.0
    c.caustics_reflective = c.caustics_refractive = True
    c.sample_clamp_direct = c.sample_clamp_indirect = 0.0
    c.light_sampling_threshold = 0.0  # no culling of weak lights: unbiased, as ours
    c.pixel_filter_type = {"box": "BOX", "blackman-harris": "BLACKMAN_HARRIS"}[ARGS.filter]
    c.filter_width = ARGS.filter_width / 2 if ARGS.filter == "blackman-harris" else ARGS.filter_width
    for opt, val in (("use_light_tree", False), ("use_guiding", False)):  # newer Blenders only
        if hasattr(c, opt):
            setattr(c, opt, val)


def timed_render():
    """Runs the render; returns its wall seconds and the stats events [(seconds from the start,
    text)]. Cycles reports its progress as stats lines ("Updating Scene BVH", ..., "Sample 0/N",
    ..., "Finished") printed to stdout just before the render_stats handlers run (which get no
    text in 3.4), so stdout goes to a file for the render and each handler call reads what was
    added: their times split the render call into set-up (scene sync, kernel loading, BVH build,
    light distributions) and path tracing proper."""
    import os
    import tempfile
    capture = tempfile.NamedTemporaryFile(prefix="cycles_render_stats_", delete=False)
    reader = open(capture.name, "rb")
    events = []
    t0 = time.perf_counter()

    def on_stats(*_):
        events.append((time.perf_counter() - t0, reader.read().decode(errors="replace")))

    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(capture.fileno(), 1)
    bpy.app.handlers.render_stats.append(on_stats)
    try:
        t0 = time.perf_counter()
        bpy.ops.render.render(write_still=False)
        seconds = time.perf_counter() - t0
    finally:
        bpy.app.handlers.render_stats.remove(on_stats)
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        reader.seek(0)
        sys.stdout.write(reader.read().decode(errors="replace"))
        sys.stdout.flush()
        reader.close()
        capture.close()
        os.remove(capture.name)
    return seconds, events


def main():
    # An empty file: no default cube, light or camera, and no add-on state to inherit.
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    import_scene(ARGS.scene)
    if ARGS.no_file_lights:
        for obj in [o for o in scene.objects if o.type == "LIGHT"]:
            bpy.data.objects.remove(obj, do_unlink=True)
    for light in bpy.data.lights:  # the file's lights: points and suns without size, as ours
        light.shadow_soft_size = 0.0
        if light.type == "SUN":
            light.angle = 0.0
    if ARGS.camera:
        set_camera(scene, ARGS.camera)
    else:
        cams = sorted((o for o in scene.objects if o.type == "CAMERA"), key=lambda o: o.name)
        if not cams:
            raise SystemExit("the scene has no camera: pass --camera")
        scene.camera = cams[0]
    set_world(scene)
    for s in ARGS.sun:
        add_sun(scene, s)
    adjust_materials(ARGS.scene.lower().endswith(".obj"))
    if ARGS.dedup_faces:
        dedup_faces()
    configure(scene)

    seconds, events = timed_render()
    first_sample = next((t for t, x in events if "| Sample " in x), None)
    finished = next((t for t, x in reversed(events) if "| Finished" in x), None)
    sample_seconds = finished - first_sample if first_sample is not None and finished is not None else None
    # The highest "Sample N/M" Cycles reported: with adaptive sampling, the samples of the pixels
    # that went furthest (the Debug Sample Count pass is the count divided by this).
    import re
    reached = max((int(n) for _, x in events for n in re.findall(r"\| Sample (\d+)/", x)), default=None)
    bpy.data.images["Render Result"].save_render(ARGS.out, scene=scene)
    if ARGS.sample_count_out:
        scene.render.image_settings.file_format = "OPEN_EXR_MULTILAYER"
        bpy.data.images["Render Result"].save_render(ARGS.sample_count_out, scene=scene)
    print(f"cycles_render: {ARGS.out} {ARGS.width}x{ARGS.height} {ARGS.spp} spp, "
          f"{scene.cycles.max_bounces} bounces"
          + (f", adaptive threshold {ARGS.adaptive_threshold:g}" if ARGS.adaptive_threshold > 0 else "")
          + f", render {seconds:.3f} s"
          + (f" (path tracing {sample_seconds:.3f} s)" if sample_seconds is not None else ""), flush=True)
    if ARGS.time_out:
        with open(ARGS.time_out, "w") as f:
            json.dump({"render_seconds": seconds, "sample_seconds": sample_seconds,
                       "setup_seconds": first_sample, "samples_reached": reached,
                       "seed": ARGS.seed, "threads": ARGS.threads,
                       "adaptive_threshold": ARGS.adaptive_threshold if ARGS.adaptive_threshold > 0 else None,
                       "adaptive_min_samples": ARGS.adaptive_min_samples if ARGS.adaptive_threshold > 0 else None,
                       "blender": bpy.app.version_string, "bounces": scene.cycles.max_bounces}, f)


ARGS = parse_args()
main()
