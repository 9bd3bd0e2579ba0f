"""``pevpm trace``, ``replay``, ``extract``: record a real MPI run, simulate it, model it.

    pevpm trace -o run -- mpiexec -n 2 python examples/jacobi/jacobi.py
    pevpm replay run --machine machine.db            # the same run on the profiled machine
    pevpm replay run --machine hockney:latency=50us,bandwidth=10MB/s --speed 2 --json
    pevpm replay fft --machine machine.db --coll alltoall=pairwise
    pevpm extract run -o model.py && pevpm predict model.py -n 2 --machine machine.db
    pevpm extract run2 run4 -o model.py && pevpm predict model.py -n 64,1024 --machine machine.db

See docs/trace.md.
"""

from __future__ import annotations

import argparse
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
from pevpm.cli.paths import writable_file, writable_folder
from pevpm.errors import PevpmError

DEFAULT_MACHINE = "default"


def register(subparsers) -> None:
    t = subparsers.add_parser(
        "trace",
        description="Run `mpiexec ... PROGRAM` with pevpm's PMPI tracer preloaded and write "
                    "every rank's MPI calls as an OTF2 archive DIR/traces.otf2.")
    t.add_argument("-o", "--output", required=True, metavar="DIR", type=writable_folder,
                   help="trace directory")
    t.add_argument("--keep-raw", action="store_true",
                   help="keep the tracer's raw per-rank records in DIR/raw")
    t.add_argument("command", nargs=argparse.REMAINDER, metavar="-- mpiexec -n N PROGRAM ...",
                   help="the MPI launch command")
    outputs.add_force(t)
    t.set_defaults(func=run_trace)

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

    x = subparsers.add_parser(
        "extract",
        description="Compress each rank's calls into loops, merge ranks of the same shape, "
                    "write peers as expressions of procnum and numprocs (neighbours, xor "
                    "partners, Cartesian shifts) and computations as fitted gamma draws, "
                    "and write the result as a Python model file. Given traces of one "
                    "program at several rank counts, loop counts, sizes and computations "
                    "are fitted as functions of numprocs (notes on stderr).")
    x.add_argument("trace", nargs="+",
                   help="trace directories or .otf2 anchor files, one per rank count")
    x.add_argument("-o", "--output", required=True, metavar="MODEL.py", type=writable_file,
                   help="model file")
    x.add_argument("--section", metavar="START:STOP",
                   help="model only each rank's run from the end of its first START call to the first "
                        "STOP call after it (e.g. MPI_Barrier:MPI_Gather, a timed loop "
                        "between a barrier and a gathered report)")
    x.add_argument("--allow-broken", action="store_true",
                   help="succeed even when the model does not run at a traced rank count or "
                        "at 8, 64 or 1,024 ranks (the problems are still reported)")
    outputs.add_force(x)
    x.set_defaults(func=run_extract)


def run_trace(args) -> int:
    from pevpm.trace.record.record import check_new, record

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    folder = outputs.check_folder(args.output, outputs.TRACE_FOLDER, force=args.force,
                                  inputs=outputs.input_paths(*command))
    check_new(folder)
    # A failed run's raw records are kept in DIR/raw for the user (keep_on_error).
    with outputs.replacing_folder(folder, outputs.TRACE_FOLDER.what,
                                  keep_on_error=True) as stage:
        done = record(command, stage, keep_raw=args.keep_raw)
    archive = Path(args.output) / done.archive.name
    print(f"pevpm trace: {done.numprocs} ranks, {done.calls} MPI calls -> {archive}",
          file=sys.stderr)
    if done.unrecorded_note():
        print(f"pevpm trace: note: {done.unrecorded_note()}", file=sys.stderr)
    return 0


def run_replay(args) -> int:
    from pevpm.machine.presets import parse_machine
    from pevpm.trace.otf2.read import read_archive
    from pevpm.trace.replay.replay import replay
    from pevpm.vm.fastengine import no_cycle_collection
    from pevpm.vm.leftovers import warning_lines

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
    with no_cycle_collection():     # a long trace is many small objects
        trace = read_archive(Path(args.trace))
    result = replay(trace, machine, speed=args.speed, runs=args.runs, seed=args.seed,
                    workers=args.workers, source=str(args.trace), delays=args.delays)
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


def write_perfetto(trace, machine, args) -> None:
    """Simulate run 0 of the replay with time slices and write it beside the recording."""
    from pevpm.cli.recorded import replay_run, write_beside

    predicted = replay_run(trace, machine, source=str(args.trace), seed=args.seed,
                           speed=args.speed, delays=args.delays)
    write_beside(trace, predicted, args.perfetto, source=str(args.trace),
                 predicted=f"replay on {args.machine}")


def run_extract(args) -> int:
    from pevpm.trace.extract.extract import extract
    from pevpm.trace.otf2.read import read_archive

    output = outputs.check_output(args.output, outputs.EXTRACTED_MODEL, force=args.force,
                                  inputs=[p for t in args.trace for p in outputs.archive_input(t)])
    traces = [read_archive(Path(t)) for t in args.trace]
    source = ", ".join(args.trace)
    if args.section:
        start, _, stop = args.section.partition(":")
        if not start or not stop:
            raise PevpmError(f"expected START:STOP (two MPI call names), got {args.section!r}",
                             "--section")
        traces = [t.section(start, stop) for t in traces]
        source += f" (from {start} to {stop})"
    result = extract(traces, source)
    outputs.write_text(output, result.text)
    for note in result.notes[1:]:
        print(f"pevpm extract: note: {note}", file=sys.stderr)
    print(f"pevpm extract: {result.events} MPI calls -> {result.lines} lines of model "
          f"in {args.output}", file=sys.stderr)
    check_model(args.output, result, args.allow_broken)
    return 0


def check_model(path: str, result, allow_broken: bool) -> None:
    """Run the extracted model at every traced count and at 8, 64 and 1,024 ranks
    (:func:`pevpm.trace.extract.extract.self_check`): a failure is an error (the model file
    stays, to be read) unless ``allow_broken``.  From one trace only a failure at
    its own count is (one count cannot tell how the program scales: the others are
    warnings); one rank, when no trace had one, is a note (a master/worker model
    from 2 and 4 ranks cannot know what one rank alone does)."""
    from pevpm.model.model_file import run_model_file
    from pevpm.trace.extract.extract import CHECK_COUNTS, self_check, trial_run

    model = run_model_file(path)        # as written, whatever its name ends with
    if min(result.counts) > 1:
        problem = trial_run(model, 1)
        verdict = "runs" if problem is None else f"does not run ({problem.message})"
        print(f"pevpm extract: note: the model {verdict} at 1 rank", file=sys.stderr)
    problems = self_check(model, result.counts)
    binding = [n for n, _, fatal in problems
               if fatal and (len(result.counts) > 1 or n in result.counts)]
    for numprocs, problem, fatal in problems:
        kind = "failed" if numprocs in binding and not allow_broken else "warning"
        verdict = "does not run" if fatal else "was not run to its end"
        print(f"pevpm extract: {kind}: the model {verdict} at {numprocs} ranks: {problem}",
              file=sys.stderr)
    if binding and not allow_broken:
        raise PevpmError(f"the extracted model does not run at {', '.join(map(str, binding))} "
                         "ranks (above); --allow-broken keeps it anyway", path)
    failed = {n for n, _, _ in problems}
    ran = [n for n in sorted(set(result.counts) | set(CHECK_COUNTS)) if n not in failed]
    if ran:
        print(f"pevpm extract: the model runs at {', '.join(map(str, ran))} ranks",
              file=sys.stderr)


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
