#!/bin/bash
# Issue 27, round 11: pevpm alone at 1,024 ranks, the single switch beside
# each network (flows reserved, from the send), locked.
# SRC: a copy of the worktree's src with its built extensions (commit in
# docs/topology.md).  Usage: bash speed.sh SRC OUTFILE (from the repository root)
SRC=$1; OUT=$2
flock /tmp/pevpm-measure.lock sh -c "
    echo \"== start \$(date -u +%H:%M:%S) \$(uptime)\"
    PYTHONPATH=$SRC .venv/bin/python benchmarks/topology_vs_smpi.py --ranks 0 --speed 1024
    echo \"== end \$(date -u +%H:%M:%S) \$(uptime)\"" > "$OUT" 2>&1
