"""The ``pevpm`` command line.

Each area of the toolkit contributes its subcommands through a
``commands`` module with a ``register(subparsers)`` function; this module
only assembles them and turns :class:`pevpm.errors.PevpmError` into a
one-line message and a non-zero exit.

>>> build_parser().prog
'pevpm'
"""

from __future__ import annotations

import argparse
import importlib
import sys

from pevpm import __version__
from pevpm.errors import PevpmError

COMMAND_MODULES = (
    "pevpm.vm.commands",
    "pevpm.model.commands",
    "pevpm.bench.commands",
    "pevpm.machine.commands",
    "pevpm.analytic.commands",
    "pevpm.validate.commands",
    "pevpm.report.commands",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pevpm",
        description="Predict and explain the performance of MPI programs.",
    )
    parser.add_argument("--version", action="version", version=f"pevpm {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PevpmError as exc:
        print(f"pevpm: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pevpm: interrupted", file=sys.stderr)
        return 130
