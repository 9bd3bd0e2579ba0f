"""The annotated example programs are real: they compile with mpicc and run."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BIN = Path(sys.executable).parent
MPICC = shutil.which("mpicc", path=str(BIN)) or shutil.which("mpicc")
MPIEXEC = shutil.which("mpiexec", path=str(BIN)) or shutil.which("mpiexec")

pytestmark = [pytest.mark.mpi,
              pytest.mark.skipif(not (MPICC and MPIEXEC), reason="needs mpicc and mpiexec")]


@pytest.mark.parametrize("name, args, expected", [
    ("jacobi", ["50"], "jacobi: 2 processes, 50 iterations"),
    ("bag_of_tasks", ["6"], "bag_of_tasks: 2 processes, 6 jobs"),
    ("fft2d", ["5"], "fft2d: 2 processes, 5 iterations"),
])
def test_example_compiles_and_runs_on_two_processes(tmp_path, name, args, expected):
    exe = tmp_path / name
    subprocess.run([MPICC, "-O2", str(EXAMPLES / name / f"{name}.c"), "-o", str(exe), "-lm"],
                   check=True, capture_output=True, timeout=120)
    result = subprocess.run([MPIEXEC, "-n", "2", str(exe), *args], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(expected)
