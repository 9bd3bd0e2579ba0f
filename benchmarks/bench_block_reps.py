"""Point-to-point blocks of MPIBench profiles read repetition by repetition.

A prediction draws every message from its block's distribution, so it
follows the block's mean; this shows what sets the mean.  For each
``send`` and ``isend`` block (every placement) of each profile given, it
prints the repetitions kept, the median and the mean (us), the median of
the repetitions in each window of :data:`WINDOWS` (a slow start shows there
even where preemptions set the means), and the three slowest samples as
``rank#repetition:us``.

    PYTHONPATH=src python benchmarks/bench_block_reps.py before.db after.db [--tests send,isend]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

#: Repetition windows [start, end) whose medians are printed (None: to the end).
WINDOWS = ((0, 10), (10, 50), (50, 100), (100, None))


def block_line(times: np.ndarray) -> str:
    """One block's figures from its (ranks, reps) times in seconds."""
    us = times * 1e6
    flat = us.ravel()
    reps = us.shape[1]
    slowest = np.argsort(-flat)[:3]
    slow = ", ".join(f"{i // reps}#{i % reps}:{flat[i]:.1f}" for i in slowest)
    windows = "".join(f"{np.median(us[:, a:b]):8.2f}" if us[:, a:b].size else f"{'':>8}"
                      for a, b in WINDOWS)
    return f"{reps:>5} {np.median(flat):8.3f} {flat.mean():8.3f}  {windows}   {slow}"


def main() -> int:
    from pevpm.profile.store import Profile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="+", type=Path)
    parser.add_argument("--tests", default="send,isend")
    args = parser.parse_args()
    spans = "".join(f"{a}-{b or 'end'}".rjust(8) for a, b in WINDOWS)
    print(f"{'profile':<24} {'block':<20} {'reps':>5} {'median':>8} {'mean':>8}  {spans}"
          "   slowest (rank#rep:us); windows: median of those repetitions")
    for path in args.profiles:
        with Profile.open(path) as prof:
            for test in args.tests.split(","):
                for key in prof.blocks(test=test):
                    print(f"{path.name:<24} {key.label:<20} "
                          + block_line(prof.samples(key, by_rank=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
