"""The ``pevpm`` command line.

Each command has a module of this package named after it, with a
``register(subparsers)`` function that adds that command alone; this module
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
from typing import NamedTuple

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


class Command(NamedTuple):
    """A subcommand: the module that registers it and the line ``pevpm --help`` shows."""

    module: str
    summary: str


#: Every subcommand, its module and its summary.  Only the module of the
#: command being run is imported (a rank of ``mpiexec -n 64 pevpm bench``
#: need not load scipy and matplotlib), and ``pevpm --help`` imports none:
#: it lists these summaries (pip's command registry does the same).
COMMANDS: dict[str, Command] = {
    "predict": Command("pevpm.cli.predict",
                       "predict a model's run time over process counts (Monte Carlo)"),
    "calibrate": Command("pevpm.cli.calibrate",
                         "time a program's serial regions and write them as model parameters"),
    "show": Command("pevpm.cli.show",
                    "print the PEVPM model of an annotated source or model file"),
    "check": Command("pevpm.cli.check", "lint an annotated source against its PEVPM directives"),
    "bench": Command("pevpm.cli.bench",
                     "measure the machine's MPI performance (run under mpiexec)"),
    "profile": Command("pevpm.cli.profile", "inspect a machine profile"),
    "fit": Command("pevpm.cli.fit",
                   "fit distributions (Pearson V, Weibull, ...) to every block of a profile"),
    "machine": Command("pevpm.cli.machine",
                       "list the built-in machines; write hypothetical ones"),
    "analytic": Command("pevpm.cli.analytic",
                        "closed-form scaling laws, SPMD queueing models, DP*Graph"),
    "lab": Command("pevpm.cli.lab", "run MPI programs over shaped links on this machine"),
    "validate": Command("pevpm.cli.validate",
                        "run an example for real and compare it with predictions"),
    "demo": Command("pevpm.cli.demo", "benchmark this machine, fit, calibrate, validate the "
                                        "examples, predict, and write an HTML report"),
    "report": Command("pevpm.cli.report", "rebuild the HTML report from saved results"),
    "trace": Command("pevpm.cli.trace", "run an MPI program with every MPI call recorded (OTF2)"),
    "replay": Command("pevpm.cli.replay", "simulate a traced run on a (different) machine"),
    "extract": Command("pevpm.cli.extract", "write a PEVPM model (Python) from a trace"),
}


#: Exit status after the reader of standard output went away (128 + SIGPIPE).
BROKEN_PIPE_STATUS = 141


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line, like every other error."""

    def error(self, message: str):
        self.exit(2, f"pevpm: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: with ``command``, only that command's module is loaded and
    its options parsed; without, the commands and their summaries, nothing loaded.

    >>> sorted(build_parser("show")._subparsers._group_actions[0].choices)
    ['show']
    """
    parser = ArgumentParser(
        prog="pevpm",
        description="Predict and explain the performance of MPI programs.",
    )
    parser.add_argument("--version", action="version", version=f"pevpm {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command in COMMANDS:
        importlib.import_module(COMMANDS[command].module).register(subparsers)
        return parser
    for name, entry in COMMANDS.items():    # the listing: no command module is loaded
        subparsers.add_parser(name, help=entry.summary, add_help=False)
    return parser


def run() -> None:
    """The ``pevpm`` command and ``python -m pevpm``: :func:`main`, then the exit.
    After a Ctrl-C the process ends at once, without Python's finalization,
    which can crash (a fatal error, status -6) on extension modules the
    interruption left half-imported.  A Ctrl-C that comes once the command is
    done, while Python winds down, ends the process at once with the
    command's own status, and from the exit functions on it is ignored: past
    them Python puts the default action back, which kills the process (-2)."""
    status = main()
    if status == 130:
        _exit_now(130)
    import atexit
    import signal

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, lambda signum, frame: _exit_now(status))
        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)   # runs first
    sys.exit(status)


def _exit_now(status: int) -> None:
    """End the process with ``status`` now, its standard streams flushed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


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
    except Exception:               # a Ctrl-C can surface as another exception: an
        if not interrupted.seen:    # ImportError inside numpy's import, a RuntimeError
            raise                   # from a class body (matplotlib's __set_name__)
    print("pevpm: interrupted", file=sys.stderr)
    return 130


class _InterruptWatch:
    """Notes a Ctrl-C while it is active (then raises KeyboardInterrupt as usual):
    one that comes while a module imports may reach Python as another
    exception instead (an ``ImportError``, a ``RuntimeError``), which is then
    an interruption too.  Only on the
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
