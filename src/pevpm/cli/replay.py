"""``pevpm replay``: simulate a traced run, on the traced machine or another one.

    pevpm replay run --machine machine.db            # the same run on the profiled machine
    pevpm replay run --machine hockney:latency=50us,bandwidth=10MB/s --speed 2 --json
    pevpm replay fft --machine machine.db --coll alltoall=pairwise

The trace comes from ``pevpm trace`` (or Score-P); see docs/trace.md.
"""

from __future__ import annotations

import ctypes
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

from pevpm.cli import numbers, outputs
from pevpm.cli.arguments import (
    add_collective_arguments,
    add_topology_arguments,
    collective_config,
)
from pevpm.cli.paths import writable_file
from pevpm.errors import PevpmError

DEFAULT_MACHINE = "default"


def register(subparsers) -> None:
    r = subparsers.add_parser(
        "replay",
        description="Turn a trace into a straight-line PEVPM model (the gaps between calls "
                    "are computation, every message goes through the machine's "
                    "communication model, the traced delays inside calls are kept unless "
                    "--no-delays) and simulate it at the traced rank count.")
    r.add_argument("trace", help="trace directory or .otf2 anchor file (pevpm's or Score-P's)")
    r.add_argument("--machine", default=DEFAULT_MACHINE, metavar="SPEC",
                   help="as for pevpm predict: PROFILE.db[:model=...] | default | "
                        "hockney:latency=..,bandwidth=.. | ... (default: default)")
    add_topology_arguments(r)
    r.add_argument("--speed", type=float, default=1.0, metavar="RATIO",
                   help="the target's CPU speed over the traced one; computation is divided "
                        "by it (default 1)")
    r.add_argument("--runs", type=numbers.runs, default=None,
                   help="Monte Carlo runs (default: 1 with the traced delays, where every run "
                        "is the same; 10 with --no-delays)")
    r.add_argument("--seed", type=numbers.seed, default=0, help="random seed (0)")
    r.add_argument("--workers", type=numbers.workers, default=1, help="parallel workers (1)")
    r.add_argument("--no-delays", dest="delays", action="store_false",
                   help="drop the traced delays inside MPI calls (the time a call took after "
                        "its data was there beyond the usual for its kind: a busy host, "
                        "polling with sleeps), as if the traced host had been quiet")
    add_collective_arguments(r)
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument("--perfetto", metavar="FILE", type=writable_file,
                   help="write the recorded run and one predicted run side by side as a "
                        "Chrome/Perfetto trace (open in ui.perfetto.dev)")
    outputs.add_force(r)
    r.set_defaults(func=run_replay)


def run_replay(args) -> int:
    from pevpm.machine.presets import parse_machine
    from pevpm.trace.otf2.columns import UNAVAILABLE as READER_UNAVAILABLE
    from pevpm.vm.strategies.leftovers import warning_lines

    if args.runs is not None and args.runs < 1:
        raise PevpmError(f"--runs must be at least 1, got {args.runs}")
    if not (math.isfinite(args.speed) and args.speed > 0):
        raise PevpmError(f"the speed ratio must be a finite number > 0, got {args.speed}",
                         "--speed")
    if args.perfetto:
        args.perfetto = outputs.check_output(
            args.perfetto, outputs.SIDE_BY_SIDE, force=args.force,
            inputs=[*outputs.archive_input(args.trace), *outputs.machine_input(args.machine)])
    machine = parse_machine(args.machine, topology=args.topology, placement=args.placement,
                            seed=args.seed)
    if args.coll:
        machine = replace(machine, collectives=collective_config(args, machine.collectives))
    if READER_UNAVAILABLE:
        print(f"pevpm replay: note: {READER_UNAVAILABLE}", file=sys.stderr)
    keep_freed_memory()
    result, trace = replay_archive(Path(args.trace), machine, args)
    for line in ([result.note] if result.note else []) + list(result.prediction.engine_notes):
        print(f"pevpm replay: note: {line}", file=sys.stderr)
    if args.perfetto:
        write_perfetto(trace, machine, args)
    p = result.prediction
    for line in warning_lines([(p.numprocs, p.runs, p.outstanding)]):
        print(f"pevpm replay: warning: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps({"trace": str(args.trace), "machine": args.machine,
                          **result.to_dict()}))
    else:
        print(format_replay(result, args.machine))
    return 0


#: glibc's ``mallopt`` parameters (malloc.h).
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4


