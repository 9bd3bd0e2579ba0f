"""Fat-trees (extended generalised fat-trees), routed D-mod-k as SimGrid's FatTreeZone.

A tree of ``levels`` levels of switches above the compute nodes, described
as SimGrid's ``topo_parameters="L;d1,..,dL;u1,..,uL;c1,..,cL"``: a switch of
level i has ``down[i-1]`` children, a node of level i-1 has ``up[i-1]``
parents, joined by ``count[i-1]`` parallel cables.  So a k-ary n-tree is
``n;k,..,k;1,k,..,k;1,..,1`` and a leaf switch with 16 nodes and 4 uplinks
(4:1 oversubscribed) has ``down[0]=16, up[1]=4``.  Every switch and node has
a label (one digit per level); a parent differs from its child in one digit.

Routing (deterministic, the same links SimGrid lists): up from the source
until the destination is in the current switch's subtree, choosing the
parent port ``(d / prod(up[:level])) mod (up[level] * count[level])`` where
``d`` is the destination's position (D-mod-k); then down, choosing the
cable ``source mod count``.  Links: ``mem k``, then per cable ``up
L:c>L+1:p`` and ``down L+1:p>L:c`` (``#j`` for parallel cables), then
``limiter ...`` when SimGrid's ``limiter_link`` is given.

>>> tree = FatTree.k_ary(2, 2)
>>> tree.params, tree.nodes
('2;2,2;1,2;1,1', 4)
>>> [tree.link_names[i] for i in tree.node_route(0, 3)]
['up 0:0>1:0', 'up 1:0>2:1', 'down 2:1>1:1', 'down 1:1>0:3']
"""

from __future__ import annotations

from math import prod

import numpy as np

from pevpm.machine.topology.network import Network, check_size
from pevpm.machine.topology.rows import Rows

#: Most levels of switches a fat-tree may have.
MAX_LEVELS = 16


def _digits(position: int, radix: list[int]) -> list[int]:
    out = []
    for r in radix:
        out.append(position % r)
        position //= r
    return out


def _position(digits: list[int], scales: list[int]) -> int:
    """The position whose digits are ``digits`` (``scales``: each digit's place value)."""
    return sum(d * scale for d, scale in zip(digits, scales))


