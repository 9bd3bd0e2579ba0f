#!/bin/sh
# The tenth round's locked measurement (issue 25): this build (A) against main's (B), alternated.
# A: a copy of this round's src/ with its built core (commit 71a0922); B: a copy of main (d18877c) with its own.
A=/tmp/h25-A; B=/tmp/h25-base10
PY=/work/wt/h25/.venv/bin/python
export OPENBLAS_NUM_THREADS=1
cd /work/wt/h25
echo "# start $(date -u +%FT%TZ); uptime: $(uptime)"
for k in 1 2; do
  for s in A B; do
    src=$A; [ $s = B ] && src=$B
    echo "## CG 1,024 x 3 runs, build $s"; PYTHONPATH=$src/src $PY benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact
  done
done
echo "# uptime: $(uptime)"
for k in 1 2; do
  for s in A B; do
    src=$A; [ $s = B ] && src=$B
    echo "## Jacobi, build $s"; PYTHONPATH=$src/src $PY benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000
  done
done
echo "# uptime: $(uptime)"
echo "## SMPI ratio at 64, build A"; PYTHONPATH=$A/src $PY benchmarks/engine_vs_smpi.py --ranks 64 --repeats 3
echo "# uptime: $(uptime)"
echo "## Jacobi 65,536 x 100, build A"; PYTHONPATH=$A/src $PY benchmarks/engine_jacobi.py --ranks 65536 --repeats 1 --untraced --iterations 100
echo "# end $(date -u +%FT%TZ); uptime: $(uptime)"
