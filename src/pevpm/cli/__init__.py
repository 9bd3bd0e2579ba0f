"""The ``pevpm`` command line.

Each area of the toolkit contributes its subcommands through a module
of this package with a ``register(subparsers)`` function; this module
only assembles them and turns :class:`pevpm.errors.PevpmError` and a bad
option alike into one line, ``pevpm: error: WHERE: WHAT``, and exit status 2.
A reader that closes the output early (``pevpm show m.c | head -1``) ends
the command quietly with status 141, as SIGPIPE would.

>>> build_parser().prog
'pevpm'
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from pevpm import __version__
from pevpm.errors import PevpmError

#: Thread-pool sizes of the BLAS libraries numpy and scipy load (each its
#: own OpenBLAS).  pevpm multiplies no matrices large enough for BLAS threads to pay, but
#: an idle BLAS thread spins on a core for a while after every small matrix
#: call, taking it from the simulation and from the Monte Carlo workers
#: (inherited by them).  Set here, before numpy is first imported; a value the
#: user exported wins.
SINGLE_THREADED_BLAS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                        "MKL_NUM_THREADS": "1"}
for _name, _value in SINGLE_THREADED_BLAS.items():
    os.environ.setdefault(_name, _value)


#: Which module registers each subcommand.  Only the module of the command
#: being run is imported (a rank of ``mpiexec -n 64 pevpm bench`` need not
#: load scipy and matplotlib); ``pevpm --help`` imports them all.
COMMANDS = {
    "predict": "pevpm.cli.predict",
    "calibrate": "pevpm.cli.calibrate",
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


#: Exit status after the reader of standard output went away (128 + SIGPIPE).
BROKEN_PIPE_STATUS = 141


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line, like every other error."""

    def error(self, message: str):
        self.exit(2, f"pevpm: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only that command's module is loaded."""
    parser = ArgumentParser(
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
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); the exit status.
    Ctrl-C at any moment, while a command's modules are still loading too, ends
    it with one line and status 130.

    >>> main(["--version"])  # doctest: +SKIP
    0
    """
    interrupted = _InterruptWatch()
    try:
        with interrupted:
            return _main(argv)
    except KeyboardInterrupt:
        pass
    except ImportError:             # Ctrl-C inside a C extension's import (numpy's)
        if not interrupted.seen:
            raise
    print("pevpm: interrupted", file=sys.stderr)
    return 130


class _InterruptWatch:
    """Notes a Ctrl-C while it is active (then raises KeyboardInterrupt as usual):
    one that comes while a C extension imports may reach Python as an
    ``ImportError`` instead, which is then an interruption too.  Only on the
    main thread with Python's own handler in place; elsewhere it does nothing."""

    def __init__(self):
        self.seen = False
        self.previous = None

    def _handler(self, signum, frame):
        self.seen = True
        raise KeyboardInterrupt

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            import signal

            signal.signal(signal.SIGINT, self.previous)
        return False


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:          # --help, --version or a usage error (printed)
        return done.code if isinstance(done.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PevpmError as exc:
        print(f"pevpm: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_STATUS


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush
    does not fail a second time on the closed pipe."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return                          # not a real file (a test's capture)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
