"""A contention lab on one machine: MPI ranks on "nodes" joined by slow links.

Each node is a Linux network namespace with one veth link to a switch (a
bridge in another namespace); every link is shaped in both directions with a
``tc tbf`` token bucket (a rate and a small burst), so a node's traffic
queues on its own link just as on a cluster's network card. MPICH is told to use TCP
between all ranks (libfabric's tcp provider, no shared memory), so messages
really cross the shaped links. The host's own interfaces, ``lo`` included,
are never touched: tearing the lab down deletes its namespaces and with them
every link and queue it made.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN), iproute2 (``ip``, ``tc``) and
the kernel's veth, bridge and tbf support; :func:`lab_available` checks.
(netem is not used: this machine's kernel is built without it, so the lab
shapes bandwidth only and adds no artificial delay.)

>>> with ContentionLab(nodes=4, rate="80mbit") as lab:  # doctest: +SKIP
...     m = run_example("bag_of_tasks", 4, ["--compute", "sleep"], launcher=lab.launcher())

or, for a list of process counts, ``measure_in_lab("bag_of_tasks", [1, 2, 4],
["--compute", "sleep"], rate="80mbit")``.

With the default placement rank r runs on node r (one rank per node), so in
the bag of tasks every job crosses the master's link: its speedup saturates
once that link is busy all the time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from typing import Self

from pevpm.errors import PevpmError
from pevpm.validate.runner import Measurement, find_example, run_example

NAME_PREFIX = "pevpm-lab-"
NODE_DEVICE = "eth0"  # each node's end of its link, inside the node's namespace
MPI_OVER_TCP = {
    "MPIR_CVAR_NOLOCAL": "1",  # no shared memory, even between ranks of one node
    "MPIR_CVAR_CH4_NETMOD": "ofi",
    "FI_PROVIDER": "tcp",
    "FI_TCP_IFACE": NODE_DEVICE,
}
RATE = re.compile(r"^\d+(\.\d+)?(bit|kbit|mbit|gbit|bps|kbps|mbps|gbps)$")
SIZE = re.compile(r"^\d+(b|kb|k|mb|m)?$")


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise PevpmError(f"'{' '.join(command)}' failed: {proc.stderr.strip() or proc.stdout}",
                         where="contention lab")
    return proc


def lab_available() -> tuple[bool, str]:
    """(True, "") if a lab can be built here, else (False, the reason)."""
    if os.geteuid() != 0:
        return False, "needs root (network namespaces and tc)"
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            return False, f"'{tool}' not found (Debian: apt-get install iproute2)"
    try:
        with ContentionLab(nodes=1, rate="1gbit"):
            pass
    except PevpmError as exc:
        return False, str(exc)
    return True, ""


@dataclass
class NamespaceLauncher:
    """Launches rank r of an MPI job inside the namespace of node r // ranks_per_node."""

    namespaces: list[str]
    ranks_per_node: int = 1
    env: dict = field(default_factory=lambda: dict(MPI_OVER_TCP))

    def node_of(self, rank: int) -> int:
        return rank // self.ranks_per_node

    def command(self, mpiexec: str, nprocs: int, argv: list[str]) -> list[str]:
        """An MPMD mpiexec line: ``-n k ip netns exec NODE argv`` per node, joined by ':'."""
        nodes_needed = self.node_of(nprocs - 1) + 1
        if nodes_needed > len(self.namespaces):
            raise PevpmError(f"{nprocs} ranks at {self.ranks_per_node} per node need "
                             f"{nodes_needed} nodes; the lab has {len(self.namespaces)}")
        command = [mpiexec]
        for node in range(nodes_needed):
            count = min(self.ranks_per_node, nprocs - node * self.ranks_per_node)
            if node:
                command.append(":")
            command += ["-n", str(count), "ip", "netns", "exec", self.namespaces[node], *argv]
        return command


