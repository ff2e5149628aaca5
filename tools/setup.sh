#!/usr/bin/env bash
# Installs the Debian packages the project needs.
#   setup.sh           everything: build, test, benchmark, plot (the README's second command)
#   setup.sh --render  only what building and running the farm binary needs (the README's first
#                      command: a fresh machine renders its first image without Chromium, Slurm,
#                      Blender or the test tools; POV-Ray and Blender scenes need those renderers)
# Idempotent: packages already present are skipped, so a second run costs one dpkg query.
# Works as root or through sudo; nothing is downloaded except from Debian's archive.
set -euo pipefail

render_packages=(
  build-essential cmake ninja-build pkg-config
  cppzmq-dev libzmq3-dev            # transport (issue 3)
  libembree-dev libtbb-dev          # ray tracing kernels and the task scheduler
  libopenimageio-dev                # image I/O
  libspdlog-dev libfmt-dev          # logging
  libassimp-dev                     # mesh import (OBJ, PLY, FBX)
  libtinygltf-dev                   # glTF 2.0 scenes (header-only loader)
  nlohmann-json3-dev                # glTF: its whole numbers checked before tinygltf narrows them to int
  libcli11-dev libtoml11-dev        # CLI and scene files
  libflatbuffers-dev flatbuffers-compiler libzstd-dev  # protocol
  libsodium-dev                     # content hashes of shipped assets (BLAKE2b)
  libcpp-httplib-dev                # the live view's web server (--http)
  libsqlite3-dev                    # the service's job queue (farm serve)
  bubblewrap                        # the sandbox every POV-Ray and Blender process runs in
)
test_packages=(
  git python3                       # the layering check, the tools
  openimageio-tools                 # oiiotool, used by tests/tools
  doctest-dev                       # unit tests
  chromium curl                     # the live view's and the service's pages, checked in a real (headless) browser and over HTTP
  python3-matplotlib                # plots
  python3-openimageio python3-numpy  # channel-by-channel checks of multi-layer EXRs (tools/blender/check_passes_exr.py)
  embree-tools                      # Embree's viewer/pathtracer for the benchmark
  clang-14 libclang-rt-14-dev       # libFuzzer targets (tools/fuzz.sh)
  openssh-server openssh-client iproute2  # ssh cluster tests: real sshd hosts (tools/cluster/ssh_hosts.py)
  slurmctld slurmd slurm-client munge     # Slurm tests: a single-node cluster (tools/cluster/slurm_node.py)
  povray povray-includes povray-examples  # the POV-Ray backend (.pov scenes) and the paper's chess2.pov
  blender                                 # the Blender Cycles backend (.blend scenes)
)

case "${1:-}" in
  --render) packages=("${render_packages[@]}") ;;
  "") packages=("${render_packages[@]}" "${test_packages[@]}") ;;
  *) echo "setup.sh: unknown option '$1' (--render, or nothing for every package)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --force-unsafe-io: dpkg does not fsync every file it unpacks (measured on a fresh Debian 12
# root: the render packages' install took 45-79 s instead of 121-151 s at the same CPU;
# results/first_command.md). A power cut during setup can leave a package's files half written
# (`dpkg --verify` names them; `apt-get install --reinstall` repairs them).
$SUDO apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}" >/dev/null
echo "setup: done"