def keep_freed_memory() -> bool:
    """Have glibc's malloc serve large blocks from its heap and keep what is freed
    there (``mallopt``: no ``mmap`` per block, trimming only past 2 GiB free): a long
    replay makes and frees numpy arrays of tens to hundreds of MB, and each fresh
    mapping is paid again in page faults.  On the 10 M-call trace: 8.9 system CPU s
    instead of 18.2, 41 CPU s in all instead of 51, a peak 8% higher.  False (and
    nothing changed) where the C library has no ``mallopt``."""
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_MAX, 0)) & bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))


def replay_archive(path: Path, machine, args):
    """The replay of the archive at ``path`` and the trace's objects if it read them
    (None: replayed in arrays).  A trace the arrays cannot take
    (:func:`pevpm.trace.replay.fast.check`) is replayed through model
    statements, and the result's note says why."""
    from pevpm.trace.otf2.read import read_archive, read_table
    from pevpm.trace.replay import fast
    from pevpm.trace.replay.replay import replay, replay_table
    from pevpm.vm.kernel.fastengine import no_cycle_collection

    with no_cycle_collection():
        table = read_table(path)
        held = [None if table is None else fast.check(table)]   # replay_table lets it go
    del table
    why = "the compiled OTF2 reader does not read it" if held[0] is None else held[0].why
    if why is None:
        slower = held[0].slower
        result = replay_table(held, machine, speed=args.speed, runs=args.runs,
                              seed=args.seed, source=str(args.trace), delays=args.delays)
        notes = []
        if slower is not None:
            notes.append(f"the replay's arrays were made in numpy, not in the compiled "
                         f"passes (slower, the same replay): {slower}")
        if args.workers != 1 and result.prediction.runs > 1:
            notes.append("a replay in arrays runs its runs one after another in this "
                         "process (--workers is not used)")
        return (replace(result, note="; ".join(notes)) if notes else result), None
    del held
    with no_cycle_collection():     # a long trace is many small objects
        trace = read_archive(path)
    result = replay(trace, machine, speed=args.speed, runs=args.runs, seed=args.seed,
                    workers=args.workers, source=str(args.trace), delays=args.delays)
    return replace(result, note=f"replayed through model statements, not in arrays "
                                f"(slower, at most about 330,000 calls): {why}"), trace


def write_perfetto(trace, machine, args) -> None:
    """Simulate run 0 of the replay with time slices and write it beside the recording
    (``trace``: the trace's objects, or None where it was replayed in arrays: then
    its table is read again, and its objects for the recorded side)."""
    from pevpm.cli.recorded import replay_run, write_beside
    from pevpm.trace.otf2.read import read_archive, read_table
    from pevpm.vm.kernel.fastengine import no_cycle_collection

    table = None
    if trace is None:
        with no_cycle_collection():
            table = read_table(Path(args.trace))
            trace = read_archive(Path(args.trace))
    predicted = replay_run(trace, machine, source=str(args.trace), seed=args.seed,
                           speed=args.speed, delays=args.delays, table=table)
    write_beside(trace, predicted, args.perfetto, source=str(args.trace),
                 predicted=f"replay on {args.machine}")


def format_replay(result, machine: str) -> str:
    """The text report of a replay: totals, then one row per rank."""
    p = result.prediction
    kept = "" if result.delays else ", traced delays dropped"
    lines = [f"traced    {result.traced:.6g} s on {p.numprocs} ranks",
             (f"predicted {p.mean:.6g} s (sd {p.sd:.3g}, {p.runs} runs) on {machine}"
              f"{'' if result.speed == 1 else f' at speed x{result.speed:g}'}{kept}: "
              f"{result.error:+.1%}"),
             "",
             (f"{'rank':>4} {'traced':>10} {'compute':>10} {'mpi':>10} {'(delay)':>10} | "
              f"{'predicted':>10} {'compute':>10} {'comm':>10} {'waiting':>10}")]
    parts = p.breakdown()
    for r in result.ranks:
        lines.append(f"{r.rank:>4} {r.elapsed:>10.5g} {r.compute:>10.5g} {r.mpi:>10.5g} "
                     f"{r.delay:>10.5g} | "
                     f"{p.finish_mean[r.rank]:>10.5g} {parts['compute'][r.rank]:>10.5g} "
                     f"{parts['communication'][r.rank]:>10.5g} {parts['waiting'][r.rank]:>10.5g}")
    shares = ", ".join(f"{k} {v:.0%}" for k, v in p.critical_path_shares.items())
    lines.append(f"predicted critical path: {shares}")
    if result.delays:
        lines.append("(delay: MPI time after the data was there, beyond the usual for the "
                     "call's kind; replayed as computation, not scaled by --speed)")
    return "\n".join(lines)
