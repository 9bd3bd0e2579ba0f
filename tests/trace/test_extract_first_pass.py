"""Loops whose first pass differs from the later ones (pevpm.trace.extract.first_pass):
the decision, made once per loop shape over every rank and count; the
compression that writes such a pass before the loop; and
tests/trace/programs/firstpass.c (a first iteration that also generates the
keys, NPB IS's pattern; two exchanges of a step that look like one loop of
two passes at 1 and 2 ranks, CoMD's) traced at 1, 2 and 4 ranks; and
tests/trace/programs/jump.c (a loop with one later pass far longer than the
others, with and without a longer first pass), traced the same way."""

import re

import pytest
from conftest import MPICC, MPIEXEC, extracted_model, traced_at_counts

from pevpm.trace.extract.compress import compress
from pevpm.trace.extract.first_pass import decided, differs, shape
from pevpm.trace.extract.tokens import SERIAL, LoopNode, Token

needs_mpi = pytest.mark.skipif(MPICC is None or MPIEXEC is None, reason="no mpicc/mpiexec")


def send(peer: int, size: int = 8) -> Token:
    return Token(("MPI_Send", size, 0, peer, 3, None, (), None, None), ())


def passes(seconds, peer: int = 1) -> list:
    """A computation of each of ``seconds`` followed by the same send."""
    return [t for s in seconds for t in (Token(SERIAL, (s,)), send(peer))]


def test_a_first_pass_differs_only_beyond_the_factor_and_the_share():
    assert differs(LoopNode(3, (Token(SERIAL, (0.03, 0.01, 0.011)), send(1))))
    assert not differs(LoopNode(3, (Token(SERIAL, (0.019, 0.01, 0.011)), send(1))))
    # below the later passes: a first pass that skipped the work
    assert differs(LoopNode(2, (Token(SERIAL, (0.001, 0.01)), send(1))))
    # far outside in a tiny gap, but a sliver of the pass: jitter
    assert not differs(LoopNode(2, (Token(SERIAL, (1e-6, 1e-7)), send(1),
                                    Token(SERIAL, (0.01, 0.01)), send(1))))
    assert differs(LoopNode(2, (send(1),))) is None


def test_one_outlying_later_pass_does_not_widen_the_range():
    steady = (0.010, 0.011, 0.010, 0.012, 0.011, 0.010, 0.011, 0.010)
    # a later pass that jumped (4 ranks on 2 cores: one pass's CPU seconds 10x)
    assert differs(LoopNode(10, (Token(SERIAL, (0.03,) + steady + (0.2,)), send(1))))
    assert not differs(LoopNode(10, (Token(SERIAL, (0.011,) + steady + (0.2,)), send(1))))
    # one that dropped, below a first pass that skipped the work
    assert differs(LoopNode(10, (Token(SERIAL, (0.001,) + steady + (1e-5,)), send(1))))
    # two jumps among 9 later passes: only one is left out
    assert not differs(LoopNode(10, (Token(SERIAL, (0.03,) + steady[:7] + (0.2, 0.2)),
                                     send(1))))
    # from 10 later passes on, two at each end
    assert differs(LoopNode(11, (Token(SERIAL, (0.03,) + steady + (0.2, 0.2)), send(1))))
    # 4 later passes are too few to tell a jump from the spread
    assert not differs(LoopNode(5, (Token(SERIAL, (0.03,) + steady[:3] + (0.2,)), send(1))))


def test_the_shape_leaves_out_peers_and_sizes():
    assert shape(passes([1.0], peer=1)) == shape(passes([2.0], peer=5)[:1] + [send(5, 64)])


def test_the_decision_is_the_majority_of_every_ranks_loops_at_every_count():
    first = LoopNode(3, (Token(SERIAL, (0.5, 0.01, 0.01)), send(1)))
    steady = LoopNode(3, (Token(SERIAL, (0.01, 0.01, 0.01)), send(2)))
    chosen, notes = decided({2: [[first], [first]], 4: [[steady], [first]]})
    assert chosen == {shape(first.body)}
    assert notes == ["the first pass of the loops of MPI_Send differs from the later ones in "
                     "3 of their 4 traced loops (a computation more than 2 times outside the "
                     "later passes' range, their top and bottom 20% left out; 3 passes at 2 "
                     "and 4 ranks): taken before the loop at every rank and count"]
    assert decided({2: [[first], [steady]], 4: [[steady]]})[0] == frozenset()


