"""A two-level tree network for the engine tests: the placement surface the
engines use (docs/topology.md), independent of the machine package's
generators, so the engines' routes, scoreboard and flows are tested alone."""

from __future__ import annotations


class TreePlacement:
    """``nodes`` nodes, ``per_leaf`` under each leaf switch, leaves joined by a
    core switch; ``ppn`` ranks per node (block).  Links: ``up k``/``down k``
    (node k to its leaf and back), ``mem k``, ``rise j``/``fall j`` (leaf j to
    the core and back, capacity ``trunk``).  With ``bandwidth`` (node links)
    and ``trunk_bandwidth``, it is a synthetic network with ``latency`` per
    hop."""

    def __init__(self, numprocs, ppn=1, per_leaf=2, trunk=1, bandwidth=None,
                 trunk_bandwidth=None, latency=1e-6):
        self.node_of = [r // ppn for r in range(numprocs)]
        self.nodes = max(self.node_of) + 1
        self.leaves = -(-self.nodes // per_leaf)
        self.per_leaf = per_leaf
        self.cores, self.wait, self.oversubscribed = None, "poll", False
        n, m = self.nodes, self.leaves
        self.link_names = ([f"up {k}" for k in range(n)] + [f"down {k}" for k in range(n)]
                           + [f"mem {k}" for k in range(n)] + [f"rise {j}" for j in range(m)]
                           + [f"fall {j}" for j in range(m)])
        self.capacities = [1] * (3 * n) + [trunk] * (2 * m)
        if bandwidth is None:
            self.link_latency = self.link_bandwidth = None
        else:
            self.link_bandwidth = [bandwidth] * (3 * n) + [trunk_bandwidth] * (2 * m)
            self.link_latency = [latency] * len(self.link_bandwidth)
        self.asked = []

    def intra_node(self, src, dst):
        return self.node_of[src] == self.node_of[dst]

    def node_route(self, a, b):
        self.asked.append((a, b))
        n, m = self.nodes, self.leaves
        if a == b:
            return (2 * n + a,)
        la, lb = a // self.per_leaf, b // self.per_leaf
        if la == lb:
            return (a, n + b)
        return (a, 3 * n + la, 3 * n + m + lb, n + b)

    def route(self, src, dst):
        return self.node_route(self.node_of[src], self.node_of[dst])

    def describe(self):
        return f"two-level tree, {self.nodes} nodes, {self.per_leaf} per leaf"


class Tree:
    """A topology whose ``place`` gives a :class:`TreePlacement` (the rest of
    the arguments are the placement's)."""

    def __init__(self, **options):
        self.options = options
        self.placements = []

    def place(self, numprocs):
        placed = TreePlacement(numprocs, **self.options)
        self.placements.append(placed)
        return placed
