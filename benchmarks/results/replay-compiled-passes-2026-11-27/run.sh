#!/bin/sh
# Replay figures after the compiled conversion passes (issue 25 item 6, eleventh round):
# this branch (a copy of src/ at 3bc5599 in /tmp/h25r/meas-src) and main (bf7bdeb, a copy
# of /work/main/src in /tmp/h25r/main-src) in one session, raw output in replay.txt.
# NOT under /tmp/pevpm-measure.lock: it was held for over 45 minutes by another
# engineer's SimGrid run with four more waiting; load 3.5-6.3 (printed).
# Traces: mpicc -O2 -o long_halo benchmarks/programs/long_halo.c;
#   pevpm trace -o /tmp/h25r/t100k -- mpiexec -n 2 ./long_halo 100000    (1,015,630 calls)
#   pevpm trace -o /tmp/h25r/t1m -- mpiexec -n 2 ./long_halo 1000000     (10,156,254 calls)
cd /work/wt/h25r
M=examples/bag_of_tasks/lab-80mbit.db
echo "== branch (3bc5599) $(date -u) $(uptime)"
PYTHONPATH=/tmp/h25r/meas-src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m --repeats 2 --delays-only
echo "== $(date -u) $(uptime)"
PYTHONPATH=/tmp/h25r/meas-src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t100k --repeats 2 --runs 10
echo "== main (bf7bdeb) $(date -u) $(uptime)"
PYTHONPATH=/tmp/h25r/main-src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m --repeats 1 --delays-only
echo "== $(date -u) $(uptime)"
