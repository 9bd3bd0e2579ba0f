"""SimGrid platform files (the subset pevpm reads), so one file runs in both tools.

Read: ``<platform>`` with nested ``<zone>`` (or ``<AS>``) holding either one
``<cluster>`` (``topology`` ``FLAT``, ``FAT_TREE``, ``TORUS`` or
``DRAGONFLY`` with ``topo_parameters``; ``prefix``, ``suffix``, ``radical``,
``speed``, ``core``, ``bw``, ``lat``, ``bb_bw``, ``bb_lat``, ``limiter_link``,
``loopback_bw``, ``loopback_lat``, ``sharing_policy`` SPLITDUPLEX) or
``<host>``, ``<link>`` and ``<route>`` (with ``<link_ctn>``, ``direction``
for split-duplex links, ``symmetrical``) between hosts; ``<prop>`` and
``<config>`` are skipped.  Anything else is an error naming ``FILE:LINE``.
Routes are SimGrid's own (see each topology's module).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "p.xml")
>>> _ = open(path, "w").write('''<?xml version="1.0"?>
... <platform version="4.1"><zone id="w" routing="Full">
...   <cluster id="c" prefix="node-" suffix="" radical="0-11" speed="1Gf"
...            bw="125MBps" lat="50us" topology="TORUS" topo_parameters="3,2,2"/>
... </zone></platform>''')
>>> net = read_platform(path)
>>> net.kind, net.params, net.host_names[11], net.link_latency[-1]
('torus', '3x2x2', 'node-11', 5e-05)
"""

from __future__ import annotations

from pathlib import Path
from xml.parsers import expat

from pevpm.errors import PevpmError
from pevpm.files import check_regular
from pevpm.machine.topology import units
from pevpm.machine.topology.dragonfly import Dragonfly
from pevpm.machine.topology.fattree import FatTree
from pevpm.machine.topology.graph import Graph
from pevpm.machine.topology.network import MAX_NODES, Network
from pevpm.machine.topology.star import Star
from pevpm.machine.topology.torus import Torus

#: Elements skipped wherever they are (they change nothing pevpm models).
SKIPPED = ("prop", "config")
TOPOLOGIES = ("FLAT", "FAT_TREE", "TORUS", "DRAGONFLY")


class _Element:
    __slots__ = ("attrs", "children", "line", "tag")

    def __init__(self, tag: str, attrs: dict, line: int):
        self.tag, self.attrs, self.line, self.children = tag, attrs, line, []


def _parse(path: str) -> _Element:
    """The element tree of ``path``, every element with its line."""
    check_regular(path, "platform file")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise PevpmError(f"cannot read platform file: {exc.strerror}", path) from None
    parser = expat.ParserCreate()
    stack: list[_Element] = [_Element("", {}, 0)]

    def start(tag, attrs):
        element = _Element(tag, attrs, parser.CurrentLineNumber)
        stack[-1].children.append(element)
        stack.append(element)

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise PevpmError(f"not well-formed XML: {expat.ErrorString(exc.code)}",
                         f"{path}:{exc.lineno}") from None
    root = stack[0].children[0]
    if root.tag != "platform":
        raise PevpmError(f"a SimGrid platform starts with <platform>, not <{root.tag}>",
                         f"{path}:{root.line}")
    return root


def read_platform(path: str) -> Network:
    """The network a SimGrid platform file describes (see module doc)."""
    root = _parse(path)
    clusters, hosts, links, routes = [], [], [], []
    zone_of_hosts: set[int] = set()

    def walk(element: _Element, zone: _Element) -> None:
        for child in element.children:
            where = f"{path}:{child.line}"
            if child.tag in SKIPPED:
                continue
            if child.tag in ("zone", "AS"):
                walk(child, child)
            elif child.tag == "cluster":
                clusters.append(child)
            elif child.tag in ("host", "link", "route"):
                {"host": hosts, "link": links, "route": routes}[child.tag].append(child)
                if child.tag == "host":
                    zone_of_hosts.add(id(zone))
            else:
                raise PevpmError(f"<{child.tag}> is not in the SimGrid subset pevpm reads "
                                 "(zone, cluster, host, link, route, prop, config)", where)

    walk(root, root)
    if clusters:
        if len(clusters) > 1 or hosts:
            other = clusters[1] if len(clusters) > 1 else hosts[0]
            raise PevpmError("pevpm reads one <cluster> or one zone of hosts per platform",
                             f"{path}:{other.line}")
        return _cluster(clusters[0], path)
    if not hosts:
        raise PevpmError("the platform has no <cluster> and no <host>", f"{path}:{root.line}")
    if len(zone_of_hosts) > 1:
        raise PevpmError("hosts in several zones: pevpm reads one zone of hosts",
                         f"{path}:{hosts[-1].line}")
    return _explicit(hosts, links, routes, path)


