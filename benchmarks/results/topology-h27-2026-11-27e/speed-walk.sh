#!/bin/bash
# Issue 27, round 13: the reserved dragonfly and torus FFTs at 1,024 ranks,
# the build before (OLD) and after (NEW) the walk's cached link states and the
# reused pruning floor, interleaved in one locked run, and each build's user
# instructions (perf stat, which the load does not sway).
# Usage: bash speed-walk.sh OLD NEW OUTFILE (from the repository root)
OLD=$1; NEW=$2; OUT=$3
flock /tmp/pevpm-measure.lock sh -c "
    echo \"== start \$(date -u +%H:%M:%S) \$(uptime)\"
    for kind in dragonfly torus; do
        for src in $OLD $NEW $OLD $NEW; do
            echo \"== \$src\"
            PYTHONPATH=\$src .venv/bin/python benchmarks/results/topology-h27-2026-11-27e/one_kernel.py fft \$kind 1024
        done
    done
    echo \"== end \$(date -u +%H:%M:%S) \$(uptime)\"" >> "$OUT" 2>&1
for src in $OLD $NEW; do
    echo "== perf stat $src" >> "$OUT"
    PYTHONPATH=$src perf stat -x, -e instructions:u .venv/bin/python benchmarks/results/topology-h27-2026-11-27e/one_kernel.py fft dragonfly 1024 >> "$OUT" 2>&1
done
