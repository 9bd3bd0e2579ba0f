"""Fixtures shared by several test folders: recorded traces to compare predictions with."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
from trace_archives import ping_records, write_archive  # tests/fuzz, on the path above

SRC = Path(__file__).resolve().parents[1] / "src"
RING = Path(__file__).resolve().parent / "trace" / "programs" / "ring.py"
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent))
MPICC = shutil.which("mpicc", path=str(Path(sys.executable).parent))

#: The ping archive's calls per rank: (name, start, end) in microseconds.
PING_CALLS = {
    0: [("MPI_Init", 0, 1000), ("MPI_Send", 3000, 3500), ("MPI_Barrier", 4000, 4200),
        ("MPI_Finalize", 5000, 5100)],
    1: [("MPI_Init", 0, 1200), ("MPI_Recv", 1500, 3600), ("MPI_Barrier", 4100, 4200),
        ("MPI_Finalize", 4800, 5100)],
}


def write_ping_archive(directory: Path) -> Path:
    """A two-rank OTF2 archive shaped like ``pevpm trace``'s: rank 0 computes 2 ms and
    sends 800 bytes (tag 5) to rank 1, then both meet in a barrier (:data:`PING_CALLS`)."""
    return write_archive(directory, ping_records(attributes=False))


#: The ping archive's program as a model file: rank 0 computes 2 ms and sends 800
#: bytes to rank 1, then a barrier.
PING_MODEL = '''from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with b.runon() as arms:
        with arms.case("procnum == 0"):
            b.serial(0.002)
            b.send(800, dest=1, tag=5)
        with arms.case("procnum == 1"):
            b.recv(800, source=0, tag=5)
    b.collective("MPI_Barrier")
    return b
'''


@pytest.fixture
def ping_model(tmp_path) -> Path:
    """:data:`PING_MODEL` written to a file."""
    path = tmp_path / "ping_model.py"
    path.write_text(PING_MODEL)
    return path


@pytest.fixture
def ping_calls() -> dict:
    """:data:`PING_CALLS`, for tests (a test module cannot import this conftest by name)."""
    return PING_CALLS


@pytest.fixture
def ping_archive(tmp_path) -> Path:
    """A directory holding the two-rank ping archive (:func:`write_ping_archive`)."""
    directory = tmp_path / "ping"
    write_ping_archive(directory)
    return directory


@pytest.fixture(scope="session")
def ring_trace(tmp_path_factory) -> Path:
    """tests/trace/programs/ring.py (mpi4py) traced by ``pevpm trace`` on 2 ranks."""
    if not (MPIEXEC and MPICC):
        pytest.skip("needs mpiexec and mpicc")
    directory = tmp_path_factory.mktemp("ring") / "trace"
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "pevpm", "trace", "-o", str(directory), "--",
                           MPIEXEC, "-n", "2", sys.executable, str(RING)],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return directory
