#!/bin/bash
# Issue 27, round 13: the reserved FFT at 1,024 ranks (the default sharing),
# the single switch beside each network, two builds interleaved in the same
# locked run: OLD (before the walk's cached link states and the reused
# pruning floor) and NEW. OLD and NEW are copies of src with their built
# extensions. Usage: bash speed.sh OLD NEW OUTFILE (from the repository root)
OLD=$1; NEW=$2; OUT=$3
flock /tmp/pevpm-measure.lock sh -c "
    echo \"== start \$(date -u +%H:%M:%S) \$(uptime)\"
    for src in $OLD $NEW; do
        echo \"== \$src\"
        PYTHONPATH=\$src .venv/bin/python benchmarks/topology_vs_smpi.py --ranks 0 --speed 1024 --kernels fft
    done
    echo \"== end \$(date -u +%H:%M:%S) \$(uptime)\"" >> "$OUT" 2>&1
