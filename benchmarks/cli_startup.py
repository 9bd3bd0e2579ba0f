"""How long ``pevpm --help`` and each command's ``--help`` take, start-up included
(issue 29: ``pevpm --help`` under 0.3 s; it imports no command module).

Each is run ``--repeats`` times as a fresh process; the median and range are
printed, with the machine's load before and after.

    .venv/bin/python benchmarks/cli_startup.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pevpm.cli import COMMANDS

PEVPM = Path(sys.executable).parent / "pevpm"


def seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(PEVPM), *argv], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for argv in (["--help"], *([name, "--help"] for name in COMMANDS)):
        times = sorted(seconds(argv) for _ in range(args.repeats))
        print(f"pevpm {' '.join(argv):<20} {statistics.median(times):.3f} s "
              f"({times[0]:.3f}-{times[-1]:.3f})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
