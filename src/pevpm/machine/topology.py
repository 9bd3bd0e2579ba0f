"""Where ranks run and which network links a message crosses.

A cluster of ``nodes`` nodes with ``procs_per_node`` processes each (the
thesis's ``n x p``), every node attached to one switch.  Links:

* ``up k`` / ``down k``: node k's full-duplex link to the switch;
* ``mem k``: node k's shared memory, crossed by messages inside the node;
* ``backplane``: the switch, crossed by every message between nodes.

A link carries ``capacity`` messages at full speed (node links and memory:
1; the backplane: ``backplane_capacity``, 1 by default, which makes the
contention level the number of messages in the network as in the thesis's
crossbar-switch scoreboard).  Gather-style traffic into one node piles up on
that node's ``down`` link.

>>> placed = Topology(procs_per_node=2).place(4)
>>> placed.node_of, placed.intra_node(0, 1), placed.intra_node(1, 2)
([0, 0, 1, 1], True, False)
>>> [placed.link_names[i] for i in placed.route(1, 2)]
['up 0', 'backplane', 'down 1']

A node has ``cores`` cores (``None``: as many as it has ranks, the thesis's
one process per processor).  With more ranks than cores the ranks share them
(see :mod:`pevpm.vm.sharing`); ``wait`` says whether a rank blocked in an MPI
call keeps its core busy polling (``"poll"``, MPICH's default) or sleeps
(``"sleep"``):

>>> shared = Topology(procs_per_node=8, cores=2).place(8)
>>> shared.cores, shared.wait, shared.oversubscribed
(2, 'poll', True)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pevpm.errors import SimulationError
from pevpm.host import WAIT_STYLES

PLACEMENTS = ("block", "cyclic")


@dataclass(frozen=True)
class Topology:
    """A switched cluster: ``procs_per_node`` ranks per node, ``placement``
    ``block`` (ranks 0..p-1 on node 0) or ``cyclic`` (rank r on node r mod n);
    ``nodes`` defaults to as many as the ranks need; ``procs_per_node=None``
    spreads the ranks evenly over ``nodes`` (default 1: every rank on one
    node); ``cores``: cores per node (``None``: no sharing); ``wait``: one of
    :data:`WAIT_STYLES`.

    >>> Topology(procs_per_node=None, cores=2).place(8).node_of
    [0, 0, 0, 0, 0, 0, 0, 0]
    >>> Topology(procs_per_node=None, nodes=2).place(5).node_of
    [0, 0, 0, 1, 1]
    """

    procs_per_node: int | None = 1
    placement: str = "block"
    nodes: int | None = None
    backplane_capacity: int = 1
    cores: int | None = None
    wait: str = "poll"

    def __post_init__(self) -> None:
        if self.procs_per_node is not None and self.procs_per_node < 1:
            raise ValueError(f"procs_per_node must be >= 1, got {self.procs_per_node}")
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, got {self.placement!r}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {self.nodes}")
        if self.backplane_capacity < 1:
            raise ValueError(f"backplane_capacity must be >= 1, got {self.backplane_capacity}")
        if self.cores is not None and self.cores < 1:
            raise ValueError(f"cores must be >= 1, got {self.cores}")
        if self.wait not in WAIT_STYLES:
            raise ValueError(f"wait must be one of {WAIT_STYLES}, got {self.wait!r}")

    def place(self, numprocs: int) -> Placement:
        """Put ``numprocs`` ranks on the nodes."""
        ppn = self.procs_per_node
        if ppn is None:
            nodes = self.nodes or 1
            ppn = max(1, -(-numprocs // nodes))
        else:
            nodes = self.nodes if self.nodes is not None else -(-numprocs // ppn)
        if nodes * ppn < numprocs:
            raise SimulationError(f"{numprocs} ranks do not fit on {nodes} nodes x {ppn} "
                                  "processes per node")
        if self.placement == "block":
            node_of = [rank // ppn for rank in range(numprocs)]
        else:
            node_of = [rank % nodes for rank in range(numprocs)]
        return Placement(node_of, nodes, self.backplane_capacity, self.cores, self.wait)


class Placement:
    """A topology with ranks placed: node of each rank, link ids and capacities,
    cores per node and wait style; ``oversubscribed``: some node has more ranks
    than cores."""

    def __init__(self, node_of: list[int], nodes: int, backplane_capacity: int,
                 cores: int | None = None, wait: str = "poll"):
        self.node_of = node_of
        self.nodes = nodes
        self.cores = cores
        self.wait = wait
        per_node = [0] * nodes
        for node in node_of:
            per_node[node] += 1
        self.oversubscribed = cores is not None and max(per_node, default=0) > cores
        self.link_names = ([f"up {k}" for k in range(nodes)]
                           + [f"down {k}" for k in range(nodes)]
                           + [f"mem {k}" for k in range(nodes)] + ["backplane"])
        self.capacities = [1] * (3 * nodes) + [backplane_capacity]
        #: Seconds and bytes/s per link: None, the message's whole time comes
        #: from the communication model (what a measured switch gives).
        self.link_latency: list[float] | None = None
        self.link_bandwidth: list[float] | None = None
        self._routes: dict[tuple[int, int], tuple[int, ...]] = {}

    def intra_node(self, src: int, dst: int) -> bool:
        return self.node_of[src] == self.node_of[dst]

    def node_route(self, a: int, b: int) -> tuple[int, ...]:
        """Ids of the links a message from node ``a`` to node ``b`` crosses."""
        route = self._routes.get((a, b))
        if route is None:
            n = self.nodes
            route = (2 * n + a,) if a == b else (a, 3 * n, n + b)
            self._routes[(a, b)] = route
        return route

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """Ids of the links a message from rank ``src`` to rank ``dst`` crosses."""
        return self.node_route(self.node_of[src], self.node_of[dst])

    def describe(self) -> str:
        """One line: the network, its routing and the placement."""
        per_node = max(Counter(self.node_of).values(), default=0)
        return (f"one switch, {self.nodes} node{'s' if self.nodes != 1 else ''}, "
                f"up to {per_node} rank{'s' if per_node != 1 else ''} per node")
