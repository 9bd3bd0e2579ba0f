#!/bin/bash
# Second A/B: the Jacobi core run alone (64 and 1,024 ranks, medians of 15 / 3) and 3 more CG rounds.
cd /work/wt/h25
A=/tmp/h25-new/src; B=/tmp/h25-base/src
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== start $(date -u +%H:%M:%S) $(uptime)"
for i in 1 2 3; do
  for v in A B; do
    p=$A; [ $v = B ] && p=$B
    r64=$(PYTHONPATH=$p .venv/bin/python /tmp/h25-jac.py 64 15 | awk '{print $6}' | med)
    r1k=$(PYTHONPATH=$p .venv/bin/python /tmp/h25-jac.py 1024 3 | awk '{print $6}' | med)
    echo "$v round $i: Jacobi core run 64 ranks median ${r64}s (126,000 msgs), 1024 ranks median ${r1k}s (2,046,000 msgs)"
  done
done
for i in 4 5 6; do
  echo -n "A round $i "; PYTHONPATH=$A .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact | tail -1
  echo -n "B round $i "; PYTHONPATH=$B .venv/bin/python benchmarks/engine_cg_calibrated.py --ranks 1024 --runs 3 --workers 1 --exact | tail -1
done
echo "== end $(date -u +%H:%M:%S) $(uptime)"
