#!/bin/bash
# Smoke test of tools/cluster/slurm_node.py against real slurmctld/slurmd:
# starts a cluster in a fresh directory, checks the behaviours a launcher
# relies on (salloc/srun/sbatch/scancel, --input=all, srun under SIGKILL),
# stops it and checks nothing is left running. About a minute.
#
#   tools/cluster/slurm_smoke.sh [DIR]     exit 0 all passed, 1 a failure,
#                                          77 this machine cannot run Slurm
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
NODE="$HERE/slurm_node.py"
DIR=${1:-$(mktemp -d /tmp/slurm-smoke.XXXXXX)}
HOST=$(hostname -s)
# A number no other process on the machine is likely to sleep for.
M=$((700000 + RANDOM))
pass=0 fail=0

ok()  { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
count() { pgrep -f "^(/usr/bin/)?sleep $1\$" | wc -l; }
# wait_gone N SECONDS: until no `sleep N` runs; prints the seconds taken.
wait_gone() {
    local t0=$SECONDS
    while [ "$(count "$1")" != 0 ]; do
        [ $((SECONDS - t0)) -ge "$2" ] && { echo never; return 1; }
        sleep 0.5
    done
    echo $((SECONDS - t0))
}
# reap PID: wait up to 10 s for a client we started, then SIGKILL it.
reap() {
    for _ in $(seq 20); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
# wait_idle SECONDS: until the queue is empty.
wait_idle() {
    local t0=$SECONDS
    while [ -n "$(squeue -h 2>/dev/null)" ]; do
        [ $((SECONDS - t0)) -ge "$1" ] && return 1
        sleep 0.5
    done
}
wait_count() {  # wait_count N WANT SECONDS
    local t0=$SECONDS
    until [ "$(count "$1")" -ge "$2" ]; do
        [ $((SECONDS - t0)) -ge "$3" ] && return 1
        sleep 0.5
    done
}

python3 "$NODE" check || exit $?
mkdir -p "$DIR"
python3 "$NODE" up --dir "$DIR" > "$DIR/up.json" || { cat "$DIR/up.json"; exit 1; }
eval "$(python3 "$NODE" env --dir "$DIR")"
cleanup() { python3 "$NODE" down --dir "$DIR"; }
trap cleanup EXIT

out=$(timeout 60 salloc -Q -n 2 srun hostname 2>&1)
[ "$out" = "$HOST"$'\n'"$HOST" ] && ok "salloc -n 2 srun hostname" \
    || bad "salloc -n 2 srun hostname: $out"

out=$(timeout 60 salloc -Q -n 2 -c 1 bash -c \
    'echo "$SLURM_JOB_ID $SLURM_NTASKS $SLURM_CPUS_PER_TASK"' 2>&1)
[[ "$out" =~ ^[0-9]+\ 2\ 1$ ]] && ok "salloc -n 2 -c 1 env: $out" \
    || bad "salloc -n 2 -c 1 env: $out"

out=$(echo hello | timeout 60 srun -n 2 --input=all -K0 \
    --kill-on-bad-exit=0 bash -c 'read x; echo got $x' 2>&1)
[ "$out" = $'got hello\ngot hello' ] && ok "srun --input=all: both tasks read the line" \
    || bad "srun --input=all: $out"

# srun killed with SIGKILL: its helper child (forked at launch) sees the
# pipe to srun close and cancels the step with SIGKILL.
srun -n 2 sleep $M > /dev/null 2>&1 &
SRUN=$!
if wait_count $M 2 30; then
    kill -KILL $SRUN
    t=$(wait_gone $M 10) && ok "srun SIGKILL: tasks gone after ${t}s" \
        || bad "srun SIGKILL: tasks still running"
else bad "srun SIGKILL: tasks did not start"; fi
reap $SRUN
wait_idle 30 || bad "jobs still queued: $(squeue -h)"

# srun and its helper both killed (helper first: killed together, the
# helper sometimes still gets its kill-step request out, racing the
# SIGKILL): only slurmctld's InactiveLimit ends the job.
M2=$((M + 1))
srun -n 2 sleep $M2 > /dev/null 2>&1 &
SRUN=$!
if wait_count $M2 2 30; then
    kill -KILL $(pgrep -P $SRUN -f "^srun -n 2 sleep $M2\$")
    kill -KILL $SRUN
    t=$(wait_gone $M2 90) && ok "srun+helper SIGKILL: tasks gone after ${t}s (InactiveLimit)" \
        || bad "srun+helper SIGKILL: tasks still running"
else bad "srun+helper SIGKILL: tasks did not start"; fi
reap $SRUN
wait_idle 90 || bad "jobs still queued: $(squeue -h)"

# scancel of an salloc job: the step's tasks die at once; salloc's own
# command (it runs outside the job) only with salloc --kill-command (-K).
M3=$((M + 2))
salloc -Q -K -J "smoke-$M3" -n 2 bash -c "srun -n 2 sleep $M3 & sleep $M3; wait" \
    > /dev/null 2>&1 &
SALLOC=$!
if wait_count $M3 3 30; then
    scancel -n "smoke-$M3"
    t=$(wait_gone $M3 15) && ok "scancel salloc -K job: every process gone after ${t}s" \
        || bad "scancel salloc -K job: $(count $M3) left"
else bad "scancel salloc: tasks did not start"; fi
reap $SALLOC

cat > "$DIR/job.sh" <<EOF
#!/bin/bash
#SBATCH -n 2
#SBATCH -o $DIR/job-%j.out
srun hostname
EOF
J=$(sbatch --parsable "$DIR/job.sh")
for _ in $(seq 60); do [ -z "$(squeue -h -j "$J" 2>/dev/null)" ] && break; sleep 0.5; done
out=$(cat "$DIR/job-$J.out" 2>&1)
[ "$out" = "$HOST"$'\n'"$HOST" ] && ok "sbatch -n 2 srun hostname: output file" \
    || bad "sbatch: $out"

# down with a job still running: cancels it, stops every daemon.
M4=$((M + 3))
sbatch -Q -n 2 -o /dev/null --wrap "srun -n 2 sleep $M4" > /dev/null
wait_count $M4 2 30 || bad "sbatch sleep did not start"
trap - EXIT
python3 "$NODE" down --dir "$DIR" && ok "down exits 0" || bad "down failed"
left=$(pgrep -af "slurmctld -f $DIR/|slurmd -f $DIR/|munged --socket=$DIR/")
[ -z "$left" ] && [ "$(count $M4)" = 0 ] && ok "down leaves nothing running" \
    || bad "left after down: $left $(count $M4) sleeps"

echo "slurm smoke: $pass passed, $fail failed"
[ $fail = 0 ]
