#!/bin/sh
# Replay figures, twelfth round (issue 25 item 6): this branch (h25-replay) against main
# at 98cd6c6 (a copy of /work/main/src with its built modules in /tmp/h25r-base/src),
# each step under /tmp/pevpm-measure.lock (10:20-10:25 UTC, load 3.4-7.5: other
# engineers' builds and tests). Raw output: replay.txt (benchmark, one run each),
# time-v.txt (pevpm replay under /usr/bin/time -v, two of each, alternated).
# Trace: mpicc -O2 -o long_halo benchmarks/programs/long_halo.c;
#   pevpm trace -o /tmp/h25r/t1m -- mpiexec -n 2 ./long_halo 1000000   (10,156,254 calls)
cd /work/wt/h25r
M=examples/bag_of_tasks/lab-80mbit.db
echo "== new $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m \
    --repeats 1 --delays-only
echo "== main $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=/tmp/h25r-base/src .venv/bin/python /work/main/benchmarks/trace_replay_speed.py \
    --machine $M /tmp/h25r/t1m --repeats 1 --delays-only
for v in new:src main:/tmp/h25r-base/src new:src main:/tmp/h25r-base/src; do
  echo "== ${v%%:*} $(date -u +%H:%M:%S) $(uptime)"
  PYTHONPATH=${v#*:} /usr/bin/time -v .venv/bin/python -m pevpm replay /tmp/h25r/t1m \
      --machine $M --json 2>&1 | grep -E '"mean"|User time|System time|Maximum resident|Minor'
done
