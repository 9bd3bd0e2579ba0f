"""The engine runs collective expansions in their own matching context."""

import numpy as np
import pytest

from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.engine import simulate

collectives = pytest.importorskip("pevpm.vm.kernel.collectives")

#: every collective with each point-to-point algorithm of its family, at 5 and 8 ranks
DECOMPOSED = [(op, algorithm, n) for op, family in collectives.FAMILY_OF.items()
              for algorithm in collectives.ALGORITHMS[family] for n in (5, 8)
              if n == 8 or (family, algorithm) != ("allgather", "recursive-doubling")]


def test_barrier_releases_nobody_before_the_last_arrival_and_is_recorded():
    b = ModelBuilder()
    with b.loop(2):
        b.serial("procnum + 1.0")
        b.collective("MPI_Barrier")
    run = simulate(b.build(), 4, Machine(Constant(0.125)))
    assert [c.occurrence for c in run.collectives] == [0, 1]
    first = run.collectives[0].completion
    assert first.shape == (4,) and np.all(first >= 4.0)
    assert np.all(run.collectives[1].completion >= first.min() + 4.0)


def test_user_any_source_receive_ignores_collective_traffic():
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        b.irecv(8, source="MPI_ANY_SOURCE", tag="MPI_ANY_TAG", request="user")
    b.collective("MPI_Bcast", 64, root=1)
    with b.on_ranks("procnum == 2"):
        b.send(8, dest=0, tag=5)
    with b.on_ranks("procnum == 0"):
        b.wait("user")
    run = simulate(b.build(), 4, Machine(Constant(0.25)), trace=True)
    user = [m for m in run.messages if m.tag >= 0]
    assert [(m.src, m.dst, m.tag) for m in user] == [(2, 0, 5)]


def test_user_requests_survive_a_collective_in_between():
    b = ModelBuilder()
    peer = "(procnum + 2) % 4"
    b.isend(8, dest=peer, request="r0")
    b.irecv(8, source=peer, request="r1")
    b.collective("MPI_Allreduce", 1024)
    b.collective("MPI_Alltoall", 64)
    b.waitall(["r0", "r1"])
    run = simulate(b.build(), 4, Machine(Constant(0.25)), trace=True)
    assert sum(1 for m in run.messages if m.tag == 0) == 4


@pytest.mark.parametrize("op, algorithm, n", DECOMPOSED)
def test_every_algorithm_receives_what_it_is_sent(op, algorithm, n):
    """No expansion truncates its own messages (an odd size splits unevenly)."""
    b = ModelBuilder()
    b.collective(op, 1001, root=n - 2)
    family = collectives.FAMILY_OF[op]
    config = collectives.CollectiveConfig.parse(f"{family}={algorithm}")
    run = simulate(b.build(), n, Machine(Constant(0.25), collectives=config))
    assert run.messages_simulated > 0
