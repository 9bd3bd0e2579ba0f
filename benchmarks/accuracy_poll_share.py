"""How much of a core a waiting MPICH rank takes while other ranks compute (issue 14).

Runs ``benchmarks/oversubscribed/poll_share.py`` under ``mpiexec -n RANKS``
on this host (more ranks than cores): ``--computing`` ranks do a fixed
amount of CPU work while the others wait for them, alternately asleep and
blocked in ``MPI_Recv`` (MPICH's busy-polling wait).  For each round it
takes every rank's CPU seconds over its wall seconds, and prints

* ``share``: the mean CPU share of a waiting rank divided by that of a
  computing rank (1: a waiting rank takes as much of a core as a computing
  one, pevpm's ``wait=poll``; 0: none, ``wait=sleep``).  Other processes
  on the machine take from both alike, so the ratio holds on a busy machine
  too;
* ``stretch``: the computing ranks' wall time with the others polling over
  that with them asleep, and what processor sharing predicts from ``share``
  (``min(1, C / (k + share * w))`` on ``C`` cores, ``k`` computing,
  ``w`` waiting).

    PYTHONPATH=src python benchmarks/accuracy_poll_share.py --ranks 4 --computing 2
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from pevpm.host import probe_machine, usable_cores
from pevpm.validate.runner import find_mpiexec

PROGRAM = Path(__file__).resolve().parent / "oversubscribed" / "poll_share.py"


def rounds(ranks: int, computing: int, spins: int, count: int) -> list[list[float]]:
    """Per round: asleep wall, computing share, waiting share, then the same blocked."""
    out = subprocess.run([find_mpiexec(), "-n", str(ranks), sys.executable, str(PROGRAM),
                          str(computing), str(spins), str(count)],
                         capture_output=True, text=True, check=True, timeout=900)
    return [[float(x) for x in line.split()] for line in out.stdout.splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--computing", type=int, default=2)
    parser.add_argument("--spins", type=int, default=8_000_000,
                        help="additions per round on each computing rank (about 0.3 s)")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    cores = usable_cores()
    print(f"machine before: {probe_machine().describe()}")
    data = rounds(args.ranks, args.computing, args.spins, args.rounds)
    print(f"machine after:  {probe_machine().describe()}")
    waiting = args.ranks - args.computing
    print(f"{args.ranks} ranks on {cores} cores: {args.computing} computing, {waiting} waiting")
    print(f"{'round':>5} {'asleep s':>9} {'polling s':>9} {'cpu computing':>13} "
          f"{'cpu waiting':>11} {'share':>6} {'stretch':>7} {'PS':>5}")
    shares, stretches = [], []
    for i, (asleep, _, _, polling, busy, idle) in enumerate(data, 1):
        share = idle / busy
        stretch = polling / asleep
        model = max(1.0, (args.computing + share * waiting) / cores)
        shares.append(share)
        stretches.append(stretch)
        print(f"{i:5d} {asleep:9.4f} {polling:9.4f} {busy:13.3f} {idle:11.3f} "
              f"{share:6.2f} {stretch:7.2f} {model:5.2f}")
    print(f"median share {statistics.median(shares):.2f}, "
          f"median stretch {statistics.median(stretches):.2f} "
          f"(full share predicts {max(1.0, args.ranks / cores):.2f})")


if __name__ == "__main__":
    main()
