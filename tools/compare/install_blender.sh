#!/usr/bin/env bash
# Installs what tools/compare needs: Debian's Blender (Cycles, CPU), numpy for Blender's
# glTF importer and our comparison, matplotlib for the figures, OpenImageIO's Python module
# to read EXRs. Idempotent; needs root (or sudo).
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# Another install (tools/setup.sh) may hold the apt lock: wait until its log says done.
if [ -f /tmp/setup.log ]; then
  for _ in $(seq 1 720); do
    [ "$(tail -1 /tmp/setup.log 2>/dev/null)" = "done" ] && break
    sleep 5
  done
fi

want=(blender python3-numpy python3-matplotlib python3-openimageio)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_blender: all present (${want[*]})"
  exit 0
fi
echo "install_blender: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Lock waits: a parallel apt run elsewhere should delay us, not fail us.
$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"
blender --version | head -1
