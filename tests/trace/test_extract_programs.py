"""pevpm extract on real runs of small C programs of our own, traced at 1, 2 and 4
ranks, whose patterns real applications have: neighbour sets that depend on a
rank's position (interior ranks only at 4), several receives with one tag from
different neighbours, one receive from any source, sizes that scale with
numprocs.  The model must run at every traced count and at 8, 64 and 1,024."""

import re

import pytest
from conftest import MPICC, MPIEXEC, extracted_model, traced_at_counts

from pevpm.cli import main
from pevpm.model.loader import load_model
from pevpm.trace.events import Recv, SendDone
from pevpm.trace.extract.extract import Extracted, self_check
from pevpm.trace.otf2.read import read_archive

needs_mpi = pytest.mark.skipif(not (MPIEXEC and MPICC), reason="needs mpiexec and mpicc")

INTERIOR = "procnum > 0 && procnum < numprocs - 1"


@pytest.fixture(scope="module")
def chain_traces(tmp_path_factory, cache_home):
    """tests/trace/programs/chain.c (10 iterations) traced at 1, 2 and 4 ranks, in
    CPU seconds at every count (``PEVPM_TRACE_CPU=1``, as benchmarks/apps traces):
    4 ranks share the 2 cores, and in wall seconds a loaded host made the same
    sweep's arms differ by more than pooling allows (a flaky law per arm)."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PEVPM_TRACE_CPU", "1")
        return traced_at_counts(tmp_path_factory.mktemp("chain"), "chain", "10")


@pytest.fixture(scope="module")
def chain_model(chain_traces, tmp_path_factory):
    """The extract command's model of the chain, and what it said on stderr."""
    return extracted_model(chain_traces, tmp_path_factory.mktemp("chain_model") / "chain_model.py")


@pytest.mark.mpi
@needs_mpi
def test_eager_isends_are_each_completed_in_the_trace(chain_traces):
    """MPICH gives sends it completed at once one shared handle: an interior rank's
    Waitall completes both receives and both sends (it lost one send before)."""
    trace = read_archive(chain_traces[2])
    waitall = next(c for c in trace.ranks[1] if c.name == "MPI_Waitall")
    assert sorted(type(e).__name__ for e in waitall.events) == [
        "Recv", "Recv", "SendDone", "SendDone"]
    assert {e.source for e in waitall.events if isinstance(e, Recv)} == {0, 2}
    assert len({e.request for e in waitall.events if isinstance(e, SendDone)}) == 2


@pytest.mark.mpi
@needs_mpi
def test_receives_say_whether_they_asked_for_any_source(chain_traces):
    trace = read_archive(chain_traces[2])
    asked = {(c.name, c.any_source) for c in trace.ranks[0] if c.name in ("MPI_Recv",
                                                                           "MPI_Irecv")}
    # rank 0: halo receives from rank 1, then one from any source per other rank
    assert asked == {("MPI_Irecv", False), ("MPI_Recv", True)}


@pytest.mark.mpi
@needs_mpi
def test_the_chain_model_keeps_each_neighbour_and_any_source_only_where_used(chain_model):
    text, _ = chain_model
    # the one receive the program made from any source, in a loop over the others
    assert text.count("source='MPI_ANY_SOURCE'") == 1
    assert re.search(r"with b\.loop\('numprocs - 1'\):\n(?: +(?:#.*|b\.serial\(.*\))\n)* +"
                     r"b\.message\('MPI_Recv', 8, "
                     r"source='MPI_ANY_SOURCE', dest='procnum', tag=9", text)
    assert ".MPI_SOURCE" not in text
    # interior ranks (seen at 4 ranks only): a loop receiving tag 5 from both sides
    interior = text[text.index(f"ranks.case({INTERIOR!r})"):]
    interior = interior[:interior.index("ranks.case(", 1)]
    assert "with b.loop('parameter loop1'):" in interior
    assert ("source='(procnum + numprocs - 1) % numprocs', dest='procnum', tag=5, "
            "request='r0'") in interior
    assert "source='(procnum + 1) % numprocs', dest='procnum', tag=5, request='r1'" in interior
    assert "requests=['r0', 'r1', 'r2', 'r3']" in interior
    assert "b.message('MPI_Send', 8, source='procnum', dest='0', tag=9)" in interior
    # the Allreduce of 4 doubles per rank: the law at 1, 2 ranks' edges, also the interior's
    assert text.count("b.message('MPI_Allreduce', '32 * numprocs')") == 3
    assert "'MPI_Allreduce', 128" not in text


