"""Placement: block, cyclic, seeded random, and mpiexec host files."""

from pathlib import Path

import pytest

from pevpm.errors import PevpmError
from pevpm.machine.presets import parse_machine
from pevpm.machine.topology import Topology
from pevpm.machine.topology.placement import assign, read_hostfile
from pevpm.machine.topology.simgrid import read_platform

DATA = Path(__file__).parent / "data" / "simgrid"


def test_block_cyclic_and_random_deal_the_ranks():
    assert assign(5, ppn=2, nodes=3) == [0, 0, 1, 1, 2]
    assert assign(5, ppn=2, nodes=3, how="cyclic") == [0, 1, 2, 0, 1]
    drawn = assign(6, ppn=2, nodes=3, how="random", seed=7)
    assert sorted(drawn) == [0, 0, 1, 1, 2, 2]
    assert drawn == assign(6, ppn=2, nodes=3, how="random", seed=7)
    assert {tuple(assign(6, ppn=2, nodes=3, how="random", seed=s)) for s in range(10)} != {
        tuple(drawn)}


def test_random_placement_takes_the_runs_seed():
    machine = parse_machine("constant:latency=1us", topology="torus:8x8", placement="random",
                            seed=11)
    placed = machine.topology.place(8)
    assert placed.how == "random (seed 11)" and len(set(placed.node_of)) == 8
    other = parse_machine("constant:latency=1us", topology="torus:8x8", placement="random",
                          seed=12)
    assert other.topology.place(8).node_of != placed.node_of


def test_a_host_file_gives_slots_in_every_mpiexec_style(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("# the job's hosts\nalpha:2\nbeta slots=3\ngamma  # one slot\n\n")
    assert read_hostfile(str(path)) == ("alpha",) * 2 + ("beta",) * 3 + ("gamma",)
    machine = parse_machine("perseus", placement=str(path))
    placed = machine.topology.place(6)
    assert placed.node_of == [0, 0, 1, 1, 1, 2] and placed.how == "host file"
    with pytest.raises(PevpmError, match="7 ranks but only 6 slots"):
        machine.topology.place(7)


@pytest.mark.parametrize("text, line", [("a:0\n", 1), ("a\nb:two\n", 2), ("a b c\n", 1),
                                        ("a:2\nb:99999999999\n", 2)])
def test_a_bad_host_file_line_is_named(tmp_path, text, line):
    path = tmp_path / "hosts"
    path.write_text(text)
    with pytest.raises(PevpmError) as caught:
        read_hostfile(str(path))
    assert caught.value.where == f"{path}:{line}"


def test_host_file_names_are_the_platforms_hosts(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("n5.test\nn0.test\nn5.test\n")
    topology = Topology(network=read_platform(str(DATA / "torus.xml")),
                        hosts=read_hostfile(str(path)))
    assert topology.place(3).node_of == [5, 0, 5]
    path.write_text("n5.tset\n")
    with pytest.raises(PevpmError, match="host 'n5.tset' is not in the network "
                                         "\\(did you mean 'n5.test'\\?\\)"):
        Topology(network=read_platform(str(DATA / "torus.xml")),
                 hosts=read_hostfile(str(path))).place(1)


def test_ppn_and_nodes_keep_working_on_a_network():
    machine = parse_machine("perseus", ppn=4, topology="fat-tree:k=4,n=2")
    assert machine.topology.place(8).node_of == [0] * 4 + [1] * 4
    machine = parse_machine("perseus", nodes=4, topology="fat-tree:k=4,n=2", placement="cyclic")
    assert machine.topology.place(8).node_of == [0, 1, 2, 3] * 2
    with pytest.raises(PevpmError, match="nodes=32 but the fat-tree has 16"):
        parse_machine("perseus", nodes=32, topology="fat-tree:k=4,n=2")
    with pytest.raises(PevpmError, match="expected block, cyclic, random or a host file"):
        parse_machine("perseus", placement="spiral")


def test_a_backplane_key_does_not_go_quietly_with_a_topology():
    with pytest.raises(PevpmError, match="backplane= sizes the single switch"):
        parse_machine("constant:latency=1us,backplane=4", topology="torus:4x4")
    assert parse_machine("perseus", topology="torus:4x4").topology.network.nodes == 16
