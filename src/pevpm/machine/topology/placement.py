"""Ranks placed on a network's nodes: what the engines read.

:class:`Placement` joins a :class:`~pevpm.machine.topology.network.Network`
and the node of each rank; its ``route`` is the network's route between the
ranks' nodes.  :func:`assign` chooses the nodes (block, cyclic, random from
a seed, or a host file's slots) and :func:`read_hostfile` reads an
mpiexec host file.

>>> from pevpm.machine.topology.star import Star
>>> assign(6, ppn=2, nodes=3, how="cyclic")
[0, 1, 2, 0, 1, 2]
>>> assign(4, ppn=1, nodes=8, how="random", seed=1)
[3, 6, 1, 5]
>>> placed = Placement(assign(4, ppn=2, nodes=2), Star(2), how="block")
>>> placed.describe()
'single switch (2 nodes, 7 links; routing: up, backplane, down); block placement: 4 ranks on 2 nodes, 2 per node'
"""

from __future__ import annotations

import random
import re

from pevpm.errors import PevpmError, did_you_mean
from pevpm.files import read_text
from pevpm.machine.topology.network import MAX_NODES, Network

#: How ranks go onto nodes (a host file is given as its slots instead).
PLACEMENTS = ("block", "cyclic", "random")


def assign(numprocs: int, ppn: int, nodes: int, how: str = "block", seed: int = 0) -> list[int]:
    """The node of each of ``numprocs`` ranks, at most ``ppn`` per node on
    ``nodes`` nodes: ``block`` fills node 0 first, ``cyclic`` deals the ranks
    round the nodes, ``random`` draws the slots (seeded)."""
    if how == "block":
        return [rank // ppn for rank in range(numprocs)]
    if how == "cyclic":
        return [rank % nodes for rank in range(numprocs)]
    if how == "random":
        slots = [node for node in range(nodes) for _ in range(ppn)]
        random.Random(seed).shuffle(slots)
        return slots[:numprocs]
    raise ValueError(f"placement must be one of {PLACEMENTS}, got {how!r}")


def nodes_of_hosts(hosts: list[str], numprocs: int, network: Network | None,
                   where: str = "host file") -> list[int]:
    """The node of each rank from a host file's slots: the network's host of
    that name, or (a network without names) hosts numbered as they first
    appear.

    >>> nodes_of_hosts(["b", "a", "b"], 3, None)
    [0, 1, 0]
    """
    if numprocs > len(hosts):
        raise PevpmError(f"{numprocs} ranks but only {len(hosts)} slots", where)
    names = network.host_names if network is not None else None
    index = {name: i for i, name in enumerate(names)} if names else {}
    node_of = []
    for host in hosts[:numprocs]:
        if names:
            if host not in index:
                raise PevpmError(f"host {host!r} is not in the network"
                                 f"{did_you_mean(host, names)}", where)
        else:
            index.setdefault(host, len(index))
        node_of.append(index[host])
    return node_of


_SLOTS = re.compile(r"^([^\s:#]+)(?::(\S+)|\s+slots\s*=\s*(\S+))?$")


def read_hostfile(path: str) -> tuple[str, ...]:
    """One slot per rank from an mpiexec host file: ``host`` (one slot),
    ``host:N`` (MPICH) or ``host slots=N`` (Open MPI); ``#`` starts a comment.
    Errors name ``FILE:LINE``.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "hosts")
    >>> _ = open(path, "w").write("a:2\\nb slots=1  # the last\\n")
    >>> read_hostfile(path)
    ('a', 'a', 'b')
    """
    text = read_text(path, "host file")
    slots: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = _SLOTS.match(line)
        count = (match.group(2) or match.group(3) or "1") if match else ""
        if not match or not count.isdigit() or int(count) < 1:
            raise PevpmError(f"expected 'host', 'host:N' or 'host slots=N' with N >= 1, "
                             f"got {line!r}", f"{path}:{number}")
        if len(slots) + int(count) > MAX_NODES:
            raise PevpmError(f"more than {MAX_NODES:,} slots: more than pevpm runs ranks",
                             f"{path}:{number}")
        slots += [match.group(1)] * int(count)
    if not slots:
        raise PevpmError("the host file names no hosts", path)
    return tuple(slots)


class Placement:
    """A network with ranks placed: node of each rank, link ids, capacities,
    figures and routes, cores per node and wait style; ``oversubscribed``:
    some node has more ranks than cores.  ``how`` says how the ranks were
    placed (for :meth:`describe`)."""

    def __init__(self, node_of: list[int], network: Network, cores: int | None = None,
                 wait: str = "poll", how: str = "block"):
        self.node_of = node_of
        self.network = network
        self.nodes = network.nodes
        self.cores = cores
        self.wait = wait
        self.how = how
        per_node: dict[int, int] = {}
        for node in node_of:
            per_node[node] = per_node.get(node, 0) + 1
        self.per_node = per_node
        self.oversubscribed = cores is not None and max(per_node.values(), default=0) > cores
        self.link_names = network.link_names
        self.capacities = network.capacities
        self.link_latency = network.link_latency
        self.link_bandwidth = network.link_bandwidth
        self.node_route = network.node_route
        self.node_routes_from = network.node_routes_from

    def intra_node(self, src: int, dst: int) -> bool:
        """Whether ranks ``src`` and ``dst`` share a node."""
        return self.node_of[src] == self.node_of[dst]

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """Ids of the links a message from rank ``src`` to rank ``dst`` crosses."""
        return self.network.node_route(self.node_of[src], self.node_of[dst])

    def describe(self) -> str:
        """One line: the network, its routing and where the ranks are."""
        used = len(self.per_node)
        most = max(self.per_node.values(), default=0)
        spread = (f"{most} per node" if most == min(self.per_node.values(), default=0)
                  else f"up to {most} per node")
        return (f"{self.network.describe()}; {self.how} placement: {len(self.node_of)} ranks "
                f"on {used} node{'s' if used != 1 else ''}, {spread}")
