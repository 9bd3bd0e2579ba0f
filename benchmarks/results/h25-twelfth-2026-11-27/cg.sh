#!/bin/bash
# Issue 25, twelfth round: the calibrated CG model at 1,024 ranks, three exact
# runs, A = this worktree, B = main at 98cd6c6 (/tmp/h25-base12), alternated.
#   flock /tmp/pevpm-measure.lock bash cg.sh
cd /work/wt/h25
date -u; uptime
for round in 1 2; do
  for side in A B; do
    if [ $side = A ]; then src=/work/wt/h25/src; else src=/tmp/h25-base12/src; fi
    echo "== $side round $round"
    PYTHONPATH=$src .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact
  done
done
date -u; uptime
