#!/bin/bash
# Issue 25, eleventh round: one Jacobi iteration at 1,048,576 ranks on A
# (/tmp/h25-A, branch h25-speed at 2fd5380), a fresh process (engine_scale.py).
# Run WITHOUT the lock (other engineers held it from 07:06 on): bash million.sh
cd /work/wt/h25
date -u; uptime
PYTHONPATH=/tmp/h25-A/src .venv/bin/python benchmarks/engine_scale.py --ranks 1048576 --cases jacobi
date -u; uptime
