#!/bin/sh
# Runs every scenario under scenarios/ with one mcfed binary and keeps what
# it prints, so two builds can be compared byte for byte:
#
#   crates/cluster/scripts/scenario-outputs.sh BEFORE_BINARY /tmp/before
#   crates/cluster/scripts/scenario-outputs.sh AFTER_BINARY  /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# Then two replays of generated traces whose queues run deep (below).
#
# For each scenario: the decisions, job events and summary
# (`--report json --events`), the `[[expect]]` results (`--check`, on
# standard error), the queues as `bqueues -l` shows them at the end
# (`--show queues`), and the exit status. Log lines lose their wall-clock
# timestamps. Run from the repository root.
set -u
binary=$1
out=$2
mkdir -p "$out"
find scenarios -name '*.toml' | sort | while read -r scenario; do
    name=$(echo "$scenario" | tr '/' '_')
    "$binary" run "$scenario" --report json --events --check \
        >"$out/$name.json" 2>"$out/$name.check"
    echo "exit $?" >>"$out/$name.check"
    "$binary" run "$scenario" --show queues >"$out/$name.queues" 2>&1
    echo "exit $?" >>"$out/$name.queues"
    sed -i -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z +//' "$out/$name.check" "$out/$name.queues"
done

# Replays whose queues run deep, with wide jobs: every job's start and end
# (`--jobs-csv`). The traces use only `mcfed gen swf` flags older than
# the index of pending jobs, so an older binary makes the same ones.
"$binary" gen swf -o "$out/deep.swf" --jobs 20000 --processors 16 --max-width 16 \
    --load 1.5 2>/dev/null
"$binary" replay "$out/deep.swf" --hosts 16 --quiet --jobs-csv "$out/deep.csv" >/dev/null
"$binary" gen swf -o "$out/mixed.swf" --jobs 20000 --processors 48 --max-width 32 \
    --load 1.3 --users 6 --seed 3 2>/dev/null
"$binary" replay "$out/mixed.swf" --hosts 16 --mxj 3 --quiet --jobs-csv "$out/mixed.csv" \
    >/dev/null
rm "$out/deep.swf" "$out/mixed.swf"
