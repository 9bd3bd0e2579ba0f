#!/bin/sh
# The replay figures for docs/trace.md (issue 25 item 6), run under the measurement lock.
cd /work/wt/h25r
M=examples/bag_of_tasks/lab-80mbit.db
echo "== $(date -u) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t20k --repeats 3 --runs 10 --reference
echo "== $(date -u) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r/t1m --repeats 3 --runs 10
echo "== $(date -u) $(uptime)"
if [ -f /tmp/h25r2/t10m/traces.otf2 ]; then
  free -g | head -2
  PYTHONPATH=src .venv/bin/python benchmarks/trace_replay_speed.py --machine $M /tmp/h25r2/t10m --repeats 1 --delays-only
  echo "== $(date -u) $(uptime)"
fi
