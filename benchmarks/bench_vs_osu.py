"""MPIBench's C core against the field's tools: OSU latency, IMB PingPong, a plain C ping-pong.

Builds the OSU micro-benchmarks (and, with ``--imb``, the Intel MPI
Benchmarks) from source folders you give -- neither is kept in this
repository -- with the mpicc next to this Python, then in each of
``--rounds`` rounds, all under ``mpiexec -n 2`` on this host:

1. ``osu_latency`` (and ``IMB-MPI1 PingPong``), ranks bound to cores as
   MPIBench binds them: their one-way latency per size (OSU's figure is the
   mean over its 10,000 (<= 8 KiB) or 1,000 iterations);
2. ``benchmarks/c/pingpong.c`` (Isend + Recv, half round trip, median): the
   plain C ping-pong the harness overhead is measured against;
3. ``pevpm bench --quick`` with its default tests at 0 B, 8 B (for the harness
   ratio), 1, 16 and 64 KiB, the C timing core, once per variant: ``auto``
   (the default start rule: one-way point-to-point tests chained, the rest
   after a barrier), ``barrier`` (``--start barrier``: every repetition after
   a barrier) and, with ``--before SRC``, ``before``: the default rule run
   from another source tree (e.g. ``/work/main/src``), so a change's
   before and after are measured in the same rounds under the same load;
4. a PEVPM prediction of the blocking C ping-pong osu_latency runs (Send then
   Recv, 2000 iterations, 3 Monte Carlo runs, seed 0) from each profile: the
   model draws every message from the profile's ``send`` block, so the
   prediction follows the block's *mean*, which is printed beside its median.

It prints the date, the machine's load before and after, per size the
median over rounds (and the range) of every figure, the per-block mean and
median of each profile's ``send`` block, the prediction errors against
osu_latency, and the harness ratio at 8 B: MPIBench's ``send`` and ``isend``
medians / the C ping-pong's median half round trip.  The 10% target is
stated on a quiet machine: a load average above 1 (2 cores) means other
jobs' preemptions land in the timed loops, and they move the means (and
OSU's figure) far more than the medians.

    PYTHONPATH=src python benchmarks/bench_vs_osu.py --osu /tmp/osu-src [--imb /tmp/imb-src]
        [--rounds 3] [--workdir /tmp/vs-osu] [--before /work/main/src]
        [--variants auto,barrier]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
SIZES = (0, 8, 1024, 16384, 65536)
#: Profile variants: name -> (start rule, source tree or None for this one).
VARIANTS = {"auto": "auto", "barrier": "barrier", "before": "auto"}
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))

from bench_pingpong_vs_c import BIN, c_pingpong
from bench_pingpong_vs_c import build as build_c_pingpong

MPIEXEC = str(BIN / "mpiexec")


def environment(src: Path = SRC) -> dict:
    path = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    env.setdefault("MPICC", str(BIN / "mpicc"))
    return env


def run(command: list[str], cwd: Path | None = None, src: Path = SRC) -> str:
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=cwd, check=False, capture_output=True, text=True,
                          env=environment(src))
    if done.returncode != 0:
        sys.exit(f"bench_vs_osu: {command[0]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def load() -> str:
    """The load averages (1, 5, 15 min) as ``uptime`` prints them."""
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def build_osu(source: Path, workdir: Path) -> Path:
    """osu_latency built from a copy of ``source`` (reused when already built)."""
    tree = workdir / "osu"
    binary = tree / "mpi" / "pt2pt" / "osu_latency"
    if not binary.exists():
        if not (source / "configure").exists():
            sys.exit(f"bench_vs_osu: {source} has no configure script (give the OSU "
                     "micro-benchmarks source folder)")
        shutil.copytree(source, tree, dirs_exist_ok=True)
        run(["./configure", f"CC={BIN / 'mpicc'}", f"CXX={BIN / 'mpicxx'}"], cwd=tree)
        # The release's generated files are used as they are: a copy that lost
        # their timestamps must not send make looking for automake.
        run(["make", f"-j{os.cpu_count() or 2}", "ACLOCAL=true", "AUTOMAKE=true",
             "AUTOCONF=true", "AUTOHEADER=true"], cwd=tree)
    return binary


def build_imb(source: Path, workdir: Path) -> Path:
    """IMB-MPI1 built from a copy of ``source`` (reused when already built)."""
    tree = workdir / "imb"
    binary = tree / "IMB-MPI1"
    if not binary.exists():
        shutil.copytree(source, tree, dirs_exist_ok=True)
        run(["make", f"CC={BIN / 'mpicc'}", f"CXX={BIN / 'mpicxx'}", "IMB-MPI1"], cwd=tree)
    return binary


def one_way(text: str, name: str, test: str = "send") -> dict[int, float]:
    """Microseconds per size reported in OSU or IMB output (pevpm's own parser)."""
    from pevpm.profile.imported import parse_text

    return {row.size: row.mean * 1e6 for row in parse_text(text, name).rows
            if test in row.tests and row.size in SIZES}


def mpibench(workdir: Path, variant: str, index: int, src: Path) -> Path:
    profile = workdir / f"quick-{variant}-{index}.db"
    profile.unlink(missing_ok=True)
    run([MPIEXEC, "-n", "2", sys.executable, "-m", "pevpm", "bench", "--quick", "--binding",
         "c", "--sizes", ",".join(map(str, SIZES)), "--start", VARIANTS[variant],
         "--no-progress", "-o", str(profile)], src=src)
    return profile


def block_figures(profile: Path, test: str) -> dict[str, dict[int, float]]:
    """The median and the mean (us) of ``test``'s block per size."""
    from pevpm.profile.store import Profile

    with Profile.open(profile) as prof:
        summaries = {size: prof.summary(test, size) for size in SIZES}
    return {"median": {size: s.median * 1e6 for size, s in summaries.items()},
            "mean": {size: s.mean * 1e6 for size, s in summaries.items()}}


def predicted(profile: Path, iterations: int = 2000, runs: int = 3) -> dict[int, float]:
    """Half the mean predicted round trip (us) of the blocking ping-pong per size."""
    import numpy as np

    from pevpm.machine.profile_model import machine_from_profile
    from pevpm.model.kernels import blocking_pingpong
    from pevpm.vm.kernel.fastengine import simulate

    machine = machine_from_profile(str(profile))
    seeds = np.random.SeedSequence(0).spawn(runs)
    result = {}
    for size in SIZES:
        model = blocking_pingpong(size, iterations)
        spans = [simulate(model, 2, machine, rng=np.random.default_rng(s)).makespan
                 for s in seeds]
        result[size] = statistics.fmean(spans) / iterations / 2 * 1e6
    return result


def cell(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--osu", required=True, type=Path, help="OSU micro-benchmarks source")
    parser.add_argument("--imb", type=Path, help="Intel MPI Benchmarks source")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="length of one plain C ping-pong run per size")
    parser.add_argument("--workdir", type=Path, help="build and scratch folder (kept)")
    parser.add_argument("--variants", default="auto,barrier",
                        help="profiles per round: auto, barrier (before is added by --before)")
    parser.add_argument("--before", type=Path,
                        help="another source tree (its src folder) whose default profile is "
                             "measured in the same rounds, as 'before'")
    args = parser.parse_args()
    sources = {name: SRC for name in args.variants.split(",") if name in ("auto", "barrier")}
    if args.before:
        sources["before"] = args.before.resolve()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vs-osu-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {load()} "
          f"({os.cpu_count()} cores)", flush=True)
    osu = build_osu(args.osu.resolve(), workdir)
    imb = build_imb(args.imb.resolve(), workdir) if args.imb else None
    pingpong = build_c_pingpong(workdir)
    figures: dict[str, dict[int, list[float]]] = {}

    def add(name: str, values: dict[int, float]) -> None:
        for size, value in values.items():
            figures.setdefault(name, {}).setdefault(size, []).append(value)

    bound = [MPIEXEC, "-bind-to", "core", "-n", "2"]
    for index in range(args.rounds):
        print(f"== round {index + 1}, {load()}", flush=True)
        add("osu_latency", one_way(run([*bound, str(osu)]), "osu_latency"))
        if imb:
            add("IMB PingPong", one_way(run([*bound, str(imb), "PingPong", "-msglog", "0:16"]),
                                        "IMB"))
        add("C ping-pong", {size: c_pingpong(pingpong, size, args.seconds)[0]
                            for size in SIZES})
        for variant, src in sources.items():
            profile = mpibench(workdir, variant, index, src)
            send = block_figures(profile, "send")
            add(f"send {variant}", send["median"])
            add(f"send mean {variant}", send["mean"])
            add(f"isend {variant}", block_figures(profile, "isend")["median"])
            add(f"predicted {variant}", predicted(profile))
    report(figures, args.rounds, list(sources))
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {load()}")
    targets(figures, "auto" if "auto" in sources else next(iter(sources)))
    return 0


