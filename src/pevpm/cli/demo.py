"""``pevpm demo``'s command line; the pipeline it runs is :mod:`pevpm.cli.demo_pipeline`,
imported only when the command runs (so ``pevpm demo --help`` is quick).

>>> default_progress.__name__
'default_progress'
"""

from __future__ import annotations

import argparse
import sys
import time

from pevpm.cli import outputs
from pevpm.cli.paths import writable_folder


def register(subparsers) -> None:
    """Add ``pevpm demo`` to the command line.

    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="pevpm")
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["demo", "--quick"]).quick
    True
    """
    demo = subparsers.add_parser(
        "demo",
        description="The main job: MPIBench on this machine (or a given profile), distribution "
                    "fits, calibration of the examples' serial segments, real runs of the three "
                    "case studies against predictions, predictions out to 1024 processes, and "
                    "an HTML report with plots and a Perfetto trace.")
    demo.add_argument("-o", "--output", default="pevpm-report", metavar="DIR",
                      type=writable_folder, help="report folder (default: %(default)s)")
    demo.add_argument("--quick", action="store_true",
                      help="smaller problems and fewer repeats (the CI smoke test)")
    demo.add_argument("--profile", metavar="PATH",
                      help="use this machine profile instead of benchmarking, or a built-in "
                           "profile's name: 'default' is the profile shipped with pevpm "
                           "(measured on a 2-core machine; pevpm machine list)")
    outputs.add_force(demo)
    demo.set_defaults(func=run_demo_command)


def run_demo_command(args: argparse.Namespace) -> int:
    """``pevpm demo``: :func:`~pevpm.cli.demo_pipeline.run_demo` with the command line's options, into a new
    folder moved into place once the report is whole (:mod:`pevpm.cli.outputs`)."""
    from pevpm.cli import demo_pipeline  # numpy, scipy, matplotlib: not for --help

    folder = outputs.check_folder(args.output, outputs.REPORT_FOLDER, force=args.force,
                                  inputs=outputs.input_paths(args.profile))
    with outputs.replacing_folder(folder, outputs.REPORT_FOLDER.what) as stage:
        demo_pipeline.run_demo(str(stage), quick=args.quick, profile=args.profile, progress=default_progress)
    print(f"report: {args.output}/index.html")
    return 0


def default_progress(message: str) -> None:
    """Progress lines on stderr, with the time since start."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


__all__ = ["default_progress", "register", "run_demo_command"]
