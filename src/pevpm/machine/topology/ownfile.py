"""pevpm's own cluster description: a small YAML file.

Either a generator with figures::

    topology: fat-tree:k=16,n=2,oversub=4   # any --topology spec
    bandwidth: 100Gbit/s                    # every cable
    latency: 1us
    limiter: 12.5GB/s                       # SimGrid's limiter_link (optional)
    nodes: {cores: 32}

or hosts, switches and links drawn by hand (routes: fewest hops)::

    nodes: {count: 64, prefix: p, cores: 1}  # hosts p0 .. p63 (or names: [...])
    switches: [s0, s1]
    links:
      - {from: "p[0-31]", to: s0, bandwidth: 91Mbit/s, latency: 80us}
      - {from: "p[32-63]", to: s1, bandwidth: 91Mbit/s, latency: 80us}
      - {from: s0, to: s1, bandwidth: 91Mbit/s, latency: 1us, count: 1}

``from``/``to`` take a name, ``PREFIX[A-B]`` (Slurm's host ranges) or a
list; each host in ``from`` gets its own cable to each name in ``to``;
``count`` cables side by side carry as many messages at full speed.  Every
error names ``FILE:LINE`` and the key.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "c.yaml")
>>> _ = open(path, "w").write("nodes: {count: 4}\\nswitches: [sw]\\n"
...                           "links:\\n  - {from: 'node-[0-3]', to: sw, bandwidth: 1GB/s}\\n")
>>> net = read_description(path)
>>> [net.link_names[i] for i in net.node_route(0, 3)]
['node-0>sw', 'sw>node-3']
"""

from __future__ import annotations

import re

import yaml

from pevpm.errors import PevpmError, did_you_mean
from pevpm.files import read_text
from pevpm.machine.topology import units
from pevpm.machine.topology.graph import Graph
from pevpm.machine.topology.network import MAX_NODES, Network
from pevpm.machine.topology.specs import KINDS, build

TOP_KEYS = ("name", "topology", "bandwidth", "latency", "limiter", "nodes", "switches",
            "links")
NODE_KEYS = ("count", "prefix", "names", "cores", "memory")
LINK_KEYS = ("from", "to", "bandwidth", "latency", "count")
_RANGE = re.compile(r"^(.*)\[(\d+)-(\d+)\](.*)$")


