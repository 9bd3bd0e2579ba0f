"""pevpm's flow model against SimGrid SMPI on fat-tree, torus and dragonfly platforms.

Runs four kernels (benchmarks/smpi/topo_kernels.c, and the same as pevpm
models here: a Jacobi halo exchange, an alltoall-based FFT step, a bag of
tasks into rank 0, a permutation exchange) at 64, 256 and 1,024 ranks, one
per node, on SimGrid platform files (benchmarks/smpi/topology/*.xml, written
by ``--write-platforms``): a 2-level fat-tree 4:1 oversubscribed at the
leaves, a 3-D torus and a dragonfly, every cable 10 Gbit/s and 1 us,
SPLITDUPLEX.  pevpm reads the same files (``--topology``), costs a message
0 s of overhead + the route's latencies + its bytes through the flow model,
and makes sends of at most 64 KiB eager, as SMPI's detached sends are; it
runs each case twice, its flows starting at the send (the thesis's
messages) and at the match (``Machine.flow_start="match"``: SimGrid's
rendezvous, what SMPI does), flows reserved in the order they are drawn,
then a third time from the match with max-min sharing re-rated as flows
start and end, each flow weighted as SMPI's network model weighs it
(``Machine.flow_sharing="simgrid"``: SimGrid's LMM; ``--sharing max-min``:
all flows alike).  SMPI
runs with its latency and bandwidth correction factors off (as in
benchmarks/engine_vs_smpi.py).  Prints, per case, pevpm's three predicted
times, SMPI's simulated time, the differences, the wall times (pevpm: the
third run) and their ratio, and the CPU seconds of each (SMPI's: smpirun and
its children) and their ratio, which a loaded machine sways less.

``--counts`` adds, per case, the max-min network's work (its events, the
flows it gave a rate and the links of the parts it re-rated, in all and per
event), from
a separate run.  ``--speed RANKS`` times pevpm alone on today's single switch and on each
network (item 5 of issue 27: within 2x).  ``--saturation`` adds the thesis's inter-switch experiment: a two-switch
Perseus-like machine (32 Fast Ethernet nodes per switch, 91 Mbit/s and
80 us per node link, one 1 Gbit/s trunk) where every rank of the first half
posts an MPI_Isend to its partner in the second half at once; it prints,
at 32x1 (one switch) and 64x1 (every message over the trunk) by message
size, the mean time from send to delivery and the mean time the senders
spend in MPI_Isend + MPI_Wait when sends up to 12 KiB are eager.

    PYTHONPATH=src python benchmarks/topology_vs_smpi.py --ranks 64,256
    PYTHONPATH=src python benchmarks/topology_vs_smpi.py --no-smpi --ranks 64,256,1024
    PYTHONPATH=src python benchmarks/topology_vs_smpi.py --no-smpi --max-min-only --ranks 1024
    PYTHONPATH=src python benchmarks/topology_vs_smpi.py --saturation --no-smpi --ranks 0
    PYTHONPATH=src python benchmarks/topology_vs_smpi.py --ranks 0 --speed 1024 \
        --kernels jacobi,perm
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from engine_vs_smpi import SMPI_CONFIG, SMPI_DIR, ensure_smpi

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import fastengine

PLATFORMS = SMPI_DIR / "topology"
KERNELS = ("jacobi", "fft", "bag", "perm")
COMPUTE = 1e-4
PERM = ((5, 1), (13, 7), (21, 3), (29, 11))      # (a, b): rank r sends to (a r + b) mod p
#: SimGrid topo_parameters per topology and node count.
SHAPES = {
    "fat-tree": {64: "2;8,8;1,2;1,1", 256: "2;16,16;1,4;1,1", 1024: "2;32,32;1,8;1,1"},
    "torus": {64: "4,4,4", 256: "8,8,4", 1024: "16,8,8"},
    "dragonfly": {64: "2,1;2,1;4,1;4", 256: "4,1;4,1;4,1;4", 1024: "4,1;4,1;8,1;8"},
}
SIMGRID_KIND = {"fat-tree": "FAT_TREE", "torus": "TORUS", "dragonfly": "DRAGONFLY"}


def platform_text(kind: str, nodes: int) -> str:
    return (f"<?xml version='1.0'?>\n"
            f'<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            f"<!-- {kind}, {nodes} nodes, for benchmarks/topology_vs_smpi.py -->\n"
            f'<platform version="4.1">\n'
            f'  <cluster id="{kind}" prefix="node-" suffix="" radical="0-{nodes - 1}" '
            f'speed="1Gf" bw="10Gbps" lat="1us" sharing_policy="SPLITDUPLEX"\n'
            f'           topology="{SIMGRID_KIND[kind]}" '
            f'topo_parameters="{SHAPES[kind][nodes]}"/>\n'
            f"</platform>\n")


def platform(kind: str, nodes: int) -> Path:
    return PLATFORMS / f"{kind}-{nodes}.xml"


def kernel_model(kernel: str, numprocs: int, starts: list[float] | None = None,
                 iterations: int = 20):
    """The pevpm model of ``kernel`` in topo_kernels.c; ``starts``: each
    rank's first ``starts[rank]`` seconds idle (the Jacobi only, for
    benchmarks/topology_jacobi_vs_smpi.py), ``iterations`` the Jacobi's."""
    b = ModelBuilder()
    if starts is not None:
        with b.runon() as ranks:
            for rank, start in enumerate(starts):
                with ranks.case(f"procnum == {rank}"):
                    b.serial(start)
    if kernel == "jacobi":
        first, last = "procnum != 0", "procnum != numprocs - 1"
        with b.loop(iterations):
            with b.runon() as parity:
                with parity.case("procnum % 2 == 0"):
                    with b.on_ranks(first):
                        b.send(8192, dest="procnum - 1")
                    with b.on_ranks(last):
                        b.send(8192, dest="procnum + 1")
                        b.recv(8192, source="procnum + 1")
                    with b.on_ranks(first):
                        b.recv(8192, source="procnum - 1")
                with parity.case("procnum % 2 == 1"):
                    with b.on_ranks(last):
                        b.recv(8192, source="procnum + 1")
                    b.recv(8192, source="procnum - 1")
                    b.send(8192, dest="procnum - 1")
                    with b.on_ranks(last):
                        b.send(8192, dest="procnum + 1")
            b.serial(COMPUTE)
    elif kernel == "fft":
        block = (1 << 20) // numprocs
        b.serial(COMPUTE)
        with b.loop("numprocs - 1", index="k"):
            b.sendrecv(block, dest="(procnum + k + 1) % numprocs",
                       source="(procnum + numprocs - k - 1) % numprocs")
        b.serial(COMPUTE)
    elif kernel == "bag":
        with b.runon() as ranks:
            with ranks.case("procnum == 0"), b.loop("(numprocs - 1) * 8"):
                b.recv(32768, source="MPI_ANY_SOURCE")
            with ranks.case("procnum != 0"), b.loop(8):
                b.serial(f"{COMPUTE} * (1 + procnum % 4)")
                b.send(32768, dest=0)
    else:
        for i, (a, shift) in enumerate(PERM):
            inverse = pow(a, -1, numprocs)
            b.irecv(262144, source=f"({inverse} * (procnum + numprocs - {shift % numprocs})) "
                                   "% numprocs", request="r", tag=i)
            b.isend(262144, dest=f"({a} * procnum + {shift}) % numprocs", request="s", tag=i)
            b.waitall()
    return b.build()


