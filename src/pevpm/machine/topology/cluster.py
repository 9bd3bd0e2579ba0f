"""Where ranks run and which network links a message crosses.

A cluster of nodes with ``procs_per_node`` processes each (the thesis's
``n x p``), joined by a network (:mod:`pevpm.machine.topology.network`):
by default one switch sized to the ranks, every node on its own link
(:class:`~pevpm.machine.topology.star.Star`):

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
(see :mod:`pevpm.vm.kernel.sharing`); ``wait`` says whether a rank blocked in an MPI
call keeps its core busy polling (``"poll"``, MPICH's default) or sleeps
(``"sleep"``):

>>> shared = Topology(procs_per_node=8, cores=2).place(8)
>>> shared.cores, shared.wait, shared.oversubscribed
(2, 'poll', True)

Any other network (a fat-tree, torus, dragonfly, a user's file) is given as
``network``; the ranks go onto its nodes:

>>> from pevpm.machine.topology.torus import Torus
>>> ring = Topology(network=Torus([8]), placement="cyclic", nodes=4).place(4)
>>> ring.node_of, [ring.link_names[i] for i in ring.route(0, 2)]
([0, 1, 2, 3], ['0-1 d0 up', '1-2 d0 up'])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pevpm.errors import SimulationError
from pevpm.host import WAIT_STYLES
from pevpm.machine.topology.network import Network
from pevpm.machine.topology.placement import PLACEMENTS, Placement, assign, nodes_of_hosts
from pevpm.machine.topology.star import Star


@dataclass(frozen=True)
class Topology:
    """A cluster: ``procs_per_node`` ranks per node, ``placement`` ``block``
    (ranks 0..p-1 on node 0), ``cyclic`` (rank r on node r mod n) or
    ``random`` (the slots shuffled with ``seed``); ``hosts``: a host file's
    slots instead (rank r on host ``hosts[r]``); ``nodes`` defaults to as
    many as the ranks need (``random``: all the network's);
    ``procs_per_node=None`` spreads the ranks evenly over ``nodes`` (default
    1: every rank on one node); ``cores``: cores per node (``None``: the
    network's figure, else no sharing); ``wait``: one of :data:`WAIT_STYLES`;
    ``network``: the network (``None``: one switch whose backplane carries
    ``backplane_capacity`` messages).

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
    network: Network | None = None
    seed: int = 0
    hosts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.procs_per_node is not None and self.procs_per_node < 1:
            raise ValueError(f"procs_per_node must be >= 1, got {self.procs_per_node}")
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)} or a host "
                             f"file, got {self.placement!r}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {self.nodes}")
        if self.backplane_capacity < 1:
            raise ValueError(f"backplane_capacity must be >= 1, got {self.backplane_capacity}")
        if self.cores is not None and self.cores < 1:
            raise ValueError(f"cores must be >= 1, got {self.cores}")
        if self.wait not in WAIT_STYLES:
            raise ValueError(f"wait must be one of {WAIT_STYLES}, got {self.wait!r}")
        if self.network is not None and self.nodes is not None \
                and self.nodes > self.network.nodes:
            raise ValueError(f"nodes={self.nodes} but the {self.network.kind} has "
                             f"{self.network.nodes}")

    def place(self, numprocs: int) -> Placement:
        """Put ``numprocs`` ranks on the nodes."""
        net = self.network
        if self.hosts is not None:
            node_of = nodes_of_hosts(list(self.hosts), numprocs, net)
            net = net or _switch(max(node_of, default=0) + 1, self.backplane_capacity)
            return self._placed(node_of, net, "host file")
        ppn = self.procs_per_node
        if ppn is None:
            nodes = self.nodes or 1
            ppn = max(1, -(-numprocs // nodes))
        elif self.nodes is not None:
            nodes = self.nodes
        elif net is not None and self.placement == "random":
            nodes = net.nodes
        else:
            nodes = -(-numprocs // ppn)
        if nodes * ppn < numprocs:
            raise SimulationError(f"{numprocs} ranks do not fit on {nodes} nodes x {ppn} "
                                  "processes per node")
        if net is not None and nodes > net.nodes:
            raise SimulationError(f"{numprocs} ranks at {ppn} per node need {nodes} nodes; the "
                                  f"{net.kind} {net.params} has {net.nodes} (raise --ppn)")
        node_of = assign(numprocs, ppn, nodes, self.placement, self.seed)
        net = net or _switch(nodes, self.backplane_capacity)
        how = f"random (seed {self.seed})" if self.placement == "random" else self.placement
        return self._placed(node_of, net, how)

    def _placed(self, node_of: list[int], net: Network, how: str) -> Placement:
        cores = self.cores if self.cores is not None else net.cores
        return Placement(node_of, net, cores, self.wait, how)


@lru_cache(maxsize=32)
def _switch(nodes: int, backplane_capacity: int) -> Star:
    """The single switch of ``nodes`` nodes, built once per process and shared
    by every run (its routes with it)."""
    return Star(nodes, backplane_capacity=backplane_capacity)
