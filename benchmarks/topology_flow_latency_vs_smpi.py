"""Where a flow's latency goes under max-min sharing: pevpm against SimGrid SMPI.

One node sends one 8 KiB message to each of a few others at once
(benchmarks/smpi/topo_fanout.c), on the 64-node dragonfly of
benchmarks/topology_vs_smpi.py (every cable 10 Gbit/s and 1 us).  The
messages share the sender's node link; their routes differ in length (node
4 to node 5: 2 links, 2 us; node 4 to node 3: 3 links, 3 us).  Prints, per
message, its route's links, the time from the start to the end of its
receive in SMPI and in pevpm (flows from the match, ``"simgrid"`` sharing)
and their difference.  Both put a flow's latency first: it shares no
bandwidth until its route's latency has passed, so the shorter route has
the link alone for 1 us (pevpm's flows shared from the match and paid
their latency after until round 13: docs/topology.md, "The dragonfly
Jacobi's +3.7%").  The lone messages show the routes and latencies agree
(SMPI adds 0.02-0.04 us to every message).

    PYTHONPATH=src python benchmarks/topology_flow_latency_vs_smpi.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
from engine_vs_smpi import SMPI_CONFIG, SMPI_DIR, ensure_smpi
from topology_vs_smpi import smpi_program

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import fastengine

PLATFORM = SMPI_DIR / "topology" / "dragonfly-64.xml"
SIZE = 8192
#: (sender, receivers) on the platform's nodes.
CASES = ((4, (5,)), (4, (3,)), (4, (5, 6)), (4, (3, 5)))


def fan_out(size: int):
    """Rank 0 sends ``size`` bytes to every other rank at once."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            with b.loop("numprocs - 1", index="k"):
                b.isend(size, dest="k + 1", request="s")
            b.waitall()
        with ranks.case("procnum != 0"):
            b.recv(size, source=0)
    return b.build()


def pevpm_times(hostfile: Path, ranks: int) -> tuple[dict[int, float], object]:
    """Each receiving rank's receive end in pevpm, and the network."""
    machine = parse_machine("constant:latency=0,eager=65536", topology=str(PLATFORM),
                            placement=str(hostfile))
    machine = replace(machine, flow_start="match", flow_sharing="simgrid")
    run = fastengine.simulate(fan_out(SIZE), ranks, machine, records=True,
                              rng=np.random.default_rng(0))
    return {m.dst: m.recv_end for m in run.messages}, machine.topology.network


def smpi_times(binary: Path, hostfile: Path, ranks: int) -> dict[int, float]:
    """Each receiving rank's receive end in SMPI (seconds from its start)."""
    out = subprocess.run(["smpirun", "-np", str(ranks), "-platform", str(PLATFORM),
                          "-hostfile", str(hostfile), *SMPI_CONFIG, str(binary), str(SIZE)],
                         capture_output=True, text=True, check=True)
    return {int(rank): float(seconds) for _, rank, seconds in
            (line.split() for line in out.stdout.splitlines() if line.startswith("recv "))}


def main() -> int:
    if not ensure_smpi():
        print("SMPI: unavailable (no smpicc/smpirun)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        binary = smpi_program("topo_fanout.c", work)
        print(f"{SIZE} B from one node at once, dragonfly {PLATFORM.name}; times in us")
        print(f"{'message':>14} {'links':>5}  {'SMPI':>8} {'pevpm':>8} {'pevpm-SMPI':>10}  route")
        for sender, receivers in CASES:
            nodes = (sender, *receivers)
            hostfile = work / "hosts"
            hostfile.write_text("".join(f"node-{n}\n" for n in nodes))
            ours, network = pevpm_times(hostfile, len(nodes))
            theirs = smpi_times(binary, hostfile, len(nodes))
            for rank, node in enumerate(receivers, start=1):
                route = [network.link_names[i] for i in network.node_route(sender, node)]
                print(f"{f'{sender}->{node}':>8} of {len(receivers)} {len(route):>5}  "
                      f"{theirs[rank] * 1e6:>8.3f} {ours[rank] * 1e6:>8.3f} "
                      f"{(ours[rank] - theirs[rank]) * 1e6:>+10.3f}  {', '.join(route)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
