#!/bin/bash
cd /work/main
echo "== start $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/topology_vs_smpi.py --ranks 1024 --kernels jacobi,perm,bag --sharing simgrid --max-min-only 2>&1 | tail -30
echo "== mid $(date -u +%H:%M:%S) $(uptime)"
PYTHONPATH=src .venv/bin/python benchmarks/engine_vs_smpi.py --ranks 64 --repeats 3 2>&1 | tail -8
echo "== end $(date -u +%H:%M:%S) $(uptime)"
