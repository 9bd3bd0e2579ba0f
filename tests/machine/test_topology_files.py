"""SimGrid platforms and pevpm's YAML descriptions: what they build, and one
error naming FILE:LINE for each mistake."""

from pathlib import Path

import pytest

from pevpm.errors import PevpmError
from pevpm.machine.topology.ownfile import read_description
from pevpm.machine.topology.parse import parse_topology
from pevpm.machine.topology.simgrid import read_platform

DATA = Path(__file__).parent / "data" / "simgrid"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_simgrid_cluster_keeps_its_names_figures_and_cores():
    tree = read_platform(str(DATA / "fat_tree.xml"))
    assert (tree.kind, tree.params, tree.nodes, tree.cores) == ("fat-tree", "2;4,4;1,2;1,2", 16, 4)
    assert tree.host_names[:2] == ["n0.test", "n1.test"]
    assert set(tree.link_bandwidth[16:]) == {1.25e9} and set(tree.link_latency[16:]) == {1e-6}
    flat = read_platform(str(DATA / "flat.xml"))
    backplane = flat.link_names.index("backplane")
    assert (flat.link_bandwidth[backplane], flat.link_latency[backplane]) == (2.1e9 / 8, 1e-6)


XML_HEAD = '<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n'
CLUSTER = ('<cluster id="c" prefix="n" suffix="" radical="0-{last}" speed="1Gf" bw="1Gbps" '
           'lat="1us" topology="{topology}" topo_parameters="{params}"/>\n')


@pytest.mark.parametrize("body, line, message", [
    (CLUSTER.format(last=7, topology="TORUS", params="2,2"), 4,
     "the TORUS 2,2 has 4 nodes but radical gives 8 hosts"),
    (CLUSTER.format(last=15, topology="FAT_TREE", params="2;4,4;1,2"), 4,
     "a FAT_TREE topo_parameters has 4 ';'-separated parts, got 3"),
    (CLUSTER.format(last=7, topology="DRAGONFLY", params="2,1;1,1;2,x;2"), 4,
     "expected a whole number >= 1, got 'x'"),
    (CLUSTER.format(last=7, topology="TORUS", params="2,2,2").replace("1Gbps", "1Gbits"), 4,
     "bw: bandwidth '1Gbits' has an unknown unit"),
    ('<host id="a" speed="1Gf"/>\n<cabinet id="x"/>\n', 5,
     "<cabinet> is not in the SimGrid subset pevpm reads"),
    ('<host id="a" speed="1Gf"/>\n<host id="b" speed="1Gf"/>\n<link id="l" bandwidth="1GBps"/>\n'
     '<route src="a" dst="c"><link_ctn id="l"/></route>\n', 7,
     "route end 'c' is not a host of this zone"),
    ('<host id="a" speed="1Gf"/>\n<host id="b" speed="1Gf"/>\n<host id="c" speed="1Gf"/>\n'
     '<link id="l" bandwidth="1GBps"/>\n<route src="a" dst="b"><link_ctn id="l"/></route>\n', 8,
     "no <route> from a to c"),
    ('<host id="a" speed="1Gf">\n', 5, "not well-formed XML: mismatched tag"),
])
def test_a_platform_mistake_is_one_error_at_its_line(tmp_path, body, line, message):
    path = write(tmp_path, "p.xml", XML_HEAD + body + "</zone>\n</platform>\n")
    with pytest.raises(PevpmError) as caught:
        read_platform(path)
    assert caught.value.where == f"{path}:{line}"
    assert message in caught.value.message


def test_listed_routes_are_taken_as_listed_and_reversed():
    net = read_platform(str(DATA / "hosts.xml"))
    assert [net.link_names[i] for i in net.node_route(0, 2)] == ["la_UP", "trunk", "lc_DOWN"]
    assert [net.link_names[i] for i in net.node_route(2, 0)] == ["lc_UP", "trunk", "la_DOWN"]


TWO_SWITCHES = """\
name: two switches, one trunk
nodes: {count: 4, prefix: p, cores: 2}
switches: [s0, s1]
links:
  - {from: "p[0-1]", to: s0, bandwidth: 91Mbit/s, latency: 80us}
  - {from: [p2, p3], to: s1, bandwidth: 91Mbit/s, latency: 80us}
  - {from: s0, to: s1, bandwidth: 91Mbit/s, latency: 1us, count: 2}
"""


