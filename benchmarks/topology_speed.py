"""How long pevpm takes to build 1,024-node networks and to route on them.

For a k-ary 2-tree (k=32), a 16x8x8 torus and a dragonfly of 8 groups x 4
chassis x 8 routers x 4 nodes: the time to build the network (links only:
no route is made up front), then to make the routes from 64 source nodes to
all 1,024 (65,536 routes, each made once and kept), then to fetch them all
again from the cache, and to make the same routes a source node's row at a
time (``node_routes_from``: numpy, what the compiled core asks once a
node has asked for 16 routes and a 16th of the nodes; ``-`` for a network
that makes none).  Times are CPU seconds of this process (less swayed by
other jobs than wall-clock time).

    PYTHONPATH=src python benchmarks/topology_speed.py
"""

from __future__ import annotations

import time

from pevpm.machine.topology.dragonfly import Dragonfly
from pevpm.machine.topology.fattree import FatTree
from pevpm.machine.topology.torus import Torus

SOURCES = 64


def main() -> None:
    builders = {"fat-tree k=32,n=2": lambda: FatTree.k_ary(32, 2, bandwidth=12.5e9, latency=1e-6),
                "torus 16x8x8": lambda: Torus([16, 8, 8], bandwidth=12.5e9, latency=1e-6),
                "dragonfly 8,1;4,1;8,1;4": lambda: Dragonfly(8, 1, 4, 1, 8, 1, 4,
                                                             bandwidth=12.5e9, latency=1e-6)}
    print(f"{'network':<26} {'nodes':>6} {'links':>7} {'build s':>8} "
          f"{'route us':>9} {'cached us':>10} {'row us':>7} {'mean hops':>9}")
    for name, build in builders.items():
        start = time.process_time()
        net = build()
        built = time.process_time() - start
        pairs = [(a, b) for a in range(0, net.nodes, net.nodes // SOURCES)
                 for b in range(net.nodes)]
        start = time.process_time()
        hops = sum(len(net.node_route(a, b)) for a, b in pairs)
        first = time.process_time() - start
        start = time.process_time()
        for a, b in pairs:
            net.node_route(a, b)
        again = time.process_time() - start
        fresh = build()
        start = time.process_time()
        made = [fresh.node_routes_from(a) for a in range(0, fresh.nodes, fresh.nodes // SOURCES)]
        rows = time.process_time() - start
        row = f"{rows / len(pairs) * 1e6:>7.2f}" if made[0] is not None else f"{'-':>7}"
        print(f"{name:<26} {net.nodes:>6} {len(net.link_names):>7} {built:>8.3f} "
              f"{first / len(pairs) * 1e6:>9.2f} {again / len(pairs) * 1e6:>10.3f} "
              f"{row} {hops / len(pairs):>9.2f}")


if __name__ == "__main__":
    main()
