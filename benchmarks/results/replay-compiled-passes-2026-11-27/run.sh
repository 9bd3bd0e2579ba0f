#!/bin/sh
# Replay figures after the compiled conversion passes (issue 25 item 6, eleventh round),
# run from the worktree's root under the measurement lock:
#   flock /tmp/pevpm-measure.lock sh benchmarks/results/replay-compiled-passes-2026-11-27/run.sh
# (SRC=DIR: a copy of src/ to time, so the worktree can change meanwhile)
# Traces: mpicc -O2 -o long_halo benchmarks/programs/long_halo.c;
#   pevpm trace -o /tmp/h25r/t100k -- mpiexec -n 2 ./long_halo 100000    (1,015,630 calls)
#   pevpm trace -o /tmp/h25r/t1m -- mpiexec -n 2 ./long_halo 1000000     (10,156,254 calls)
M=examples/bag_of_tasks/lab-80mbit.db
echo "== $(date -u) $(uptime)"
PYTHONPATH=${SRC:-src} .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m --repeats 3 --delays-only
echo "== $(date -u) $(uptime)"
PYTHONPATH=${SRC:-src} .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t100k --repeats 3 --runs 10
echo "== $(date -u) $(uptime)"
