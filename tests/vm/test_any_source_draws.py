"""An MPI_ANY_SOURCE receive draws its candidates' transfer times in the
same order in the compiled core as in the reference engine (issue 27).

The core sorts only the candidate sends not drawn yet and finds the best
drawn one without sorting; the reference sorts them all.  Every draw goes
through the communication model here, which logs it, so the two engines
must log the same stream (who sent to whom, how many bytes, the time drawn)
for every seed, on one switch and over a tree's flows (reserved and max-min
shared, where drawn sends are re-rated).  Transfer times are whole steps of
10 us and the workers compute in steps too, so arrivals tie often.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from network_models import Tree
from test_engine_differential import outcome

from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")


class LoggedSteps:
    """Transfer times of 1, 2 or 3 steps of 10 us from the run's generator,
    each draw logged as (source, destination, bytes, seconds).

    >>> model = LoggedSteps()
    >>> from pevpm.machine.transfer import Transfer
    >>> seconds = model.transfer_time(Transfer("MPI_Send", 8, 1, 0, False, 1),
    ...                               np.random.default_rng(0))
    >>> round(seconds * 1e5) in (1, 2, 3)
    True
    >>> len(model.draws)
    1
    """

    def __init__(self):
        self.draws = []

    def transfer_time(self, transfer, rng):
        seconds = float(rng.integers(1, 4)) * 1e-5
        self.draws.append((transfer.src, transfer.dst, transfer.size, seconds))
        return seconds

    def local_completion_time(self, transfer, rng):
        return 1e-6


def bag(rounds, size, step, kinds, replies):
    """Workers compute ``step`` times one of ``kinds`` multiples and send
    ``rounds`` results to rank 0, which takes them from any source (and,
    with ``replies``, answers each sender before it computes again)."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"), b.loop(f"(numprocs - 1) * {rounds}"):
            b.message("MPI_Recv", size, source="MPI_ANY_SOURCE", dest="procnum", tag=1,
                      request="got")
            b.serial(step / 2)
            if replies:
                b.send(8, dest="got.MPI_SOURCE", tag=2)
        with ranks.case("procnum != 0"), b.loop(rounds):
            b.serial(f"{step} * (1 + procnum % {kinds})")
            b.send(size, dest=0, tag=1)
            if replies:
                b.recv(8, source=0, tag=2)
    return b.build()


def runs(model, numprocs, topology, sharing, seed):
    """(draws, outcome) of the reference engine and of the compiled core."""
    results = []
    for run in (lambda m: engine.simulate(model, numprocs, m, rng=np.random.default_rng(seed),
                                          trace=True),
                lambda m: fastengine._run_core(vm.compile_model(model), model, numprocs, m,
                                               None, np.random.default_rng(seed), None,
                                               engine.Limits(), True)):
        comm = LoggedSteps()
        machine = Machine(comm, topology, eager_limit=0, flow_start="match",
                          flow_sharing=sharing)
        results.append((comm.draws, outcome(run(machine))))
    return results


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numprocs=st.integers(2, 14), rounds=st.integers(1, 4),
       size=st.sampled_from([8, 4000, 70_000]), step=st.sampled_from([0.0, 1e-5, 3e-5]),
       kinds=st.integers(1, 4), replies=st.booleans(), flows=st.booleans(),
       sharing=st.sampled_from(["reserve", "max-min", "simgrid"]),
       seed=st.integers(0, 2**32))
def test_any_source_draws_come_in_the_reference_order(numprocs, rounds, size, step, kinds,
                                                      replies, flows, sharing, seed):
    network = {"bandwidth": 1e8, "trunk_bandwidth": 5e7, "latency": 2e-6} if flows else {}
    topology = Tree(ppn=1, per_leaf=3, **network)
    reference, core = runs(bag(rounds, size, step, kinds, replies), numprocs, topology,
                           sharing, seed)
    assert core[0] == reference[0]
    assert core[1] == reference[1]
    assert len(core[0]) == (numprocs - 1) * rounds * (2 if replies else 1)
