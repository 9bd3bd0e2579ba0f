"""Estimated clock offsets and error bounds at 2 and 4 ranks on this machine.

All ranks run on one host, so every true offset is zero: each estimated
offset must lie within its rank's error bound (half the best round trip +
clock resolution).  Runs ``python -m pevpm.bench.clockcheck`` under mpiexec
for both sync methods and prints, per rank, the offsets of the two syncs,
the bound, and whether they are within it, plus how long a sync took.

    PYTHONPATH=src python benchmarks/bench_clock_sync.py [--resend-limit 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
MPIEXEC = Path(sys.executable).with_name("mpiexec")


def check(nprocs: int, method: str, resend_limit: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([str(MPIEXEC), "-n", str(nprocs), sys.executable, "-m",
                          "pevpm.bench.clockcheck", "--method", method, "--resend-limit",
                          str(resend_limit)], check=True, capture_output=True, text=True,
                         env=env).stdout
    return json.loads(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resend-limit", type=int, default=1000)
    args = parser.parse_args()
    all_within = True
    print(f"resend limit {args.resend_limit}; offsets and bounds in microseconds")
    for nprocs in (2, 4):
        for method in ("pairwise", "hierarchical"):
            result = check(nprocs, method, args.resend_limit)
            rows = result["rows"]
            print(f"-n {nprocs} {method}: sync took {rows[0]['first_sync_s'] * 1e3:.1f} ms")
            for row in rows[1:]:
                offsets = [o / 1e3 for o in row["offset_ns"]]
                bound = row["error_bound_ns"] / 1e3
                within = all(abs(o) <= bound for o in offsets)
                all_within &= within
                print(f"  rank {row['rank']}: offsets {offsets[0]:+8.3f} {offsets[1]:+8.3f}  "
                      f"bound {bound:7.3f}  best rtt {row['best_rtt_ns'][0] / 1e3:7.3f}  "
                      f"{'within' if within else 'OUTSIDE'}")
    print("all offsets within bound" if all_within else "SOME OFFSETS OUTSIDE THEIR BOUND")
    return 0 if all_within else 1


if __name__ == "__main__":
    raise SystemExit(main())
