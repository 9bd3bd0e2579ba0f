"""Process placement (n nodes x p processes per node) and the complement pattern.

Point-to-point tests pair every process with one on another node, the first
half of the nodes with the second half, so every message crosses the network
(thesis fig. 9).  In the "ping" phase the first half sends, in the "pong"
phase the second half answers.  On one node (intra-node runs, 1 x p) the
first half of the ranks pairs with the second half.

>>> place = Placement.from_hosts(["a", "a", "b", "b"])
>>> place.nxp, complement_partners(place)
('2x2', [(2, True), (3, True), (0, False), (1, False)])
>>> Placement.from_hosts(["h"] * 4, ppn=2).nodes
[0, 0, 1, 1]

One launch can also benchmark smaller placements inside itself (``bench
--placements``): the first ``N`` nodes, the first ``P`` ranks on each.

>>> sub, ranks = place.subset(1, 2)
>>> sub.nxp, ranks
('1x2', [0, 1])
>>> [p.nxp for p, _ in select_placements(place, ["all"], paired=True)]
['1x2', '2x1', '2x2']
"""

from __future__ import annotations

from dataclasses import dataclass

from pevpm.errors import BenchmarkError


@dataclass(frozen=True)
class Placement:
    """``nodes[r]`` is the node index of rank ``r``; ``hosts[r]`` its real host name."""

    nodes: list[int]
    hosts: list[str]

    @classmethod
    def from_hosts(cls, hosts: list[str], ppn: int | None = None) -> Placement:
        """Nodes from the real host names, or blocks of ``ppn`` consecutive ranks."""
        if ppn is not None:
            if len(hosts) % ppn:
                raise BenchmarkError(f"--ppn {ppn} does not divide the process count {len(hosts)}")
            return cls([rank // ppn for rank in range(len(hosts))], list(hosts))
        order: dict[str, int] = {}
        nodes = [order.setdefault(host, len(order)) for host in hosts]
        placement = cls(nodes, list(hosts))
        counts = {nodes.count(node) for node in set(nodes)}
        if len(counts) > 1:
            raise BenchmarkError(
                f"hosts run different numbers of processes ({sorted(counts)}); MPIBench needs "
                "the same count on every node (or give --ppn)"
            )
        return placement

    @property
    def n(self) -> int:
        return len(set(self.nodes))

    @property
    def p(self) -> int:
        return len(self.nodes) // self.n

    @property
    def nxp(self) -> str:
        return f"{self.n}x{self.p}"

    def subset(self, n: int, p: int) -> tuple[Placement, list[int]]:
        """The ``n x p`` placement made of the first ``n`` nodes' first ``p`` ranks,
        and those ranks (ascending, as numbered in this placement)."""
        if not (1 <= n <= self.n and 1 <= p <= self.p):
            raise BenchmarkError(f"placement {n}x{p} does not fit in this launch's {self.nxp} "
                                 f"(at most {self.n} nodes x {self.p} processes per node)")
        ranks = sorted(rank for node in range(n) for rank in self.ranks_on(node)[:p])
        return Placement([self.nodes[r] for r in ranks], [self.hosts[r] for r in ranks]), ranks

    def ranks_on(self, node: int) -> list[int]:
        return [rank for rank, where in enumerate(self.nodes) if where == node]

    def local_rank(self, rank: int) -> int:
        return self.ranks_on(self.nodes[rank]).index(rank)


def complement_partners(placement: Placement) -> list[tuple[int, bool]]:
    """Per rank: (partner rank, True if it sends in the ping phase)."""
    n, p = placement.n, placement.p
    partners: list[tuple[int, bool]] = [(-1, False)] * len(placement.nodes)
    if n == 1:
        ranks = placement.ranks_on(0)
        if p % 2:
            raise BenchmarkError(f"point-to-point tests on one node need an even process count "
                                 f"(got 1x{p})")
        pairs = [(ranks[i], ranks[i + p // 2]) for i in range(p // 2)]
    else:
        if n % 2:
            raise BenchmarkError(
                f"the complement pattern needs an even number of nodes (got {placement.nxp}); "
                "use --ppn to change the placement"
            )
        pairs = []
        for node in range(n // 2):
            here, there = placement.ranks_on(node), placement.ranks_on(node + n // 2)
            pairs.extend(zip(here, there))
    for pinger, ponger in pairs:
        partners[pinger] = (ponger, True)
        partners[ponger] = (pinger, False)
    return partners


def pairable(n: int, p: int) -> bool:
    """Whether the complement pattern can pair every process of an ``n x p`` placement."""
    return p % 2 == 0 if n == 1 else n % 2 == 0


def select_placements(whole: Placement, requested: list[str],
                      paired: bool) -> list[tuple[Placement, list[int]]]:
    """The placements one launch benchmarks, smallest first, each with its ranks.

    ``requested`` holds ``NxP`` strings or ``"all"`` (every placement that
    fits, pairable when ``paired``); empty means the launch's own placement.
    """
    if not requested:
        return [(whole, list(range(len(whole.nodes))))]
    wanted: set[tuple[int, int]] = set()
    for text in requested:
        if text == "all":
            wanted.update((n, p) for n in range(1, whole.n + 1) for p in range(1, whole.p + 1)
                          if n * p >= 2 and (pairable(n, p) or not paired))
            continue
        n, p = (int(part) for part in text.split("x"))
        if n * p < 2:
            raise BenchmarkError(f"placement {text}: MPIBench needs at least 2 processes")
        if paired and not pairable(n, p):
            raise BenchmarkError(f"placement {text}: point-to-point tests pair processes, which "
                                 "needs one node with an even count or an even number of nodes")
        wanted.add((n, p))
    return [whole.subset(n, p) for n, p in sorted(wanted, key=lambda np_: (np_[0] * np_[1], np_))]
