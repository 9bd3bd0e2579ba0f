"""Helpers for the MPIBench tests: run commands under the venv's mpiexec."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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

