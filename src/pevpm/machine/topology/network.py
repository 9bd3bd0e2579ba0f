"""A cluster's network as data: nodes, links and a deterministic route per node pair.

A :class:`Network` numbers its links (``link_names``, ``capacities``: how
many messages a link carries at full speed, and, when the description gives
them, ``link_latency`` in seconds and ``link_bandwidth`` in bytes/s) and
answers :meth:`Network.node_route`: the link ids a message from node ``a``
to node ``b`` crosses, computed on first use and kept per pair, so a
1,024-node machine never builds its N^2 routes up front.  Subclasses (one
per topology) build their links in ``__init__`` and say how they route in
``_route``; a message inside a node crosses the node's ``mem`` link.

>>> from pevpm.machine.topology.star import Star
>>> net = Star(3)
>>> [net.link_names[i] for i in net.node_route(0, 2)], net.node_route(1, 1)
(['up 0', 'backplane', 'down 2'], (7,))
>>> isinstance(net, Network), net.diameter(), net.link_latency
(True, 3, None)
"""

from __future__ import annotations

import numpy as np

from pevpm.machine.topology.rows import Rows

#: Bandwidth and latency of a node's shared memory when a description gives
#: network figures but none for memory (SimGrid's loopback defaults).
LOOPBACK_BANDWIDTH = 10e9
LOOPBACK_LATENCY = 0.0
#: Most nodes (and host-file slots) pevpm builds: twice the most ranks the engine
#: is measured at (a million, `benchmarks/engine_scale.py`).
MAX_NODES = 1 << 21
#: Most links pevpm builds (a network's descriptions are checked against it first).
MAX_LINKS = 1 << 22


def check_size(nodes: int, links: int) -> None:
    """ValueError when a network would exceed :data:`MAX_NODES` or :data:`MAX_LINKS`.

    >>> check_size(1024, 10_000)
    """
    if nodes > MAX_NODES:
        raise ValueError(f"{nodes:,} nodes is more than pevpm builds ({MAX_NODES:,})")
    if links > MAX_LINKS:
        raise ValueError(f"{links:,} links is more than pevpm builds ({MAX_LINKS:,})")


class Network:
    """Links and routes of one topology (see module doc).

    Subclasses set ``kind`` (e.g. ``"torus"``), ``params`` (its size, as the
    spec or SimGrid's ``topo_parameters`` write it) and ``routing`` (how
    routes are chosen), call :meth:`_add_link` for every link and implement
    :meth:`_route` for two different nodes.
    """

    kind = "network"
    routing = ""

    def __init__(self, nodes: int, params: str = "", *, timed: bool = False,
                 host_names: list[str] | None = None, cores: int | None = None):
        if nodes < 1:
            raise ValueError(f"a network needs at least one node, got {nodes}")
        self.nodes = nodes
        self.params = params
        self.host_names = host_names
        self.cores = cores
        self.timed = timed
        self.link_names: list[str] = []
        self.capacities: list[int] = []
        self._latency: list[float] = []
        self._bandwidth: list[float] = []
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}
        self._mem: list[int] = []

    # -- building -------------------------------------------------------------------
    def _add_link(self, name: str, latency: float | None = None,
                  bandwidth: float | None = None, capacity: int = 1) -> int:
        """Append a link and return its id."""
        self.link_names.append(name)
        self.capacities.append(capacity)
        self._latency.append(0.0 if latency is None else latency)
        self._bandwidth.append(float("inf") if bandwidth is None else bandwidth)
        return len(self.link_names) - 1

    def _add_memory(self, latency: float | None = None, bandwidth: float | None = None) -> None:
        """One ``mem k`` link per node: what messages inside node k cross."""
        if self.timed:
            latency = LOOPBACK_LATENCY if latency is None else latency
            bandwidth = LOOPBACK_BANDWIDTH if bandwidth is None else bandwidth
        self._mem = [self._add_link(f"mem {k}", latency, bandwidth) for k in range(self.nodes)]

    # -- what the engines read ------------------------------------------------------
    @property
    def link_latency(self) -> list[float] | None:
        """Seconds per link, or ``None`` when the description gives no figures
        (the communication model prices messages)."""
        return self._latency if self.timed else None

    @property
    def link_bandwidth(self) -> list[float] | None:
        """Bytes/s per link (``inf``: never a bottleneck), or ``None`` as
        :attr:`link_latency`."""
        return self._bandwidth if self.timed else None

    def node_route(self, a: int, b: int) -> tuple[int, ...]:
        """Ids of the links from node ``a`` to node ``b``, in crossing order."""
        route = self._routes.get((a, b))
        if route is None:
            if not (0 <= a < self.nodes and 0 <= b < self.nodes):
                raise ValueError(f"no node {a if not 0 <= a < self.nodes else b} in a network "
                                 f"of {self.nodes} nodes")
            route = (self._mem[a],) if a == b else tuple(self._route(a, b))
            self._routes[(a, b)] = route
        return route

    def node_routes_from(self, a: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The routes from node ``a`` to every node in turn, as :meth:`node_route`
        gives them: each one's length and all their links one after another
        (int32 arrays), made in array operations; None where this topology
        makes its routes one at a time only (:meth:`_routes_from`)."""
        rows = self._routes_from(a)
        if rows is None:
            return None
        rows.links[a, 0], rows.lengths[a] = self._mem[a], 1
        return rows.flat()

    def _route(self, a: int, b: int) -> list[int]:
        raise NotImplementedError

    def _routes_from(self, a: int) -> Rows | None:
        """The routes from ``a`` to every other node at once, or None (this
        topology makes them one at a time)."""
        return None

    # -- describing -----------------------------------------------------------------
    def name(self, node: int) -> str:
        """Node ``node``'s host name (``node-K`` when the description names none)."""
        return self.host_names[node] if self.host_names else f"node-{node}"

    def describe(self) -> str:
        """``kind params (N nodes, L links; routing ...)``, for notes and --explain."""
        size = f" {self.params}" if self.params else ""
        return (f"{self.kind}{size} ({self.nodes} nodes, {len(self.link_names)} links; "
                f"routing: {self.routing})")

    def diameter(self) -> int:
        """Most links any route between two nodes crosses."""
        return max((len(self.node_route(a, b)) for a, b in self._far_pairs() if a != b),
                   default=len(self.node_route(0, 0)))

    def _far_pairs(self):
        """Node pairs among which the longest route lies (all pairs by default;
        symmetric topologies narrow it)."""
        return ((a, b) for a in range(self.nodes) for b in range(self.nodes))

    def levels(self) -> list[str]:
        """Lines on the network's structure for ``pevpm machine show``."""
        return []

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_routes"] = {}         # cheap to recompute, costly to ship to workers
        return state
