import pytest

from pevpm.errors import SimulationError
from pevpm.machine.topology import Topology


def test_block_and_cyclic_placement():
    assert Topology(procs_per_node=2).place(5).node_of == [0, 0, 1, 1, 2]
    assert Topology(procs_per_node=2, placement="cyclic").place(5).node_of == [0, 1, 2, 0, 1]
    assert Topology(procs_per_node=2, placement="cyclic", nodes=4).place(5).node_of == \
        [0, 1, 2, 3, 0]


def test_routes_cross_node_links_and_backplane():
    placed = Topology(procs_per_node=2).place(6)
    names = lambda s, d: [placed.link_names[i] for i in placed.route(s, d)]
    assert names(0, 5) == ["up 0", "backplane", "down 2"]
    assert names(5, 0) == ["up 2", "backplane", "down 0"]
    assert names(2, 3) == ["mem 1"]
    assert placed.intra_node(2, 3) and not placed.intra_node(1, 2)
    assert placed.capacities[placed.route(0, 5)[1]] == 1


def test_too_many_ranks_and_bad_settings():
    with pytest.raises(SimulationError, match="9 ranks do not fit on 4 nodes x 2"):
        Topology(procs_per_node=2, nodes=4).place(9)
    with pytest.raises(ValueError):
        Topology(procs_per_node=0)
    with pytest.raises(ValueError):
        Topology(placement="spiral")
