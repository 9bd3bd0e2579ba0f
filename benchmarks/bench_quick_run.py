"""Wall time of ``pevpm bench --quick`` at 2 and 4 ranks (the target is under a minute).

Prints, per process count, the wall time of the whole ``mpiexec`` run, the
number of blocks, how many were cut short by the time budget and the largest
clock synchronisation error bound.

    PYTHONPATH=src python benchmarks/bench_quick_run.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
MPIEXEC = Path(sys.executable).with_name("mpiexec")


def main() -> int:
    sys.path.insert(0, str(SRC))
    from pevpm.profile.store import Profile

    env = dict(os.environ, PYTHONPATH=str(SRC))
    with tempfile.TemporaryDirectory() as tmp:
        for nprocs in (2, 4):
            db = Path(tmp) / f"quick{nprocs}.db"
            began = time.perf_counter()
            subprocess.run([str(MPIEXEC), "-n", str(nprocs), sys.executable, "-m", "pevpm",
                            "bench", "--quick", "--no-progress", "-o", str(db)],
                           check=True, env=env, capture_output=True)
            wall = time.perf_counter() - began
            with Profile.open(db) as prof:
                keys = prof.blocks()
                cut = sum(prof.block_info(k)["budget_limited"] for k in keys)
                error = prof.runs()[0].max_sync_error
            print(f"-n {nprocs}: {wall:6.1f} s wall, {len(keys)} blocks, {cut} cut by the "
                  f"budget, sync error <= {error * 1e6:.2f} us")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
