"""Ranks of a 3-D grid that exchange with all 26 neighbours, diagonals too,
as one program (pevpm.trace.extract.edges.grid_sides, grids.NeighbourRule):
exact synthetic programs on 2 x 2 x 2, and tests/trace/programs/neighbours26.c
(LULESH's pattern: every rank a corner at 8 ranks) traced at 1, 2, 4 and 8
ranks, whose model must run at 27, 64 and 1,024 ranks with each rank's own
number of neighbours."""

import re

import pytest
from conftest import MPICC, MPIEXEC, extracted_model, traced_at_counts

from pevpm.model.cartesian import cart_coord
from pevpm.model.expr import PROC_NULL, Expr
from pevpm.model.loader import load_model
from pevpm.trace.extract.edges import MAX_PAIRS, grid_sides, united
from pevpm.trace.extract.compress import compress
from pevpm.trace.extract.extract import _cycles, _folded, _Group, trial_run
from pevpm.trace.extract.tokens import LoopNode, Token

needs_mpi = pytest.mark.skipif(MPICC is None or MPIEXEC is None, reason="no mpicc/mpiexec")

#: The 26 directions in the order neighbours26.c posts them.
STEPS = [(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)
         if (x, y, z) != (0, 0, 0)]


def neighbour(rank: int, step, n: int = 8) -> int | None:
    there = [cart_coord(rank, n, 3, d) + s for d, s in enumerate(step)]
    dims = (2, 2, 2)
    if not all(0 <= c < k for c, k in zip(there, dims)):
        return None
    return (there[0] * 2 + there[1]) * 2 + there[2]


def message(op, rank, peer, tag, size, request):
    src, dst = (peer, rank) if op == "MPI_Irecv" else (rank, peer)
    return Token((op, size, src, dst, tag, request, (), None, None), ())


def exchange26(rank: int) -> list:
    """neighbours26.c's loop of 3 on 2 x 2 x 2: a receive from each neighbour the
    rank has, then a send to each (one tag; the size says a face, an edge or a
    corner), one Waitall, an Allreduce."""
    body, names = [], []
    peers = [(k, neighbour(rank, s), 8 * 4 ** (3 - sum(map(abs, s)))) for k, s in
             enumerate(STEPS)]
    for op in ("MPI_Irecv", "MPI_Isend"):
        for k, peer, size in peers:
            if peer is not None:
                names.append(f"r{len(names)}")
                body += [Token(("serial",), (1e-6,)),
                         message(op, rank, peer, 0, size, names[-1])]
    body += [Token(("MPI_Waitall", 0, None, None, None, None, tuple(names), None, None), ()),
             Token(("MPI_Allreduce", 8, None, None, None, None, (), None, None), ())]
    return [LoopNode(3, tuple(body))]


def directions(out: list, op: str) -> list:
    """The direction of each of ``op``'s positions in the united programs ``out``
    of 2 x 2 x 2: the one grid step from each rank to its peer there (a set of
    them, where ranks disagree), the ranks that make a stand-in left out."""
    side = grid_sides(8, 3)
    field = 2 if op == "MPI_Irecv" else 3
    found: list = []
    for r, program in enumerate(out):
        peers = [t.key[field] for t in program[0].body if t.key[0] == op]
        found = found or [set() for _ in peers]
        for seen, peer in zip(found, peers):
            if peer != -1:
                seen.add(side(r, peer))
    return [seen.pop() if len(seen) == 1 else seen for seen in found]


def test_the_eight_corners_are_one_program_of_26_directions_on_the_grid():
    ranks = list(range(8))
    programs = [exchange26(r) for r in ranks]
    out = united(programs, ranks, grid_sides(8, 3))
    for op in ("MPI_Irecv", "MPI_Isend"):
        steps = directions(out, op)
        assert sorted(steps) == STEPS       # each direction once
        field = 2 if op == "MPI_Irecv" else 3
        for r, program in enumerate(out):
            # its neighbour there, or PROC_NULL (-1) where it has none
            assert [t.key[field] for t in program[0].body if t.key[0] == op] == \
                [-1 if neighbour(r, s) is None else neighbour(r, s) for s in steps]
    for r in ranks:     # each rank's own messages in its own order
        mine = [t.key[:5] for t in programs[r][0].body if t.key[0].startswith("MPI_I")]
        kept = [t.key[:5] for t in out[r][0].body if t.key[0].startswith("MPI_I")
                and -1 not in t.key[2:4]]
        assert [k[:2] + k[2:5] for k in kept] == [k[:5] for k in mine]
    # each rank's Waitall waits for all 52 slots
    assert [len(t.key[6]) for t in out[0][0].body if t.key[0] == "MPI_Waitall"] == [52]
    # a computation a corner did not make (before a post to a side it lacks) is 0 there
    values = [t.values for t in out[0][0].body if t.key[0] == "serial"]
    assert values.count((1e-6,)) == 14 and set(values) == {(0.0,), (1e-6,)}


def test_offsets_alone_do_not_name_a_direction_on_two_by_two_by_two():
    """-3 is (0, -1, -1) from rank 3 and (-1, 0, 1) from rank 4: by offsets the
    union has one position for two directions (24 receives for 26)."""
    ranks = list(range(8))
    steps = directions(united([exchange26(r) for r in ranks], ranks), "MPI_Irecv")
    assert len(steps) == 24 and {(0, -1, -1), (-1, 0, 1)} in steps