def report(figures: dict[str, dict[int, list[float]]], rounds: int, variants: list[str]) -> None:
    print(f"\nmicroseconds, median over {rounds} rounds (range); osu_latency: its mean; "
          "C ping-pong: median half round trip; send/isend: MPIBench's block median "
          "(--quick, C core); predicted: half round trip of a blocking C ping-pong model")
    table(figures, [name for name in figures if not name.startswith("send mean")])
    print("\nthe send block, which predictions draw from: median / mean per round's "
          "profile, then median over rounds (range)")
    table(figures, [name for variant in variants
                    for name in (f"send {variant}", f"send mean {variant}")])
    print("\nprediction error against osu_latency (median of rounds):")
    for variant in variants:
        errors = []
        for size in SIZES:
            osu_us = statistics.median(figures["osu_latency"][size])
            guess = statistics.median(figures[f"predicted {variant}"][size])
            errors.append(f"{size} B {100 * (guess - osu_us) / osu_us:+.1f}%")
        print(f"  profile {variant} ({VARIANTS[variant]} start): " + ", ".join(errors))
    target = statistics.median(figures["C ping-pong"][8])
    for variant in variants:
        for test in ("send", "isend"):
            ratio = statistics.median(figures[f"{test} {variant}"][8]) / target
            print(f"harness at 8 B, {test} {variant} / C ping-pong: x{ratio:.2f}")


