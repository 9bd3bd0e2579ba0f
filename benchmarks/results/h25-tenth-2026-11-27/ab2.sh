#!/bin/sh
# Tenth round, second A/B (issue 25): A = this round's build, B = main's, alternated.
# A: a copy of this round's src/ with its built core (commit 71a0922); B: a copy of main (d18877c) with its own.
A=/tmp/h25-A; B=/tmp/h25-base10
PY=/work/wt/h25/.venv/bin/python
export OPENBLAS_NUM_THREADS=1
cd /work/wt/h25
echo "# start $(date -u +%FT%TZ); uptime: $(uptime)"
for k in 1 2 3; do
  for s in A B; do
    src=$A; [ $s = B ] && src=$B
    echo "## CG 1,024 x 3 runs, build $s"; PYTHONPATH=$src/src $PY benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact | tail -1
  done
done
echo "# uptime: $(uptime)"
for k in 1 2 3; do
  for s in A B; do
    src=$A; [ $s = B ] && src=$B
    echo "## Jacobi Core.run only, 1,024 ranks x 3 and 64 ranks x 9, build $s"
    PYTHONPATH=$src/src $PY benchmarks/results/h25-ninth-2026-11-27/jacobi_core_run.py 1024 3
    PYTHONPATH=$src/src $PY benchmarks/results/h25-ninth-2026-11-27/jacobi_core_run.py 64 9
  done
done
echo "# uptime: $(uptime)"
for k in 1 2; do
  for s in A B; do
    src=$A; [ $s = B ] && src=$B
    echo "## Jacobi, build $s"; PYTHONPATH=$src/src $PY benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000 | tail -2
  done
done
echo "# end $(date -u +%FT%TZ); uptime: $(uptime)"
