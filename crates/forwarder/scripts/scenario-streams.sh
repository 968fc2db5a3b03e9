#!/bin/sh
# Writes the decision stream of every bundled scenario, as `mcfed BIN run
# SCENARIO --report json` prints it (also with --events, and with --oracle),
# into OUTDIR, one file per scenario and variant. Run it with the binary
# before and after a change and compare: `diff -r BEFORE AFTER` must print
# nothing when decisions are meant to stay identical (issue 25, item 2).
#
# Usage: scenario-streams.sh BIN OUTDIR   (from the repository's root)
set -u
bin=$1
out=$2
mkdir -p "$out"
for scenario in scenarios/*/*.toml; do
    name=$(echo "$scenario" | tr / _)
    # Logs on standard error start with the wall-clock time: cut it off.
    "$bin" run "$scenario" --report json >"$out/$name.json" 2>"$out/$name.err.raw"
    echo "exit $?" >>"$out/$name.err.raw"
    sed -E 's/^[0-9T:.-]+Z //' "$out/$name.err.raw" >"$out/$name.err"
    rm "$out/$name.err.raw"
    "$bin" run "$scenario" --report json --events >"$out/$name.events.json" 2>/dev/null
    "$bin" run "$scenario" --report json --oracle >"$out/$name.oracle.json" 2>/dev/null
done
