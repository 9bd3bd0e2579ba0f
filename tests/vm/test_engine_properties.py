"""Properties of random pairwise-exchange programs (Hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pevpm.machine.comm_models import Hockney, LogGP
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.engine import simulate

PEER = "procnum % 2 == 0 ? procnum + 1 : procnum - 1"
STYLES = ("nonblocking", "sendrecv", "ordered")


def exchange(b, style, size):
    if style == "nonblocking":
        b.irecv(size, source=PEER, request="r")
        b.isend(size, dest=PEER, request="s")
        b.waitall()
    elif style == "sendrecv":
        b.sendrecv(size, dest=PEER, source=PEER)
    else:
        with b.runon() as parity:
            with parity.case("procnum % 2 == 0"):
                b.send(size, dest=PEER)
                b.recv(size, source=PEER)
            with parity.case("procnum % 2 == 1"):
                b.recv(size, source=PEER)
                b.send(size, dest=PEER)


@settings(max_examples=40, deadline=None)
@given(rounds=st.lists(st.tuples(st.sampled_from(STYLES), st.integers(0, 100_000),
                                 st.floats(0, 1e-3)), min_size=1, max_size=6),
       pairs=st.integers(1, 4), eager=st.sampled_from([0, 1024, 10**6]),
       loggp=st.booleans(), ppn=st.integers(1, 3))
def test_pairwise_exchanges_finish_and_account_for_every_second(rounds, pairs, eager, loggp,
                                                                ppn):
    b = ModelBuilder()
    for style, size, work in rounds:
        b.serial(f"{work} * (procnum + 1)")
        exchange(b, style, size)
    comm = LogGP(L=5e-6, o=1e-6, g=2e-6, G=1e-9) if loggp else Hockney(2e-5, 1e8,
                                                                        share_bandwidth=True)
    n = 2 * pairs
    run = simulate(b.build(), n, Machine(comm, Topology(procs_per_node=ppn), eager_limit=eager),
                   rng=np.random.default_rng(0))
    assert run.messages_simulated == n * len(rounds)
    for rank in run.ranks:
        assert rank.total == pytest.approx(rank.finish, rel=1e-9, abs=1e-15)
        assert min(rank.compute, rank.communication, rank.waiting) >= 0
    assert sum(run.critical_path.values()) == pytest.approx(run.makespan, rel=1e-9, abs=1e-15)
    slowest_compute = max(r.compute for r in run.ranks)
    assert run.makespan >= slowest_compute
    assert run.makespan == max(r.finish for r in run.ranks)
