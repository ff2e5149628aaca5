#!/usr/bin/env bash
# Renders the third-party scenes of ../shared/scenes as a new user would (their own cameras,
# textures and materials; our defaults where the files have none) into results/real_scenes/,
# and lists the commands in results/real_scenes/README.md. Skips, saying so, without
# ../shared/scenes. About 6 minutes on 2 cores.
#   bash tools/render_real_scenes.sh [SPP]
set -euo pipefail
cd "$(dirname "$0")/.."
spp=${1:-64}
shared=../shared/scenes
out=results/real_scenes
farm=./build/farm/farm
if [ ! -d "$shared" ]; then echo "skipped: $shared is absent"; exit 0; fi
mkdir -p "$out"
log="$out/README.md"
{
  echo "# Real scenes, rendered by \`farm single\`"
  echo
  echo "Made by \`bash tools/render_real_scenes.sh $spp\` on $(date -u '+%Y-%m-%d'); 2 threads, path tracing."
  echo "Each image's command is below it; render statistics in the .txt beside it."
  echo
} > "$log"
render() {  # name, then the arguments of `farm single` after the scene
  local name=$1; shift
  local cmd=("$farm" single "$@" -o "$out/$name.png" --threads 2)
  "${cmd[@]}" > "$out/$name.txt" 2>&1
  { echo "## $name"; echo; echo "![$name]($name.png)"; echo; echo "\`${cmd[*]}\`"; echo;
    grep -E "warning|Image|Geometry|Render time|Peak" "$out/$name.txt" | sed 's/^/    /'; echo; } >> "$log"
  echo "rendered $name"
}
render damaged_helmet "$shared/damaged-helmet/DamagedHelmet.gltf" --width 640 --spp "$spp"
render box_textured "$shared/gltf-basics/BoxTextured-glTF/BoxTextured.gltf" --width 480 --spp "$spp"
render cylinder_engine "$shared/gltf-basics/2CylinderEngine-glTF-Binary/2CylinderEngine.glb" --width 480 --spp "$spp"
render cameras_ortho "$shared/gltf-basics/Cameras/Cameras.gltf" --camera 1 --width 320 --spp "$spp"
# Sponza: the benchmark's camera and light, textures from its MTL.
render sponza scenes/bench/bench_sponza_path.toml --assets "$shared" --frame 1 --width 800 --height 600 \
  --spp "$spp" --max-depth 6
# McGuire's Cornell box family: OBJ + MTL, lit by its own emissive `light` material (Ke), except Glossy.
for variant in Original Sphere Glossy Mirror Water; do
  lower=$(echo "$variant" | tr 'A-Z' 'a-z')
  cat > "$out/cornell_$lower.toml" <<TOML
[render]
width = 400
height = 400
max_depth = 8
[camera]
position = [0, 1, 3.1]
look_at = [0, 1, 0]
fov = 39.3
[[object]]
type = "mesh"
path = "cornell-box/CornellBox-$variant.obj"
TOML
  if [ "$variant" = Glossy ]; then
    # CornellBox-Glossy.mtl lacks the `light` material its OBJ uses (the quad is grey, nothing
    # emits; farm warns so): light it with the Original's emitter (Ke 17 12 4) at the same place.
    cat >> "$out/cornell_$lower.toml" <<TOML
[[material]]
name = "ceiling_light"
type = "emissive"
emission = [17, 12, 4]
[[object]]
type = "quad"
material = "ceiling_light"
corner = [-0.24, 1.579, -0.22]
edge_u = [0.47, 0, 0]
edge_v = [0, 0, 0.38]
TOML
  fi
  render "cornell_$lower" "$out/cornell_$lower.toml" --assets "$shared" --spp "$spp"
done
echo "wrote $log"