class FatTree(Network):
    """A fat-tree from SimGrid's four parameter lists (see module doc); ``bandwidth``
    and ``latency`` of every cable (``None``: no figures)."""

    kind = "fat-tree"
    routing = "D-mod-k up/down (SimGrid FatTreeZone)"

    def __init__(self, down: list[int], up: list[int], count: list[int], *,
                 bandwidth: float | None = None, latency: float | None = None,
                 limiter: float | None = None, loopback_bandwidth: float | None = None,
                 loopback_latency: float | None = None, host_names: list[str] | None = None,
                 cores: int | None = None):
        levels = len(down)
        if levels == 0 or not len(up) == len(count) == levels:
            raise ValueError(f"a fat-tree needs as many down, up and count values as levels "
                             f"({levels}, {len(up)}, {len(count)} given)")
        if levels > MAX_LEVELS:
            raise ValueError(f"a fat-tree of {levels} levels: pevpm builds at most {MAX_LEVELS}")
        if min(down + up + count) < 1:
            raise ValueError("fat-tree down, up and count values must all be >= 1")
        self.down, self.up, self.count = list(down), list(up), list(count)
        per_level = [prod(down)] + [prod(up[:i + 1]) * prod(down[i + 1:]) for i in range(levels)]
        check_size(per_level[0], 2 * sum(per_level[i] * up[i] * count[i] for i in range(levels))
                   + sum(per_level))
        params = (f"{levels};{','.join(map(str, down))};{','.join(map(str, up))};"
                  f"{','.join(map(str, count))}")
        super().__init__(prod(down), params, timed=bandwidth is not None,
                         host_names=host_names, cores=cores)
        self.per_level = per_level
        self._add_memory(loopback_latency, loopback_bandwidth)
        radices = [[down[j] if j >= level else up[j] for j in range(levels)]
                   for level in range(levels + 1)]
        self._scales = [[prod(radix[:j]) for j in range(levels)] for radix in radices]
        self._labels = [[tuple(_digits(pos, radices[level])) for pos in range(count_)]
                        for level, count_ in enumerate(self.per_level)]
        self._ports = [up[level] * count[level] for level in range(levels)]
        self._up_prefix = [prod(up[:level]) for level in range(levels)]
        # a switch of level L is above node d when the digits from L on agree:
        # its position // _above[L] against d // _below[L]
        self._above = [self._scales[level][level] for level in range(levels)]
        self._below = [prod(down[:level]) for level in range(levels)]
        self._parents: list[list[int]] = []
        self._cable_base = []
        for level in range(levels):
            self._cable_base.append(len(self.link_names))
            self._parents.append([])
            for child in range(self.per_level[level]):
                for port in range(up[level] * count[level]):
                    parent, cable = self.parent(level, child, port)
                    self._parents[level].append(parent)
                    tag = f"#{cable}" if count[level] > 1 else ""
                    self._add_link(f"up {level}:{child}>{level + 1}:{parent}{tag}",
                                   latency, bandwidth)
                    self._add_link(f"down {level + 1}:{parent}>{level}:{child}{tag}",
                                   latency, bandwidth)
        self._limiters: list[list[int]] | None = None
        self._tables: tuple | None = None       # numpy copies for _routes_from
        if limiter is not None:
            self._limiters = [[self._add_link(f"limiter {level}:{k}", 0.0, limiter)
                               for k in range(self.per_level[level])]
                              for level in range(levels + 1)]

    @classmethod
    def k_ary(cls, k: int, n: int, oversub: list[int] | None = None, **links) -> FatTree:
        """A k-ary n-tree (k^n nodes); ``oversub[i]``: the ratio of down to up
        ports of the level-(i+1) switches (``k`` must divide by it)."""
        ratios = _ratios(oversub, n)
        for ratio in ratios:
            if k % ratio:
                raise ValueError(f"oversubscription {ratio} must divide k={k}")
        return cls([k] * n, [1] + [k // ratios[i] for i in range(n - 1)], [1] * n, **links)

    @classmethod
    def m_port(cls, m: int, n: int, oversub: list[int] | None = None, **links) -> FatTree:
        """An m-port n-tree: switches of ``m`` ports, half down and half up
        (the top ones all down), 2 (m/2)^n nodes."""
        if m < 2 or m % 2:
            raise ValueError(f"an m-port tree needs an even m >= 2, got {m}")
        half, ratios = m // 2, _ratios(oversub, n)
        for ratio in ratios:
            if half % ratio:
                raise ValueError(f"oversubscription {ratio} must divide m/2={half}")
        return cls([half] * (n - 1) + [m], [1] + [half // ratios[i] for i in range(n - 1)],
                   [1] * n, **links)

    # -- labels ---------------------------------------------------------------------
    def parent(self, level: int, child: int, port: int) -> tuple[int, int]:
        """(parent position, cable) of ``child``'s parent port ``port`` at ``level``."""
        label = list(self._labels[level][child])
        label[level] = port % self.up[level]
        return _position(label, self._scales[level + 1]), port // self.up[level]

    # -- routing --------------------------------------------------------------------
    def _route(self, a: int, b: int) -> list[int]:
        route: list[int] = []
        lim, ports, base, scales = self._limiters, self._ports, self._cable_base, self._scales
        above, below, top = self._above, self._below, len(self.down)
        level, pos = 0, a
        while level == 0 or (level < top and pos // above[level] != b // below[level]):
            port = (b // self._up_prefix[level]) % ports[level]
            if lim:
                route.append(lim[level][pos])
            route.append(base[level] + 2 * (pos * ports[level] + port))
            pos = self._parents[level][pos * ports[level] + port]
            level += 1
        # down, as SimGrid's loop walks it: the child index runs on across levels
        # (jumping straight to the next index whose child digit is the destination's);
        # the child is the switch with digit level-1 set to the index's, the
        # digits below and above it kept
        while level > 0:
            down = self.down[level - 1]
            i = (a % self.count[level - 1]) * down
            while level > 0:
                i += ((b // below[level - 1]) % down - i) % down
                if i >= down * self.count[level - 1]:
                    break
                place = scales[level][level - 1]
                port = (pos // place) % self.up[level - 1] + (i // down) * self.up[level - 1]
                child = pos % place + (i % down) * scales[level - 1][level - 1]
                if level < top:
                    child += (pos // above[level]) * scales[level - 1][level]
                route.append(base[level - 1] + 2 * (child * ports[level - 1] + port) + 1)
                if lim:
                    route.append(lim[level][pos])
                level, pos = level - 1, child
                if level > 0:
                    down = self.down[level - 1]
                i += 1
        if lim:
            route.append(lim[0][b])
        return route

    def _routes_from(self, a: int) -> Rows:
        """:meth:`_route` from ``a`` to every node, each step for all of them at once."""
        n, top = self.nodes, len(self.down)
        if self._tables is None:
            self._tables = self._array_tables()
        down, count, up, ports, base, below, above, scales, parents, limits = self._tables
        rows = Rows(n, (2 * top + 1) * (2 if limits is not None else 1))
        level, pos = np.zeros(n, dtype=np.int64), np.full(n, a, dtype=np.int64)
        idx = np.flatnonzero(np.arange(n) != a)
        others = idx
        for lv in range(top):                         # up
            if lv:
                idx = idx[pos[idx] // above[lv] != idx // below[lv]]
            if not idx.size:
                break
            slot = pos[idx] * ports[lv] + (idx // self._up_prefix[lv]) % ports[lv]
            if limits is not None:
                rows.append(idx, limits[lv] + pos[idx])
            rows.append(idx, base[lv] + 2 * slot)
            pos[idx] = parents[lv][slot]
            level[idx] = lv + 1
        index, fresh = np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
        idx = np.flatnonzero(level > 0)
        while idx.size:                               # down, SimGrid's index walk
            lv, p = level[idx], pos[idx]
            d = down[lv - 1]
            start = fresh[idx]
            index[idx[start]] = (a % count[lv - 1][start]) * d[start]
            fresh[idx] = False
            i = index[idx]
            i += ((idx // below[lv - 1]) % d - i) % d
            index[idx] = i
            over = i >= d * count[lv - 1]
            fresh[idx[over]] = True
            go, lv, p, i, d = idx[~over], lv[~over], p[~over], i[~over], d[~over]
            place = scales[lv, lv - 1]
            port = (p // place) % up[lv - 1] + (i // d) * up[lv - 1]
            child = (p % place + (i % d) * scales[lv - 1, lv - 1]
                     + (p // above[lv]) * scales[lv - 1, lv])
            rows.append(go, base[lv - 1] + 2 * (child * ports[lv - 1] + port) + 1)
            if limits is not None:
                rows.append(go, limits[lv] + p)
            level[go], pos[go], index[go] = lv - 1, child, i + 1
            idx = np.flatnonzero(level > 0)
        if limits is not None:
            rows.append(others, limits[0] + others)
        return rows

    def _array_tables(self) -> tuple:
        """What :meth:`_routes_from` reads, as numpy arrays (made once)."""
        top = len(self.down)
        scales = np.zeros((top + 1, top + 1), dtype=np.int64)
        for level, row in enumerate(self._scales):
            scales[level, :top] = row
        above = np.array(self._above + [self.nodes * max(self.per_level)], dtype=np.int64)
        limits = (np.array([ids[0] for ids in self._limiters], dtype=np.int64)
                  if self._limiters else None)
        return (*(np.array(v, dtype=np.int64) for v in (
                    self.down, self.count, self.up, self._ports, self._cable_base, self._below)),
                above, scales, [np.array(p, dtype=np.int64) for p in self._parents], limits)

    def _far_pairs(self):
        return [(0, b) for b in range(self.nodes)]

    def levels(self) -> list[str]:
        out = [f"nodes: {self.nodes}, {self.up[0] * self.count[0]} link(s) up each"]
        for level in range(1, len(self.down) + 1):
            down = self.down[level - 1] * self.count[level - 1]
            ups = self.up[level] * self.count[level] if level < len(self.down) else 0
            ratio = f", oversubscribed {down / ups:g}:1" if ups and down > ups else ""
            out.append(f"level {level}: {self.per_level[level]} switches, {down} ports down, "
                       f"{ups} up{ratio}")
        return out


def _ratios(oversub: list[int] | None, n: int) -> list[int]:
    """Oversubscription per switch level below the top (1 where not given)."""
    ratios = list(oversub or [])
    if len(ratios) > max(n - 1, 0):
        raise ValueError(f"a {n}-level tree has {max(n - 1, 0)} level(s) with uplinks; "
                         f"got {len(ratios)} oversubscription ratio(s)")
    if any(r < 1 for r in ratios):
        raise ValueError("oversubscription ratios must be >= 1")
    return ratios + [1] * (n - 1 - len(ratios))
