#!/usr/bin/env bash
# Builds the Debian package, installs it with apt on this machine, and checks what it installed:
# `farm --version`, the systemd units (systemd-analyze verify), the conffiles, a render of a
# bundled scene by the installed binary and the service unit's command answering `farm jobs`; then purges it. Needs root (apt); exits 77 (skipped)
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
  [[ -s $work/serve.pid ]] && kill "$(cat "$work/serve.pid")" 2>/dev/null
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
for name in worker serve; do
  unit=/usr/lib/systemd/system/farm-$name.service
  [[ -f $unit ]] || fail "$unit is not installed"
  grep -q "^ExecStart=/usr/bin/farm $name" "$unit" || fail "$unit does not start /usr/bin/farm $name"
  # verify checks the unit's syntax, its directives and that ExecStart's binary exists.
  verify=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify $unit: $verify"
  [[ -z $verify ]] || fail "systemd-analyze verify $unit printed: $verify"
  dpkg-query --control-show farm conffiles | grep -qx /etc/default/farm-$name || fail "/etc/default/farm-$name is not a conffile"
done
/usr/bin/farm single /usr/share/farm/scenes/cornell.toml --width 32 --height 24 --spp 1 -o "$work/cornell.png" >/dev/null 2>&1 \
  || fail "the installed farm did not render /usr/share/farm/scenes/cornell.toml"
[[ -s $work/cornell.png ]] || fail "no image from the installed farm"
# The service unit's command line, as systemd would run it (its state in a folder of our own).
( set -a; . /etc/default/farm-serve; set +a
  /usr/bin/farm serve --state "$work/state" --bind "tcp://127.0.0.1:*" --endpoint-file "$work/ep" $FARM_SERVE_OPTIONS \
    >"$work/serve.log" 2>&1 & echo $! >"$work/serve.pid" )
for _ in $(seq 100); do [[ -s $work/ep ]] && break; sleep 0.1; done
[[ -s $work/ep ]] || fail "the installed farm serve did not start: $(cat "$work/serve.log")"
/usr/bin/farm jobs --server "$(cat "$work/ep")" >/dev/null || fail "the installed farm serve does not answer farm jobs"
kill "$(cat "$work/serve.pid")"
echo "check_deb: $deb installs, its units verify, and the installed farm renders and serves"
