"""``pevpm demo`` (the whole pipeline) and ``pevpm report`` (redraw the report).

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="pevpm")
>>> register(parser.add_subparsers())
>>> parser.parse_args(["demo", "--quick"]).quick
True
"""

from __future__ import annotations

import argparse

from pevpm.cli.paths import writable_folder


def register(subparsers) -> None:
    demo = subparsers.add_parser(
        "demo", help="benchmark this machine, fit, calibrate, validate the examples, predict, "
                     "and write an HTML report",
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
    demo.set_defaults(func=run_demo)

    report = subparsers.add_parser("report", help="rebuild the HTML report from saved results")
    report.add_argument("directory", nargs="?", default="pevpm-report",
                        help="report folder holding results.json (default: %(default)s)")
    report.set_defaults(func=run_report)


def run_demo(args: argparse.Namespace) -> int:
    from pevpm.cli.demo import default_progress, run_demo

    run_demo(args.output, quick=args.quick, profile=args.profile, progress=default_progress)
    print(f"report: {args.output}/index.html")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from pevpm.report.html import rebuild_report

    print(f"report: {rebuild_report(args.directory)}")
    return 0
