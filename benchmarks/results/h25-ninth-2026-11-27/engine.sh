#!/bin/bash
# Ninth round's figures: same-run A (this branch) / B (branch start f3f13e8, /tmp/h25-base) comparisons, then the targets.
cd /work/wt/h25
export PYTHONPATH=/tmp/h25-new/src   # A: this branch frozen at 863bd7f
B=/tmp/h25-base/src
echo "== start $(date -u +%H:%M:%S) $(uptime)"
for i in 1 2 3; do
  echo "-- CG 1024 x 3 runs, round $i"
  echo -n "A "; .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact | tail -1
  echo -n "B "; PYTHONPATH=$B .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact | tail -1
done
echo "== $(date -u +%H:%M:%S) $(uptime)"
for i in 1 2; do
  echo "-- Jacobi 64 1024, round $i"
  echo "A"; .venv/bin/python benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000 | tail -2
  echo "B"; PYTHONPATH=$B .venv/bin/python benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000 | tail -2
done
echo "== $(date -u +%H:%M:%S) $(uptime)"
echo "-- SMPI 64"
.venv/bin/python benchmarks/engine_vs_smpi.py --ranks 64 --repeats 3
echo "== $(date -u +%H:%M:%S) $(uptime)"
echo "-- Jacobi 65536 x 100"
/usr/bin/time -v .venv/bin/python benchmarks/engine_jacobi.py --ranks 65536 --repeats 1 --untraced 2>&1 | grep -E "^ *65536|Maximum resident|Elapsed|note"
echo "== $(date -u +%H:%M:%S) $(uptime)"
echo "-- CG 1024 x 100 runs, 2 workers"
/usr/bin/time -v .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 100 --workers 2 2>&1 | grep -E "^ *1024|Maximum resident|Elapsed|User time|System time"
echo "== end $(date -u +%H:%M:%S) $(uptime)"
