"""Blocks chosen by the run's placement: duplex exchanges, ranks per node, oversubscription."""

import functools

import numpy as np
import pytest
from test_profile_comm import US, write_blocks

from pevpm.machine.machine import Machine
from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.machine.topology import Topology
from pevpm.machine.transfer import Transfer, for_placement
from pevpm.model.builder import ModelBuilder
from pevpm.profile.store import ProfileWriter
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.strategies.explain import explain

approx = functools.partial(pytest.approx, rel=1e-4)

# Nearly constant times per block (microseconds: v to v * 1.00001), so every
# draw names its block.
BLOCKS = {
    ("isend", 8192, 1, 2): 5.0,
    ("isend", 8192, 1, 4): 20.0,
    ("sendrecv", 8192, 1, 2): 7.0,
    ("sendrecv", 8192, 1, 4): 40.0,
    ("isendlocal", 8192, 1, 2): 1.0,
    ("isendlocal", 8192, 1, 4): 2.0,
}


@pytest.fixture
def two_core_profile(tmp_path):
    """1x2 and 1x4 blocks measured on a node with 2 cores (1x4 oversubscribed)."""
    path = write_blocks(tmp_path / "two-core.db",
                        {key: (value, value * 1.00001) for key, value in BLOCKS.items()})
    with ProfileWriter.open(path) as writer:
        writer.set_metadata(cores="2")
    return path


def ring(iterations=10):
    """Sendrecv with the partner (a 2-rank ring; pairs at more ranks)."""
    peer = "procnum % 2 == 0 ? procnum + 1 : procnum - 1"
    b = ModelBuilder()
    with b.loop(iterations):
        b.sendrecv(8192, dest=peer, source=peer)
    return b.build()


def one_message(op="MPI_Isend", contention=1, duplex=False):
    return Transfer(op, 8192, 0, 1, intra_node=True, contention=contention, duplex=duplex)


def test_a_two_rank_sendrecv_ring_draws_from_the_1x2_duplex_block(two_core_profile):
    machine = Machine(ProfileCommModel.from_profile(two_core_profile), Topology(procs_per_node=2))
    for simulate in (engine.simulate, fastengine.simulate):
        run = simulate(ring(10), 2, machine)
        assert run.makespan == approx(10 * 7.0 * US)
    [use] = explain(ring(10), 2, machine)
    assert use.row() == ("transfer", "MPI_Sendrecv", "duplex", "sendrecv 1x2", "8192", "1", 20)


def test_an_eight_rank_run_borrows_oversubscribed_blocks_only_when_it_is_oversubscribed(
        two_core_profile):
    model = ProfileCommModel.from_profile(two_core_profile)
    assert model.cores == 2
    rng = np.random.default_rng(0)
    crowded = for_placement(model, [0] * 8)              # 8 ranks on one 2-core node
    spread = for_placement(model, [r // 2 for r in range(8)])   # 2 per node on 4 nodes
    assert crowded.oversubscribed and not spread.oversubscribed
    for level in (1, 2, 4):
        assert crowded.transfer_time(one_message(contention=level), rng) == approx(20 * US)
        assert spread.transfer_time(one_message(contention=level), rng) == approx(5 * US)
    assert crowded.series_for(one_message(duplex=True, op="MPI_Sendrecv")).nxp == "1x4"
    assert spread.series_for(one_message(duplex=True, op="MPI_Sendrecv")).nxp == "1x2"
    assert crowded.local_completion_time(one_message(), rng) == approx(2 * US)
    assert spread.local_completion_time(one_message(), rng) == approx(1 * US)


def test_the_whole_run_follows_its_placement(two_core_profile):
    comm = ProfileCommModel.from_profile(two_core_profile)
    crowded = Machine(comm, Topology(procs_per_node=8))
    spread = Machine(comm, Topology(procs_per_node=2))
    blocks = {use.test + " " + use.nxp for use in explain(ring(3), 8, crowded)}
    assert blocks == {"sendrecv 1x4"}
    assert {use.row()[3] for use in explain(ring(3), 8, crowded)} == {
        "sendrecv 1x4 (oversubscribed)"}
    assert {use.test + " " + use.nxp for use in explain(ring(3), 8, spread)} == {"sendrecv 1x2"}


def test_contention_decides_within_the_cores_and_ranks_per_node_breaks_ties(tmp_path):
    # 1x4 and 1x5 both have contention 2; nothing is oversubscribed on 8 cores
    blocks = {("isend", 0, 1, 2): (5, 5.0001), ("isend", 0, 1, 4): (20, 20.0001),
              ("isend", 0, 1, 5): (30, 30.0001)}
    path = write_blocks(tmp_path / "roomy.db", blocks)
    with ProfileWriter.open(path) as writer:
        writer.set_metadata(cores="8")
    model = ProfileCommModel.from_profile(path)
    rng = np.random.default_rng(0)
    t = Transfer("MPI_Isend", 0, 0, 1, intra_node=True, contention=2)
    # two messages on the node's memory: the contention-2 blocks even at 2 ranks per node
    assert for_placement(model, [0, 0]).transfer_time(t, rng) == approx(20 * US)
    assert for_placement(model, [0] * 5).transfer_time(t, rng) == approx(30 * US)
    assert model.transfer_time(t, rng) == approx(20 * US)        # no placement: by name
    assert for_placement(model, [0, 0]).transfer_time(
        Transfer("MPI_Isend", 0, 0, 1, intra_node=True, contention=1), rng) == approx(5 * US)


def test_duplex_messages_prefer_their_own_measurement(tmp_path):
    blocks = {("isend", 0, 1, 2): (10, 10.0001), ("isendduplex", 0, 1, 2): (12, 12.0001),
              ("sendrecv", 0, 1, 2): (15, 15.0001)}
    model = ProfileCommModel.from_profile(write_blocks(tmp_path / "d.db", blocks))
    rng = np.random.default_rng(0)

    def draw(op, duplex):
        t = Transfer(op, 0, 0, 1, intra_node=True, contention=1, duplex=duplex)
        return model.transfer_time(t, rng) / US

    assert draw("MPI_Sendrecv", True) == approx(15)
    assert draw("MPI_Isend", True) == approx(12)
    assert draw("MPI_Isend", False) == approx(10)
    del blocks[("isendduplex", 0, 1, 2)]
    fallback = ProfileCommModel.from_profile(write_blocks(tmp_path / "s.db", blocks))
    t = Transfer("MPI_Isend", 0, 0, 1, intra_node=True, contention=1, duplex=True)
    assert fallback.transfer_time(t, rng) == approx(15 * US)


def test_only_intra_node_notes_apply_only_when_a_message_can_leave_the_node(two_core_profile):
    model = ProfileCommModel.from_profile(two_core_profile)
    assert any("only intra-node" in note for note in model.notes_for(leaves_node=True))
    assert not any("only intra-node" in note for note in model.notes_for(leaves_node=False))
