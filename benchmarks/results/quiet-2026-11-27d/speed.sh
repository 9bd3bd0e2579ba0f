#!/bin/bash
# The lead's quiet re-measure, second part: the FFT (and the rest) against one
# switch at 1,024 ranks, and the Jacobi benchmark at 65,536 ranks x 100.
cd /work/main
echo "== start $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/topology_vs_smpi.py --ranks 0 --speed 1024 2>&1 | tail -25
echo "== 65536 $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/engine_jacobi.py --ranks 65536 --repeats 1 --untraced --iterations 100 2>&1 | tail -3
echo "== end $(date -u +%H:%M:%S) $(uptime)"
