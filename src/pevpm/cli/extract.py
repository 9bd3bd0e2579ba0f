"""``pevpm extract``: write a PEVPM model (a Python file) from one or more traces.

    pevpm extract run -o model.py && pevpm predict model.py -n 2 --machine machine.db
    pevpm extract run2 run4 -o model.py && pevpm predict model.py -n 64,1024 --machine machine.db

The traces come from ``pevpm trace`` (or Score-P); see docs/trace.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pevpm.cli import outputs
from pevpm.cli.paths import writable_file
from pevpm.errors import PevpmError


def register(subparsers) -> None:
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
                   help="model only each rank's run from the end of its first START call "
                        "to the first STOP call after it (e.g. MPI_Barrier:MPI_Gather, a "
                        "timed loop between a barrier and a gathered report)")
    x.add_argument("--allow-broken", action="store_true",
                   help="succeed even when the model does not run at a traced rank count or "
                        "at 8, 64 or 1,024 ranks (the problems are still reported)")
    outputs.add_force(x)
    x.set_defaults(func=run_extract)


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
