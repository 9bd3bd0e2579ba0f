"""Machines named on the command line: ``--machine SPEC``.

A spec is ``KIND[:key=value,...]``:

``constant:latency=50us``
    every message takes ``latency`` (``local``: Isend return time);
``hockney:latency=160us,bandwidth=91Mbit/s``
    ``T = latency + size / bandwidth`` (``intra_latency``, ``intra_bandwidth``
    inside a node, ``share=1`` to split bandwidth among contending messages,
    ``local``);
``loggp:L=5us,o=1us,g=2us,G=1ns``
    the LogGP model;
``perseus``
    the thesis's Perseus cluster: switched Fast Ethernet, 160 us latency,
    91 Mbit/s, processor id ``perseus`` (so ``Serial on perseus`` applies);
    any Hockney key overrides a number;
``PATH[:model=NAME,source=fitted,eager=BYTES,contention=off]``
    a machine profile measured by ``pevpm bench`` (an existing file) or a
    built-in profile's name (``default``, the profile shipped with pevpm; see
    ``pevpm machine list``): ``model`` is ``full`` (default), ``min2x1``,
    ``mean2x1``, ``min-nxp``, ``mean-nxp`` or ``latency-bandwidth``
    (:data:`pevpm.machine.profile_model.COMM_MODELS` says what each is).

Every kind also takes machine keys: ``ppn`` (processes per node, the thesis's
n x p), ``placement`` (``block``/``cyclic``), ``nodes``, ``backplane``
(messages the switch carries at full speed), ``eager`` (largest blocking send,
in bytes, that returns without waiting for its receive), ``contention``
(``on``, or ``off`` for the restricted PEVPM that costs every message at
contention 1), ``cores`` (cores per node: more ranks than cores on a node
share them, see :mod:`pevpm.vm.kernel.sharing`; without ``ppn`` or ``nodes``, every
rank on one such node), ``wait`` (``poll``: a rank blocked
in MPI keeps its core busy, MPICH's default; ``sleep``: it does not),
``processor`` (the processor id ``Serial on`` selects),
``speed`` (MHz) -- these two replace the processor settings of the model's
``Default`` directive -- and ``sharing`` (how messages share the links of a
``--topology`` network with link figures: ``reserve``, ``max-min`` or
``simgrid``, :class:`~pevpm.machine.machine.Machine`'s ``flow_sharing``).  Numbers take units:
``s ms us ns`` for times, ``B/s KB/s MB/s GB/s bit/s Kbit/s Mbit/s Gbit/s``
for bandwidths, ``B KB KiB MB MiB`` for sizes.  Every number must be finite and
not negative; bandwidths at least 1 B/s, speeds above zero, and ``ppn``,
``nodes``, ``backplane`` and ``eager`` whole numbers (the first three at least 1).

>>> m = parse_machine("hockney:latency=50us,bandwidth=100MB/s,ppn=2")
>>> m.comm.latency, m.comm.bandwidth, m.topology.procs_per_node
(5e-05, 100000000.0, 2)
>>> parse_machine("perseus", ppn=2).topology.procs_per_node
2
>>> parse_machine("perseus:contention=off").node_contention
False
>>> parse_machine("constant:latency=1us,cores=2", nodes=1).topology.place(8).oversubscribed
True

``cores`` without ``ppn`` or ``nodes`` describes one node of that many
cores, and every rank runs on it (as on the host a profile was measured on):

>>> parse_machine("constant:latency=0,cores=2").topology.place(4).oversubscribed
True
>>> parse_machine("default:model=latency-bandwidth", ppn=2).comm.bandwidth > 1e8
True
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from pevpm.errors import PevpmError, did_you_mean
from pevpm.machine.comm_models import Constant, Hockney, LogGP
from pevpm.machine.machine import FLOW_SHARINGS, Machine
from pevpm.machine.processor import ProcessorModel
from pevpm.machine.topology import WAIT_STYLES, Topology
from pevpm.profile.builtin import is_builtin, resolve_profile

#: Perseus (thesis ch. 4): Fast Ethernet through Intel 510T switches.
PERSEUS_LATENCY = 160e-6
PERSEUS_BANDWIDTH = 91e6 / 8  # bytes/s
PERSEUS_BACKPLANE = 23  # 2.1 Gbit/s backplane / 91 Mbit/s per message

UNITS = {
    "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9,
    "b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9,
    "bit/s": 1 / 8, "kbit/s": 1e3 / 8, "mbit/s": 1e6 / 8, "gbit/s": 1e9 / 8,
    "b": 1, "kb": 1e3, "kib": 1024, "mb": 1e6, "mib": 1024**2,
}

#: kind -> (what it is, what it is good for): ``pevpm machine list``.
DESCRIPTIONS = {
    "constant": ("every message takes the same time, latency=...",
                 "checking a model's structure: counts of messages and waits, no noise"),
    "hockney": ("latency + size / bandwidth, optionally split by node and shared bandwidth",
                "what-if studies of a network described by two numbers"),
    "loggp": ("the LogGP model: L, o, g, G",
              "comparing with LogGP-based analyses and simulators"),
    "perseus": ("the thesis's Perseus cluster: switched Fast Ethernet, 160 us, 91 Mbit/s",
                "reproducing the thesis's predictions (Serial on perseus applies)"),
}

MACHINE_KEYS = ("ppn", "placement", "nodes", "backplane", "eager", "contention", "cores",
                "wait", "processor", "speed", "sharing")

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-zµ/]*)\s*$")


def _comm_constant(values: dict) -> Constant:
    return Constant(**values)


def _comm_hockney(values: dict) -> Hockney:
    if "share" in values:
        values["share_bandwidth"] = bool(values.pop("share"))
    return Hockney(**values)


def _comm_loggp(values: dict) -> LogGP:
    return LogGP(**values)


def _comm_perseus(values: dict) -> Hockney:
    return _comm_hockney({"latency": PERSEUS_LATENCY, "bandwidth": PERSEUS_BANDWIDTH,
                          **values})


#: kind -> (comm keys, required comm keys, builder, machine-key defaults)
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], Callable, dict]] = {
    "constant": (("latency", "local"), ("latency",), _comm_constant, {}),
    "hockney": (("latency", "bandwidth", "intra_latency", "intra_bandwidth", "share", "local"),
                ("latency", "bandwidth"), _comm_hockney, {}),
    "loggp": (("L", "o", "g", "G"), ("L", "o", "g", "G"), _comm_loggp, {}),
    "perseus": (("latency", "bandwidth", "intra_latency", "intra_bandwidth", "share", "local"),
                (), _comm_perseus, {"processor": "perseus", "backplane": PERSEUS_BACKPLANE}),
}


def parse_machine(spec: str, ppn: int | None = None, processor: str | None = None,
                  nodes: int | None = None, topology: str | None = None,
                  placement: str | None = None, seed: int = 0) -> Machine:
    """The :class:`~pevpm.machine.machine.Machine` a spec names (see module doc).

    ``ppn`` (``--ppn``), ``nodes`` (``--nodes``) and ``processor``
    (``--processor``) override the spec's processes per node, node count and
    processor id; ``nodes`` without ``ppn`` spreads the ranks evenly over the
    nodes.  ``topology`` (``--topology``: a generator spec or a file, see
    :mod:`pevpm.machine.topology.parse`) replaces the single switch, and
    ``placement`` (``--placement``: block, cyclic, random, or a host file)
    the spec's placement; ``seed`` seeds a random placement.

    >>> m = parse_machine("perseus", topology="torus:4x4", placement="cyclic", nodes=8)
    >>> m.topology.place(4).describe().rpartition("; ")[2]
    'cyclic placement: 4 ranks on 4 nodes, 1 per node'
    """
    machine = _parse_machine(spec, ppn, processor, nodes)
    if topology is None and placement is None:
        return machine
    if topology is not None and re.search(r"[:,]\s*backplane\s*=", spec):
        raise PevpmError("backplane= sizes the single switch, which --topology replaces "
                         "(give switch:nodes=N,backplane=BW as the topology instead)",
                         f"--machine {spec}")
    return replace(machine, topology=lay_out(machine.topology, topology, placement, seed,
                                               ppn is None and nodes is None))


def lay_out(base: Topology, topology: str | None, placement: str | None, seed: int,
              unplaced: bool) -> Topology:
    """``base`` on the network ``topology`` names, its ranks placed by ``placement``."""
    from pevpm.machine.topology.parse import parse_topology
    from pevpm.machine.topology.placement import PLACEMENTS, read_hostfile

    changes: dict = {"seed": seed}
    if topology is not None:
        changes["network"] = parse_topology(topology)
        if unplaced and base.procs_per_node is None:
            changes.update(procs_per_node=1, nodes=None)    # a cluster: one rank per node
    if placement is not None:
        if placement in PLACEMENTS:
            changes["placement"] = placement
        elif os.path.isfile(placement):
            changes["hosts"] = read_hostfile(placement)
        else:
            raise PevpmError(f"expected {', '.join(PLACEMENTS)} or a host file, got "
                             f"{placement!r}{did_you_mean(placement, PLACEMENTS)}",
                             "--placement")
    try:
        return replace(base, **changes)
    except ValueError as exc:
        raise PevpmError(str(exc), f"--topology {topology}") from None


def _parse_machine(spec: str, ppn: int | None, processor: str | None,
                   nodes: int | None) -> Machine:
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    profile = profile_of(spec)
    if profile is not None:
        return _profile_machine(str(profile), rest, ppn, processor, nodes, f"--machine {spec}")
    where = f"--machine {spec}"
    if kind not in KINDS:
        hint = did_you_mean(kind, KINDS)
        raise PevpmError(f"unknown machine {kind!r}{hint}; use one of "
                         f"{', '.join(KINDS)} or the path of a machine profile", where)
    comm_keys, required, build, machine_defaults = KINDS[kind]
    values = _parse_pairs(rest, comm_keys + MACHINE_KEYS, where)
    given = {k: values.pop(k) for k in MACHINE_KEYS if k in values}
    machine_values = {**machine_defaults, **given}
    if "cores" in given and not {"ppn", "nodes"} & set(given) and ppn is None and nodes is None:
        machine_values.update(nodes=1, ppn=None)    # cores of one node: the ranks share it
    if "nodes" in given and "ppn" not in given:
        machine_values["ppn"] = None                # like --nodes: spread the ranks evenly
    if nodes is not None:
        machine_values["nodes"] = nodes
        machine_values.setdefault("ppn", None)
    if ppn is not None:
        machine_values["ppn"] = ppn
    if processor is not None:
        machine_values["processor"] = processor
    missing = [k for k in required if k not in values]
    if missing:
        raise PevpmError(f"{kind} needs {', '.join(missing)} "
                         f"(e.g. {_example(kind)})", where)
    try:
        comm = build(values)
        return _assemble(comm, machine_values)
    except (TypeError, ValueError) as exc:
        raise PevpmError(str(exc), where) from exc


def profile_of(spec: str) -> Path | None:
    """The profile file a machine spec names (a built-in name or an existing file),
    or None for the other kinds.

    >>> profile_of("default:model=mean2x1").name, profile_of("perseus")
    ('default-profile.db', None)
    """
    kind = spec.strip().partition(":")[0]
    if is_builtin(kind):
        return resolve_profile(kind)
    return Path(kind) if kind not in KINDS and os.path.exists(kind) else None


PROFILE_KEYS = ("model", "source", "eager", "ppn", "nodes", "contention", "binding", "sharing")


def _profile_machine(path: str, rest: str, ppn: int | None, processor: str | None,
                     nodes: int | None, where: str) -> Machine:
    """``PATH[:model=mean2x1,source=fitted,eager=0,ppn=2,nodes=1,contention=off]``: a
    measured machine; ``where`` (the spec as typed) names it in errors."""
    from pevpm.machine.profile_model import machine_from_profile

    values = _parse_pairs(rest, PROFILE_KEYS, where) if rest else {}
    try:
        sharing = _sharing(values)      # checked before the profile is read
    except ValueError as exc:
        raise PevpmError(str(exc), where) from None
    machine = machine_from_profile(path, ppn=ppn or (int(values["ppn"]) if "ppn" in values else None),
                                nodes=nodes or (int(values["nodes"]) if "nodes" in values
                                                else None),
                                processor=processor, model=str(values.get("model", "full")),
                                source=str(values.get("source", "empirical")),
                                eager_limit=int(values["eager"]) if "eager" in values else None,
                                node_contention=values.get("contention", True),
                                binding=str(values.get("binding", "c")))
    return replace(machine, flow_sharing=sharing)


def _sharing(values: dict) -> str:
    """The ``sharing`` key's value (default ``reserve``), checked."""
    sharing = str(values.get("sharing", "reserve"))
    if sharing not in FLOW_SHARINGS:
        raise ValueError(f"sharing must be one of {', '.join(FLOW_SHARINGS)}, got {sharing!r}"
                         f"{did_you_mean(sharing, FLOW_SHARINGS)}")
    return sharing


