"""The ``pevpm`` command (``pevpm = pevpm.__main__:run``) and ``python -m pevpm``.

Ctrl-C is quiet from the first line of pevpm that Python runs for the
command: until :func:`pevpm.cli.main` takes Ctrl-C over, :func:`run` ends the
process at once with ``pevpm: interrupted`` and status 130, while the command
line's modules load.  Earlier than this module, while the interpreter itself
starts (``site``, the ``pevpm`` package's ``__init__``), only Python can
answer Ctrl-C, with its own ``KeyboardInterrupt`` traceback
(docs/reliability.md gives the figures).
"""

# The built-in module under ``signal``: importing ``signal`` itself loads ``enum``,
# the longest step between this line and Ctrl-C being pevpm's to answer.
import _signal as signal
import os
import sys


def _interrupted(signum, frame) -> None:
    sys.stderr.write("pevpm: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def run() -> None:
    """Load the command line with Ctrl-C ending the process quietly, then hand
    Ctrl-C back to Python and run :func:`pevpm.cli.run`."""
    quiet = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if quiet:
        signal.signal(signal.SIGINT, _interrupted)
    from pevpm.cli import run as run_command

    if quiet:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run_command()
    except KeyboardInterrupt:       # between the line above and main()'s own handling
        _interrupted(signal.SIGINT, None)


if __name__ == "__main__":
    run()
