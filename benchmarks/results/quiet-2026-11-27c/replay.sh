#!/bin/sh
# The lead's quiet re-run of the replay figures after the merge (issue 25 item 6, tenth round; the core reads the
# instruction arrays), run under the measurement lock:
#   flock /tmp/pevpm-measure.lock sh benchmarks/results/replay-core-arrays-2026-11-27/run.sh
# Traces: mpicc -O2 -o long_halo benchmarks/programs/long_halo.c;
#   pevpm trace -o /tmp/h25r/t100k -- mpiexec -n 2 ./long_halo 100000    (1,015,630 calls)
#   pevpm trace -o /tmp/h25r/t1m -- mpiexec -n 2 ./long_halo 1000000     (10,156,254 calls)
cd /work/main
M=examples/bag_of_tasks/lab-80mbit.db
echo "== $(date -u) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m --repeats 2 --delays-only
echo "== $(date -u) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t100k --repeats 3 --runs 10
echo "== $(date -u) $(uptime)"