def run_pevpm(kernel: str, kind: str, numprocs: int, flow_start: str = "send",
              sharing: str = "reserve") -> dict:
    """pevpm on ``kind``'s platform file (``"switch"``: today's single switch,
    whose messages cost the communication model's time alone), its flows
    starting at each message's send or match (``Machine.flow_start``) and
    sharing links as ``sharing`` says (``Machine.flow_sharing``)."""
    machine = parse_machine("constant:latency=0,eager=65536",
                            topology=None if kind == "switch" else str(platform(kind, numprocs)))
    machine = replace(machine, flow_start=flow_start, flow_sharing=sharing)
    model = kernel_model(kernel, numprocs)
    start, cpu = time.perf_counter(), time.process_time()
    result = fastengine.simulate(model, numprocs, machine, rng=np.random.default_rng(0))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if result.engine_note:
        print(f"note: {kernel} {kind} {numprocs}: {result.engine_note}", file=sys.stderr)
    return {"time": result.makespan, "wall": wall, "cpu": cpu,
            "messages": result.messages_simulated}


def network_work(kernel: str, kind: str, numprocs: int, sharing: str) -> dict:
    """The compiled max-min network's counts after one run from the match
    (``FluidNetwork.counts``: events, flows given a rate, links re-rated), read
    by wrapping the core's ``network_for`` for that run."""
    from pevpm.vm.kernel import fastcore

    made = []
    real = fastcore.network_for

    def keep(machine, placement):
        made.append(real(machine, placement))
        return made[-1]

    fastcore.network_for = keep
    try:
        run_pevpm(kernel, kind, numprocs, "match", sharing)
    finally:
        fastcore.network_for = real
    return made[-1].counts