def _assemble(comm, values: dict) -> Machine:
    ppn = values.get("ppn", 1)
    wait = str(values.get("wait", "poll"))
    if wait not in WAIT_STYLES:
        raise ValueError(f"wait must be one of {', '.join(WAIT_STYLES)}, got {wait!r}")
    topology = Topology(procs_per_node=None if ppn is None else int(ppn),
                        placement=str(values.get("placement", "block")),
                        nodes=int(values["nodes"]) if "nodes" in values else None,
                        backplane_capacity=int(values.get("backplane", 1)),
                        cores=int(values["cores"]) if "cores" in values else None, wait=wait)
    processors = None
    if "processor" in values or "speed" in values:
        processors = ProcessorModel(name=str(values.get("processor", "default")),
                                    speed=values.get("speed"))
    return Machine(comm, topology, processors, eager_limit=int(values.get("eager", 0)),
                   node_contention=values.get("contention", True),
                   flow_sharing=_sharing(values))


#: Keys whose values are on/off, and those words.
SWITCH_KEYS = ("contention",)
SWITCHES = {"on": True, "off": False}
#: Keys whose values are words, not numbers.
TEXT_KEYS = ("placement", "processor", "model", "source", "wait", "binding", "sharing")
#: Keys whose values must be above zero (a zero bandwidth never delivers).
POSITIVE_KEYS = ("bandwidth", "intra_bandwidth", "speed")
#: Least bandwidth, bytes/s: below it a large message's time overflows.
MIN_BANDWIDTH = 1.0
#: Keys whose values must be whole numbers, and their least values.
WHOLE_KEYS = {"ppn": 1, "nodes": 1, "backplane": 1, "eager": 0, "cores": 1}
#: Largest whole-number value (sizes in bytes, counts).
MAX_WHOLE = 2**62