class ContentionLab:
    """``nodes`` namespaces, each linked to a switch by a link shaped to ``rate``.

    ``rate=None`` leaves the links unshaped (the control experiment). Use as a
    context manager (or call setup() and teardown()); teardown always runs,
    even when the body raises.
    """

    def __init__(self, nodes: int, rate: str | None = "100mbit", burst: str = "4kb"):
        if nodes < 1:
            raise PevpmError(f"a lab needs at least one node, got {nodes}")
        if rate is not None and not RATE.match(rate):
            raise PevpmError(f"link rate '{rate}' is not a tc rate such as 100mbit or 20mbit")
        if not SIZE.match(burst):
            raise PevpmError(f"link burst '{burst}' is not a tc size such as 4kb")
        self.rate, self.burst = rate, burst
        tag = uuid.uuid4().hex[:8]
        self.switch = f"{NAME_PREFIX}{tag}-sw"
        self.namespaces = [f"{NAME_PREFIX}{tag}-n{k}" for k in range(nodes)]
        self._made: list[str] = []

    def address(self, node: int) -> str:
        """The node's IPv4 address inside the lab."""
        return f"10.{200 + node // 250}.{node % 250}.1"

    def _shape(self, namespace: str, device: str) -> None:
        if self.rate is None:
            return
        _run("ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", device, "root",
             "tbf", "rate", self.rate, "burst", self.burst, "latency", "1s")

    def setup(self) -> Self:
        if os.geteuid() != 0:
            raise PevpmError("needs root (network namespaces and tc)", where="contention lab")
        try:
            _run("ip", "netns", "add", self.switch)
            self._made.append(self.switch)
            _run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
            _run("ip", "-n", self.switch, "link", "set", "br0", "up")
            for node, ns in enumerate(self.namespaces):
                port = f"port{node}"
                _run("ip", "netns", "add", ns)
                self._made.append(ns)
                _run("ip", "-n", ns, "link", "add", NODE_DEVICE, "type", "veth",
                     "peer", "name", port, "netns", self.switch)
                _run("ip", "-n", self.switch, "link", "set", port, "master", "br0")
                _run("ip", "-n", self.switch, "link", "set", port, "up")
                _run("ip", "-n", ns, "addr", "add", f"{self.address(node)}/8", "dev", NODE_DEVICE)
                _run("ip", "-n", ns, "link", "set", NODE_DEVICE, "up")
                _run("ip", "-n", ns, "link", "set", "lo", "up")
                self._shape(ns, NODE_DEVICE)      # node -> switch
                self._shape(self.switch, port)    # switch -> node
        except BaseException:
            self.teardown()
            raise
        return self

    def teardown(self) -> None:
        """Delete every namespace this lab made (and so its links and queues)."""
        while self._made:
            _run("ip", "netns", "del", self._made.pop(), check=False)

    def link_bytes(self, node: int) -> dict[str, int]:
        """Bytes node ``node`` has sent ("out") and received ("in") over its link so far."""
        shown = _run("ip", "-n", self.namespaces[node], "-j", "-s", "link", "show",
                     "dev", NODE_DEVICE).stdout
        stats = json.loads(shown)[0]["stats64"]
        return {"out": stats["tx"]["bytes"], "in": stats["rx"]["bytes"]}

    def launcher(self, ranks_per_node: int = 1) -> NamespaceLauncher:
        """A launcher for pevpm.validate.runner placing ``ranks_per_node`` ranks per node."""
        if ranks_per_node < 1:
            raise PevpmError(f"ranks per node must be at least 1, got {ranks_per_node}")
        return NamespaceLauncher(self.namespaces, ranks_per_node)

    def __enter__(self) -> Self:
        return self.setup()

    def __exit__(self, *exc) -> None:
        self.teardown()


def measure_in_lab(program: str, nprocs, args=(), rate: str | None = "80mbit",
                   burst: str = "4kb", ranks_per_node: int = 1, repeats: int = 3,
                   warmup: int = 1, timeout: float = 300.0, progress=None) -> dict:
    """Run ``program`` at each process count inside one lab; {n: Measurement}.

    ``rate=None`` builds the same namespaces and TCP transport without any
    shaping: the control experiment. ``progress(n, measurement)`` is called
    after each count.
    """
    find_example(program)  # fail before building anything
    counts = sorted(set(nprocs))
    if not counts or counts[0] < 1:
        raise PevpmError(f"process counts must be positive, got {list(nprocs)}")
    nodes = -(-counts[-1] // ranks_per_node)
    results: dict[int, Measurement] = {}
    with ContentionLab(nodes, rate, burst) as lab:
        launcher = lab.launcher(ranks_per_node)
        for n in counts:
            results[n] = run_example(program, n, args, repeats, warmup, timeout, launcher)
            if progress:
                progress(n, results[n])
    return results


def remove_stale_labs() -> list[str]:
    """Delete lab namespaces left by a killed process; returns their names.

    Only call it while no lab is in use: it removes every ``pevpm-lab-*`` namespace.
    """
    listed = _run("ip", "netns", "list", check=False).stdout.split("\n")
    stale = [line.split()[0] for line in listed if line.startswith(NAME_PREFIX)]
    for ns in stale:
        _run("ip", "netns", "del", ns, check=False)
    return stale
