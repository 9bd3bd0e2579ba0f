"""A ``--topology`` generator spec, turned into a network.

Specs are ``KIND:PARAMETERS[,key=value...]``:

``switch:nodes=64``
    one switch (:mod:`.star`);
``fat-tree:k=4,n=3,oversub=4`` / ``fat-tree:m=8,n=3`` / ``fat-tree:2;4,4;1,2;1,2``
    a k-ary n-tree, an m-port n-tree (``oversub``: the down:up ratio of the
    level-1 switches, ``4/2`` for levels 1 and 2), or SimGrid's four lists
    (:mod:`.fattree`);
``torus:8x8x8``
    a torus of those dimensions (:mod:`.torus`);
``dragonfly:groups=9,chassis=1,routers=9,nodes=4`` / ``dragonfly:3,4;4,3;5,1;2``
    a dragonfly (optional ``global``, ``black``, ``green``: cables per link)
    or SimGrid's ``topo_parameters`` (:mod:`.dragonfly`).

Every kind takes ``bw`` and ``lat`` (every cable's figures; without them
the communication model prices messages), ``limiter`` (SimGrid's
``limiter_link``: a link of that bandwidth that every node -- and in
fat-trees and dragonflies every switch -- puts in the way of what it sends
and receives, in a torus also of what it forwards), ``mem_bw``/``mem_lat``
(inside a node) and ``cores`` (per node).  :mod:`.parse` takes a
``--topology`` value, a spec or a file, to its network.

>>> net = parse_spec("fat-tree:k=4,n=2,oversub=2,bw=10Gbit/s,lat=1us")
>>> net.params, net.nodes, net.link_bandwidth[-1]
('2;4,4;1,2;1,1', 16, 1250000000.0)
>>> parse_spec("torus:4x4").describe()
'torus 4x4 (16 nodes, 80 links; routing: dimension order, shortest way round (SimGrid TorusZone))'
"""

from __future__ import annotations

from pevpm.errors import PevpmError, did_you_mean
from pevpm.machine.topology import units
from pevpm.machine.topology.dragonfly import Dragonfly
from pevpm.machine.topology.fattree import FatTree
from pevpm.machine.topology.network import Network
from pevpm.machine.topology.star import Star
from pevpm.machine.topology.torus import Torus

KINDS = ("switch", "fat-tree", "torus", "dragonfly")
#: Keys every kind takes, and how each is read.
COMMON = {"bw": units.bandwidth, "lat": units.latency, "limiter": units.bandwidth,
          "mem_bw": units.bandwidth, "mem_lat": units.latency, "cores": units.count}


def parse_spec(text: str) -> Network:
    """The network a generator spec names (see module doc)."""
    kind, _, rest = text.partition(":")
    where = f"--topology {text}"
    if kind not in KINDS:
        raise PevpmError(f"unknown topology {kind!r}{did_you_mean(kind, KINDS)}; use one of "
                         f"{', '.join(KINDS)} or a .xml (SimGrid) or .yaml file", where)
    try:
        return build(kind, rest, where)
    except ValueError as exc:
        raise PevpmError(str(exc), where) from None


def build(kind: str, rest: str, where: str) -> Network:
    """A network of ``kind`` from the text after its colon (``where`` names the
    spec in errors).

    >>> build("torus", "4x2,bw=1GB/s", "--topology torus:4x2").link_bandwidth[-1]
    1000000000.0
    """
    if ";" in rest:
        return _simgrid_form(kind, rest, where)
    items = [item.strip() for item in rest.split(",") if item.strip()]
    if kind == "torus" and items and "=" not in items[0]:
        items[0] = f"dims={items[0]}"
    values = dict(_pair(item, where) for item in items)
    links = _links(values)
    known = {"switch": ("nodes", "backplane"), "fat-tree": ("k", "m", "n", "oversub"),
             "torus": ("dims",),
             "dragonfly": ("groups", "chassis", "routers", "nodes", "global", "black", "green")}
    for key in values:
        if key not in known[kind]:
            raise PevpmError(f"unknown key {key!r}{did_you_mean(key, known[kind] + tuple(COMMON))}"
                             f"; known: {', '.join(known[kind] + tuple(COMMON))}", where)
    if kind == "switch":
        nodes = _whole(values, "nodes", where)
        backplane = values.get("backplane")
        return Star(nodes, backbone_bandwidth=units.bandwidth(backplane) if backplane else None,
                    **links)
    if kind == "fat-tree":
        n = _whole(values, "n", where)
        oversub = [_number(r, "oversub", where) for r in values["oversub"].split("/")] \
            if "oversub" in values else None
        if ("k" in values) == ("m" in values):
            raise PevpmError("a fat-tree takes k (k-ary n-tree) or m (m-port n-tree), "
                             "e.g. fat-tree:k=4,n=3", where)
        radix = _whole(values, "k" if "k" in values else "m", where)
        if "k" in values:
            return FatTree.k_ary(radix, n, oversub, **links)
        return FatTree.m_port(radix, n, oversub, **links)
    if kind == "torus":
        if "dims" not in values:
            raise PevpmError("a torus needs its dimensions, e.g. torus:8x8x8", where)
        dims = [_number(d, "torus dimension", where) for d in values["dims"].split("x")]
        return Torus(dims, **links)
    counts = [_whole(values, key, where, default) for key, default in
              (("groups", None), ("global", 1), ("chassis", None), ("black", 1),
               ("routers", None), ("green", 1), ("nodes", None))]
    return Dragonfly(*counts, **links)


def _simgrid_form(kind: str, rest: str, where: str) -> Network:
    """``fat-tree:2;4,4;1,2;1,2`` or ``dragonfly:3,4;4,3;5,1;2``: SimGrid's parameters."""
    from pevpm.machine.topology.simgrid import cluster_network

    if kind not in ("fat-tree", "dragonfly"):
        raise PevpmError(f"only fat-tree and dragonfly take SimGrid's ';' parameters, "
                         f"not {kind}", where)
    return cluster_network("FAT_TREE" if kind == "fat-tree" else "DRAGONFLY", rest, {}, where)


def _links(values: dict[str, str]) -> dict:
    """The cable and node keyword arguments of a generator from the common keys."""
    read = {key: COMMON[key](values.pop(key)) for key in list(values) if key in COMMON}
    out = {"bandwidth": read.get("bw"), "latency": read.get("lat"), "limiter": read.get("limiter"),
           "loopback_bandwidth": read.get("mem_bw"), "loopback_latency": read.get("mem_lat"),
           "cores": read.get("cores")}
    if out["bandwidth"] is None and out["latency"] is not None:
        raise ValueError("lat= needs bw= too (a network with figures gives both)")
    if out["bandwidth"] is not None and out["latency"] is None:
        out["latency"] = 0.0
    return out


def _pair(item: str, where: str) -> tuple[str, str]:
    key, eq, value = item.partition("=")
    if not eq:
        raise PevpmError(f"expected key=value, got {item!r}", where)
    return key.strip(), value.strip()


def _number(text: str, what: str, where: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise PevpmError(f"{what} must be a whole number >= 1, got {text!r}", where)
    return int(text)


def _whole(values: dict, key: str, where: str, default: int | None = None) -> int:
    if key not in values:
        if default is not None:
            return default
        raise PevpmError(f"missing {key}=", where)
    return _number(values[key], key, where)