def smpi_program(source: str, workdir: Path) -> Path:
    """``benchmarks/smpi/<source>`` built with ``smpicc -O2`` in ``workdir``: the program."""
    binary = workdir / Path(source).stem
    subprocess.run(["smpicc", "-O2", "-o", str(binary), str(SMPI_DIR / source)],
                   check=True, capture_output=True)
    return binary


def run_smpi(binary: Path, kernel: str, kind: str, numprocs: int, workdir: Path) -> dict:
    hosts = workdir / f"hosts{numprocs}"
    hosts.write_text("".join(f"node-{i}\n" for i in range(numprocs)))
    cmd = ["smpirun", "-np", str(numprocs), "-platform", str(platform(kind, numprocs)),
           "-hostfile", str(hosts), *SMPI_CONFIG, str(binary), kernel]
    start, cpu = time.perf_counter(), _children_cpu()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("simulated_seconds=")]
    if out.returncode != 0 or not line:
        raise RuntimeError(f"smpirun failed ({out.returncode}):\n{out.stdout[-1500:]}"
                           f"{out.stderr[-1500:]}")
    fields = dict(part.split("=") for part in line[0].split())
    return {"time": float(fields["simulated_seconds"]), "wall": wall, "cpu": cpu,
            "messages": int(fields["messages"])}


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far:
    smpirun and the simulation it runs."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def saturation_network(nodes: int):
    """Two switches of 32 Fast Ethernet nodes (91 Mbit/s, 80 us a node link),
    one 1 Gbit/s 10 us trunk between them; ``nodes`` of the 64 used."""
    from pevpm.machine.topology.graph import Graph

    hosts = [f"node-{i}" for i in range(64)]
    net = Graph(hosts, ["switch-0", "switch-1"])
    for i, host in enumerate(hosts):
        net.connect(host, f"switch-{i // 32}", latency=40e-6, bandwidth=91e6 / 8)
    net.connect("switch-0", "switch-1", latency=10e-6, bandwidth=1e9 / 8)
    return net


