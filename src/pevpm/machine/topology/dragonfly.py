"""Dragonflies, routed minimally as SimGrid's DragonflyZone.

``groups`` groups of ``chassis`` chassis of ``routers`` routers (blades),
``nodes`` nodes on each router; SimGrid's ``topo_parameters="G,g;C,c;R,r;N"``
also gives the cables bundled per global (blue, between groups), black
(between chassis of a group, router to the same-numbered router) and green
(between routers of a chassis, all to all) link: a bundle of ``n`` cables
carries ``n`` messages at full speed and ``n`` times the bandwidth.  Group
i's global link to group j leaves from router j of its chassis 0 (so
``groups <= routers``).  Node ids run node-fastest, then router, chassis,
group.

Routing (minimal, the same links SimGrid lists): node to its router; to
another group: green to router (target group) of the chassis, black to
chassis 0, the global link, arriving at router (source group) of the target
group's chassis 0; then green to the target's router number and black to
its chassis; router to node.  SimGrid keeps the position after a green hop
as chassis 0 of the target group, so within a group, from a chassis other
than 0, its black hop leaves from chassis 0: pevpm lists the same links.

>>> fly = Dragonfly(3, 1, 1, 1, 3, 1, 1)
>>> [fly.link_names[i] for i in fly.node_route(0, 8)]
['node 0>r0', 'r0>r2 green', 'r2>r6 blue', 'r6>r8 green', 'r8>node 8']
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from pevpm.machine.topology.network import Network, check_size
from pevpm.machine.topology.rows import Rows


class Dragonfly(Network):
    """A dragonfly (see module doc): groups, blue cables per global link, chassis,
    black cables, routers per chassis, green cables, nodes per router."""

    kind = "dragonfly"
    routing = "minimal: local, global, local (SimGrid DragonflyZone)"

    def __init__(self, groups: int, blue: int, chassis: int, black: int, routers: int,
                 green: int, nodes: int, *, bandwidth: float | None = None,
                 latency: float | None = None, limiter: float | None = None,
                 loopback_bandwidth: float | None = None, loopback_latency: float | None = None,
                 host_names: list[str] | None = None, cores: int | None = None):
        shape = (groups, blue, chassis, black, routers, green, nodes)
        if min(shape) < 1:
            raise ValueError(f"dragonfly counts must all be >= 1, got {shape}")
        if groups > routers:
            raise ValueError(f"{groups} groups need at least {groups} routers per chassis "
                             f"(group i's link to group j leaves from router j), got {routers}")
        routers_ = groups * chassis * routers
        check_size(routers_ * nodes, 2 * (routers_ * nodes + routers_ * (routers - 1) // 2
                                          + routers_ * (chassis - 1) // 2 + groups * groups)
                   + routers_ * (nodes + 1))
        self.shape = shape
        per_router = nodes
        super().__init__(groups * chassis * routers * nodes,
                         f"{groups},{blue};{chassis},{black};{routers},{green};{nodes}",
                         timed=bandwidth is not None, host_names=host_names, cores=cores)
        self.nrouters = groups * chassis * routers
        self._add_memory(loopback_latency, loopback_bandwidth)
        scale = (lambda n: None if bandwidth is None else bandwidth * n)
        self._local = []
        for r in range(self.nrouters):
            for n in range(per_router):
                k = r * per_router + n
                self._local.append((self._add_link(f"node {k}>r{r}", latency, bandwidth),
                                    self._add_link(f"r{r}>node {k}", latency, bandwidth)))
        self._cable: dict[tuple[int, int], int] = {}

        def join(a: int, b: int, colour: str, cables: int) -> None:
            self._cable[(a, b)] = self._add_link(f"r{a}>r{b} {colour}", latency, scale(cables),
                                                 cables)
            self._cable[(b, a)] = self._add_link(f"r{b}>r{a} {colour}", latency, scale(cables),
                                                 cables)

        for g in range(groups):
            for c in range(chassis):
                for j in range(routers):
                    for k in range(j + 1, routers):
                        join(self._router(g, c, j), self._router(g, c, k), "green", green)
        for g in range(groups):
            for j in range(chassis):
                for k in range(j + 1, chassis):
                    for blade in range(routers):
                        join(self._router(g, j, blade), self._router(g, k, blade), "black", black)
        for i in range(groups):
            for j in range(i + 1, groups):
                join(self._router(i, 0, j), self._router(j, 0, i), "blue", blue)
        self._limiter = None
        if limiter is not None:
            self._limiter = ([self._add_link(f"limiter node {k}", 0.0, limiter)
                              for k in range(self.nodes)],
                             [self._add_link(f"limiter r{r}", 0.0, limiter)
                              for r in range(self.nrouters)])

    def _router(self, group: int, chassis: int, blade: int) -> int:
        return (group * self.shape[2] + chassis) * self.shape[4] + blade

    def _coords(self, node: int) -> tuple[int, int, int]:
        """(group, chassis, blade) of the router ``node`` hangs on."""
        router = node // self.shape[6]
        blade = router % self.shape[4]
        return router // (self.shape[4] * self.shape[2]), (router // self.shape[4]) % \
            self.shape[2], blade

    def _route(self, a: int, b: int) -> list[int]:
        route: list[int] = []
        node_lim, router_lim = self._limiter or (None, None)

        def hop(here: int, there: int, limit_before: bool = True) -> None:
            if router_lim and limit_before:
                route.append(router_lim[here])
            route.append(self._cable[(here, there)])

        my, target = self._coords(a), self._coords(b)
        mine, theirs = self._router(*my), self._router(*target)
        if node_lim:
            route.append(node_lim[a])
        route.append(self._local[a][0])
        if theirs != mine:
            cur = (my[0], my[1], my[2])
            if target[0] != my[0]:
                if cur[2] != target[0]:
                    hop(self._router(*cur), self._router(my[0], my[1], target[0]))
                    cur = (my[0], my[1], target[0])
                if cur[1] != 0:
                    hop(self._router(*cur), self._router(my[0], 0, target[0]))
                    cur = (my[0], 0, target[0])
                hop(self._router(*cur), self._router(target[0], 0, my[0]), limit_before=False)
                if router_lim:
                    route.append(router_lim[self._router(*cur)])
                cur = (target[0], 0, my[0])
            if target[2] != cur[2]:
                hop(self._router(*cur), self._router(cur[0], cur[1], target[2]))
                cur = (target[0], 0, target[2])
            if target[1] != cur[1]:
                hop(self._router(*cur), self._router(cur[0], target[1], cur[2]))
        if router_lim:
            route.append(router_lim[theirs])
        route.append(self._local[b][1])
        if node_lim:
            route.append(node_lim[b])
        return route

    def _routes_from(self, a: int) -> Rows:
        """:meth:`_route` from ``a`` to every node, each hop for all of them at once
        (cables looked up in a sorted array of (router, router) keys)."""
        _, _, c, _, r, _, per = self.shape
        n, nrouters = self.nodes, self.nrouters
        keys, ids, downs = self._cable_index
        node_lim, router_lim = self._limiter or (None, None)
        # at most: node limiter, up, five router hops each after a router
        # limiter, the last router's limiter, down, node limiter
        rows = Rows(n, 4 + 2 * 5 + 1)

        def router(group, chassis, blade):
            return (group * c + chassis) * r + blade

        def hop(idx, here, there, limit_before=True):
            if router_lim is not None and limit_before:
                rows.append(idx, router_lim[0] + here)
            rows.append(idx, ids[np.searchsorted(keys, here * nrouters + there)])

        nodes = np.arange(n)
        theirs = nodes // per
        tg, tc, tb = theirs // (r * c), (theirs // r) % c, theirs % r
        mine = a // per
        mg, mc, mb = mine // (r * c), (mine // r) % c, mine % r
        if node_lim is not None:
            rows.append(nodes, node_lim[a])
        rows.append(nodes, self._local[a][0])
        far = np.flatnonzero(theirs != mine)
        cg, cc, cb = np.full(n, mg), np.full(n, mc), np.full(n, mb)
        out = far[tg[far] != mg]              # to another group
        step = out[cb[out] != tg[out]]
        hop(step, router(mg, mc, cb[step]), router(mg, mc, tg[step]))
        cb[step] = tg[step]
        step = out[cc[out] != 0]
        hop(step, router(mg, cc[step], cb[step]), router(mg, 0, cb[step]))
        cc[step] = 0
        here = router(mg, 0, cb[out])
        hop(out, here, router(tg[out], 0, mg), limit_before=False)
        if router_lim is not None:
            rows.append(out, router_lim[0] + here)
        cg[out], cc[out], cb[out] = tg[out], 0, mg
        step = far[tb[far] != cb[far]]
        hop(step, router(cg[step], cc[step], cb[step]), router(cg[step], cc[step], tb[step]))
        cg[step], cc[step], cb[step] = tg[step], 0, tb[step]
        step = far[tc[far] != cc[far]]
        hop(step, router(cg[step], cc[step], cb[step]), router(cg[step], tc[step], cb[step]))
        if router_lim is not None:
            rows.append(nodes, router_lim[0] + theirs)
        rows.append(nodes, downs)
        if node_lim is not None:
            rows.append(nodes, node_lim[0] + nodes)
        return rows

    @cached_property
    def _cable_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For :meth:`_routes_from`: the cables' keys ``here * routers + there``
        sorted, their link ids in that order, and each node's router-to-node link."""
        pairs = np.array(list(self._cable), dtype=np.int64).reshape(-1, 2)
        keys = pairs[:, 0] * self.nrouters + pairs[:, 1]
        order = np.argsort(keys)
        ids = np.array(list(self._cable.values()), dtype=np.int64).reshape(-1)[order]
        return keys[order], ids, np.array([down for _, down in self._local], dtype=np.int64)

    def router_pairs(self) -> list[tuple[int, int]]:
        """(router, router) of every one-way link between routers."""
        return list(self._cable)

    def _far_pairs(self):
        firsts = range(0, self.nodes, self.shape[6])
        return [(a, b) for a in firsts for b in firsts]

    def levels(self) -> list[str]:
        g, blue, c, black, r, green, n = self.shape
        return [f"{g} groups x {c} chassis x {r} routers x {n} nodes",
                f"global (blue) links: {g * (g - 1) // 2} of {blue} cable(s)",
                f"black links: {g * r * c * (c - 1) // 2} of {black} cable(s)",
                f"green links: {g * c * r * (r - 1) // 2} of {green} cable(s)"]
