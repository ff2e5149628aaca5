# Makes a small Cycles scene with Blender itself, for the farm's Blender backend tests and demos:
#   blender -b --factory-startup -P tools/blender/make_test_scene.py -- OUT.blend [WIDTH HEIGHT SAMPLES]
# A textured plane (its image, checker.png, is written beside the .blend and named by a relative
# path, as the farm requires), Blender's default cube with a glossy material, a sun, an area light
# and the default camera. The settings that read across pixels are off in the file itself
# (adaptive sampling, denoising, dithering), so `blender -b OUT.blend -f 1` by hand renders the
# image the farm's blocks reassemble to (docs/blender.md).
import os
import sys

import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
out = os.path.abspath(argv[0])
width, height, samples = (int(v) for v in (argv[1:4] if len(argv) >= 4 else (96, 72, 8)))
folder = os.path.dirname(out)
os.makedirs(folder, exist_ok=True)

bpy.context.preferences.filepaths.save_version = 0  # no OUT.blend1 beside it
scene = bpy.context.scene
r = scene.render
r.engine = "CYCLES"
r.resolution_x, r.resolution_y, r.resolution_percentage = width, height, 100
r.dither_intensity = 0
scene.cycles.samples = samples
scene.cycles.use_adaptive_sampling = False
scene.cycles.use_denoising = False
scene.cycles.device = "CPU"
scene.frame_start, scene.frame_end = 1, 2

# The texture: an 8x8 checker of two colours, saved as a PNG file beside the .blend.
size = 32
image = bpy.data.images.new("checker", size, size)
pixels = []
for y in range(size):
    for x in range(size):
        on = ((x // 4) + (y // 4)) % 2 == 0
        pixels += [0.9, 0.6, 0.1, 1.0] if on else [0.1, 0.2, 0.8, 1.0]
image.pixels = pixels
image.filepath_raw = os.path.join(folder, "checker.png")
image.file_format = "PNG"
image.save()

bpy.ops.mesh.primitive_plane_add(size=6, location=(0, 0, -1))
plane = bpy.context.active_object
material = bpy.data.materials.new("checkered")
material.use_nodes = True
nodes = material.node_tree.nodes
texture = nodes.new("ShaderNodeTexImage")
texture.image = image
material.node_tree.links.new(texture.outputs["Color"], nodes["Principled BSDF"].inputs["Base Color"])
plane.data.materials.append(material)

cube = bpy.data.objects["Cube"]
glossy = bpy.data.materials.new("glossy")
glossy.use_nodes = True
glossy.node_tree.nodes["Principled BSDF"].inputs["Roughness"].default_value = 0.15
glossy.node_tree.nodes["Principled BSDF"].inputs["Metallic"].default_value = 0.8
cube.data.materials.clear()
cube.data.materials.append(glossy)
# The cube turns between the two frames: an animation of two frames.
cube.rotation_euler = (0, 0, 0)
cube.keyframe_insert("rotation_euler", frame=1)
cube.rotation_euler = (0, 0, 0.6)
cube.keyframe_insert("rotation_euler", frame=2)

bpy.ops.object.light_add(type="SUN", location=(2, -2, 5))
bpy.context.active_object.data.energy = 3.0
bpy.data.objects["Light"].data.energy = 800.0

bpy.ops.wm.save_as_mainfile(filepath=out, relative_remap=True)
bpy.ops.file.make_paths_relative()
bpy.ops.wm.save_mainfile()
print("made", out)
