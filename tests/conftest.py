"""Fixtures shared by several test folders: recorded traces to compare predictions with."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import otf2
import pytest
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, Paradigm, RegionRole

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
    with otf2.writer.open(str(directory), archive_name="traces",
                          timer_resolution=1_000_000) as archive:
        d = archive.definitions
        node = d.system_tree_node("node")
        locations = [d.location("Master thread", group=d.location_group(
            f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
            system_tree_parent=node)) for r in (0, 1)]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=locations)
        world = d.comm("MPI_COMM_WORLD", group=d.group(
            "MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
            members=[0, 1]))
        regions = {}
        for rank, calls in PING_CALLS.items():
            writer = archive.event_writer_from_location(locations[rank])
            for name, start, end in calls:
                region = regions.setdefault(name, d.region(
                    name, paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT))
                writer.enter(start, region)
                if name == "MPI_Send":
                    writer.mpi_send(start, 1, world, 5, 800)
                elif name == "MPI_Recv":
                    writer.mpi_recv(end, 0, world, 5, 800)
                elif name == "MPI_Barrier":
                    writer.mpi_collective_begin(start)
                    writer.mpi_collective_end(end, CollectiveOp.BARRIER, world,
                                              otf2.Undefined.UINT32, 0, 0)
                writer.leave(end, region)
    return directory / "traces.otf2"


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