def _parse_pairs(text: str, allowed: tuple[str, ...], where: str) -> dict:
    values: dict = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq:
            raise PevpmError(f"expected key=value, got {item!r}", where)
        if key not in allowed:
            hint = did_you_mean(key, allowed)
            raise PevpmError(f"unknown key {key!r}{hint}; known: {', '.join(allowed)}", where)
        if key in SWITCH_KEYS:
            values[key] = _parse_switch(raw, key, where)
        elif key in TEXT_KEYS:
            values[key] = raw.strip()
        else:
            values[key] = _checked(_parse_number(raw, key, where), key, raw, where)
    return values


def _checked(value: float, key: str, raw: str, where: str) -> float | int:
    """``value`` of ``key`` within the key's range (see :data:`POSITIVE_KEYS`,
    :data:`WHOLE_KEYS`)."""
    if key in POSITIVE_KEYS and value <= 0:
        raise PevpmError(f"{key} must be above zero, got {raw.strip()}", where)
    if key.endswith("bandwidth") and value < MIN_BANDWIDTH:
        raise PevpmError(f"{key} must be at least {MIN_BANDWIDTH:g} B/s, got {raw.strip()}",
                         where)
    if key in WHOLE_KEYS:
        least = WHOLE_KEYS[key]
        if value != int(value) or not least <= value <= MAX_WHOLE:
            raise PevpmError(f"{key} must be a whole number >= {least}"
                             f"{' (and below 2**62)' if value > MAX_WHOLE else ''}, "
                             f"got {raw.strip()}", where)
        return int(value)
    return value


