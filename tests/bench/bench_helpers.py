"""Helpers for the MPIBench tests: run commands under the venv's mpiexec."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pevpm.profile.store import BlockKey, ProfileWriter

SRC = Path(__file__).resolve().parents[2] / "src"
MPIEXEC = Path(sys.executable).with_name("mpiexec")


def mpi_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_mpi(nprocs: int, *args: str, timeout: float = 120,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """``mpiexec -n nprocs python <args>`` with pevpm importable (or in ``env``);
    captures output."""
    return subprocess.run(
        [str(MPIEXEC), "-n", str(nprocs), sys.executable, *args],
        check=False, capture_output=True, text=True, timeout=timeout, env=env or mpi_env(),
    )


needs_mpiexec = pytest.mark.skipif(not MPIEXEC.exists(),
                                   reason="mpiexec not found next to the Python interpreter")


#: Sizes, median and binding cost of :func:`write_pt2pt_profile`'s blocks.
PT2PT_SIZES = (0, 1024)
C_MEDIAN = 1e-6
COST = 0.5e-6


def write_pt2pt_profile(path, binding: str, costs) -> None:
    """isend and isendlocal at 1x2, times 1 us +- 5% (seed 0), measured through
    ``binding``; with ``costs`` a 0.5 us binding cost per block (``"some"``: all but isendlocal
    1024 B)."""
    rng = np.random.default_rng(0)
    with ProfileWriter.open(path, machine="unit") as writer:
        run = writer.begin_run(n=1, p=2, hosts=["h", "h"], mpi_library="MPICH Version: 5",
                               mpi_version="MPI 4.1", clock="CLOCK_MONOTONIC (C core)",
                               clock_resolution=1e-9, sync_method="pairwise", resend_limit=10,
                               plan={"binding": binding})
        for test in ("isend", "isendlocal"):
            for size in PT2PT_SIZES:
                key = BlockKey(test, "", size, 1, 2)
                times = C_MEDIAN * (1 + 0.05 * rng.uniform(-1, 1, size=(2, 200)))
                writer.write_block(run, key, times, reps=200, warmup=10, start_mode="barrier",
                                   sync_error=1e-7, elapsed=0.01)
                if costs and not (test == "isendlocal" and size == 1024 and costs == "some"):
                    writer.store_binding_cost(key, python=float(np.median(times)) + COST,
                                              c=float(np.median(times)))
