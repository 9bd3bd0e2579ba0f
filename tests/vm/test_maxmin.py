"""Max-min sharing of links with re-rating (``Machine.flow_sharing="max-min"``, issue 27).

The network alone (pevpm.vm.kernel.maxmin), then the engine's match sweep holding a
delivery back while an earlier decision can still start a flow on its links.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from network_models import Tree
from test_engine_differential import check_same

from pevpm.errors import PevpmError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel.maxmin import NETWORK, MaxMinNetwork
from pevpm.vm.strategies.explain import explain_network

#: The Python network (the reference) and the compiled, incremental one.
NETWORKS = pytest.mark.parametrize("Network", sorted({MaxMinNetwork, NETWORK}, key=str))


def run_to(net, to=float("inf")):
    """Settle ``net`` to ``to`` and run every start and end up to it; the flows
    that ended, in order."""
    ended = []
    if to != float("inf"):
        net.advance(to)
    while net.next_event() <= to and net.next_event() != float("inf"):
        ended += net.step()
    return ended


@NETWORKS
def test_equal_flows_on_one_link_end_together(Network):
    net = Network([100.0])
    flows = [net.add((0,), 0.0, 100) for _ in range(4)]
    assert run_to(net) == flows
    assert [net.end(f) for f in flows] == [4.0, 4.0, 4.0, 4.0]


@NETWORKS
def test_a_flow_that_starts_slows_the_flows_on_its_links_and_one_that_ends_frees_them(Network):
    net = Network([100.0, 100.0])
    a = net.add((0,), 0.0, 100)
    assert (net.ended(a), net.end(a), net.step()) == (False, 1.0, [])   # alone: 1 s
    b = net.add((0, 1), 0.5, 100)          # from 0.5 s: 50 B/s each; a ends at 1.5
    c = net.add((1,), 0.5, 25)             # c and b on link 1: still 50 each
    assert net.next_event() == 0.5
    assert (net.step(), net.end(a), net.end(b), net.end(c)) == ([], 1.5, 2.5, 1.0)
    assert (net.step(), net.now, net.end(b)) == ([c], 1.0, 2.5)   # still half of link 0
    assert run_to(net) == [a, b] and (net.end(a), net.end(b), net.ended(b)) == (1.5, 2.0, True)


@NETWORKS
def test_a_flow_not_started_expects_its_route_alone_and_the_run_waits_for_settled_time(Network):
    """Until it starts, a flow's end is the soonest it could be: its slowest
    link alone.  The network never runs past a start not yet settled."""
    net = Network([100.0, 10.0])
    a = net.add((0, 1), 2.0, 50)
    assert (net.end(a), net.next_event(), net.now) == (7.0, 2.0, 0.0)
    assert run_to(net, 1.0) == [] and net.now == 1.0 and not net.ended(a)
    assert run_to(net) == [a] and (net.now, net.end(a)) == (7.0, 7.0)


@NETWORKS
def test_the_bottleneck_is_shared_and_the_rest_goes_to_the_others(Network):
    """Progressive filling: link 1 (10 B/s) holds b and c to 5 B/s; a, alone
    with b on link 0 (100 B/s), takes the 95 b leaves."""
    net = Network([100.0, 10.0])
    a, b, c = net.add((0,), 0.0, 95), net.add((0, 1), 0.0, 5), net.add((1,), 0.0, 5)
    assert sorted(run_to(net)) == [a, b, c]
    assert (net.end(a), net.end(b), net.end(c)) == (1.0, 1.0, 1.0)


@NETWORKS
def test_a_link_of_one_flow_limits_it_only_where_narrower_than_its_shared_links(Network):
    """Link 1 (2 B/s) carries a alone and holds it to 2 B/s, below the
    10/3 B/s that link 0 would give it; b and c share the 8 B/s left on
    link 0 (c's own link 2, 100 B/s, never limits it).  Without link 1's
    limit (20 B/s, wider than link 0) a gets its third of link 0."""
    net = Network([10.0, 2.0, 100.0])
    a, b, c = net.add((0, 1), 0.0, 10), net.add((0,), 0.0, 10), net.add((2, 0), 0.0, 10)
    run_to(net, 0.0)
    assert (net.end(a), net.end(b), net.end(c)) == (5.0, 2.5, 2.5)
    wide = Network([9.0, 20.0])
    a, b = wide.add((0, 1), 0.0, 9), wide.add((0,), 0.0, 9)
    run_to(wide, 0.0)
    assert (wide.end(a), wide.end(b)) == (2.0, 2.0)


@NETWORKS
def test_simgrid_weighs_flows_by_their_routes_latency_and_bandwidth(Network):
    """SimGrid's penalty: the route's latency plus weight-S over each link's
    bandwidth.  Flow a crosses links 0 and 1 (penalty 2 x (1 + 100/100) = 4),
    b link 1 alone (2): on link 1 b gets twice a's rate, 200/3 against 100/3."""
    net = Network([100.0, 100.0], latency=[1.0, 1.0], weight_s=100.0)
    a, b = net.add((0, 1), 0.0, 100), net.add((1,), 0.0, 200)
    assert net.weights == [0.25, 0.5]
    run_to(net)
    assert (net.end(a), net.end(b)) == (3.0, 3.0)
    plain = Network([100.0, 100.0])
    a, b = plain.add((0, 1), 0.0, 100), plain.add((1,), 0.0, 200)
    run_to(plain)
    assert (plain.end(a), plain.end(b)) == (2.0, 3.0)


@NETWORKS
def test_infinite_links_never_limit_and_empty_flows_end_at_once(Network):
    net = Network([float("inf"), 10.0])
    a, b, c = net.add((0, 1), 1.0, 10), net.add((0,), 1.0, 10), net.add((1,), 3.0, 0)
    assert [net.ended(f) for f in (a, b, c)] == [False, True, True]
    assert run_to(net) == [a]
    assert (net.end(a), net.end(b), net.end(c)) == (2.0, 1.0, 3.0)


@NETWORKS
def test_settled_time_holds_later_flows_to_it(Network):
    net = Network([10.0])
    a = net.add((0,), 0.0, 10)
    net.advance(0.5)
    assert net.now == 0.5
    b = net.add((0,), 0.2, 10)             # it cannot start before the settled time
    assert net.starts[b] == 0.5
    run_to(net)
    assert (net.end(a), net.end(b)) == (1.5, 2.0)


def late_flow_model():
    """Rank 0 sends 1 MB to 2 at once; rank 1 first waits for an empty
    message from 3 (sent at 0.5 s), then sends 1 MB to 3: from 0.5 s the two
    flows share the trunk between the leaves."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.send(10**6, dest=2)
        with ranks.case("procnum == 1"):
            b.recv(0, source=3)
            b.send(10**6, dest=3)
        with ranks.case("procnum == 2"):
            b.recv(10**6, source=0)
        with ranks.case("procnum == 3"):
            b.serial(0.5)
            b.send(0, dest=1)
            b.recv(10**6, source=1)
    return b.build()


@pytest.mark.parametrize("sharing, ends", [("reserve", (1.0, 2.0)), ("max-min", (1.5, 2.0))])
def test_a_flow_started_after_the_first_decision_slows_the_message_drawn_before(sharing, ends):
    """Rank 2's receive is decided first, when rank 1's flow does not exist
    yet.  Reserved, its message keeps the whole trunk (1 s); max-min, the
    delivery waits until rank 1's message is known and both share the trunk
    from 0.5 s: rank 2's ends at 1.5 s, rank 3's at 2 s either way."""
    topology = Tree(per_leaf=2, bandwidth=1e6, trunk_bandwidth=1e6, latency=0.0)
    machine = Machine(Constant(0.0), topology, flow_sharing=sharing)
    run = engine.simulate(late_flow_model(), 4, machine)
    assert (run.ranks[2].finish, run.ranks[3].finish) == ends


@pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")
def test_the_compiled_core_runs_max_min_alike():
    """The core asks the same network the same questions in the same order."""
    topology = Tree(per_leaf=2, bandwidth=1e6, trunk_bandwidth=1e6, latency=0.0)
    for start in ("send", "match"):
        machine = Machine(Constant(0.0), topology, flow_sharing="max-min", flow_start=start)
        check_same(late_flow_model(), 4, machine, 0)
    run = fastengine.simulate(late_flow_model(), 4, machine)
    assert run.engine_note is None and run.ranks[2].finish == 1.5


def sooner_end_model():
    """Rank 0 sends 1 MB to 2 and rank 1 0.5 MB to 3, both at 0 s over the
    trunk between the leaves (1 MB/s: 0.5 MB/s each); rank 2, once it has
    its message, sends 1 MB back to rank 0."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.send(10**6, dest=2)
            b.recv(10**6, source=2)
        with ranks.case("procnum == 1"):
            b.send(5 * 10**5, dest=3)
        with ranks.case("procnum == 2"):
            b.recv(10**6, source=0)
            b.send(10**6, dest=0)
        with ranks.case("procnum == 3"):
            b.recv(5 * 10**5, source=1)
    return b.build()


@pytest.mark.parametrize("start", ["send", "match"])
def test_a_receive_comes_back_when_its_flow_ends_sooner_than_it_expected(start):
    """Rank 2's receive is queued again at 2 s, the end its flow expects while
    sharing the trunk; rank 1's flow ends at 1 s, so rank 0's ends at 1.5 s.
    The receive is decided then, not at 2 s: rank 2's reply starts at 1.5 s
    and reaches rank 0 at 2.5 s (3 s had the settled time passed 2 s)."""
    topology = Tree(per_leaf=2, bandwidth=1e6, trunk_bandwidth=1e6, latency=0.0)
    machine = Machine(Constant(0.0), topology, flow_sharing="max-min", flow_start=start)
    run = engine.simulate(sooner_end_model(), 4, machine)
    assert [rank.finish for rank in run.ranks] == [2.5, 1.0, 2.5, 1.0]
    if fastengine.AVAILABLE:
        check_same(sooner_end_model(), 4, machine, 0)


def latency_window_model():
    """Rank 0 starts 1 MB to rank 2 (4 links: 1 s of latency) at 0 s and,
    after 0.125 s of work, 1 MB to rank 1 (2 links: 0.5 s); both flows
    cross rank 0's node link (1 MB/s)."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.isend(10**6, dest=2, request="far")
            b.serial(0.125)
            b.isend(10**6, dest=1, request="near")
            b.waitall(["far", "near"])
        with ranks.case("procnum == 1"):
            b.recv(10**6, source=0)
        with ranks.case("procnum == 2"):
            b.recv(10**6, source=0)
    return b.build()


@pytest.mark.parametrize("start", ["send", "match"])
@pytest.mark.parametrize("simulate", [engine.simulate, fastengine.simulate],
                         ids=["reference", "fast"])
def test_a_flow_shares_its_links_only_once_its_routes_latency_has_passed(simulate, start):
    """SimGrid's order: a flow enters the sharing after its route's latency.
    The far flow (sent at 0) shares from 1 s, the near one (sent at 0.125 s,
    inside the far one's latency) from 0.625 s: the near one is alone for
    0.375 s (0.375 MB), then both get 0.5 MB/s, so it ends at 1 + 0.625 /
    0.5 = 2.25 s; the far one has 0.625 MB by then and its last 0.375 MB
    alone end it at 2.625 s.  Sharing from the send and adding the latency
    after (the rule before) gave 2.5 s and 2.875 s: the far flow alone on
    0..0.125 s, both at 0.5 MB/s until it ends at 1.875 s, the near one alone
    to 2 s, then each its route's latency."""
    topology = Tree(per_leaf=2, bandwidth=1e6, trunk_bandwidth=1e6, latency=0.25)
    machine = Machine(Constant(0.0), topology, flow_sharing="max-min", flow_start=start)
    run = simulate(latency_window_model(), 3, machine)
    assert [rank.finish for rank in run.ranks] == [2.625, 2.25, 2.625]
    if simulate is engine.simulate and fastengine.AVAILABLE:
        check_same(latency_window_model(), 3, machine, 0)


def test_an_unknown_sharing_is_refused():
    with pytest.raises(ValueError, match="flow_sharing must be one of"):
        Machine(Constant(0.0), flow_sharing="fair")


@pytest.mark.skipif(NETWORK is MaxMinNetwork, reason="pevpm.vm.kernel.fastflows not built")
@settings(max_examples=300, deadline=None)
@given(links=st.lists(st.sampled_from([1.0, 3.0, 10.0, 12.5, float("inf")]), min_size=1,
                      max_size=5),
       latency=st.lists(st.sampled_from([0.0, 1e-6, 0.5]), min_size=5, max_size=5),
       weight_s=st.sampled_from([None, 10.0]),
       steps=st.lists(st.tuples(st.sampled_from(["add", "add", "end", "run"]),
                                st.lists(st.integers(0, 4), max_size=3),
                                st.sampled_from([0.0, 0.25, 1.0, 2.5]),
                                st.sampled_from([0, 1, 10, 37, 100])), max_size=25))
def test_the_incremental_network_answers_as_the_reference(links, latency, weight_s, steps):
    """Flows added at and after the settled time, ends asked between, the
    run taken to later times: the compiled network ends the same flows by
    the same times, its ends and expected ends are the reference's to
    1e-12, its weights the same to the bit."""
    routes = [tuple(link % len(links) for link in route) for _, route, _, _ in steps]
    reference = MaxMinNetwork(links, latency[:len(links)], weight_s)
    compiled = NETWORK(links, latency[:len(links)], weight_s)
    flows, settled = [], 0.0
    for (op, _, at, size), route in zip(steps, routes):
        if op == "add" or not flows:
            flow = reference.add(route, settled + at, size)
            assert compiled.add(route, settled + at, size) == flow
            flows.append(flow)
        elif op == "end":
            flow = flows[int(at * 4) % len(flows)]
            assert compiled.ended(flow) == reference.ended(flow)
            assert compiled.end(flow) == pytest.approx(reference.end(flow), rel=1e-12)
        else:
            settled += at
            assert sorted(run_to(compiled, settled)) == sorted(run_to(reference, settled))
            assert compiled.now == reference.now
    assert sorted(run_to(compiled)) == sorted(run_to(reference))
    for flow in flows:
        assert compiled.end(flow) == pytest.approx(reference.end(flow), rel=1e-12)
        assert compiled.starts[flow] == reference.starts[flow]
    assert compiled.weights == reference.weights


@pytest.mark.skipif(NETWORK is MaxMinNetwork, reason="pevpm.vm.kernel.fastflows not built")
def test_a_flow_elsewhere_keeps_its_rate_when_another_part_of_the_network_changes():
    """Two parts sharing no link: starts and ends on one never re-rate the
    other.  Rates given: a and b at 0 s, b and c at 0.5 s (c starts), c at
    1.5 s (b ends); none when c and a end."""
    net = NETWORK([10.0, 10.0])
    a = net.add((0,), 0.0, 30)
    b, c = net.add((1,), 0.0, 10), net.add((1,), 0.5, 10)
    assert run_to(net) == [b, c, a]
    assert (net.end(b), net.end(c), net.end(a)) == (1.5, 2.0, 3.0)
    assert net.counts == {"events": 5, "rated": 5, "links": 6}


#: Flows crossing link 0 two and three times, added, run and asked in turn: a
#: sequence the random comparison found, on which a flow leaving its link twice
#: once took its own removed place for the other's (a crash, or wrong ends).
CROSSINGS = [("add", (0,), 1.0, 37), ("run", 0.5265), ("end", 0),
             ("add", (0,), 0.5265, 10), ("end", 0), ("add", (0, 0, 0), 0.5265, 10),
             ("add", (0, 0, 0), 1.0265, 10), ("run", 1.1496), ("run", 1.4824),
             ("add", (0, 0), 1.4920, 37), ("add", (0, 0), 2.4824, 37), ("end", 4),
             ("run", 1.6810), ("add", (0, 0), 4.1810, 0), ("add", (0, 0), 4.1810, 0),
             ("add", (0, 0, 0), 2.6810, 37), ("add", (0,), 2.1810, 10), ("end", 0),
             ("end", 5), ("end", 4), ("add", (0,), 1.6810, 1), ("end", 2), ("end", 3),
             ("add", (0, 0), 4.1810, 10), ("run", 1.6885), ("add", (0, 0, 0), 2.6885, 10)]


@pytest.mark.skipif(NETWORK is MaxMinNetwork, reason="pevpm.vm.kernel.fastflows not built")
def test_routes_that_cross_a_link_more_than_once_leave_it_cleanly():
    reference, compiled = MaxMinNetwork([1.0], [0.1]), NETWORK([1.0], [0.1])
    for op, *args in CROSSINGS:
        if op == "add":
            assert compiled.add(*args) == reference.add(*args)
        elif op == "end":
            assert compiled.end(*args) == pytest.approx(reference.end(*args), rel=1e-12)
        else:
            assert run_to(compiled, *args) == run_to(reference, *args)
    assert sorted(run_to(compiled)) == sorted(run_to(reference))
    for flow in range(len(reference.starts)):
        assert compiled.end(flow) == pytest.approx(reference.end(flow), rel=1e-12)


def test_the_machine_key_sharing_sets_it_and_a_wrong_one_is_named():
    assert parse_machine("constant:latency=0,sharing=simgrid").flow_sharing == "simgrid"
    assert parse_machine("default:sharing=max-min").flow_sharing == "max-min"
    assert parse_machine("constant:latency=0").flow_sharing == "reserve"
    with pytest.raises(PevpmError, match=r"sharing must be one of reserve, max-min, simgrid, "
                                         r"got 'maxmin' \(did you mean 'max-min'\?\)"):
        parse_machine("constant:latency=0,sharing=maxmin")


def test_explain_charges_max_min_waiting_to_the_slowest_link_of_the_route():
    """Rank 0's and rank 1's messages share the trunk (1 MB/s, slower than
    the node links) from 0.5 s to 1.5 s: each takes 0.5 s longer than alone."""
    topology = Tree(per_leaf=2, bandwidth=2e6, trunk_bandwidth=1e6, latency=0.0)
    machine = Machine(Constant(0.0), topology, flow_sharing="max-min")
    explained = explain_network(late_flow_model(), 4, machine)
    rise = next(use for use in explained.links if use.name == "rise 0")
    assert (rise.messages, rise.waited) == (2, 1.0)