def _parse_switch(raw: str, key: str, where: str) -> bool:
    word = raw.strip().lower()
    if word not in SWITCHES:
        raise PevpmError(f"{key}={raw!r} must be on or off", where)
    return SWITCHES[word]


def _parse_number(raw: str, key: str, where: str) -> float:
    match = _NUMBER.match(raw)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in UNITS and unit != "":
        raise PevpmError(f"{key}={raw!r} is not a number with a known unit "
                         f"({', '.join(sorted(set(UNITS)))})", where)
    # decimal arithmetic, so 50us is exactly the float 50e-6
    value = float(Decimal(match.group(1)) * Decimal(str(UNITS[unit] if unit else 1)))
    if not math.isfinite(value):
        raise PevpmError(f"{key}={raw.strip()} is too large", where)
    if value < 0:
        raise PevpmError(f"{key} must not be negative, got {raw}", where)
    return value


def _example(kind: str) -> str:
    return {"constant": "constant:latency=50us",
            "hockney": "hockney:latency=50us,bandwidth=100MB/s",
            "loggp": "loggp:L=5us,o=1us,g=2us,G=1ns"}.get(kind, kind)


__all__ = ["DESCRIPTIONS", "KINDS", "MACHINE_KEYS", "parse_machine", "profile_of"]
