#!/bin/bash
# The held-jobs benchmark (issue 25 item 3, docs/performance.md): one
# cluster process with --state, TOTAL jobs submitted with `mcfed bsub
# --from` in steps of STEP (one bsub per step), every job held (a one-slot
# cluster: the first job runs 100 h, every other one pends). After each
# step it prints the jobs held, the acknowledged rate bsub --stats reports
# and its longest acknowledgement latency (a stall shows there), and the
# process's VmRSS and VmHWM (/proc/PID/status).
#
#   bash crates/process/scripts/held-jobs.sh [TOTAL] [STEP] [DIR]
#
# MCFED names the binary (default: target/release/mcfed). The process is
# stopped at the end; DIR (default: a temporary directory) keeps its state.
set -euo pipefail
TOTAL=${1:-1000000}
STEP=${2:-100000}
DIR=${3:-$(mktemp -d)}
MCFED=${MCFED:-target/release/mcfed}
mkdir -p "$DIR"
cat > "$DIR/held.toml" <<'TOML'
name = "held jobs"
[[cluster]]
name = "Held"
[[cluster.host]]
name = "h"
MXJ = 1
[[cluster.queue]]
name = "normal"
TOML
"$MCFED" certs init "$DIR/certs" --clusters Held --force > /dev/null
for ((n = 0; n < STEP; n++)); do echo "-J held$n --run-time 100h"; done > "$DIR/jobs.txt"
"$MCFED" cluster --scenario "$DIR/held.toml" --name Held --certs "$DIR/certs" \
    --state "$DIR/state" --listen 127.0.0.1:0 --report none 2> "$DIR/cluster.log" &
PID=$!
trap 'kill $PID 2> /dev/null' EXIT
ADDRESS=
for _ in $(seq 100); do
    ADDRESS=$(grep -o 'listening on [0-9.:]*' "$DIR/cluster.log" | awk '{print $3}' || true)
    [ -n "$ADDRESS" ] && break
    sleep 0.2
done
echo "jobs held | acknowledged jobs/s | VmRSS KB | VmHWM KB | RSS bytes a job | max ack latency"
for ((held = STEP; held <= TOTAL; held += STEP)); do
    "$MCFED" bsub --address "$ADDRESS" --cluster Held --certs "$DIR/certs" -q normal \
        --from "$DIR/jobs.txt" --stats -o json > /dev/null 2> "$DIR/stats.txt"
    rate=$(grep -o '[0-9]* jobs/s' "$DIR/stats.txt" | awk '{print $1}')
    latency=$(grep -o 'max [0-9.]* [a-zµ]*s' "$DIR/stats.txt" | awk '{print $2, $3}' || true)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
    echo "$held | $rate | $rss | $hwm | $((rss * 1024 / held)) | $latency"
done
