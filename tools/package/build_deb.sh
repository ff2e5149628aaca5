#!/usr/bin/env bash
# Builds the farm's Debian package into build/package/farm_VERSION_ARCH.deb: the binary (built
# if needed, as the README's first command builds it), the bundled scenes, the docs and the
# worker's systemd unit, with its library dependencies found by dpkg-shlibdeps.
# The build folder is configured with the prefix /usr, as a package's files are (the unit then
# names /usr/bin/farm and /etc/default/farm-worker); nothing is recompiled for it.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/build.sh --farm-only -DCMAKE_INSTALL_PREFIX=/usr
(cd build && cpack -G DEB -B "$PWD/package" >/dev/null)
deb=$(ls -t build/package/farm_*.deb | head -1)
echo "package: $deb"