def saturation(sizes: list[int]) -> None:
    """MPIBench's isend test across the halves: the mean time per message from
    the send to its delivery (no eager sends), and the mean time the senders
    spend in MPI_Isend + MPI_Wait when sends up to ``SATURATION_EAGER`` bytes
    are eager (they return once their bytes are buffered, ``SATURATION_LOCAL``
    seconds, whatever the network is doing)."""
    print("\nTwo switches, one 1 Gbit/s trunk: every first-half rank sends to its "
          "second-half partner at once (ms per message)")
    print(f"{'size (B)':>9} | {'delivered: 32x1':>15} {'64x1':>8} {'64/32':>6} | "
          f"{'Isend+Wait: 32x1':>16} {'64x1':>8} {'64/32':>6}")
    for size in sizes:
        cells = []
        eager = f"constant:latency=0,local={SATURATION_LOCAL},eager={SATURATION_EAGER}"
        for spec, measure in (("constant:latency=0", _delivered), (eager, _sender_time)):
            base = parse_machine(spec)
            machine = replace(base, topology=replace(base.topology,
                                                     network=saturation_network(64)))
            means = [measure(_isend_halves(size), n, machine) for n in (32, 64)]
            cells.append(f"{means[0] * 1e3:>8.3f} {means[1] * 1e3:>8.3f} "
                         f"{means[1] / means[0]:>6.2f}")
        print(f"{size:>9} | {cells[0]:>31} | {cells[1]:>32}")


#: The eager limit and local send time of the Isend+Wait view of ``--saturation``:
#: an assumption about Perseus's MPI (ch_p4 over TCP), not a measurement.
SATURATION_EAGER = 12288
SATURATION_LOCAL = 2e-5


def _isend_halves(size: int):
    b = ModelBuilder()
    with b.runon() as half:
        with half.case("procnum < numprocs / 2"):
            b.isend(size, dest="procnum + numprocs / 2", request="s")
            b.wait("s")
        with half.case("procnum >= numprocs / 2"):
            b.recv(size, source="procnum - numprocs / 2")
    return b.build()


def _delivered(model, numprocs: int, machine) -> float:
    """Mean seconds from a message's send to the end of its receive."""
    run = fastengine.simulate(model, numprocs, machine, records=True,
                              rng=np.random.default_rng(0))
    return float(np.mean([m.recv_end - m.send_start for m in run.messages]))


