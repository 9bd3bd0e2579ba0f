"""Tori (any number of dimensions, wraparound), routed in dimension order as SimGrid's TorusZone.

Every node is a router: node r owns one full-duplex cable per dimension
to its neighbour one step up that dimension (wrapping), so the torus
``X x Y x Z`` has ``3 X Y Z`` cables.  Node r's coordinate in dimension j is
``(r / (d0 ... d(j-1))) mod dj`` (the first dimension varies fastest).

Routing (deterministic, the same links SimGrid lists): dimension by
dimension, first to last, each the short way round (ties go up: ``t`` is
reached upward when ``s < t <= s + d/2``, or ``s > d/2`` and ``(s + d/2) mod
d >= t``, where ``s`` and ``t`` are the source's and destination's
coordinates).  Links: ``mem k``, then per cable from node a to its
neighbour b in dimension j ``a-b dj up`` (a to b) and ``a-b dj down`` (b to
a), as SimGrid names them, then ``limiter k`` (SimGrid's ``limiter_link``, crossed
by every message a node sends, forwards or receives) when given.

>>> ring = Torus([4, 2])
>>> [ring.link_names[i] for i in ring.node_route(0, 7)]
['3-0 d0 down', '3-7 d1 up']
"""

from __future__ import annotations

from math import prod

import numpy as np

from pevpm.machine.topology.network import Network, check_size
from pevpm.machine.topology.rows import Rows


class Torus(Network):
    """A torus of ``dims`` (e.g. ``[8, 8, 8]``); ``bandwidth``/``latency`` of every
    cable (``None``: no figures)."""

    kind = "torus"
    routing = "dimension order, shortest way round (SimGrid TorusZone)"

    def __init__(self, dims: list[int], *, bandwidth: float | None = None,
                 latency: float | None = None, limiter: float | None = None,
                 loopback_bandwidth: float | None = None, loopback_latency: float | None = None,
                 host_names: list[str] | None = None, cores: int | None = None):
        if not dims or min(dims) < 1:
            raise ValueError(f"torus dimensions must be whole numbers >= 1, got {dims}")
        check_size(prod(dims), 3 * len(dims) * prod(dims))
        self.dims = list(dims)
        super().__init__(prod(dims), "x".join(map(str, dims)), timed=bandwidth is not None,
                         host_names=host_names, cores=cores)
        self._add_memory(loopback_latency, loopback_bandwidth)
        self._base = len(self.link_names)
        for r in range(self.nodes):
            scale = 1
            for j, d in enumerate(dims):
                nbr = r - (d - 1) * scale if (r // scale) % d == d - 1 else r + scale
                self._add_link(f"{r}-{nbr} d{j} up", latency, bandwidth)
                self._add_link(f"{r}-{nbr} d{j} down", latency, bandwidth)
                scale *= d
        self._limiter = ([self._add_link(f"limiter {k}", 0.0, limiter) for k in range(self.nodes)]
                         if limiter is not None else None)

    def _route(self, a: int, b: int) -> list[int]:
        route: list[int] = []
        mine, target = self.coords(a), self.coords(b)
        here = list(mine)
        current, scale = a, 1
        base, ndims, limiter = self._base, len(self.dims), self._limiter
        for j, d in enumerate(self.dims):
            half = d // 2
            upward = (mine[j] < target[j] <= mine[j] + half
                      or (mine[j] > half and (mine[j] + half) % d >= target[j]))
            while here[j] != target[j]:
                if upward:
                    step = scale * (1 - d) if here[j] == d - 1 else scale
                    link = base + 2 * (current * ndims + j)
                    here[j] = (here[j] + 1) % d
                else:
                    step = scale * (d - 1) if here[j] == 0 else -scale
                    link = base + 2 * ((current + step) * ndims + j) + 1
                    here[j] = (here[j] - 1) % d
                if limiter:
                    route.append(limiter[current])
                route.append(link)
                current += step
            scale *= d
        if limiter:
            route.append(limiter[b])
        return route

    def _routes_from(self, a: int) -> Rows:
        """:meth:`_route` from ``a`` to every node, each hop for all of them at once."""
        n, ndims, base = self.nodes, len(self.dims), self._base
        limiter = None if self._limiter is None else self._limiter[0]
        rows = Rows(n, sum(d // 2 for d in self.dims) * (2 if limiter is not None else 1) + 1)
        nodes = np.arange(n)
        current, scale = np.full(n, a, dtype=np.int64), 1
        for j, d in enumerate(self.dims):
            half, mine, target = d // 2, (a // scale) % d, (nodes // scale) % d
            upward = (((mine < target) & (target <= mine + half))
                      | ((mine > half) & ((mine + half) % d >= target)))
            here = np.full(n, mine, dtype=np.int64)
            idx = np.flatnonzero(here != target)
            while idx.size:
                h, cur, up = here[idx], current[idx], upward[idx]
                step = np.where(up, np.where(h == d - 1, scale * (1 - d), scale),
                                np.where(h == 0, scale * (d - 1), -scale))
                if limiter is not None:
                    rows.append(idx, limiter + cur)
                rows.append(idx, np.where(up, base + 2 * (cur * ndims + j),
                                          base + 2 * ((cur + step) * ndims + j) + 1))
                here[idx], current[idx] = (h + np.where(up, 1, -1)) % d, cur + step
                idx = idx[here[idx] != target[idx]]
            scale *= d
        if limiter is not None:
            others = np.flatnonzero(nodes != a)
            rows.append(others, limiter + others)
        return rows

    def coords(self, node: int) -> list[int]:
        """Node ``node``'s coordinate in each dimension (the first varies fastest)."""
        out, scale = [], 1
        for d in self.dims:
            out.append((node // scale) % d)
            scale *= d
        return out

    def _far_pairs(self):
        return [(0, b) for b in range(self.nodes)]

    def levels(self) -> list[str]:
        return [f"{len(self.dims)}-D torus {self.params}: {self.nodes} nodes, each a router "
                f"with {2 * len(self.dims)} neighbour links"]