def _attr(element: _Element, name: str, path: str, read=None, default=None):
    """Attribute ``name`` read by ``read`` (errors name the file and line)."""
    raw = element.attrs.get(name)
    if raw is None or raw == "":
        if default is None and read is not None and name in ("bw", "lat", "radical"):
            raise PevpmError(f"<{element.tag}> needs {name}=", f"{path}:{element.line}")
        return default
    if read is None:
        return raw
    try:
        return read(raw)
    except ValueError as exc:
        raise PevpmError(f"{name}: {exc}", f"{path}:{element.line}") from None


def _radicals(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise ValueError(f"expected numbers and ranges like 0-15,20, got {text!r}")
        if dash and int(high) - int(low) + len(out) >= MAX_NODES:
            raise ValueError(f"{text!r} gives more hosts than pevpm builds ({MAX_NODES:,})")
        out += list(range(int(low), int(high) + 1)) if dash else [int(low)]
    return out


def _cluster(element: _Element, path: str) -> Network:
    where = f"{path}:{element.line}"
    policy = element.attrs.get("sharing_policy", "SPLITDUPLEX")
    if policy not in ("SPLITDUPLEX", "FULLDUPLEX"):
        raise PevpmError(f"sharing_policy {policy} is not supported: pevpm's cluster cables "
                         "are full duplex (SPLITDUPLEX)", where)
    topology = element.attrs.get("topology", "FLAT")
    if topology not in TOPOLOGIES:
        raise PevpmError(f"topology {topology!r} is not one of {', '.join(TOPOLOGIES)}", where)
    radicals = _attr(element, "radical", path, _radicals)
    prefix, suffix = element.attrs.get("prefix", ""), element.attrs.get("suffix", "")
    _attr(element, "speed", path, units.speed)
    figures = {"bandwidth": _attr(element, "bw", path, units.bandwidth),
               "latency": _attr(element, "lat", path, units.latency),
               "limiter": _attr(element, "limiter_link", path, units.bandwidth),
               "loopback_bandwidth": _attr(element, "loopback_bw", path, units.bandwidth),
               "loopback_latency": _attr(element, "loopback_lat", path, units.latency),
               "cores": _attr(element, "core", path, units.count),
               "host_names": [f"{prefix}{r}{suffix}" for r in radicals]}
    if topology == "FLAT":
        bb_bw = _attr(element, "bb_bw", path, units.bandwidth)
        bb_lat = _attr(element, "bb_lat", path, units.latency)
        return Star(len(radicals), backbone=bb_bw is not None or bool(bb_lat),
                    backbone_bandwidth=bb_bw, backbone_latency=bb_lat, **figures)
    params = element.attrs.get("topo_parameters", "")
    return cluster_network(topology, params, figures, where, len(radicals))


def _lists(text: str, parts: int, what: str) -> list[list[int]]:
    """``a,b;c;d,e`` as lists of whole numbers, ``parts`` of them."""
    groups = text.split(";")
    if len(groups) != parts:
        raise ValueError(f"{what} topo_parameters has {parts} ';'-separated parts, "
                         f"got {len(groups)} in {text!r}")
    return [[units.count(v) for v in group.split(",")] for group in groups]


def cluster_network(topology: str, params: str, figures: dict, where: str,
                    hosts: int | None = None) -> Network:
    """A FAT_TREE, TORUS or DRAGONFLY cluster from SimGrid's ``topo_parameters``;
    ``hosts``: the cluster's host count, which must match.

    >>> cluster_network("DRAGONFLY", "2,1;1,1;2,1;3", {}, "here").nodes
    12
    """
    try:
        if topology == "FAT_TREE":
            (levels,), down, up, count = _lists(params, 4, "a FAT_TREE")
            for name, values in (("down", down), ("up", up), ("count", count)):
                if len(values) != levels:
                    raise ValueError(f"{levels} levels but {len(values)} {name} values")
            net: Network = FatTree(down, up, count, **figures)
        elif topology == "TORUS":
            (dims,) = _lists(params, 1, "a TORUS")
            net = Torus(dims, **figures)
        else:
            blue, black, green, (nodes,) = _lists(params, 4, "a DRAGONFLY")
            if not len(blue) == len(black) == len(green) == 2:
                raise ValueError("DRAGONFLY topo_parameters are 'groups,cables;chassis,cables;"
                                 "routers,cables;nodes'")
            net = Dragonfly(*blue, *black, *green, nodes, **figures)
    except ValueError as exc:
        raise PevpmError(str(exc), where) from None
    if hosts is not None and hosts != net.nodes:
        raise PevpmError(f"the {topology} {params} has {net.nodes} nodes but radical gives "
                         f"{hosts} hosts", where)
    return net


def _explicit(hosts: list[_Element], links: list[_Element], routes: list[_Element],
              path: str) -> Network:
    """Hosts joined by listed routes over ``<link>``s."""
    names = [_attr(h, "id", path) or _missing(h, "id", path) for h in hosts]
    for h in hosts:
        _attr(h, "speed", path, units.speed)
    cores = {_attr(h, "core", path, units.count, 1) for h in hosts}
    if len(cores) > 1:
        raise PevpmError(f"hosts have different core counts {sorted(cores)}: pevpm's nodes "
                         "are all alike", f"{path}:{hosts[-1].line}")
    net = Graph(names, [], cores=cores.pop())
    ids: dict[str, tuple[int, int]] = {}
    for link in links:
        name = _attr(link, "id", path) or _missing(link, "id", path)
        policy = link.attrs.get("sharing_policy", "SHARED")
        bw = _attr(link, "bandwidth", path, units.bandwidth) or _missing(link, "bandwidth", path)
        lat = _attr(link, "latency", path, units.latency, 0.0)
        if policy == "SPLITDUPLEX":
            ids[name] = (net.add_link(f"{name}_UP", lat, bw), net.add_link(f"{name}_DOWN", lat, bw))
        elif policy == "SHARED":
            one = net.add_link(name, lat, bw)
            ids[name] = (one, one)
        else:
            raise PevpmError(f"sharing_policy {policy} is not supported (SHARED, SPLITDUPLEX)",
                             f"{path}:{link.line}")
    index = {name: i for i, name in enumerate(names)}
    for route in routes:
        where = f"{path}:{route.line}"
        ends = [route.attrs.get(k, "") for k in ("src", "dst")]
        for end in ends:
            if end not in index:
                raise PevpmError(f"route end {end!r} is not a host of this zone", where)
        there, back = [], []
        for ctn in route.children:
            if ctn.tag in SKIPPED:
                continue
            link_id = ctn.attrs.get("id", "")
            if ctn.tag != "link_ctn" or link_id not in ids:
                raise PevpmError(f"expected <link_ctn id=...> of a declared link, got <{ctn.tag}"
                                 f"{' id=' + repr(link_id) if link_id else ''}>",
                                 f"{path}:{ctn.line}")
            up = ctn.attrs.get("direction", "UP") != "DOWN"
            there.append(ids[link_id][0 if up else 1])
            back.append(ids[link_id][1 if up else 0])
        a, b = index[ends[0]], index[ends[1]]
        net.add_route(a, b, tuple(there))
        if route.attrs.get("symmetrical", "YES").upper() != "NO" and a != b:
            net.add_route(b, a, tuple(reversed(back)))
    gap = net.unreachable()
    if gap:
        raise PevpmError(f"no <route> from {gap[0]} to {gap[1]}",
                         f"{path}:{(routes or hosts)[-1].line}")
    return net


def _missing(element: _Element, name: str, path: str):
    raise PevpmError(f"<{element.tag}> needs {name}=", f"{path}:{element.line}")
