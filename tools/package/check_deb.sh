#!/usr/bin/env bash
# Builds the Debian package, installs it with apt on this machine, and checks what it installed:
# `farm --version`, the systemd unit (systemd-analyze verify), the conffile, and a render of a
# bundled scene by the installed binary; then purges it. Needs root (apt); exits 77 (skipped)
# without it. tools/test.sh runs it after the suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ $(id -u) -ne 0 ]]; then echo "check_deb: skipped: installing a package needs root"; exit 77; fi
if dpkg-query -W -f='${Status}' farm 2>/dev/null | grep -q "install ok installed"; then
  echo "check_deb: skipped: a farm package is installed here already; not replacing it"; exit 77
fi
bash tools/package/build_deb.sh
deb=$(ls -t build/package/farm_*.deb | head -1)
work=$(mktemp -d)
cleanup() {
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq farm >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_deb: FAILED: $*" >&2; exit 1; }

dpkg-deb --field "$deb" Depends | grep -q "libembree3" || fail "Depends does not name libembree3: $(dpkg-deb --field "$deb" Depends)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >/dev/null || fail "apt install ./$deb failed"
[[ -x /usr/bin/farm ]] || fail "/usr/bin/farm is not installed"
version=$(/usr/bin/farm --version) || fail "farm --version exited $?"
[[ $version == "farm $(sed -n 's/^project(farm VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt) (commit "* ]] \
  || fail "farm --version says '$version'"
echo "check_deb: $version"
unit=/usr/lib/systemd/system/farm-worker.service
[[ -f $unit ]] || fail "$unit is not installed"
grep -q "^ExecStart=/usr/bin/farm worker" "$unit" || fail "$unit does not start /usr/bin/farm"
# verify checks the unit's syntax, its directives and that ExecStart's binary exists.
verify=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify: $verify"
[[ -z $verify ]] || fail "systemd-analyze verify printed: $verify"
dpkg-query --control-show farm conffiles | grep -qx /etc/default/farm-worker || fail "/etc/default/farm-worker is not a conffile"
/usr/bin/farm single /usr/share/farm/scenes/cornell.toml --width 32 --height 24 --spp 1 -o "$work/cornell.png" >/dev/null 2>&1 \
  || fail "the installed farm did not render /usr/share/farm/scenes/cornell.toml"
[[ -s $work/cornell.png ]] || fail "no image from the installed farm"
echo "check_deb: $deb installs, its unit verifies, and the installed farm renders"
