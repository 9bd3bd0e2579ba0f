#!/bin/bash
# Issue 25, eleventh round: A = a copy of branch h25-speed at 2fd5380 (/tmp/h25-A, its
# built core), B = main at the round's start (bf7bdeb, /tmp/h25-base, its own
# built core); both run by the worktree's interpreter, alternated.
# Run WITHOUT the lock on 2026-11-27 at 07:55 UTC (other engineers held
# /tmp/pevpm-measure.lock from 07:06 on): bash measure.sh
cd /work/wt/h25
PY=.venv/bin/python
run() { local w=$1; shift; echo "== $w: $*"; PYTHONPATH=/tmp/h25-$w/src $PY "$@"; }
date -u; uptime
for round in 1 2; do
  for w in A base; do
    run $w benchmarks/engine_jacobi.py --ranks 64 1024 --repeats 5 --untraced --iterations 1000
  done
done
for w in A base A base; do
  run $w benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact
done
for w in A base; do
  run $w benchmarks/engine_vs_smpi.py --ranks 64 --repeats 3
done
for w in A base; do
  run $w benchmarks/engine_jacobi.py --ranks 65536 --repeats 1 --untraced --iterations 100
done
date -u; uptime
