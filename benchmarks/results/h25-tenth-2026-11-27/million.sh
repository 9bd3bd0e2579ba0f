#!/bin/sh
# The tenth round's million-rank runs (issue 25): this build, each case in a fresh process.
# A: a copy of this round's src/ with its built core (commit 71a0922); B: a copy of main (d18877c) with its own.
cd /work/wt/h25
export OPENBLAS_NUM_THREADS=1
echo "# start $(date -u +%FT%TZ); uptime: $(uptime)"
PYTHONPATH=/tmp/h25-A/src timeout 1200 /work/wt/h25/.venv/bin/python benchmarks/engine_scale.py --ranks 1048576 --cases allreduce jacobi
echo "# end $(date -u +%FT%TZ); uptime: $(uptime)"
