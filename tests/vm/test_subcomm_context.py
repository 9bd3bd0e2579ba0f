"""The third matching context (issue 25, tenth round): a user-program message
tagged ``SUBCOMM_TAG`` (a sub-communicator's exchange, as
``pevpm.trace.replay.subcomm`` writes it) is matched among such messages only,
so the program's ``MPI_ANY_TAG`` receives never take one; in both engines,
to the bit."""

import numpy as np
import pytest

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel.matching import SUBCOMM, SUBCOMM_TAG, USER, context_of

from test_engine_differential import check_same

PEER = "procnum % 2 == 0 ? procnum + 1 : procnum - 1"
MACHINE = Machine(Hockney(1e-5, 1e8), eager_limit=1024)


def any_tag_around_a_subcomm_exchange(source=PEER):
    """An MPI_ANY_TAG receive posted first, then the pair's sub-communicator
    exchange (100 bytes each way), then the user's message (200 bytes, tag 7)
    the wildcard is for."""
    b = ModelBuilder()
    b.irecv(300, source=PEER, request="user", tag="MPI_ANY_TAG")
    b.serial("procnum * 1e-6")
    b.sendrecv(100, dest=PEER, source=source, tag=SUBCOMM_TAG)
    b.send(200, dest=PEER, tag=7)
    b.wait("user")
    return b.build()


def test_a_message_is_matched_in_the_context_its_tag_names():
    assert context_of(USER, 7) == USER
    assert context_of(USER, SUBCOMM_TAG) == SUBCOMM
    assert SUBCOMM not in (USER, 1)


@pytest.mark.parametrize("source", [PEER, "MPI_ANY_SOURCE"])
@pytest.mark.parametrize("numprocs", [2, 6])
def test_an_any_tag_receive_leaves_the_subcomm_exchange_alone(source, numprocs):
    model = any_tag_around_a_subcomm_exchange(source)
    reference = engine.simulate(model, numprocs, MACHINE, rng=np.random.default_rng(1),
                                trace=True)
    # each rank's wildcard took the 200-byte user message, the exchange its own:
    # 100 + 200 bytes at 1e8 B/s and 2 latencies after the last rank's start
    assert sorted((m.tag, m.size) for m in reference.messages) == sorted(
        [(7, 200)] * numprocs + [(SUBCOMM_TAG, 100)] * numprocs)
    assert reference.makespan == pytest.approx((numprocs - 1) * 1e-6 + 2e-5 + 3e-6)
    core = fastengine.simulate(model, numprocs, MACHINE, rng=np.random.default_rng(1),
                               records=True)
    assert core.engine_note is None
    check_same(model, numprocs, MACHINE, seed=4)


def test_an_unmatched_subcomm_send_is_reported_outstanding():
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        b.isend(8, dest=1, request="lost", tag=SUBCOMM_TAG)
    with b.on_ranks("procnum == 1"):
        b.irecv(8, source=0, request="other", tag="MPI_ANY_TAG")
    run = engine.simulate(b.build(), 2, MACHINE)
    assert sorted((o.rank, o.op, o.count) for o in run.outstanding) == [
        (0, "MPI_Isend", 1), (1, "MPI_Irecv", 1)]