def test_a_description_drawn_by_hand_routes_over_the_fewest_hops(tmp_path):
    net = read_description(write(tmp_path, "c.yaml", TWO_SWITCHES))
    assert (net.nodes, net.cores, net.host_names) == (4, 2, ["p0", "p1", "p2", "p3"])
    assert [net.link_names[i] for i in net.node_route(0, 3)] == ["p0>s0", "s0>s1", "s1>p3"]
    assert [net.link_names[i] for i in net.node_route(1, 0)] == ["p1>s0", "s0>p0"]
    trunk = net.link_names.index("s0>s1")
    assert (net.capacities[trunk], net.link_bandwidth[trunk], net.link_latency[trunk]) == \
        (2, 2 * 91e6 / 8, 1e-6)


def test_a_description_may_name_a_generator(tmp_path):
    net = read_description(write(tmp_path, "g.yaml", "topology: torus:4x4\nbandwidth: 1GB/s\n"
                                                     "latency: 2us\nnodes: {cores: 8}\n"))
    assert (net.kind, net.nodes, net.cores, net.link_latency[-1]) == ("torus", 16, 8, 2e-6)
    assert parse_topology(write(tmp_path, "h.yaml", "topology: switch:nodes=3\n")).nodes == 3


@pytest.mark.parametrize("text, line, message", [
    (TWO_SWITCHES.replace("to: s1, bandwidth: 91Mbit/s, latency: 1us", "to: sw1, bandwidth: 1"),
     7, "links[2].to: 'sw1' is neither a node nor a switch (did you mean 's1'?)"),
    (TWO_SWITCHES.replace("latency: 80us}", "latency: 80 parsecs}", 1), 5,
     "links[0].latency: latency '80 parsecs' has an unknown unit"),
    (TWO_SWITCHES.replace("prefix: p", "prefx: p"), 2, "unknown key nodes.prefx (did you mean "
                                                      "'prefix'?)"),
    (TWO_SWITCHES.replace("count: 2}", "count: 2"), 8, "not valid YAML"),
    (TWO_SWITCHES.replace('  - {from: [p2, p3], to: s1, bandwidth: 91Mbit/s, latency: 80us}\n',
                          ""), 5, "no path from p0 to p2"),
    ("topology: fat-tree:k=4,n=2,oversub=3\n", 1, "topology: oversubscription 3 must divide k=4"),
    ("topology: ring:8\n", 1, "unknown topology 'ring'"),
    ("nodes: {count: 2}\n", 1, "a description needs topology (a generator spec) or links"),
])
def test_a_description_mistake_is_one_error_at_its_line(tmp_path, text, line, message):
    path = write(tmp_path, "c.yaml", text)
    with pytest.raises(PevpmError) as caught:
        read_description(path)
    assert caught.value.where == f"{path}:{line}"
    assert message in caught.value.message


@pytest.mark.parametrize("spec, message", [
    ("ring:8", "unknown topology 'ring'"),
    ("fat-tree:n=3", "a fat-tree takes k .k-ary n-tree. or m .m-port n-tree."),
    ("fat-tree:k=4,n=3,oversub=4/2/2", "a 3-level tree has 2 level.s. with uplinks"),
    ("torus:8x0", "torus dimension must be a whole number >= 1, got '0'"),
    ("torus:4x4,lat=1us", "lat= needs bw= too"),
    ("dragonfly:groups=2,chassis=1,routers=2", "missing nodes="),
    ("torus:4096x4096", "16,777,216 nodes is more than pevpm builds .2,097,152."),
    ("switch:nodes=4,colour=red", "unknown key 'colour'"),
    ("fat-tree:k=1,n=99", "a fat-tree of 99 levels: pevpm builds at most 16"),
    ("dragonfly:1,1;1,1;5000,1;1", "25,015,002 links is more than pevpm builds"),
    ("nowhere.xml", "no such topology file"),
])
def test_a_bad_spec_names_itself(spec, message):
    with pytest.raises(PevpmError, match=message) as caught:
        parse_topology(spec)
    assert spec in caught.value.where
