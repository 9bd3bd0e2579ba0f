"""A network drawn by hand: hosts, switches and the cables between them.

What a user's own file (:mod:`pevpm.machine.topology.ownfile`) or
SimGrid's plain ``<link>``/``<route>`` description
(:mod:`pevpm.machine.topology.simgrid`) builds.  Each cable is two links,
one per direction (``a>b`` and ``b>a``), unless it is ``shared`` (SimGrid's
``SHARED`` policy: one link both ways).  A route is the one listed for the
pair when the description lists routes, else the fewest hops, ties going to
the cable declared first (breadth-first search from the source, once per
source node, on first use).

>>> net = Graph(["a", "b", "c"], ["sw"])
>>> for host in ("a", "b", "c"):
...     _ = net.connect(host, "sw", latency=1e-6, bandwidth=1e9)
>>> [net.link_names[i] for i in net.node_route(0, 2)]
['a>sw', 'sw>c']
"""

from __future__ import annotations

from collections import deque

from pevpm.machine.topology.network import Network


class Graph(Network):
    """Hosts (the nodes, in order) and switches joined by :meth:`connect`; call
    :meth:`add_route` to list a route instead of the shortest path."""

    kind = "hand-drawn network"
    routing = "fewest hops, first-declared cable on ties"

    def __init__(self, hosts: list[str], switches: list[str], *, timed: bool = True,
                 loopback_bandwidth: float | None = None, loopback_latency: float | None = None,
                 cores: int | None = None):
        super().__init__(len(hosts), timed=timed,
                         host_names=list(hosts), cores=cores)
        self.switches = list(switches)
        self._vertex = {name: i for i, name in enumerate([*hosts, *switches])}
        self._out: list[list[tuple[int, int]]] = [[] for _ in self._vertex]
        self._listed: dict[tuple[int, int], tuple[int, ...]] = {}
        self._trees: dict[int, list[tuple[int, int] | None]] = {}
        self._add_memory(loopback_latency, loopback_bandwidth)

    def vertex(self, name: str) -> int:
        """Index of host or switch ``name`` (KeyError if unknown)."""
        return self._vertex[name]

    def connect(self, a: str, b: str, *, latency: float | None = None,
                bandwidth: float | None = None, count: int = 1, shared: bool = False,
                name: str | None = None) -> tuple[int, int]:
        """A cable of ``count`` parallel wires between ``a`` and ``b``; returns the ids
        of its a->b and b->a links (the same id when ``shared``)."""
        va, vb = self._vertex[a], self._vertex[b]
        bw = None if bandwidth is None else bandwidth * count
        there = self._add_link(name or f"{a}>{b}", latency, bw, count)
        back = there if shared else self._add_link(f"{b}>{a}" if name is None else f"{name} back",
                                                   latency, bw, count)
        self._out[va].append((vb, there))
        self._out[vb].append((va, back))
        self._trees.clear()
        return there, back

    def add_link(self, name: str, latency: float | None, bandwidth: float | None) -> int:
        """A link used only by listed routes (SimGrid's ``<link>``)."""
        return self._add_link(name, latency, bandwidth)

    def add_route(self, a: int, b: int, links: tuple[int, ...]) -> None:
        """Node ``a`` to node ``b`` crosses ``links`` (SimGrid's ``<route>``)."""
        self._listed[(a, b)] = links

    def _route(self, a: int, b: int) -> list[int]:
        if self._listed:
            if (a, b) not in self._listed:
                raise ValueError(f"no route from {self.name(a)} to {self.name(b)} is listed")
            return list(self._listed[(a, b)])
        tree = self._trees.get(a)
        if tree is None:
            tree = self._trees[a] = self._search(a)
        if tree[b] is None:
            raise ValueError(f"{self.name(b)} cannot be reached from {self.name(a)}")
        route, v = [], b
        while v != a:
            v, link = tree[v]
            route.append(link)
        return route[::-1]

    def _search(self, source: int) -> list[tuple[int, int] | None]:
        """(previous vertex, link) on the way from ``source`` to each vertex."""
        tree: list[tuple[int, int] | None] = [None] * len(self._out)
        seen = {source}
        queue = deque([source])
        while queue:
            v = queue.popleft()
            for w, link in self._out[v]:
                if w not in seen:
                    seen.add(w)
                    tree[w] = (v, link)
                    # hosts forward nothing: only switches (and the source) are passed through
                    if w >= self.nodes:
                        queue.append(w)
        return tree

    def unreachable(self) -> tuple[str, str] | None:
        """A pair of hosts with no route, or None."""
        for a in range(self.nodes):
            tree = self._search(a) if not self._listed else None
            for b in range(self.nodes):
                if a == b:
                    continue
                if (self._listed and (a, b) not in self._listed) or (tree and tree[b] is None):
                    return self.name(a), self.name(b)
        return None

    def cable_ends(self) -> list[tuple[int, int]]:
        """(vertex, vertex) of every one-way link drawn (hosts first, then switches)."""
        return [(v, w) for v, out in enumerate(self._out) for w, _ in out]

    def levels(self) -> list[str]:
        cables = sum(len(out) for out in self._out) // 2
        return [f"{self.nodes} hosts, {len(self.switches)} switches, {cables} cables"
                + (f", {len(self._listed)} listed routes" if self._listed else "")]
