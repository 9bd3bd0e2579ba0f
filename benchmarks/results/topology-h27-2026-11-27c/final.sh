#!/bin/bash
# Issue 27, round 11: the Jacobi, permutation and bag at 1,024 ranks again
# against SMPI with the round's last build (locked).
# Usage: bash final.sh SRC OUTFILE (from the repository root)
SRC=$1; OUT=$2
flock /tmp/pevpm-measure.lock sh -c "
    echo \"== start \$(date -u +%H:%M:%S) \$(uptime)\"
    PYTHONPATH=$SRC .venv/bin/python benchmarks/topology_vs_smpi.py --ranks 1024 --kernels jacobi,perm,bag --sharing simgrid --max-min-only
    echo \"== end \$(date -u +%H:%M:%S) \$(uptime)\"" > "$OUT" 2>&1
