"""The compiled core's matching slots (issue 25, tenth round): a rank's send
queues and receive buckets sit in CHANNELS slots of its own Queues record
while one is free, in the hash tables beyond that.  The runs below are
compared to the bit with the reference engine (times, every message record,
collective completions): collectives at odd and power-of-two counts with a
halo exchange open around them and the links contended, and ranks with more
queues and buckets in use than slots, so queues move between slots and the
tables while messages of one pair wait in order."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import fastengine

from engine_models import check_wide_ring
from test_engine_differential import COMMS, check_same

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")

LEFT, RIGHT = "(procnum + numprocs - 1) % numprocs", "(procnum + 1) % numprocs"
CONTENDED = Machine(Hockney(2e-5, 1e8, share_bandwidth=True),
                    Topology(procs_per_node=2, backplane_capacity=1), eager_limit=1024)


def halo_around(op, size, root=None, iterations=3):
    """Receives from both neighbours posted, the collective, then the sends
    and waits: the halo's queues and buckets stay open during the collective."""
    b = ModelBuilder()
    with b.loop(iterations, index="i"):
        b.irecv(4096, source=LEFT, request="l", tag=1)
        b.irecv(4096, source=RIGHT, request="r", tag=2)
        b.serial("1e-6 * ((procnum * 7 + i) % 5)")
        b.collective(op, size, root=root)
        b.send(4096, dest=RIGHT, tag=1)
        b.send(4096, dest=LEFT, tag=2)
        b.waitall(["l", "r"])
    return b.build()


@pytest.mark.parametrize("numprocs", [2, 5, 7, 8, 16])
@pytest.mark.parametrize("op, size, root", [("MPI_Allreduce", 8, None),
                                            ("MPI_Allreduce", 65536, None),
                                            ("MPI_Bcast", 4096, "numprocs - 1"),
                                            ("MPI_Reduce", 512, "1"),
                                            ("MPI_Alltoall", 256, None)])
def test_collectives_with_a_halo_open_agree_with_the_reference(numprocs, op, size, root):
    check_same(halo_around(op, size, root), numprocs, CONTENDED, seed=numprocs)


@pytest.mark.parametrize("algorithm", ["recursive-doubling", "reduce-bcast"])
def test_both_allreduce_algorithms_agree_at_odd_counts(algorithm):
    machine = Machine(COMMS["per-size"], Topology(procs_per_node=3),
                      collectives=CollectiveConfig(overrides={"allreduce": algorithm}))
    for numprocs in (3, 6, 11):
        check_same(halo_around("MPI_Allreduce", 8), numprocs, machine, seed=numprocs)


def test_a_pair_keeps_its_order_while_its_queue_moves_to_the_table_and_back():
    """Rank 0 has receives open from six sources (more than its slots), so
    the later queues and buckets go to the tables; rank 1's three messages of
    one tag wait in its queue while slots free up, and the next ones join
    that queue, not a new slot: every message is matched in its send order
    (the sizes tell them apart)."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            for src in range(2, 7):
                b.irecv(64, source=src, request=f"o{src}", tag=9)
            b.serial(1e-3)                  # rank 1's first sends queue meanwhile
            b.waitall([f"o{src}" for src in range(2, 7)])
            for k in range(6):
                b.recv(1000 + k, source=1, tag=5)
        with ranks.case("procnum == 1"):
            for k in range(6):
                b.send(1000 + k, dest=0, tag=5)
                b.serial(3e-4)
        with ranks.case("procnum >= 2"):
            b.serial("procnum * 1e-4")
            b.send(64, dest=0, tag=9)
    machine = Machine(COMMS["hockney"], eager_limit=1 << 20)
    check_same(b.build(), 7, machine, seed=3)
    run = fastengine.simulate(b.build(), 7, machine, records=True)
    assert [m.size for m in run.messages if m.src == 1] == [1000 + k for k in range(6)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numprocs=st.integers(2, 12), fan=st.integers(1, 9), tags=st.integers(1, 3),
       rounds=st.integers(1, 3), eager=st.sampled_from([0, 1 << 20]),
       collective=st.sampled_from([None, "MPI_Allreduce", "MPI_Barrier", "MPI_Alltoall"]),
       seed=st.integers(0, 2**32))
def test_many_open_queues_and_buckets_agree_with_the_reference(numprocs, fan, tags, rounds,
                                                               eager, collective, seed):
    """Every rank posts receives from its next ``fan`` ranks under ``tags``
    tags (often more queues and buckets than slots), maybe runs a collective,
    then sends to its previous ``fan`` ranks in a shuffled order."""
    b = ModelBuilder()
    with b.loop(rounds, index="i"):
        names = []
        for d in range(1, fan + 1):
            for t in range(tags):
                name = f"r{d}_{t}"
                names.append(name)
                b.irecv(f"64 + {d}", source=f"(procnum + {d}) % numprocs", request=name,
                        tag=t)
        if collective:
            b.collective(collective, 16)
        for d in range(fan, 0, -1):
            for t in reversed(range(tags)):
                b.serial("uniform(0, 1e-5)")
                b.send(f"64 + {d}", dest=f"(procnum + numprocs - {d}) % numprocs", tag=t)
        b.waitall(names)
    machine = Machine(COMMS["per-size"], Topology(procs_per_node=2), eager_limit=eager)
    check_same(b.build(), numprocs, machine, seed)


def test_buckets_beyond_the_slots_past_46_340_ranks_number_their_tags():
    """Beyond 46,340 ranks a bucket kept in the table is keyed by its tag's
    number: six tagged receives from the left (two beyond the slots) and the
    sends in the other order time every rank as the reference does on a small ring."""
    b = ModelBuilder()
    for tag in range(6):
        b.irecv(8, source=LEFT, tag=tag, request=f"t{tag}")
    b.serial("1e-6 * (procnum % 4)")
    for tag in reversed(range(6)):
        b.send(8, dest=RIGHT, tag=tag)
    b.waitall([f"t{tag}" for tag in range(6)])
    check_wide_ring(b.build(), Machine(COMMS["constant"], eager_limit=1024), 8, 6)
