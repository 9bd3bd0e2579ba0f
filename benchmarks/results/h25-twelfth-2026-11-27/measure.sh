#!/bin/bash
# Issue 25, twelfth round: a 65,536-rank Allreduce (and its set-up phases),
# A = this worktree (h25-core), B = main at 98cd6c6 with its built core
# (/tmp/h25-base12), alternated, each a fresh process.
#   flock /tmp/pevpm-measure.lock bash measure.sh
cd /work/wt/h25
R=benchmarks/results/h25-twelfth-2026-11-27
date -u; uptime
for round in 1 2; do
  for side in A B; do
    if [ $side = A ]; then src=/work/wt/h25/src; else src=/tmp/h25-base12/src; fi
    echo "== $side round $round"
    PYTHONPATH=$src .venv/bin/python benchmarks/engine_scale.py --ranks 65536 --cases allreduce
    PYTHONPATH=$src .venv/bin/python $R/setup_phases.py allreduce 65536
  done
done
date -u; uptime
