"""pevpm bench under Debian's Open MPI (mpirun.openmpi, mpi4py's Open MPI build, the C core
built with mpicc.openmpi), and a prediction from its profile.  Skipped where Open MPI is
not installed (apt-get install openmpi-bin libopenmpi-dev)."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bench_helpers import mpi_env

from pevpm.machine.profile_model import machine_from_profile
from pevpm.model.kernels import blocking_pingpong
from pevpm.profile.store import Profile
from pevpm.vm.kernel.engine import simulate

MPIRUN = shutil.which("mpirun.openmpi")
MPICC = shutil.which("mpicc.openmpi")
LIBMPI = next(iter(sorted(Path("/usr/lib").glob("*/libmpi.so.40"))), None)
MPI4PY_OPENMPI = importlib.util.find_spec("mpi4py") is not None and any(
    Path(importlib.util.find_spec("mpi4py").origin).parent.glob("MPI.openmpi.*"))

pytestmark = [pytest.mark.mpi, pytest.mark.skipif(
    not (MPIRUN and MPICC and LIBMPI and MPI4PY_OPENMPI),
    reason="needs Debian's Open MPI (mpirun.openmpi, mpicc.openmpi, libmpi.so.40) and an "
           "mpi4py with its Open MPI build")]


def test_bench_under_open_mpi_writes_a_profile_predict_uses(tmp_path):
    env = mpi_env()
    env.update(MPI4PY_LIBMPI=str(LIBMPI), MPI4PY_MPIABI="openmpi", MPICC=MPICC,
               XDG_CACHE_HOME=str(tmp_path / "cache"), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = tmp_path / "ompi.db"
    exported = [arg for name in ("PYTHONPATH", "MPI4PY_LIBMPI", "MPI4PY_MPIABI", "MPICC",
                                 "XDG_CACHE_HOME") for arg in ("-x", name)]
    result = subprocess.run(
        [MPIRUN, "--oversubscribe", "--bind-to", "none", "-n", "2", *exported,
         sys.executable, "-m", "pevpm", "bench", "--binding", "c", "--tests",
         "isend,send,isendlocal", "--sizes", "0,1024", "--reps", "20", "--resend-limit", "50",
         "--no-progress", "-o", str(out)],
        check=False, capture_output=True, text=True, timeout=180, env=env)
    assert result.returncode == 0, result.stderr
    assert "C timing loops" in result.stdout
    with Profile.open(out) as prof:
        run = prof.runs()[0]
        assert run.binding == "c" and run.mpi_library.startswith("Open MPI")
        assert len(prof.blocks()) == 6
    machine = machine_from_profile(str(out))
    span = simulate(blocking_pingpong(1024, 50), 2, machine, rng=np.random.default_rng(0)).makespan
    assert np.isfinite(span) and span > 0
