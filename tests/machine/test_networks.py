"""Generated networks: link counts and exact routes (D-mod-k, dimension order,
minimal dragonfly), the single switch as it always was, routes made on demand."""

import pytest

from pevpm.machine.topology import Topology
from pevpm.machine.topology.dragonfly import Dragonfly
from pevpm.machine.topology.fattree import FatTree
from pevpm.machine.topology.star import Star
from pevpm.machine.topology.torus import Torus


def names(net, a, b):
    return [net.link_names[i] for i in net.node_route(a, b)]


def test_the_single_switch_keeps_its_link_ids_capacities_and_routes():
    placed = Topology(procs_per_node=2, backplane_capacity=5).place(7)
    n = 4
    assert placed.nodes == n
    assert placed.link_names == ([f"up {k}" for k in range(n)] + [f"down {k}" for k in range(n)]
                                 + [f"mem {k}" for k in range(n)] + ["backplane"])
    assert placed.capacities == [1] * (3 * n) + [5]
    for src in range(7):
        for dst in range(7):
            a, b = src // 2, dst // 2
            want = (2 * n + a,) if a == b else (a, 3 * n, n + b)
            assert placed.route(src, dst) == want == placed.node_route(a, b)
    assert placed.link_latency is None and placed.link_bandwidth is None


def test_a_k_ary_n_tree_has_its_switches_and_cables():
    tree = FatTree.k_ary(4, 3)
    assert (tree.nodes, tree.per_level, tree.params) == (64, [64, 16, 16, 16], "3;4,4,4;1,4,4;1,1,1")
    # 64 node cables + 16 leaves x 4 up + 16 middle x 4 up, two links each, + 64 mem
    assert len(tree.link_names) == 64 + 2 * (64 + 64 + 64)
    assert names(tree, 0, 63) == ["up 0:0>1:0", "up 1:0>2:3", "up 2:3>3:15",
                                  "down 3:15>2:15", "down 2:15>1:15", "down 1:15>0:63"]
    assert names(tree, 0, 1) == ["up 0:0>1:0", "down 1:0>0:1"]
    assert tree.diameter() == 6


def test_d_mod_k_spreads_destinations_over_the_uplinks():
    tree = FatTree.k_ary(4, 2)
    spines = [tree.link_names[tree.node_route(0, dest)[1]] for dest in range(4, 8)]
    assert spines == ["up 1:0>2:0", "up 1:0>2:1", "up 1:0>2:2", "up 1:0>2:3"]


def test_oversubscription_leaves_fewer_uplinks():
    tree = FatTree.k_ary(16, 2, [4])
    assert (tree.nodes, tree.per_level, tree.up) == (256, [256, 16, 4], [1, 4])
    assert tree.levels()[1] == "level 1: 16 switches, 16 ports down, 4 up, oversubscribed 4:1"
    with pytest.raises(ValueError, match="oversubscription 3 must divide k=16"):
        FatTree.k_ary(16, 2, [3])
    m_port = FatTree.m_port(8, 3)
    assert (m_port.nodes, m_port.params) == (2 * 4 ** 3, "3;4,4,8;1,4,4;1,1,1")


def test_a_torus_routes_in_dimension_order_the_short_way_round():
    torus = Torus([4, 4])
    assert len(torus.link_names) == 16 + 2 * 2 * 16
    # (0,0) -> (2,3): x up twice, then y down once through the wraparound
    assert names(torus, 0, 14) == ["0-1 d0 up", "1-2 d0 up", "14-2 d1 down"]
    # back: a tie in x (two hops either way) goes down from 2, as SimGrid's does
    assert names(torus, 14, 0) == ["13-14 d0 down", "12-13 d0 down", "12-0 d1 up"]
    cube = Torus([8, 8, 8])
    target = 3 + 5 * 8 + 4 * 64          # (3, 5, 4): 3 up, 3 down (wrapping), 4 up
    assert len(cube.node_route(0, target)) == 10
    assert cube.diameter() == 12                # 4 hops in each dimension


def test_a_dragonfly_routes_local_global_local():
    fly = Dragonfly(4, 1, 1, 1, 4, 1, 2)
    assert fly.nodes == 32
    assert names(fly, 0, 22) == ["node 0>r0", "r0>r2 green", "r2>r8 blue", "r8>r11 green",
                                 "r11>node 22"]
    assert names(fly, 0, 1) == ["node 0>r0", "r0>node 1"]
    # links: 32 local cables, 4 groups x 6 green, 6 blue; two links each; 32 mem
    assert len(fly.link_names) == 32 + 2 * (32 + 24 + 6)
    with pytest.raises(ValueError, match="need at least 5 routers per chassis"):
        Dragonfly(5, 1, 1, 1, 4, 1, 2)


def test_bundled_cables_carry_more():
    fly = Dragonfly(2, 3, 1, 1, 2, 1, 1, bandwidth=1e9, latency=1e-6)
    blue = fly.link_names.index("r1>r2 blue")
    assert (fly.capacities[blue], fly.link_bandwidth[blue]) == (3, 3e9)


def test_routes_are_made_on_demand_at_1024_nodes():
    for net in (FatTree.k_ary(32, 2), Torus([16, 8, 8]), Dragonfly(8, 1, 4, 1, 8, 1, 4)):
        assert net.nodes == 1024
        assert len(net.node_route(5, 1000)) > 2
        assert len(net._routes) == 1
        assert net.node_route(5, 1000) is net.node_route(5, 1000)


def test_timed_networks_give_every_link_figures():
    star = Star(2, bandwidth=1e8, latency=1e-5)
    assert star.link_bandwidth == [1e8] * 4 + [10e9] * 2 + [float("inf")]
    assert star.link_latency == [1e-5] * 4 + [0.0] * 3


def test_a_network_places_ranks_on_its_nodes():
    placed = Topology(procs_per_node=2, network=Torus([4, 4])).place(6)
    assert placed.node_of == [0, 0, 1, 1, 2, 2] and placed.nodes == 16
    assert placed.route(0, 5) == placed.node_route(0, 2)
    with pytest.raises(Exception, match="40 ranks at 1 per node need 40 nodes; the torus 4x4 has 16"):
        Topology(network=Torus([4, 4])).place(40)
    spread = Topology(network=Torus([4, 4]), placement="random", seed=3).place(4)
    assert spread.node_of == Topology(network=Torus([4, 4]), placement="random",
                                      seed=3).place(4).node_of
    assert len(set(spread.node_of)) == 4 and max(spread.node_of) < 16
    assert spread.node_of != Topology(network=Torus([4, 4]), placement="random",
                                      seed=4).place(4).node_of