def test_blocks_between_collectives_are_aligned_alone():
    """A program whose top level is longer than the alignment cap allows as a
    whole unites, each exchange between two Allreduces aligned by itself."""
    allreduce = Token(("MPI_Allreduce", 8, None, None, None, None, (), None, None), ())
    steps = 1 + int(MAX_PAIRS ** 0.5) // 4

    def chain(rank, peers):
        program = []
        for step in range(steps):
            for peer in peers:
                program += [message("MPI_Irecv", rank, peer, step, 8, None),
                            message("MPI_Isend", rank, peer, step, 8, None)]
            program.append(allreduce)
        return program

    programs = [chain(0, [1]), chain(1, [0, 2]), chain(2, [1])]
    assert len(programs[1]) ** 2 > MAX_PAIRS
    out = united(programs, [0, 1, 2])
    assert [len(p) for p in out] == [5 * steps] * 3
    assert [t.key[2:4] for t in out[0][:5]] == [(-1, 0), (0, -1), (1, 0), (0, 1),
                                                (None, None)]


@pytest.fixture(scope="module")
def neighbour_traces(tmp_path_factory, cache_home):
    """neighbours26.c (4 iterations) traced at 1, 2, 4 and 8 ranks."""
    return traced_at_counts(tmp_path_factory.mktemp("neighbours26"), "neighbours26", "4",
                            counts=(1, 2, 4, 8))


def neighbours_per_rank(text: str, numprocs: int) -> dict[int, int]:
    """How many ranks of ``numprocs`` send to how many neighbours in the model's
    last arm (every count past the traced ones)."""
    arm = text.split("ranks.case(")[-1]
    dests = re.findall(r"'MPI_Isend', \S+, source='procnum', dest='([^']+)'", arm)
    counts: dict[int, int] = {}
    for r in range(numprocs):
        k = sum(Expr.parse(d).evaluate({"procnum": r, "numprocs": numprocs}) != PROC_NULL
                for d in dests)
        counts[k] = counts.get(k, 0) + 1
    return counts


@pytest.mark.mpi
@needs_mpi
def test_a_26_neighbour_exchange_runs_at_counts_no_trace_had(neighbour_traces, tmp_path):
    text, err = extracted_model(neighbour_traces, tmp_path / "n26_model.py")
    flat = err.replace("\n", " ").replace("pevpm extract: note: ", "")
    # (7 programs: two corners' offsets are one expression's)
    assert "programs of the 8-rank trace differ only in which neighbours they " \
           "exchange with (a grid without periods, diagonal ones too, each side named by " \
           "its direction on the 3-D grid of MPI_Dims_create(8): 2 x 2 x 2)" in flat
    assert "pevpm extract: the model runs at 1, 2, 4, 8, 64, 1024 ranks" in err
    assert "dest='cart_offset(procnum, numprocs, 3, 1, 1, 1, 0)'" in text
    assert "dest='cart_shift(procnum, numprocs, 3, 2, -1, 0)'" in text
    # corners 7, edges 11, faces 17, the interior 26 neighbours
    assert neighbours_per_rank(text, 27) == {7: 8, 11: 12, 17: 6, 26: 1}
    assert neighbours_per_rank(text, 64) == {7: 8, 11: 24, 17: 24, 26: 8}
    assert neighbours_per_rank(text, 1024) == {7: 8, 11: 104, 17: 408, 26: 504}   # 16x8x8
    model = load_model(tmp_path / "n26_model.py")
    assert [n for n in (27, 64, 1024) if trial_run(model, n) is not None] == []


def test_the_computation_after_each_ranks_last_wait_is_one_position():
    """A chain of 3: each rank receives from the neighbours it has, waits for
    each, then computes 1 s before an Allreduce.  The computation follows a
    Wait for a different side on rank 2 than on ranks 0 and 1, but it lies
    between the Waits and the block's end on every rank: one position, each
    rank's own second, no padding of 0 s."""
    allreduce = Token(("MPI_Allreduce", 8, None, None, None, None, (), None, None), ())

    def wait(name):
        return Token(("MPI_Wait", 0, None, None, None, name, (), None, None), ())

    def program(rank, peers):
        names = [f"r{k}" for k in range(len(peers))]
        return ([message("MPI_Irecv", rank, p, 0, 8, q) for p, q in zip(peers, names)]
                + [wait(q) for q in names] + [Token(("serial",), (1.0,)), allreduce])

    out = united([program(0, [1]), program(1, [0, 2]), program(2, [1])], [0, 1, 2])
    for p in out:
        assert [t.values for t in p if t.key[0] == "serial"] == [(1.0,)]
        assert p[-2].key[0] == "serial" and p[-1] is allreduce


def cycle(rank: int, passes: int, sizes=None) -> list:
    """``passes`` cycles of 35 computations, each followed by a send to one of 35
    peers (70 statements: longer than one rank's loop search), then a last
    computation; ``sizes``: each pass's message size (8 by default)."""
    sizes = sizes or [8] * passes
    out = []
    for k in range(passes):
        for peer in range(35):
            out += [Token(("serial",), (1e-3 * (rank + 1),)),
                    Token(("MPI_Send", sizes[k], rank, peer, 0, None, (), None, None), ())]
    return out + [Token(("serial",), (1.0,))]


def test_the_cycles_of_a_united_program_are_one_loop():
    program = cycle(0, 3)
    assert not any(isinstance(n, LoopNode) for n in compress(program))
    folded = _cycles(program)
    assert [type(n).__name__ for n in folded] == ["LoopNode", "Token"]
    assert folded[0].count == 3 and len(folded[0].body) == 70
    assert folded[0].body[0].values == (1e-3,) * 3
    # every rank's folds alike: one group of loops; else the group as it was
    group = _Group(2, [0, 1], [cycle(0, 3), cycle(1, 3)], united=True)
    assert all(p[0].count == 3 for p in _folded(group).programs)
    uneven = _Group(2, [0, 1], [cycle(0, 3), cycle(1, 3, [8, 16, 8])], united=True)
    assert _folded(uneven) is uneven
