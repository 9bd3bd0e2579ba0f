"""Routes over any network, contention from the busiest link, flows (issue 27).

Both engines take a placement's routes (the compiled core asks
``node_route`` once per pair of nodes), count contention on every link of a
route, and on a network with link bandwidths cost messages by the flow
model; they must agree run for run, as on the single switch.
"""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from network_models import Tree
from test_engine_differential import BLOCKS, COMMS, add_block, check_same

from pevpm.machine.comm_models import Constant, Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")


def crossing_model(size):
    """Ranks 0 and 1 (leaf 0) send ``size`` bytes at once to 2 and 3 (leaf 1)."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum < 2"):
            b.send(size, dest="procnum + 2")
        with ranks.case("procnum >= 2"):
            b.recv(size, source="procnum - 2")
    return b.build()


def test_the_trunk_between_two_leaves_sets_the_contention():
    """Two messages from different nodes share only the leaf-to-core trunk:
    with trunk capacity 1 the second meets contention 2 (the busiest link on
    its route), with capacity 2 both meet 1.  Hockney shares bandwidth by level."""
    comm = Hockney(latency=1e-5, bandwidth=1e6, share_bandwidth=True)
    narrow = engine.simulate(crossing_model(1000), 4, Machine(comm, Tree(trunk=1)))
    wide = engine.simulate(crossing_model(1000), 4, Machine(comm, Tree(trunk=2)))
    assert wide.makespan == pytest.approx(1e-5 + 1000 / 1e6)
    assert narrow.makespan == pytest.approx(1e-5 + 2000 / 1e6)


def test_the_core_asks_each_pair_of_nodes_route_once():
    topology = Tree()
    b = ModelBuilder()
    with b.loop(5):
        b.sendrecv(64, dest="(procnum + 1) % numprocs",
                   source="(procnum + numprocs - 1) % numprocs")
    model = b.build()
    machine = Machine(Hockney(1e-5, 1e8, share_bandwidth=True), topology)
    fastengine._run_core(vm.compile_model(model), model, 4, machine, None,
                         np.random.default_rng(0), None, engine.Limits(), False)
    asked = topology.placements[-1].asked
    assert sorted(asked) == sorted(set(asked)) == [(0, 1), (1, 2), (2, 3), (3, 0)]


def test_flows_share_the_trunk_and_the_overhead_comes_from_the_model():
    """Synthetic network: node links 1 MB/s, trunk 1 MB/s, 1 us a hop.  Two
    1,000-byte flows over the one trunk: the first alone (1 ms), the second
    gets the trunk when the first ends (2 ms); each adds the model's zero-byte
    time (10 us) and four hops of latency."""
    topology = Tree(bandwidth=1e6, trunk_bandwidth=1e6, latency=1e-6)
    run = engine.simulate(crossing_model(1000), 4, Machine(Constant(1e-5), topology),
                          trace=True)
    arrivals = sorted(m.recv_end for m in run.messages)
    assert arrivals == pytest.approx([1e-5 + 4e-6 + 1e-3, 1e-5 + 4e-6 + 2e-3])


def test_a_fast_trunk_lets_both_flows_run_at_their_node_links_rate():
    topology = Tree(bandwidth=1e6, trunk_bandwidth=2e6, latency=0.0)
    run = engine.simulate(crossing_model(1000), 4, Machine(Constant(0.0), topology))
    assert run.makespan == pytest.approx(1e-3)


def test_messages_inside_a_node_keep_the_models_time():
    topology = Tree(ppn=2, bandwidth=1.0, trunk_bandwidth=1.0)
    b = ModelBuilder()
    b.sendrecv(10**6, dest="1 - procnum", source="1 - procnum")
    run = engine.simulate(b.build(), 2, Machine(Hockney(1e-6, 1e9), topology))
    assert run.makespan == pytest.approx(1e-6 + 1e-3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(st.tuples(st.sampled_from(BLOCKS), st.integers(0, 70_000)),
                       min_size=1, max_size=5),
       numprocs=st.integers(1, 12), comm=st.sampled_from(sorted(COMMS)),
       ppn=st.integers(1, 3), per_leaf=st.integers(1, 3), trunk=st.integers(1, 2),
       flows=st.booleans(), flow_start=st.sampled_from(["send", "match"]),
       sharing=st.sampled_from(["reserve", "max-min", "simgrid"]), seed=st.integers(0, 2**32))
def test_the_core_and_the_reference_agree_on_a_tree(blocks, numprocs, comm, ppn, per_leaf,
                                                    trunk, flows, flow_start, sharing, seed):
    b = ModelBuilder()
    for i, (kind, size) in enumerate(blocks):
        add_block(b, kind, size, i)
    network = {"bandwidth": 1e8, "trunk_bandwidth": 5e7, "latency": 2e-6} if flows else {}
    machine = Machine(COMMS[comm], Tree(ppn=ppn, per_leaf=per_leaf, trunk=trunk, **network),
                      eager_limit=1024, flow_start=flow_start, flow_sharing=sharing)
    check_same(b.build(), numprocs, machine, seed)


@pytest.mark.parametrize("sharing", ["reserve", "max-min", "simgrid"])
def test_the_core_and_the_reference_agree_on_many_overlapping_flows(sharing):
    """An alltoall of 64 KiB blocks on 12 nodes, three times: hundreds of flows
    overlap on the trunks, drawn out of time order."""
    b = ModelBuilder()
    with b.loop(3):
        b.collective("MPI_Alltoall", 65536)
        b.serial("1e-4 * procnum")
    machine = Machine(Constant(2e-6), Tree(per_leaf=4, bandwidth=1e9, trunk_bandwidth=2e9,
                                           latency=1e-6), flow_sharing=sharing)
    check_same(b.build(), 12, machine, 3)


@pytest.mark.parametrize("network", ["fat-tree:k=4,n=2,oversub=2,bw=10Gbit/s,lat=1us",
                                     "torus:4x2x2,bw=10Gbit/s,lat=1us",
                                     "dragonfly:groups=2,chassis=2,routers=4,nodes=2,bw=10Gbit/s,lat=1us",
                                     "torus:4x4"])
def test_the_engines_agree_on_the_generated_networks(network):
    """The machine package's generators, with link figures (flows) and without
    (the profile's times, contention on every link of the route)."""
    b = ModelBuilder()
    for i, kind in enumerate(("alltoall", "gather", "ring", "nonblocking")):
        add_block(b, kind, 40_000, i)
    machine = parse_machine("default", ppn=2, topology=network)
    check_same(b.build(), 16, machine, 7)
    check_same(b.build(), 13, replace(machine, comm=COMMS["hockney"]), 8)
    check_same(b.build(), 16, replace(machine, flow_sharing="max-min"), 9)
    check_same(b.build(), 16, replace(machine, flow_sharing="simgrid"), 10)


def test_the_core_prunes_reservations_no_flow_can_reach_and_still_agrees():
    """1,500 exchanges between the leaves put thousands of breakpoints on each
    trunk, past the core's pruning threshold (1,024): what it drops is before
    any flow still to come, so its results stay the reference's."""
    b = ModelBuilder()
    with b.loop(1500):
        b.sendrecv(4096, dest="(procnum + 2) % numprocs", source="(procnum + 2) % numprocs")
        b.serial("uniform(0, 1e-5)")
    machine = Machine(Constant(1e-6), Tree(bandwidth=1e9, trunk_bandwidth=1e9, latency=1e-6))
    check_same(b.build(), 4, machine, 11)


def test_flows_start_at_the_match_when_the_machine_says_so():
    """A 1,000-byte message sent at 0 to a receive posted at 5 ms: from the send
    it has arrived long before (the receive completes at once, at 5 ms); from
    the match (SimGrid's rendezvous) it flows from 5 ms: 1 ms of bytes and two
    hops of 1 us after."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.send(1000, dest=1)
        with ranks.case("procnum == 1"):
            b.serial(5e-3)
            b.recv(1000, source=0)
    topology = Tree(per_leaf=2, bandwidth=1e6, trunk_bandwidth=1e6, latency=1e-6)
    for flow_start, end in (("send", 5e-3), ("match", 5e-3 + 2e-6 + 1e-3)):
        machine = Machine(Constant(0.0), topology, eager_limit=1024, flow_start=flow_start)
        assert engine.simulate(b.build(), 2, machine).makespan == pytest.approx(end)
        check_same(b.build(), 2, machine, 0)


@pytest.mark.parametrize("network", ["fat-tree:k=6,n=2,oversub=3,bw=10Gbit/s,lat=1us",
                                     "torus:4x3x2,bw=10Gbit/s,lat=1us"])
def test_an_alltoall_takes_each_nodes_routes_in_one_row_and_the_engines_still_agree(network):
    """24 ranks, one per node, all to all: past its 16th route a node's routes
    come as one row (``node_routes_from``); the reference asks pair by pair."""
    b = ModelBuilder()
    add_block(b, "alltoall", 20_000, 0)
    machine = parse_machine("default", topology=network)
    placement = machine.topology.place(24)
    rows, asked = placement.node_routes_from, []
    placement.node_routes_from = lambda a: asked.append(a) or rows(a)
    core = fastengine.simulate(b.build(), 24, replace(machine, topology=_Placed(placement)))
    assert sorted(asked) == list(range(24))
    for sharing in ("reserve", "simgrid"):
        reference = engine.simulate(b.build(), 24, replace(machine, flow_sharing=sharing))
        ours = fastengine.simulate(b.build(), 24, replace(machine, flow_sharing=sharing))
        assert [r.finish for r in ours.ranks] == [r.finish for r in reference.ranks]
    assert core.makespan == engine.simulate(b.build(), 24, machine).makespan


class _Placed:
    """A topology whose ``place`` gives one placement already made."""

    def __init__(self, placement):
        self.placement = placement

    def place(self, numprocs):
        return self.placement
