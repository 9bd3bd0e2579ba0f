"""Clean Ctrl-C / SIGTERM handling for a benchmark running under mpiexec.

A rank interrupted inside a blocking MPI call never returns to Python, so a
``KeyboardInterrupt`` in the main thread cannot be relied on.  Instead the
Python handlers for SIGINT and SIGTERM do nothing, and Python's signal
wake-up file descriptor (written from the C-level handler, whichever thread
the signal lands on) wakes a watcher thread.  The watcher waits for any
profile commit in progress (:meth:`InterruptWatch.critical`), runs the
report callback and ends the process with exit code 130.

>>> watch = InterruptWatch.install()   # main thread only  # doctest: +SKIP
>>> watch.start(lambda: print("interrupted"))        # doctest: +SKIP
>>> with watch.critical():                           # doctest: +SKIP
...     writer.write_block(...)
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable

SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODE = 130


def _ignore(signum, frame) -> None:
    """Main-thread part of the handler: nothing; the watcher thread acts."""


class InterruptWatch:
    """Owns the wake-up pipe and the watcher thread; see the module docstring."""

    def __init__(self, read_fd: int):
        self._read_fd = read_fd
        self._lock = threading.Lock()

    @classmethod
    def install(cls) -> InterruptWatch:
        """Route SIGINT/SIGTERM to the wake-up pipe; call from the main thread."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        for sig in SIGNALS:
            signal.signal(sig, _ignore)
        return cls(read_fd)

    def start(self, report: Callable[[], None], linger_s: float = 0.0) -> None:
        """Watch for the signals; on one, run ``report`` and exit after ``linger_s`` seconds."""
        def watch():
            while os.read(self._read_fd, 1)[0] not in SIGNALS:
                pass
            with self._lock:
                try:
                    report()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    if linger_s:
                        threading.Event().wait(linger_s)
                    os._exit(EXIT_CODE)

        threading.Thread(target=watch, name="pevpm-interrupt-watch", daemon=True).start()

    @contextlib.contextmanager
    def critical(self):
        """Hold off the exit while the body runs (a profile commit)."""
        with self._lock:
            yield