class _Reader:
    """Values of the composed YAML tree, every error with its file and line."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, node, message: str) -> PevpmError:
        return PevpmError(message, f"{self.path}:{node.start_mark.line + 1}")

    def mapping(self, node, keys: tuple[str, ...], what: str) -> dict:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping (key: value)")
        out = {}
        for key_node, value in node.value:
            key = key_node.value
            if key not in keys:
                raise self.fail(key_node, f"unknown key {what}.{key}{did_you_mean(key, keys)}; "
                                          f"known: {', '.join(keys)}")
            if key in out:
                raise self.fail(key_node, f"{what}.{key} is given twice")
            out[key] = value
        return out

    def text(self, node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.value == "":
            raise self.fail(node, f"{what} must be a single value")
        return node.value

    def number(self, node, what: str, read) -> float:
        try:
            return read(self.text(node, what))
        except ValueError as exc:
            raise self.fail(node, f"{what}: {exc}") from None

    def whole(self, node, what: str) -> int:
        text = self.text(node, what)
        if not text.isdigit() or int(text) < 1:
            raise self.fail(node, f"{what} must be a whole number >= 1, got {text!r}")
        return int(text)

    def names(self, node, what: str) -> list[str]:
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out = []
        for item in items:
            name = self.text(item, what)
            match = _RANGE.match(name)
            if match:
                head, low, high, tail = match.groups()
                if int(low) > int(high):
                    raise self.fail(item, f"{what}: empty range {name!r}")
                if int(high) - int(low) >= MAX_NODES:
                    raise self.fail(item, f"{what}: {name!r} names more than pevpm builds "
                                          f"({MAX_NODES:,})")
                out += [f"{head}{i}{tail}" for i in range(int(low), int(high) + 1)]
            else:
                out.append(name)
        return out


def read_description(path: str) -> Network:
    """The network a pevpm YAML description draws (see module doc)."""
    text = read_text(path, "description")
    try:
        root = yaml.compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise PevpmError(f"not valid YAML: {exc.problem}",
                         f"{path}:{mark.line + 1}" if mark else path) from None
    except yaml.YAMLError as exc:
        raise PevpmError(f"cannot read description: {exc}", path) from None
    if root is None:
        raise PevpmError("the description is empty", path)
    read = _Reader(path)
    top = read.mapping(root, TOP_KEYS, "description")
    node_keys = read.mapping(top["nodes"], NODE_KEYS, "nodes") if "nodes" in top else {}
    if "topology" in top:
        for key in ("switches", "links"):
            if key in top:
                raise read.fail(top[key], f"{key} draws a network by hand: give it or "
                                          "topology, not both")
        return _generated(read, top, node_keys)
    if "links" not in top:
        raise read.fail(root, "a description needs topology (a generator spec) or links")
    return _drawn(read, top, node_keys)


def _node_figures(read: _Reader, keys: dict) -> dict:
    out: dict = {}
    if "cores" in keys:
        out["cores"] = read.whole(keys["cores"], "nodes.cores")
    if "memory" in keys:
        memory = read.mapping(keys["memory"], ("bandwidth", "latency"), "nodes.memory")
        if "bandwidth" in memory:
            out["loopback_bandwidth"] = read.number(memory["bandwidth"],
                                                    "nodes.memory.bandwidth", units.bandwidth)
        if "latency" in memory:
            out["loopback_latency"] = read.number(memory["latency"], "nodes.memory.latency",
                                                  units.latency)
    return out


def _generated(read: _Reader, top: dict, node_keys: dict) -> Network:
    spec = read.text(top["topology"], "topology")
    kind, _, rest = spec.partition(":")
    if kind not in KINDS:
        raise read.fail(top["topology"], f"unknown topology {kind!r}"
                                         f"{did_you_mean(kind, KINDS)}; use one of "
                                         f"{', '.join(KINDS)}")
    for key in ("count", "prefix", "names"):
        if key in node_keys:
            raise read.fail(node_keys[key], f"nodes.{key}: a generated network numbers its "
                                            f"own nodes (node-0, node-1, ...)")
    extra = [f"{key}={read.text(top[name], name)}" for key, name in
             (("bw", "bandwidth"), ("lat", "latency"), ("limiter", "limiter")) if name in top]
    separator = ";" if ";" in rest else ","
    if extra and separator == ";":
        raise read.fail(top["topology"], "give a SimGrid-style ';' topology in a SimGrid "
                                         "platform file; here use the key=value form")
    try:
        net = build(kind, ",".join(filter(None, [rest, *extra])), spec)
    except (PevpmError, ValueError) as exc:
        raise read.fail(top["topology"], f"topology: {getattr(exc, 'message', exc)}") from None
    figures = _node_figures(read, node_keys)
    net.cores = figures.get("cores")
    if "loopback_bandwidth" in figures or "loopback_latency" in figures:
        raise read.fail(node_keys["memory"], "nodes.memory goes with a network drawn by "
                                             "hand; a generator takes mem_bw=/mem_lat= in its "
                                             "spec")
    return net


def _drawn(read: _Reader, top: dict, node_keys: dict) -> Network:
    if "names" in node_keys:
        if "count" in node_keys or "prefix" in node_keys:
            raise read.fail(node_keys["names"], "nodes.names lists the hosts: give it or "
                                                "count/prefix, not both")
        hosts = read.names(node_keys["names"], "nodes.names")
    elif "count" in node_keys:
        prefix = read.text(node_keys["prefix"], "nodes.prefix") if "prefix" in node_keys \
            else "node-"
        count = read.whole(node_keys["count"], "nodes.count")
        if count > MAX_NODES:
            raise read.fail(node_keys["count"], f"nodes.count: {count:,} is more than pevpm "
                                                f"builds ({MAX_NODES:,})")
        hosts = [f"{prefix}{i}" for i in range(count)]
    else:
        raise read.fail(top.get("nodes", top["links"]), "nodes needs count or names")
    switches = read.names(top["switches"], "switches") if "switches" in top else []
    seen: set[str] = set()
    for name in [*hosts, *switches]:
        if name in seen:
            raise read.fail(top.get("switches", top["nodes"]), f"{name!r} is named twice")
        seen.add(name)
    net = Graph(hosts, switches, **_node_figures(read, node_keys))
    if "limiter" in top:
        raise read.fail(top["limiter"], "limiter goes with a generator; here draw the link "
                                        "that limits a node (links: from: node...)")
    if not isinstance(top["links"], yaml.SequenceNode) or not top["links"].value:
        raise read.fail(top["links"], "links must be a list of {from, to, bandwidth, ...}")
    for i, item in enumerate(top["links"].value):
        what = f"links[{i}]"
        link = read.mapping(item, LINK_KEYS, what)
        for key in ("from", "to", "bandwidth"):
            if key not in link:
                raise read.fail(item, f"{what} needs {key}")
        bw = read.number(link["bandwidth"], f"{what}.bandwidth", units.bandwidth)
        lat = (read.number(link["latency"], f"{what}.latency", units.latency)
               if "latency" in link else 0.0)
        count = read.whole(link["count"], f"{what}.count") if "count" in link else 1
        for key in ("from", "to"):
            for name in read.names(link[key], f"{what}.{key}"):
                if name not in seen:
                    raise read.fail(link[key], f"{what}.{key}: {name!r} is neither a node nor "
                                               f"a switch{did_you_mean(name, seen)}")
        for a in read.names(link["from"], f"{what}.from"):
            for b in read.names(link["to"], f"{what}.to"):
                if a == b:
                    raise read.fail(item, f"{what} joins {a!r} to itself")
                net.connect(a, b, latency=lat, bandwidth=bw, count=count)
    gap = net.unreachable()
    if gap:
        raise read.fail(top["links"], f"no path from {gap[0]} to {gap[1]} (hosts pass "
                                      "nothing on; join them through switches)")
    return net
