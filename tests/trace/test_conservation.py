"""pevpm.trace.extract.conservation: totals that sibling loops keep at every traced
count, found from the loop counts and the messages of their bodies."""

from pevpm.trace.extract.conservation import conserved_totals
from pevpm.trace.extract.rank_loops import COUNT
from pevpm.trace.extract.tokens import SERIAL, LoopNode, Token


def msg(op, tag, dst=1):
    return Token((op, 8, 0, dst, tag, None, (), None, None), ())


WORK = [msg("MPI_Send", 1), Token(SERIAL, (1e-6,))]
ANSWER = [msg("MPI_Recv", 2), msg("MPI_Send", 1)]
RESULT = [msg("MPI_Recv", 2)]
STOP = [msg("MPI_Send", 9)]


def master(p: int, jobs: int) -> list:
    """The first jobs (a loop over the other ranks), the answers, the last
    results and the stop messages of a master with ``jobs`` jobs at ``p`` ranks."""
    return [Token(SERIAL, (1e-3,)), LoopNode(COUNT, tuple(WORK)),
            LoopNode(jobs + 1 - p, tuple(ANSWER)), LoopNode(p - 1, tuple(RESULT)),
            LoopNode(COUNT, tuple(STOP))]


def test_the_jobs_and_the_results_are_one_total():
    cap, = conserved_totals({p: master(p, 40) for p in (2, 4, 8)})
    assert cap.total == 40
    assert cap.grows == {1, 3} and cap.shrinks == {2: 1}
    assert cap.kinds == (("MPI_Send", 1), ("MPI_Recv", 2))


def test_a_total_that_changes_with_the_count_is_not_conserved():
    assert conserved_totals({2: master(2, 40), 4: master(4, 60)}) == []


def test_one_count_shows_no_conservation():
    assert conserved_totals({4: master(4, 40)}) == []


def test_a_message_sent_twice_a_pass_is_not_capped():
    """Two jobs a pass in the answers: the passes no longer add up to the jobs
    one for one, and nothing is inferred."""
    at = {p: [LoopNode(COUNT, tuple(WORK)), LoopNode(21 - p, tuple(ANSWER + ANSWER))]
          for p in (2, 4)}
    assert conserved_totals(at) == []


def test_a_message_straight_in_the_program_counts_towards_the_total():
    """A job handed out before the loops is part of the total, not of a loop."""
    at = {p: [msg("MPI_Send", 1), LoopNode(p - 1, tuple(WORK)),
              LoopNode(20 - p, tuple(ANSWER))] for p in (2, 4)}
    cap, = conserved_totals(at)
    assert cap.total == 19 and cap.grows == {1} and cap.shrinks == {2: 1}


def test_a_loop_in_two_totals_that_disagree_keeps_the_first():
    """The answers (21 - p passes) also take a message that a loop of p + 1
    passes takes: 22 in all against the first jobs' 20; the second total
    shares the answers' loop and is not joined."""
    other = msg("MPI_Recv", 5)
    at = {p: [LoopNode(COUNT, tuple(WORK)), LoopNode(21 - p, tuple(ANSWER + [other])),
              LoopNode(p + 1, (other,))] for p in (2, 4)}
    cap, = conserved_totals(at)
    assert cap.total == 20 and cap.grows == {0} and cap.shrinks == {1: 0}
    alone = {p: nodes[1:] for p, nodes in at.items()}      # without the first jobs
    cap, = conserved_totals(alone)
    assert cap.total == 22 and cap.grows == {1} and cap.shrinks == {0: 1}
