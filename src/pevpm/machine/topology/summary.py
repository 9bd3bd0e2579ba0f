"""What ``pevpm machine show`` prints about a network, and how to draw it.

:func:`summary` gives the text (kind, routing, structure and
oversubscription, links by bandwidth, diameter, the placement);
:func:`layout` gives positions for a picture: every node and switch with
its place, the cables between them, and the node each host vertex is.

>>> from pevpm.machine.topology.fattree import FatTree
>>> print("\\n".join(summary(FatTree.k_ary(4, 2, [2], bandwidth=1.25e9, latency=1e-6))))
fat-tree 2;4,4;1,2;1,1: 16 nodes
routing: D-mod-k up/down (SimGrid FatTreeZone)
nodes: 16, 1 link(s) up each
level 1: 4 switches, 4 ports down, 2 up, oversubscribed 2:1
level 2: 2 switches, 4 ports down, 0 up
links: 48 one-way links (48 at 10 Gbit/s, 1 us); 16 inside nodes
diameter: 4 links
"""

from __future__ import annotations

from collections import Counter

from pevpm.machine.topology.network import Network
from pevpm.machine.topology.placement import Placement


def summary(net: Network, placed: Placement | None = None) -> list[str]:
    """Lines describing ``net`` (and where ``placed`` put the ranks)."""
    lines = [f"{net.kind}{' ' + net.params if net.params else ''}: {net.nodes} nodes"
             + (f" of {net.cores} core{'s' if net.cores != 1 else ''}" if net.cores else ""),
             f"routing: {net.routing}", *net.levels()]
    lines.append(_links(net))
    lines.append(f"diameter: {net.diameter()} links")
    if placed is not None:
        lines.append(placed.describe().rpartition("; ")[2])
    return lines


def _links(net: Network) -> str:
    """Cables grouped by figures (``mem`` and ``limiter`` links counted apart)."""
    inside = sum(name.startswith("mem ") for name in net.link_names)
    limiters = sum(name.startswith("limiter") for name in net.link_names)
    wires = len(net.link_names) - inside - limiters
    if net.link_bandwidth is None:
        kinds = "no figures: the communication model prices messages"
    else:
        groups = Counter((net.link_bandwidth[i], net.link_latency[i])
                         for i, name in enumerate(net.link_names)
                         if not name.startswith(("mem ", "limiter")))
        kinds = "; ".join(f"{count} at {_rate(bw)}, {_time(lat)}"
                          for (bw, lat), count in sorted(groups.items()))
    text = f"links: {wires} one-way links ({kinds}); {inside} inside nodes"
    return text + (f"; {limiters} limiters" if limiters else "")


def _rate(bw: float) -> str:
    if bw == float("inf"):
        return "unlimited"
    bits = bw * 8
    for unit, scale in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bits >= scale:
            return f"{bits / scale:g} {unit}"
    return f"{bits:g} bit/s"


def _time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:g} {unit}"
    return "0 s"


def layout(net: Network) -> tuple[dict, list[tuple], dict]:
    """``(positions, cables, hosts)``: vertex -> (x, y); pairs of vertices;
    vertex -> node index for the vertices that are nodes.  Vertices are
    ``("node", k)`` or ``(kind, ...)`` tuples for switches and routers."""
    kind = net.kind
    if kind == "fat-tree":
        return _tree(net)
    if kind == "torus":
        return _grid(net)
    if kind == "dragonfly":
        return _fly(net)
    return _star(net)


def _row(count: int, y: float, width: float) -> list[tuple[float, float]]:
    return [((i + 0.5) * width / count, y) for i in range(count)]


def _tree(net) -> tuple[dict, list[tuple], dict]:
    width = float(net.nodes)
    pos, cables = {}, set()
    for level, count in enumerate(net.per_level):
        for k, xy in enumerate(_row(count, float(level), width)):
            pos[("node", k) if level == 0 else ("switch", level, k)] = xy
    for level in range(len(net.down)):
        for child in range(net.per_level[level]):
            for port in range(net.up[level] * net.count[level]):
                parent, _ = net.parent(level, child, port)
                a = ("node", child) if level == 0 else ("switch", level, child)
                cables.add((a, ("switch", level + 1, parent)))
    return pos, sorted(cables), {("node", k): k for k in range(net.nodes)}


def _grid(net) -> tuple[dict, list[tuple], dict]:
    dims = net.dims + [1] * (3 - len(net.dims))
    pos, cables = {}, []
    for k in range(net.nodes):
        x, y, z = net.coords(k) + [0] * (3 - len(net.dims))
        pos[("node", k)] = (x + z * (dims[0] + 1), float(y))
        scale = 1
        for j, d in enumerate(net.dims):
            coord = (k // scale) % d
            if coord + 1 < d:
                cables.append((("node", k), ("node", k + scale)))
            scale *= d
    return pos, cables, {("node", k): k for k in range(net.nodes)}


def _fly(net) -> tuple[dict, list[tuple], dict]:
    import math

    groups, _, chassis, _, routers, _, per = net.shape
    radius = max(4.0, 1.3 * groups * (routers + 1) / math.pi)
    pos, cables = {}, set()
    for r in range(net.nrouters):
        g = r // (chassis * routers)
        angle = 2 * math.pi * g / groups
        c, b = (r // routers) % chassis, r % routers
        cx, cy = radius * math.cos(angle), radius * math.sin(angle)
        pos[("router", r)] = (cx + 1.2 * (b - routers / 2), cy + 1.5 * (c - chassis / 2))
    for a, b in net.router_pairs():
        cables.add((("router", min(a, b)), ("router", max(a, b))))
    hosts = {}
    for k in range(net.nodes):
        r = k // per
        x, y = pos[("router", r)]
        pos[("node", k)] = (x + 0.9 * ((k % per) + 0.5 - per / 2) / per, y - 0.6)
        cables.add((("node", k), ("router", r)))
        hosts[("node", k)] = k
    return pos, sorted(cables), hosts


def _star(net) -> tuple[dict, list[tuple], dict]:
    """One switch, or a hand-drawn graph: hosts below, switches above."""
    width = float(net.nodes)
    pos = {("node", k): xy for k, xy in enumerate(_row(net.nodes, 0.0, width))}
    switches = getattr(net, "switches", None)
    if switches is None:
        pos[("switch", 0)] = (width / 2, 1.0)
        cables = [(("node", k), ("switch", 0)) for k in range(net.nodes)]
        return pos, cables, {("node", k): k for k in range(net.nodes)}
    for i, xy in enumerate(_row(len(switches), 1.0, width)):
        pos[("switch", i)] = xy
    cables = set()
    for v, w in net.cable_ends():
            ends = [("node", u) if u < net.nodes else ("switch", u - net.nodes) for u in (v, w)]
            cables.add(tuple(sorted(ends)))
    return pos, sorted(cables), {("node", k): k for k in range(net.nodes)}
