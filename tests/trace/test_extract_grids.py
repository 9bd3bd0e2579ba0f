"""Cartesian grids, sub-communicators and request arrays: tests/trace/programs/grid.c
(ours: MPI_Dims_create + MPI_Cart_create, MPI_Cart_shift, MPI_Cart_sub and
MPI_Comm_split, a request array completed by MPI_Waitany, MPI_Waitsome or an
MPI_Testall poll) traced at 1, 2 and 4 ranks, and the pieces extract uses:
the grid rule, ranks whose messages differ only in size, a receive from any
source whose sender is known only after its Wait."""

import re

import pytest
from conftest import MPICC, MPIEXEC, pevpm_command, traced_at_counts

from pevpm.model.cartesian import cart_shift_asc
from pevpm.model.loader import load_model
from pevpm.trace.events import Call, Grid, Posted, Recv, Send, SendDone, Trace
from pevpm.trace.extract.any_source import any_source
from pevpm.trace.extract.extract import _groups, extract, self_check
from pevpm.trace.extract.grids import grid_rule
from pevpm.trace.extract.tokens import DST, OP, REQS, SIZE, SRC, Token, rank_tokens
from pevpm.trace.otf2.read import read_archive

needs_mpi = pytest.mark.skipif(not (MPIEXEC and MPICC), reason="needs mpiexec and mpicc")


@pytest.fixture(scope="module")
def grid_traces(tmp_path_factory, cache_home):
    """grid.c (6 iterations) traced at 1, 2 and 4 ranks."""
    return traced_at_counts(tmp_path_factory.mktemp("grid"), "grid", "6")


@pytest.mark.mpi
@needs_mpi
def test_the_tracer_records_every_cartesian_grid(grid_traces):
    trace = read_archive(grid_traces[2])
    assert set(trace.grids) == {Grid((0, 1, 2, 3), (2, 2), (True, True)),  # MPI_Cart_create
                                Grid((0, 1), (2,), (True,)), Grid((2, 3), (2,), (True,))}
    assert read_archive(grid_traces[1]).grids[0] == Grid((0, 1), (2, 1), (True, True))


@pytest.mark.mpi
@needs_mpi
def test_the_grid_model_shifts_on_the_grid_and_waits_for_whole_request_arrays(grid_traces,
                                                                             tmp_path):
    path = tmp_path / "grid_model.py"
    done = pevpm_command("extract", *grid_traces, "-o", str(path), timeout=600)
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert "the ranks lie on a 2-D grid, MPI_Cart_create at every traced count: 1 x 1 at 1, " \
           "2 x 1 at 2, 2 x 2 at 4 ranks (periodic, periodic), MPI_Dims_create's grid" in done.stderr
    general = text[text.index("ranks.case('1')"):]
    # the halo on the world grid; the row's (Cart_sub) and the column's (Comm_split) shifts
    # are on it too, as world ranks
    assert general.count("source='cart_shift(procnum, numprocs, 2, 0, -1, 1)'") == 3
    assert general.count("dest='cart_shift(procnum, numprocs, 2, 1, 1, 1)'") == 3
    assert "% numprocs" not in general and "xor(" not in general
    # Waitany, Waitsome and Testall each wait for the whole array: one loop of iterations
    assert general.count("b.message('MPI_Waitall', 0, requests=['r0', 'r1', 'r2', 'r3', "
                         "'r4', 'r5', 'r6', 'r7'])") == 1
    assert "'MPI_Wait'," not in general
    assert re.search(r"with b\.loop\('parameter loop\d'\):", general)
    assert "pevpm extract: the model runs at 1, 2, 4, 8, 64, 1024 ranks" in done.stderr
    model = load_model(str(path))
    assert self_check(model, [16, 32, 128, 256, 512]) == []


def test_a_grid_smallest_first_is_lammps_shape_and_a_mixed_one_is_noted():
    notes: list[str] = []
    rule = grid_rule({2: Grid((0, 1), (1, 1, 2), (True,) * 3),
                      4: Grid((0, 1, 2, 3), (1, 2, 2), (True,) * 3)}, notes)
    assert rule.ascending and rule.candidates(source=True)[0] == (
        "cart_shift_asc(procnum, numprocs, 3, 0, -1, 1)")
    assert [cart_shift_asc(r, 16, 3, 2, 1, 1) for r in (0, 3)] == [1, 0]   # 2 x 2 x 4
    assert grid_rule({4: Grid((0, 1, 2, 3), (4, 1), (False, False))}, notes) is None
    assert notes[-1] == ("the ranks lie on Cartesian grids (4 x 1 at 4) that are not "
                         "MPI_Dims_create's at every count, in either order: peers are not "
                         "written on a grid")
    assert grid_rule({}, notes) is None and len(notes) == 2


def _exchange(rank: int, size: int) -> tuple[Call, ...]:
    peer = 1 - rank
    return (Call("MPI_Init", 0, 0), Call("MPI_Sendrecv", 1, 2, (Send(peer, 0, size),
                                                                 Recv(peer, 0, 100 - size))),
            Call("MPI_Finalize", 3, 3))


def test_ranks_that_differ_only_in_message_sizes_share_one_program():
    """LAMMPS's ranks hold different numbers of atoms: one group, sizes set aside."""
    trace = Trace((_exchange(0, 40), _exchange(1, 60)))
    groups = _groups(2, [rank_tokens(trace, r) for r in range(2)])
    assert [g.ranks for g in groups] == [[0, 1]]
    text = extract(trace).text
    assert "b.message('MPI_Sendrecv', 50, source='(procnum + 1) % numprocs', " \
           "dest='(procnum + 1) % numprocs', tag=0, recv_size=60)" in text


def test_completions_of_waitany_are_one_waitall_in_slot_order():
    posts = (Call("MPI_Irecv", 1, 1, (Posted(7),)), Call("MPI_Isend", 2, 2, (Send(0, 1, 8, 9),)))
    calls = (Call("MPI_Init", 0, 0), *posts,
             Call("MPI_Waitany", 3, 4, (SendDone(9),)),
             Call("MPI_Waitany", 5, 6, (Recv(0, 1, 8, 7),)),
             Call("MPI_Finalize", 7, 7))
    keys = [t.key for t in rank_tokens(Trace((calls,)), 0) if t.key[0] != "serial"]
    assert [(k[OP], k[REQS]) for k in keys] == [("MPI_Irecv", ()), ("MPI_Isend", ()),
                                                ("MPI_Waitall", ("r0", "r1"))]


def test_a_reply_sent_before_the_wait_keeps_its_peer():
    """HPCCG posts a receive from any source, sends to its neighbour, then waits:
    the send cannot name the status, which holds no rank yet."""
    def token(op, src, dst, tag, req=None, reqs=(), wild=None):
        return Token((op, 4, src, dst, tag, req, reqs, None, None), (), wild)
    tokens = [token("MPI_Irecv", 1, 0, 99, "r0", wild=True), token("MPI_Send", 0, 1, 99),
              token("MPI_Wait", None, None, None, "r0"), token("MPI_Send", 0, 1, 100)]
    out, _ = any_source(tokens)
    assert [(t.key[SRC], t.key[DST]) for t in out] == [
        ("MPI_ANY_SOURCE", 0), (0, 1), (None, None), (0, "r0.MPI_SOURCE")]
    assert out[0].key[SIZE] == 4
