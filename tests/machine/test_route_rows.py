"""Routes from one node to all at once (``Network.node_routes_from``): the
array-built rows of the fat-tree, the torus and the dragonfly are, link for
link, the routes made one pair at a time; other networks make none."""

import numpy as np
import pytest

from pevpm.machine.topology.dragonfly import Dragonfly
from pevpm.machine.topology.fattree import FatTree
from pevpm.machine.topology.star import Star
from pevpm.machine.topology.torus import Torus

TREES = [([2, 2], [1, 2], [1, 1]), ([8, 8], [1, 2], [1, 1]), ([4, 4], [1, 4], [1, 2]),
         ([2, 3, 4], [1, 2, 2], [1, 1, 2]), ([3, 3, 3], [1, 3, 3], [1, 1, 1]),
         ([4, 2, 3], [2, 2, 2], [2, 1, 3]), ([2, 4], [1, 2], [2, 1]), ([1], [1], [1]),
         ([5], [1], [3])]
NETWORKS = ([FatTree(*tree, bandwidth=1.0, latency=1.0, limiter=limiter)
             for tree in TREES for limiter in (None, 5.0)]
            + [Torus(dims, bandwidth=1.0, latency=1.0, limiter=limiter)
               for dims in ([4, 2], [4, 3, 2], [5], [1], [2, 2, 2], [6, 5, 4])
               for limiter in (None, 5.0)]
            + [Dragonfly(*shape, bandwidth=1.0, latency=1.0, limiter=limiter)
               for shape in ((3, 1, 1, 1, 3, 1, 1), (2, 1, 2, 1, 4, 1, 4), (4, 2, 3, 1, 4, 3, 2),
                             (1, 1, 3, 2, 2, 1, 3), (3, 1, 2, 1, 3, 1, 1), (1, 1, 1, 1, 1, 1, 2))
               for limiter in (None, 5.0)])


@pytest.mark.parametrize("net", NETWORKS, ids=lambda net: f"{net.kind} {net.params}")
def test_every_row_is_the_routes_made_one_pair_at_a_time(net):
    for a in range(net.nodes):
        lengths, links = net.node_routes_from(a)
        assert lengths.dtype == links.dtype == np.int32
        ends = np.cumsum(lengths).tolist()
        rows = [tuple(links[end - n:end].tolist()) for n, end in zip(lengths.tolist(), ends)]
        assert rows == [net.node_route(a, b) for b in range(net.nodes)]


def test_rows_are_built_in_arrays_and_not_by_the_single_switch():
    """They do not fill the pair cache; the single switch makes none."""
    for net in (FatTree.k_ary(4, 2, bandwidth=1.0), Torus([4, 4], bandwidth=1.0),
                Dragonfly(2, 1, 2, 1, 4, 1, 4, bandwidth=1.0)):
        net.node_routes_from(3)
        assert net._routes == {}
    assert Star(3).node_routes_from(1) is None
