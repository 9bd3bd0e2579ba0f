#!/bin/bash
cd /work/main
A=/work/main/src; B=/tmp/h25-base10/src   # B: main at the round's start (00bb949), its own built core
echo "== start $(date -u +%H:%M:%S) $(uptime)"
for i in 1 2; do
  for v in A B; do
    p=$A; [ $v = B ] && p=$B
    echo "-- $v round $i"
    PYTHONPATH=$p .venv/bin/python benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000 2>&1 | tail -4
  done
done
for i in 1 2; do
  echo -n "A CG round $i: "; PYTHONPATH=$A .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact 2>&1 | tail -1
  echo -n "B CG round $i: "; PYTHONPATH=$B .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact 2>&1 | tail -1
done
echo "== end $(date -u +%H:%M:%S) $(uptime)"
