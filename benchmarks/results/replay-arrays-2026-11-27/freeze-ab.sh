#!/bin/sh
# pevpm replay of the 1,015,630-call trace: CPU seconds with the collector frozen at the end (this commit) and without (LONG_REPLAY raised past it).
cd /tmp
echo "== $(date -u) $(uptime)"
for i in 1 2; do
  /usr/bin/time -f "frozen: user %U sys %S max %M KB" /work/wt/h25r/.venv/bin/pevpm replay /tmp/h25r/t1m --machine /work/wt/h25r/examples/bag_of_tasks/lab-80mbit.db --json > /dev/null
  /usr/bin/time -f "not frozen: user %U sys %S max %M KB" /work/wt/h25r/.venv/bin/python -c "
import sys
import pevpm.cli.replay as r
r.LONG_REPLAY = 10**12
from pevpm.cli import main
sys.exit(main(['replay', '/tmp/h25r/t1m', '--machine', '/work/wt/h25r/examples/bag_of_tasks/lab-80mbit.db', '--json']))" > /dev/null
done
echo "== $(date -u) $(uptime)"
