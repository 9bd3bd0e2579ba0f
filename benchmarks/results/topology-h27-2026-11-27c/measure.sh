#!/bin/bash
# Issue 27, round 11: every kernel against SMPI at 1,024 ranks (then 64 and
# 256), max-min sharing weighted as SimGrid's, one locked run per command.
# SRC: a copy of the worktree's src with its built extensions (commit
# dd351ce), so rebuilding the worktree meanwhile cannot touch the run.
# Usage: bash measure.sh SRC OUTDIR (from the repository root)
SRC=$1; OUT=$2
run() {
    local name=$1; shift
    flock /tmp/pevpm-measure.lock sh -c "
        echo \"== start \$(date -u +%H:%M:%S) \$(uptime)\"
        PYTHONPATH=$SRC .venv/bin/python benchmarks/topology_vs_smpi.py $*
        echo \"== end \$(date -u +%H:%M:%S) \$(uptime)\"" > "$OUT/$name.txt" 2>&1
}
run vs-smpi-1024 --ranks 1024 --kernels jacobi,perm,bag --sharing simgrid --max-min-only
run vs-smpi-fft-1024 --ranks 1024 --kernels fft --sharing simgrid --max-min-only
run vs-smpi-64-256 --ranks 64,256 --sharing simgrid --max-min-only
