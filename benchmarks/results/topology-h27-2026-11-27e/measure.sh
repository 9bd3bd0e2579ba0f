#!/bin/bash
# Issue 27, round 13: max-min flows enter the sharing after their route's
# latency (f89dca7). Every kernel against SMPI, "simgrid" sharing, one
# locked run per command (each under 5 minutes). SMPI's FFT at 1,024 ranks on
# the torus and the dragonfly takes 7-11 minutes, so those two run pevpm
# alone (--no-smpi); SMPI's simulated times there are round 11's.
# SRC: a copy of the worktree's src with its built extensions, so that
# rebuilding the worktree meanwhile cannot touch the run.
# Usage: bash measure.sh SRC OUTDIR (from the repository root)
SRC=$1; OUT=$2
run() {
    local name=$1; shift
    flock /tmp/pevpm-measure.lock sh -c "
        echo \"== start \$(date -u +%H:%M:%S) \$(uptime)\"
        PYTHONPATH=$SRC .venv/bin/python benchmarks/topology_vs_smpi.py $*
        echo \"== end \$(date -u +%H:%M:%S) \$(uptime)\"" > "$OUT/$name.txt" 2>&1
}
run vs-smpi-64-256 --ranks 64,256 --sharing simgrid --max-min-only
run vs-smpi-1024 --ranks 1024 --kernels jacobi,perm,bag --sharing simgrid --max-min-only
run vs-smpi-fft-1024-fat-tree --ranks 1024 --kernels fft --kinds fat-tree --sharing simgrid --max-min-only
run fft-1024-torus --ranks 1024 --kernels fft --kinds torus --sharing simgrid --max-min-only --no-smpi
run fft-1024-dragonfly --ranks 1024 --kernels fft --kinds dragonfly --sharing simgrid --max-min-only --no-smpi