def _sender_time(model, numprocs: int, machine) -> float:
    """Mean seconds the sending half spends until its MPI_Wait returns."""
    run = fastengine.simulate(model, numprocs, machine, rng=np.random.default_rng(0))
    return float(np.mean([rank.finish for rank in run.ranks[:numprocs // 2]]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="64,256,1024", help="rank counts (0: none)")
    parser.add_argument("--kinds", default="fat-tree,torus,dragonfly")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--no-smpi", action="store_true", help="pevpm only")
    parser.add_argument("--write-platforms", action="store_true",
                        help="(re)write benchmarks/smpi/topology/*.xml and stop")
    parser.add_argument("--speed", default="", metavar="RANKS",
                        help="also time pevpm on the single switch and each network")
    parser.add_argument("--sharing", choices=("simgrid", "max-min"), default="simgrid",
                        help="the third run's Machine.flow_sharing (default: %(default)s)")
    parser.add_argument("--no-max-min", action="store_true",
                        help="skip the third run (slow on all-to-all traffic)")
    parser.add_argument("--max-min-only", action="store_true",
                        help="the third run alone (the reserved runs print '-')")
    parser.add_argument("--counts", action="store_true",
                        help="after each case, the max-min network's work in a separate run")
    parser.add_argument("--saturation", action="store_true",
                        help="also the two-switch inter-switch saturation experiment")
    args = parser.parse_args(argv)
    if args.write_platforms:
        PLATFORMS.mkdir(exist_ok=True)
        for kind, shapes in SHAPES.items():
            for nodes in shapes:
                platform(kind, nodes).write_text(platform_text(kind, nodes))
        return 0
    counts = [int(n) for n in args.ranks.split(",") if int(n)]
    smpi = bool(counts) and not args.no_smpi and ensure_smpi()
    workdir = Path(tempfile.mkdtemp(prefix="pevpm-topo-smpi-"))
    binary = smpi_program("topo_kernels.c", workdir) if smpi else workdir / "topo_kernels"
    if counts:
        print("pevpm's flows start at the send (the thesis's messages) or at the match "
              f"(SMPI's rendezvous), reserved in draw order; {args.sharing}: from the match, "
              "shared max-min and re-rated; diff: against SMPI's simulated time; speed-up: SMPI "
              f"wall / pevpm wall ({args.sharing})")
        print(f"{'network':>10} {'kernel':>7} {'ranks':>6} {'messages':>9} {'send s':>10} "
              f"{'match s':>10} {args.sharing + ' s':>10} {'SMPI s':>10} {'send':>7} {'match':>7} "
              f"{args.sharing:>7} | {'pevpm wall':>10} {'SMPI wall':>9} {'speed-up':>8} "
              f"{'pevpm CPU':>9} {'SMPI CPU':>8} {'CPU ratio':>9}")
    for kind in args.kinds.split(","):
        for kernel in args.kernels.split(","):
            for n in counts:
                runs = [] if args.max_min_only else [run_pevpm(kernel, kind, n),
                                                     run_pevpm(kernel, kind, n, "match")]
                if not args.no_max_min:
                    runs.append(run_pevpm(kernel, kind, n, "match", args.sharing))
                ours = runs[-1]
                skipped = 2 if args.max_min_only else 0
                line = (f"{kind:>10} {kernel:>7} {n:>6} {ours['messages']:>9} "
                        + " ".join([f"{'-':>10}"] * skipped
                                   + [f"{run['time']:>10.6f}" for run in runs]))
                if smpi:
                    theirs = run_smpi(binary, kernel, kind, n, workdir)
                    line += (f" {theirs['time']:>10.6f} "
                             + " ".join([f"{'-':>7}"] * skipped
                                        + [f"{(run['time'] - theirs['time']) / theirs['time']:>+7.1%}"
                                           for run in runs])
                             + f" | {ours['wall']:>10.3f} {theirs['wall']:>9.2f} "
                             f"{theirs['wall'] / ours['wall']:>8.1f} {ours['cpu']:>9.2f} "
                             f"{theirs['cpu']:>8.2f} {theirs['cpu'] / max(ours['cpu'], 1e-3):>9.1f}")
                else:
                    line += (f" {'-':>10} {'-':>7} {'-':>7} {'-':>7} | {ours['wall']:>10.3f} "
                             f"{'-':>9} {'-':>8} {ours['cpu']:>9.2f}")
                if args.no_max_min:
                    line += "  (no max-min run: the last run is the match's)"
                print(line, flush=True)
                if args.counts and not args.no_max_min:
                    work = network_work(kernel, kind, n, args.sharing)
                    per = max(work["events"], 1)
                    print(f"{'':>10} network: {work['events']:,} events, "
                          f"{work['rated']:,} flows rated ({work['rated'] / per:.1f} an event), "
                          f"{work['links']:,} links re-rated ({work['links'] / per:.1f} an event)",
                          flush=True)
    if args.saturation:
        saturation([1024, 4096, 8192, 12288, 16384, 32768, 65536])
    if args.speed:
        speed(int(args.speed), args.kernels.split(","), args.kinds.split(","))
    return 0


def speed(numprocs: int, kernels: list[str], kinds: list[str]) -> None:
    """pevpm's wall and CPU seconds per kernel on the single switch and on each network."""
    print(f"\npevpm at {numprocs} ranks: the single switch (no link figures) beside each "
          "network (flows reserved); wall / CPU seconds, ratio = network / switch (CPU)")
    print(f"{'kernel':>7} {'switch':>13} " + " ".join(f"{k:>19}" for k in kinds))
    for kernel in kernels:
        switch = run_pevpm(kernel, "switch", numprocs)
        runs = [run_pevpm(kernel, kind, numprocs) for kind in kinds]
        print(f"{kernel:>7} {switch['wall']:>6.2f} {switch['cpu']:>6.2f} "
              + " ".join(f"{run['wall']:>6.2f} {run['cpu']:>6.2f} {run['cpu'] / switch['cpu']:>5.2f}"
                         for run in runs), flush=True)


if __name__ == "__main__":
    sys.exit(main())