def test_only_counts_with_a_core_per_rank_vote_where_there_are_any():
    first = LoopNode(3, (Token(SERIAL, (0.5, 0.01, 0.01)), send(1)))
    steady = LoopNode(3, (Token(SERIAL, (0.01, 0.01, 0.01)), send(2)))
    # 4 ranks on 2 cores: their loops would turn the vote either way
    chosen, notes = decided({1: [[first]], 2: [[first], [steady]],
                             4: [[steady], [steady], [steady], [first]]}, shared={4})
    assert chosen == {shape(first.body)}
    assert notes == ["the first pass of the loops of MPI_Send differs from the later ones in "
                     "2 of their 3 traced loops (a computation more than 2 times outside the "
                     "later passes' range, their top and bottom 20% left out; 3 passes at 1, 2 "
                     "and 4 ranks; the 4 loops at 4 ranks, traced with more ranks than cores "
                     "(1 differing), not counted): taken before the loop at every rank and "
                     "count"]
    assert decided({1: [[first]], 2: [[first], [steady]],
                    4: [[steady], [steady], [steady], [first]]})[0] == frozenset()
    chosen, notes = decided({2: [[steady], [steady]], 4: [[first]] * 4}, shared={4})
    assert chosen == frozenset()
    assert notes == ["the first pass of the loops of MPI_Send stays in the loop: it differs in 0 "
                     "of the 2 loops traced with a core per rank; the 4 loops at 4 ranks, traced "
                     "with more ranks than cores (4 differing), not counted"]
    # a shape seen only where cores were shared (interior ranks): its loops vote
    interior = LoopNode(5, (Token(SERIAL, (0.5,) + (0.01,) * 4), send(1), send(3)))
    assert decided({2: [[steady]], 4: [[interior]] * 4}, shared={4})[0] == {
        shape(interior.body)}


def test_loops_over_ranks_keep_their_first_pass():
    first = LoopNode(3, (Token(SERIAL, (0.5, 0.01, 0.01)), send(1)))
    longer = LoopNode(7, (Token(SERIAL, (0.5,) + (0.01,) * 6), send(1)))
    # a count that follows the ranks (a receive from every other rank)
    assert decided({4: [[first]], 8: [[longer]]})[0] == frozenset()
    # one count: a count of passes that is not the ranks' is no loop over them
    assert decided({8: [[first], [first]]})[0] == {shape(first.body)}
    four = LoopNode(4, (Token(SERIAL, (0.5, 0.01, 0.01, 0.01)), send(1)))
    assert decided({4: [[first]]})[0] == frozenset()       # 3 passes: the other ranks
    assert decided({4: [[four]]})[0] == frozenset()


def test_compression_writes_the_first_pass_before_the_loop():
    tokens = passes([0.5, 0.01, 0.02, 0.03])
    peel = frozenset({shape(tokens[:2])})
    assert compress(tokens) == [LoopNode(4, (Token(SERIAL, (0.5, 0.01, 0.02, 0.03)),
                                             send(1)))]
    assert compress(tokens, peel) == tokens[:2] + [
        LoopNode(3, (Token(SERIAL, (0.01, 0.02, 0.03)), send(1)))]
    # two passes: the first before, the other as it is
    assert compress(tokens[:4], peel) == tokens[:4]


@needs_mpi
def test_a_first_iteration_with_extra_work_is_set_before_the_loop(tmp_path, cache_home,
                                                                   monkeypatch):
    # CPU seconds at every count (as benchmarks/apps traces): in wall seconds a
    # loaded host's preemptions made later passes look as long as the first; and
    # a first pass far above the later ones (firstpass.c): at 4 ranks on 2 cores
    # every rank's CPU seconds once jumped to 5.8 ms in one later pass
    monkeypatch.setenv("PEVPM_TRACE_CPU", "1")
    runs = traced_at_counts(tmp_path, "firstpass", "10")
    text, notes = extracted_model(runs, tmp_path / "model.py")
    assert "the first pass of the loops of MPI_Allreduce differs" in notes
    assert "the first pass of the loops of MPI_Sendrecv differs" in notes
    # 2 and 4 ranks: the first ranking before a loop of the other 9, the same at both
    body = text[text.index("with ranks.case('1'):"):]
    assert re.search(r"b\.message\('MPI_Allreduce', 512\)\n +with b\.loop\('parameter loop1'\)",
                     body)
    assert "'loop1': 9" in text
    # the step's two exchanges are never one loop: the ranking loop is the only one
    assert text.count("with b.loop(") == 1


@needs_mpi
@pytest.mark.parametrize("first, apart", [("0", False), ("12000000", True)])
def test_one_later_pass_that_jumps_does_not_decide(tmp_path, cache_home, monkeypatch, first,
                                                   apart):
    # tests/trace/programs/jump.c: the sixth of ten passes computes 24 M steps more,
    # twice the first pass's extra 12 M where it has them; the first pass alone
    # decides whether it is set apart
    monkeypatch.setenv("PEVPM_TRACE_CPU", "1")
    runs = traced_at_counts(tmp_path, "jump", first, "24000000")
    text, notes = extracted_model(runs, tmp_path / "model.py")
    assert ("the first pass of the loops of MPI_Allreduce differs" in notes) == apart
    assert text.count("with b.loop(") == 1
    assert f"'loop1': {9 if apart else 10}" in text
