"""An MPI_ANY_SOURCE receive takes the message that arrives first, even when
its sender still has to be unblocked by another decision (issue 14: the bag
of tasks' master took results late and its workers idled)."""

import pytest

from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine


def _relay_model() -> ModelBuilder:
    """Rank 0 waits for any source.  Rank 1 must first receive from rank 2
    (arrives at 0.6) and then sends (arrives at 1.1); rank 3 computes 5 s and
    sends (arrives at 5.5).  Rank 0 then computes 10 s per rank number of
    the sender it took first, so the makespan says which it was."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", dest="procnum", tag=1,
                      request="first")
            b.serial("10 * first.MPI_SOURCE")
            b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", dest="procnum", tag=1)
        with ranks.case("procnum == 1"):
            b.recv(8, source=2, tag=2)
            b.send(8, dest=0, tag=1)
        with ranks.case("procnum == 2"):
            b.serial(0.1)
            b.send(8, dest=1, tag=2)
        with ranks.case("procnum == 3"):
            b.serial(5.0)
            b.send(8, dest=0, tag=1)
    return b


@pytest.mark.parametrize("simulate", [engine.simulate, fastengine.simulate])
def test_any_source_waits_for_a_sender_that_is_still_blocked(simulate):
    run = simulate(_relay_model().build(), 4, Machine(Constant(0.5)))
    # Rank 1's message (arrival 1.1) is taken first: 1.1 + 10 s; before the
    # fix rank 3's (5.5) was, because rank 1 had not sent yet: 5.5 + 30 s.
    assert run.makespan == pytest.approx(11.1)
    assert run.ranks[0].compute == 10.0
