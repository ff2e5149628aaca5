#!/usr/bin/env bash
# Runs a command inside a fresh copy of a debootstrapped Debian 12 root holding a fresh clone of
# this repository at /root/farm, with /proc, /sys, /dev bound and a load-average sampler running
# on the host; unmounts everything afterwards (issue 40, item 10; results/first_command.md).
#   first_command_fresh.sh BASE ROOT LOG -- COMMAND...
# BASE: a root made once with
#   debootstrap --variant=minbase bookworm BASE http://deb.debian.org/debian
# ROOT: made from BASE (cp -a) and must not exist; it is left behind for inspection (rm -rf it).
# LOG: the load samples ("epoch load1 load5 load15 busy%", every 5 s) go to LOG.load.
set -euo pipefail
base=$1 root=$2 log=$3
shift 3
[[ "${1:-}" == "--" ]] && shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
[[ ! -e "$root" ]] || { echo "$root exists" >&2; exit 2; }
cp -a "$base" "$root"
git clone -q "$repo" "$root/root/farm"
# This driver and the stage runner may be newer than the last commit.
cp "$repo"/tools/bench/first_command_*.sh "$root/root/farm/tools/bench/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cleanup() {
  [[ -n "${sampler:-}" ]] && kill "$sampler" 2>/dev/null || true
  for m in dev/pts dev sys proc; do umount "$root/$m" 2>/dev/null || umount -l "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
mount --bind /proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
(
  read -r _ a b c d e f g _ < /proc/stat
  prev_total=$((a+b+c+d+e+f+g)) prev_idle=$d
  while sleep 5; do
    read -r _ a b c d e f g _ < /proc/stat
    total=$((a+b+c+d+e+f+g))
    busy=$(( 100 * ((total-prev_total) - (d-prev_idle)) / ((total-prev_total) > 0 ? (total-prev_total) : 1) ))
    prev_total=$total prev_idle=$d
    echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg) $busy"
  done
) > "$log.load" &
sampler=$!
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb LANG=C.UTF-8 bash -c 'cd /root/farm && "$@"' bash "$@" 2>&1 | tee "$log"
