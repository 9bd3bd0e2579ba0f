#!/bin/sh
# The million-rank Jacobi iteration on main's build (B), right after A's (million.sh).
cd /work/wt/h25
export OPENBLAS_NUM_THREADS=1
echo "# start $(date -u +%FT%TZ); uptime: $(uptime)"
PYTHONPATH=/tmp/h25-base10/src timeout 900 /work/wt/h25/.venv/bin/python benchmarks/engine_scale.py --ranks 1048576 --cases jacobi
echo "# end $(date -u +%FT%TZ); uptime: $(uptime)"
