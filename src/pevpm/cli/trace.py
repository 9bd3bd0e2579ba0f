"""``pevpm trace``: run an MPI program with every MPI call recorded as an OTF2 archive.

    pevpm trace -o run -- mpiexec -n 2 python examples/jacobi/jacobi.py
    pevpm replay run --machine machine.db     # then simulate it (cli/replay.py)
    pevpm extract run -o model.py             # or model it (cli/extract.py)

See docs/trace.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pevpm.cli import outputs
from pevpm.cli.paths import writable_folder


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
