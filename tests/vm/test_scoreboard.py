"""Contention scoreboard: counts per link, alone and inside the engine."""

import pytest

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.engine import simulate
from pevpm.vm.kernel.scoreboard import ContentionScoreboard


class Recording:
    """Constant latency; remembers the contention level of every transfer."""

    def __init__(self, latency=1.0):
        self.latency = latency
        self.levels: list[tuple[int, int, int]] = []

    def transfer_time(self, transfer, rng):
        self.levels.append((transfer.src, transfer.dst, transfer.contention))
        return self.latency

    def local_completion_time(self, transfer, rng):
        return 0.0

    def bounded(self, which):
        return self


def test_messages_leave_when_they_end():
    board = ContentionScoreboard([1, 1])
    assert board.contention((0,), at=0.0, src=0, dst=1) == 1
    board.add((0,), end=2.0, src=0, dst=1)
    board.add((0,), end=3.0, src=2, dst=3)
    assert board.contention((0,), at=1.0, src=4, dst=5) == 3
    assert board.contention((0, 1), at=2.5, src=4, dst=5) == 2
    assert board.in_transit(0) == 1 and board.in_transit(1) == 0
    assert board.contention((0,), at=3.0, src=4, dst=5) == 1


def test_capacity_divides_the_count():
    board = ContentionScoreboard([4])
    for k in range(4):
        board.add((0,), end=10.0, src=2 * k, dst=2 * k + 1)
    assert board.contention((0,), at=0.0, src=8, dst=9) == 2   # 5 messages on a 4-wide link


def test_a_pair_exchanging_both_ways_counts_once():
    board = ContentionScoreboard([1])
    board.add((0,), end=5.0, src=0, dst=1)
    # the reply meets its partner's message: one duplex unit, contention 1
    assert board.contention((0,), at=1.0, src=1, dst=0) == 1
    assert board.opposite((0,), src=1, dst=0) and not board.opposite((0,), src=0, dst=1)
    board.add((0,), end=5.0, src=1, dst=0)
    # another message the same way as one of them, or from another pair, adds
    assert board.contention((0,), at=1.0, src=0, dst=1) == 2
    assert board.contention((0,), at=1.0, src=2, dst=3) == 2
    board.add((0,), end=6.0, src=0, dst=1)
    assert board.contention((0,), at=1.0, src=1, dst=0) == 2   # 0->1 twice, 1->0 once
    assert board.contention((0,), at=5.5, src=1, dst=0) == 1   # only the second 0->1 left
    assert board.in_transit(0) == 1


def test_same_direction_messages_of_one_pair_add_up():
    board = ContentionScoreboard([1])
    board.add((0,), end=5.0, src=0, dst=1)
    assert board.contention((0,), at=0.0, src=0, dst=1) == 2


def gather_model():
    b = ModelBuilder()
    with b.on_ranks("procnum != 0"):
        b.isend(1000, dest=0, request="s")
        b.wait("s")
    with b.on_ranks("procnum == 0"):
        for src in (1, 2, 3):
            b.irecv(1000, source=src, request=f"r{src}")
        b.waitall()
    return b.build()


def test_gather_into_one_node_piles_up_on_its_link():
    comm = Recording()
    machine = Machine(comm, Topology(procs_per_node=1, backplane_capacity=4))
    simulate(gather_model(), 4, machine)
    assert comm.levels == [(1, 0, 1), (2, 0, 2), (3, 0, 3)]


def test_disjoint_pairs_do_not_contend_on_a_wide_backplane():
    b = ModelBuilder()
    peer = "procnum % 2 == 0 ? procnum + 1 : procnum - 1"
    with b.on_ranks("procnum % 2 == 0"):
        b.send(1000, dest=peer)
    with b.on_ranks("procnum % 2 == 1"):
        b.recv(1000, source=peer)
    wide, narrow = Recording(), Recording()
    simulate(b.build(), 4, Machine(wide, Topology(backplane_capacity=2)))
    simulate(b.build(), 4, Machine(narrow, Topology(backplane_capacity=1)))
    assert [c for *_, c in wide.levels] == [1, 1]
    assert [c for *_, c in narrow.levels] == [1, 2]   # the thesis's one-link switch


def test_gather_slows_down_when_bandwidth_is_shared():
    shared = Hockney(latency=0.0, bandwidth=1000.0, share_bandwidth=True)
    run = simulate(gather_model(), 4, Machine(shared, Topology(backplane_capacity=4)))
    # contention 1, 2, 3 on node 0's link: 1 s, 2 s and 3 s for 1000 bytes
    assert run.ranks[0].finish == pytest.approx(3.0)
    assert [r.finish for r in run.ranks[1:]] == pytest.approx([1.0, 2.0, 3.0])


def test_intra_node_messages_use_the_node_memory_not_the_network():
    comm = Recording()
    simulate(gather_model(), 4, Machine(comm, Topology(procs_per_node=4)))
    assert [c for *_, c in comm.levels] == [1, 2, 3]   # all on node 0's memory link


def exchange_model(blocking_sendrecv: bool):
    b = ModelBuilder()
    peer = "procnum % 2 == 0 ? procnum + 1 : procnum - 1"
    if blocking_sendrecv:
        b.sendrecv(1000, dest=peer, source=peer)
    else:
        b.isend(1000, dest=peer, request="s")
        b.irecv(1000, source=peer, request="r")
        b.waitall()
    return b.build()


class DuplexRecording(Recording):
    """Remembers (src, dst, contention, duplex) of every transfer."""

    def transfer_time(self, transfer, rng):
        self.levels.append((transfer.src, transfer.dst, transfer.contention, transfer.duplex))
        return self.latency


def test_a_two_rank_sendrecv_is_one_duplex_exchange_at_contention_one():
    comm = DuplexRecording()
    simulate(exchange_model(True), 2, Machine(comm, Topology(procs_per_node=2)))
    assert sorted(comm.levels) == [(0, 1, 1, True), (1, 0, 1, True)]


def test_two_pairs_exchanging_on_one_node_meet_contention_two():
    comm = DuplexRecording()
    simulate(exchange_model(True), 4, Machine(comm, Topology(procs_per_node=4)))
    assert sorted(level for *_, level, _ in comm.levels) == [1, 1, 2, 2]


def test_opposite_isends_in_flight_are_an_exchange():
    comm = DuplexRecording()
    simulate(exchange_model(False), 2, Machine(comm, Topology(procs_per_node=2)))
    # the first matched meets nothing; the second meets it going the other way
    assert [(c, d) for *_, c, d in comm.levels] == [(1, False), (1, True)]


def test_restricted_machine_costs_every_message_at_contention_one():
    full, restricted = Recording(), Recording()
    simulate(gather_model(), 4, Machine(full, Topology(backplane_capacity=4)))
    simulate(gather_model(), 4, Machine(restricted, Topology(backplane_capacity=4),
                                        node_contention=False))
    assert [c for *_, c in full.levels] == [1, 2, 3]
    assert [c for *_, c in restricted.levels] == [1, 1, 1]
