#!/bin/bash
# Issue 25, twelfth round: a 1,048,576-rank Allreduce and one 1,048,576-rank
# Jacobi iteration on this worktree's build (engine_scale.py: each a fresh
# process), run WITHOUT the measurement lock (longer than its 5 minutes); a
# watchdog stops a child past 12 GB resident.   bash million.sh [CASES...]
cd /work/wt/h25
date -u; uptime; free -g | head -2
.venv/bin/python benchmarks/engine_scale.py --ranks 1048576 --cases ${@:-allreduce jacobi} &
top=$!
while kill -0 $top 2>/dev/null; do
  for pid in $(pgrep -P $top); do
    rss=$(ps -o rss= -p $pid 2>/dev/null || echo 0)
    if [ "${rss:-0}" -gt 12000000 ]; then echo "watchdog: $pid past 12 GB, stopped"; kill $pid; fi
  done
  sleep 2
done
wait $top
date -u; uptime
