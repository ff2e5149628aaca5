# Turns a .blend made by make_test_scene.py into one that writes passes, for the farm's multi-layer
# tests: OpenEXR MultiLayer output, two view layers that render, and on the first one diffuse
# colour, normal, depth, object and material index, ambient occlusion, mist, sample count and
# Cryptomatte (object, material, asset); the second holds the combined pass and depth only.
#   blender -b IN.blend --factory-startup -P tools/blender/make_passes_scene.py -- OUT.blend
import os
import sys

import bpy

out = os.path.abspath(sys.argv[sys.argv.index("--") + 1])
bpy.context.preferences.filepaths.save_version = 0
scene = bpy.context.scene
scene.render.image_settings.file_format = "OPEN_EXR_MULTILAYER"
scene.render.image_settings.color_depth = "32"
scene.render.use_single_layer = False
scene.render.use_compositing = False  # Blender's own render of it: the render layers, as the farm's
first = scene.view_layers[0]
for flag in ("use_pass_z", "use_pass_normal", "use_pass_diffuse_color", "use_pass_object_index",
             "use_pass_material_index", "use_pass_ambient_occlusion", "use_pass_mist",
             "use_pass_cryptomatte_object", "use_pass_cryptomatte_material", "use_pass_cryptomatte_asset"):
    setattr(first, flag, True)
first.cycles.pass_debug_sample_count = True
second = scene.view_layers.new("Background")
second.use_pass_z = True
bpy.ops.wm.save_as_mainfile(filepath=out)
