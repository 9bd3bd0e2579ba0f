#!/bin/bash
# Also run: a second Jacobi pass at 64 ranks, 3,000 iterations, 9 repeats, A B A B A B (jacobi64.txt).
# The lead's quiet re-measure after the twelfth round's merge (nothing else
# running). A = main after the merge (its built core in src/), B = main at the
# round's start (98cd6c6, a copy of src/ with its own built core).
cd /work/main
A=/work/main/src; B=/tmp/base12/src
M=examples/bag_of_tasks/lab-80mbit.db
echo "== start $(date -u +%H:%M:%S) $(uptime)"
for v in A B A B; do
  p=$A; [ $v = B ] && p=$B
  echo "-- Jacobi $v"
  PYTHONPATH=$p .venv/bin/python benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000 2>&1 | tail -4
done
for v in A B; do
  p=$A; [ $v = B ] && p=$B
  echo -n "CG $v: "; PYTHONPATH=$p .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact 2>&1 | tail -1
done
for v in A B A B; do
  p=$A; [ $v = B ] && p=$B
  echo -n "Allreduce 65536 $v: "; PYTHONPATH=$p /usr/bin/time -f "cpu %U+%S s, peak %M KB" .venv/bin/python benchmarks/engine_scale.py --ranks 65536 --cases allreduce 2>&1 | tail -2 | tr '\n' ' '; echo
done
echo "== replay $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=$A .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m --repeats 1 --delays-only 2>&1 | tail -25
echo "== SMPI 64 $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=$A .venv/bin/python benchmarks/engine_vs_smpi.py --ranks 64 --repeats 3 2>&1 | tail -8
echo "== topology 1024 $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=$A .venv/bin/python benchmarks/topology_vs_smpi.py --ranks 1024 --kernels jacobi,perm,bag --sharing simgrid --max-min-only 2>&1 | tail -30
echo "== end $(date -u +%H:%M:%S) $(uptime)"