@pytest.mark.mpi
@needs_mpi
def test_the_chain_model_runs_at_every_traced_count_and_up_to_1024(chain_model, tmp_path):
    text, err = chain_model
    assert "pevpm extract: the model runs at 1, 2, 4, 8, 64, 1024 ranks" in err
    assert "MPI_Allreduce in loop 1: size = 32 * numprocs: seen at 4 ranks only" in err
    path = tmp_path / "m.py"
    path.write_text(text)
    assert self_check(load_model(str(path)), [1, 2, 4]) == []


@pytest.mark.mpi
@needs_mpi
def test_the_sweep_before_the_allreduce_has_one_law_in_every_arm(chain_model):
    """The same compute(500000) in rank 0's, the interior ranks' (traced at 4 only)
    and the last rank's loop: one law fitted on their pooled samples, written in
    each of the three arms (pooling.pooled_gaps)."""
    text, _ = chain_model
    sweeps = re.findall(r"(b\.serial\(.*\))\n(?: +#.*\n)* +b\.message\('MPI_Allreduce'", text)
    assert len(sweeps) == 3 and len(set(sweeps)) == 1, sweeps


@pytest.fixture(scope="module")
def subcomm_traces(tmp_path_factory, cache_home):
    """tests/trace/programs/subcomm.c (6 iterations) traced at 1, 2 and 4 ranks."""
    return traced_at_counts(tmp_path_factory.mktemp("subcomm"), "subcomm", "6")


@pytest.mark.mpi
@needs_mpi
def test_collectives_on_sub_communicators_are_exchanges_in_a_model_that_runs(subcomm_traces,
                                                                            tmp_path):
    text, err = extracted_model(subcomm_traces, tmp_path / "subcomm_model.py")
    assert "pevpm extract: the model runs at 1, 2, 4, 8, 64, 1024 ranks" in err
    # at 4 ranks (a 2 x 2 grid) the row's Allreduce and the column's Bcast, 2 ranks each
    assert "collectives on sub-communicators (ALLREDUCE of 2, BCAST of 2 ranks) are " \
           "exchanges among their members (tag 1073741823)" in err
    assert "tag=1073741823" in text


BROKEN = '''"""A model whose rank 0 waits for a message nobody sends."""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(lines=True)
    with b.on_ranks("procnum == 0"):
        b.message("MPI_Recv", 8, source=1, dest="procnum", tag=3)
    return b
'''


def test_extract_fails_on_a_model_that_does_not_run_and_names_its_line(tmp_path, capsys,
                                                                       monkeypatch):
    broken = Extracted(BROKEN, 10, 4, True, ("extracted from a", "a note"), (2, 4))
    monkeypatch.setattr("pevpm.trace.otf2.read.read_archive", lambda path: None)
    monkeypatch.setattr("pevpm.trace.extract.extract.extract", lambda traces, source: broken)
    out = tmp_path / "m.py"
    assert main(["extract", "a", "b", "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert (f"pevpm extract: failed: the model does not run at 2 ranks: deadlock: rank 0 "
            f"blocked in MPI_Recv from 1 at {out}:9:9; rank 1 terminated") in err
    assert f"pevpm: error: {out}: the extracted model does not run at 2, 4, 8, 64, 1024 " \
           "ranks (above); --allow-broken keeps it anyway" in err
    assert "Traceback" not in err and out.read_text() == BROKEN
    assert main(["extract", "a", "b", "-o", str(out), "--allow-broken", "--force"]) == 0
    err = capsys.readouterr().err
    assert "pevpm extract: warning: the model does not run at 1024 ranks: deadlock" in err
    assert "pevpm: error" not in err


def test_from_one_trace_only_its_own_count_must_run(tmp_path, capsys, monkeypatch):
    """One count cannot tell how the program scales: beyond it, warnings."""
    ring = BROKEN.replace('with b.on_ranks("procnum == 0"):\n        b.message("MPI_Recv", 8, '
                          'source=1, dest="procnum", tag=3)',
                          'b.message("MPI_Sendrecv", 8, source="1 - procnum", '
                          'dest="1 - procnum", tag=3)')
    one = Extracted(ring, 10, 4, True, ("extracted from a", "a note"), (2,))
    monkeypatch.setattr("pevpm.trace.otf2.read.read_archive", lambda path: None)
    monkeypatch.setattr("pevpm.trace.extract.extract.extract", lambda traces, source: one)
    assert main(["extract", "a", "-o", str(tmp_path / "m.py")]) == 0
    err = capsys.readouterr().err
    assert "pevpm extract: warning: the model does not run at 8 ranks" in err
    assert "pevpm extract: the model runs at 2 ranks" in err
