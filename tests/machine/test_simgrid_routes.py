"""pevpm's routes on SimGrid platform files equal SimGrid's own, link for link.

The NAME.routes files beside the platforms hold SimGrid 3.32's route between
every ordered pair of hosts, in pevpm's link names; they were written by
``benchmarks/topology_routes_vs_simgrid.py --write``, which asks SimGrid.
"""

from pathlib import Path

import pytest

from pevpm.machine.topology.simgrid import read_platform

DATA = Path(__file__).parent / "data" / "simgrid"


@pytest.mark.parametrize("name", ["flat", "hosts", "fat_tree", "fat_tree_limited", "torus",
                                  "torus_limited", "dragonfly"])
def test_routes_equal_simgrids(name):
    net = read_platform(str(DATA / f"{name}.xml"))
    lines = (DATA / f"{name}.routes").read_text().splitlines()
    assert len(lines) == net.nodes * (net.nodes - 1)
    for line in lines:
        a, b, links = line.split(" ", 2)
        ours = [net.link_names[i] for i in net.node_route(int(a), int(b))]
        assert ours == links.split(" | "), (a, b)
