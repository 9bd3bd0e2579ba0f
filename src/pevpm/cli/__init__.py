"""The ``pevpm`` command line.

Each area of the toolkit contributes its subcommands through a module
of this package with a ``register(subparsers)`` function; this module
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

#: Which module registers each subcommand.  Only the module of the command
#: being run is imported (a rank of ``mpiexec -n 64 pevpm bench`` need not
#: load scipy and matplotlib); ``pevpm --help`` imports them all.
COMMANDS = {
    "predict": "pevpm.cli.predict",
    "show": "pevpm.cli.model",
    "check": "pevpm.cli.model",
    "bench": "pevpm.cli.bench",
    "profile": "pevpm.cli.bench",
    "fit": "pevpm.cli.machine",
    "machine": "pevpm.cli.machine",
    "analytic": "pevpm.cli.analytic",
    "lab": "pevpm.cli.validate",
    "validate": "pevpm.cli.validate",
    "demo": "pevpm.cli.report",
    "report": "pevpm.cli.report",
    "trace": "pevpm.cli.trace",
    "replay": "pevpm.cli.trace",
    "extract": "pevpm.cli.trace",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only that command's module is loaded."""
    parser = argparse.ArgumentParser(
        prog="pevpm",
        description="Predict and explain the performance of MPI programs.",
    )
    parser.add_argument("--version", action="version", version=f"pevpm {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
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
