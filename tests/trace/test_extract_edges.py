"""Ranks of a grid without periods as one program (pevpm.trace.extract.edges):
exact synthetic programs, and tests/trace/programs/corners.c (every rank a
corner at 4 ranks) traced at 1, 2 and 4 ranks, whose model must run at counts
no trace had."""

import pytest
from conftest import MPICC, MPIEXEC, extracted_model, traced_at_counts

from pevpm.model.loader import load_model
from pevpm.trace.extract.edges import united
from pevpm.trace.extract.extract import trial_run
from pevpm.trace.extract.tokens import LoopNode, Token

needs_mpi = pytest.mark.skipif(MPICC is None or MPIEXEC is None, reason="no mpicc/mpiexec")


def message(op, rank, peer, tag, request):
    src, dst = (peer, rank) if op == "MPI_Irecv" else (rank, peer)
    return Token((op, 8, src, dst, tag, request, (), None, None), ())


def exchange(rank, peers):
    """A loop of 3: for each (peer, tag) a receive and a send, one Waitall, an Allreduce."""
    body, names = [Token(("serial",), (1.0, 1.0, 1.0))], []
    for peer, tag in peers:
        body += [message("MPI_Irecv", rank, peer, tag ^ 1, f"r{len(names)}"),
                 message("MPI_Isend", rank, peer, tag, f"r{len(names) + 1}")]
        names += [f"r{len(names)}", f"r{len(names) + 1}"]
    body += [Token(("MPI_Waitall", 0, None, None, None, None, tuple(names), None, None), ()),
             Token(("MPI_Allreduce", 8, None, None, None, None, (), None, None), ())]
    return [LoopNode(3, tuple(body))]


def test_a_chain_of_three_is_one_program_with_its_ends_sending_to_proc_null():
    ends = [exchange(0, [(1, 1)]), exchange(1, [(0, 0), (2, 1)]), exchange(2, [(1, 0)])]
    out = united(ends, [0, 1, 2])
    shapes = [[t.key[:7] for t in p[0].body if t.key[0] != "serial"] for p in out]
    assert shapes[0] == [("MPI_Irecv", 8, -1, 0, 1, "r0", ()),
                         ("MPI_Isend", 8, 0, -1, 0, "r1", ()),
                         ("MPI_Irecv", 8, 1, 0, 0, "r2", ()),
                         ("MPI_Isend", 8, 0, 1, 1, "r3", ()),
                         ("MPI_Waitall", 0, None, None, None, None, ("r0", "r1", "r2", "r3")),
                         ("MPI_Allreduce", 8, None, None, None, None, ())]
    assert shapes[1][:4] == [("MPI_Irecv", 8, 0, 1, 1, "r0", ()),
                             ("MPI_Isend", 8, 1, 0, 0, "r1", ()),
                             ("MPI_Irecv", 8, 2, 1, 0, "r2", ()),
                             ("MPI_Isend", 8, 1, 2, 1, "r3", ())]
    assert [t.key[2:4] for t in out[2][0].body[1:5]] == [(1, 2), (2, 1), (-1, 2), (2, -1)]
    # every rank keeps its own computations
    assert [p[0].body[0].values for p in out] == [(1.0, 1.0, 1.0)] * 3


def test_ranks_that_differ_in_a_collective_a_loop_or_every_side_stay_apart():
    allreduce = Token(("MPI_Allreduce", 8, None, None, None, None, (), None, None), ())
    barrier = Token(("MPI_Barrier", 0, None, None, None, None, (), None, None), ())
    assert united([[allreduce], [barrier]], [0, 1]) is None
    assert united([exchange(0, [(1, 1)]), exchange(1, [(0, 0)])[0].body], [0, 1]) is None
    # a ping-pong: no message of one rank goes to the side another's does
    assert united([exchange(0, [(1, 1)]), exchange(1, [(0, 0)])], [0, 1]) is None


@pytest.fixture(scope="module")
def corner_traces(tmp_path_factory, cache_home):
    """corners.c (6 iterations) traced at 1, 2 and 4 ranks."""
    return traced_at_counts(tmp_path_factory.mktemp("corners"), "corners", "6")


@pytest.mark.mpi
@needs_mpi
def test_corner_ranks_become_one_program_that_runs_at_every_count(corner_traces, tmp_path):
    text, err = extracted_model(corner_traces, tmp_path / "corners_model.py")
    assert "the 4 programs of the 4-rank trace differ only in which neighbours they " \
           "exchange with" in err
    assert "pevpm extract: the model runs at 1, 2, 4, 8, 64, 1024 ranks" in err
    for side in ("0, 1", "0, -1", "1, 1", "1, -1"):
        assert f"dest='cart_shift(procnum, numprocs, 2, {side}, 0)'" in text
    model = load_model(tmp_path / "corners_model.py")
    assert [n for n in (8, 9, 12, 16, 64, 1024) if trial_run(model, n) is not None] == []


@pytest.fixture(scope="module")
def strong_corner_traces(tmp_path_factory, cache_home):
    """corners.c on one 96 x 96 mesh (4 iterations) traced at 1, 2 and 4 ranks:
    a row of 96 + 2 doubles (784 B) at 2 ranks (a 2 x 1 grid), 48 + 2 (400 B)
    at 4 (2 x 2)."""
    return traced_at_counts(tmp_path_factory.mktemp("strong"), "corners", "4", "96")


@pytest.mark.mpi
@needs_mpi
def test_one_count_messages_of_a_strong_scaling_grid_shrink_with_its_faces(
        strong_corner_traces, tmp_path):
    """The united corners were seen at 4 ranks only: their 400 B messages follow
    the largest message's law over the grid's face, 16 + 768 / dims, so 112 B
    (12 + 2 doubles) on the 8 x 8 grid of 64 ranks, 64 B (6 + 2) at 256."""
    from pevpm.model.expr import Expr

    text, err = extracted_model(strong_corner_traces, tmp_path / "strong_model.py")
    assert "the largest point-to-point message is 784 B at 2, 400 B at 4 ranks: 16 + 768 *" \
           in err.replace("\n", " ").replace("pevpm extract: note: ", "")
    assert "pevpm extract: the model runs at 1, 2, 4, 8, 64, 1024 ranks" in err
    sizes = {line.split("'MPI_Isend', ")[1].split(", source")[0]
             for line in text.splitlines() if "'MPI_Isend', '400" in line}
    assert sizes == {"'400 * (16 + 768 / dims_create(numprocs, 2, 0)) / 400'",
                     "'400 * (16 + 768 / dims_create(numprocs, 2, 1)) / 400'"}
    law = Expr.parse("400 * (16 + 768 / dims_create(numprocs, 2, 0)) / 400")
    assert [law.evaluate({"numprocs": n}) for n in (4, 64, 256)] == [400, 112, 64]
    model = load_model(tmp_path / "strong_model.py")
    assert [n for n in (8, 9, 12, 16, 64, 1024) if trial_run(model, n) is not None] == []


def test_a_weak_scaling_grid_keeps_its_sizes():
    """The same largest message at 2 and 4 ranks: no law, the sizes stay."""
    from pevpm.trace.extract.faces import face_law

    assert face_law({1: 0, 2: 400, 4: 400}, 2, False) is None
    assert face_law({4: 400}, 2, False) is None         # one count says nothing
    assert face_law({2: 400, 4: 784}, 2, False) is None  # growing faces: not a shrinking grid