#: Issue 31's acceptance: prediction errors within this at these sizes, and the
#: harness ratio at 8 B at most HARNESS_TARGET, on a quiet machine.
ERROR_TARGET, TARGET_SIZES, HARNESS_TARGET = 0.10, (0, 1024, 16384, 65536), 1.2


def targets(figures: dict[str, dict[int, list[float]]], variant: str) -> None:
    """Issue 31's targets against the ``variant`` profile, each marked met or missed."""
    print(f"\nissue 31's targets, profile {variant} (stated for a quiet machine: with a "
          "1-minute load average above about 1 on 2 cores, other jobs' preemptions set "
          "the means, osu_latency's included, and these verdicts measure the load):")
    for size in TARGET_SIZES:
        osu_us = statistics.median(figures["osu_latency"][size])
        error = statistics.median(figures[f"predicted {variant}"][size]) / osu_us - 1
        verdict = "met" if abs(error) <= ERROR_TARGET else "missed"
        print(f"  prediction within {ERROR_TARGET:.0%} of osu_latency at {size} B: "
              f"{error:+.1%} {verdict}")
    target = statistics.median(figures["C ping-pong"][8])
    for test in ("send", "isend"):
        ratio = statistics.median(figures[f"{test} {variant}"][8]) / target
        verdict = "met" if ratio <= HARNESS_TARGET else "missed"
        print(f"  harness at 8 B, {test} <= x{HARNESS_TARGET}: x{ratio:.2f} {verdict}")


def table(figures: dict[str, dict[int, list[float]]], names: list[str]) -> None:
    print(f"{'bytes':>6} " + " ".join(f"{name:>22}" for name in names))
    for size in SIZES:
        print(f"{size:>6} " + " ".join(f"{cell(figures[name][size]):>22}" for name in names))


if __name__ == "__main__":
    raise SystemExit(main())
