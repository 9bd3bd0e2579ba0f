"""Progress that fits where it is shown: a bar on a terminal, plain lines in a log.

:func:`progress_bar` returns a :mod:`tqdm` bar when the stream is a terminal
and otherwise a :class:`LineProgress`, which writes an ordinary line (no
carriage return, no escape code) at most every ``interval`` seconds and one
when it closes -- so ``pevpm bench ... > log 2>&1`` leaves a readable log.
Both take the same calls: ``update``, ``set_description``,
``set_postfix_str``, ``close`` and use as a context manager.

>>> import io
>>> log = io.StringIO()
>>> with progress_bar(4, "bench 1x2", "block", stream=log, interval=0) as bar:
...     bar.update(2)
...     bar.set_postfix_str("isend 1024 B")
...     bar.update(2)
>>> print(log.getvalue(), end="")
bench 1x2: 2/4 blocks
bench 1x2: 4/4 blocks (isend 1024 B)
bench 1x2: done, 4/4 blocks
>>> "\\r" in log.getvalue()
False

This module imports nothing heavy (``tqdm`` only on a terminal), so
``pevpm bench`` ranks stay light.
"""

from __future__ import annotations

import sys
import time
from typing import Self, TextIO

#: Seconds between two plain progress lines by default.
LINE_INTERVAL = 30.0


class LineProgress:
    """Occasional plain progress lines: ``DESC: DONE/TOTAL UNITs (POSTFIX)``.

    The first line comes after ``interval`` seconds, so short jobs print only
    the closing line; ``quiet_close=True`` drops that too (nothing at all
    for a job shorter than ``interval``).

    >>> import io
    >>> log = io.StringIO()
    >>> bar = LineProgress(10, "predict", "run", stream=log, interval=3600)
    >>> bar.update(10); bar.close()
    >>> log.getvalue()
    'predict: done, 10/10 runs\\n'

    A line says how long the rest will take at the pace so far:

    >>> now = [0.0]
    >>> bar = LineProgress(100, "16 ranks", "run", stream=log, interval=30,
    ...                    clock=lambda: now[0])
    >>> now[0] = 40.0; bar.update(40)
    >>> log.getvalue().splitlines()[-1]
    '16 ranks: 40/100 runs, about 1m00s left'

    Weighted, when later units cost more (runs on more ranks):

    >>> now[0] = 0.0
    >>> bar = LineProgress(20, "predict", "run", stream=log, interval=30,
    ...                    clock=lambda: now[0], work_total=10 * 1 + 10 * 4)
    >>> bar.set_weight(1); now[0] = 40.0; bar.update(10)     # 10 runs on 1 rank: 40 s
    >>> log.getvalue().splitlines()[-1]
    'predict: 10/20 runs, about 2m40s left'
    """

    def __init__(self, total: int | None, desc: str = "", unit: str = "it",
                 stream: TextIO | None = None, interval: float = LINE_INTERVAL,
                 quiet_close: bool = False, clock=time.monotonic,
                 work_total: float | None = None):
        self.total = total
        self.n = 0
        self.work_total = work_total if work_total is not None else total
        self.work_done = 0.0
        self.weight = 1.0
        self.desc = desc
        self.unit = unit
        self.postfix = ""
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.quiet_close = quiet_close
        self._clock = clock
        self._last = self._started = clock()
        self._closed = False

    def _line(self, prefix: str = "") -> str:
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        plural = self.unit if self.unit.endswith("s") else self.unit + "s"
        postfix = f" ({self.postfix})" if self.postfix else ""
        head = f"{self.desc}: " if self.desc else ""
        left = "" if prefix else self._time_left()
        return f"{head}{prefix}{count} {plural}{postfix}{left}"

    def _time_left(self) -> str:
        """``, about 2m10s left`` at the pace so far (nothing before the first unit
        or the first second)."""
        elapsed = self._clock() - self._started
        if not self.work_total or self.work_done <= 0 or self.n >= (self.total or 0) \
                or elapsed < 1:
            return ""
        left = elapsed / self.work_done * (self.work_total - self.work_done)
        return f", about {duration_text(left)} left"

    def set_weight(self, weight: float) -> None:
        """How much work each unit counted from now on is, for the time left (a
        prediction's run on 1,024 ranks is worth 1,024 of its runs on one)."""
        self.weight = float(weight)

    def _write(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more finished units; print a line if ``interval`` has passed."""
        self.n += n
        self.work_done += n * self.weight
        now = self._clock()
        if now - self._last >= self.interval:
            self._last = now
            self._write(self._line())

    def set_description(self, desc: str) -> None:
        """Name what is being counted (shown at the start of each line)."""
        self.desc = desc

    def set_postfix_str(self, text: str) -> None:
        """What is in progress now (shown in parentheses)."""
        self.postfix = text

    def close(self) -> None:
        """Print the closing line (unless ``quiet_close``), once."""
        if not self._closed and not self.quiet_close:
            self.postfix = ""
            self._write(self._line("done, "))
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def duration_text(seconds: float) -> str:
    """``45s``, ``2m10s``, ``1h05m``: a time left, to the second below an hour.

    >>> duration_text(44.6), duration_text(130), duration_text(3900)
    ('45s', '2m10s', '1h05m')
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal (False for files, pipes, StringIO).

    >>> import io
    >>> is_terminal(io.StringIO())
    False
    """
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # closed stream
        return False


def progress_bar(total: int | None, desc: str = "", unit: str = "it",
                 stream: TextIO | None = None, interval: float = LINE_INTERVAL,
                 quiet_close: bool = False, leave: bool = True,
                 work_total: float | None = None):
    """A tqdm bar on a terminal, else a :class:`LineProgress` (see module doc).

    ``leave=False`` erases the bar when it closes (terminal only); ``work_total``
    weighs the time left (:meth:`LineProgress.set_weight`; tqdm's own estimate
    counts units).
    """
    stream = stream if stream is not None else sys.stderr
    if is_terminal(stream):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc or None, unit=unit, file=stream,
                    dynamic_ncols=True, leave=leave)
    return LineProgress(total, desc, unit, stream=stream, interval=interval,
                        quiet_close=quiet_close, work_total=work_total)


__all__ = ["LINE_INTERVAL", "LineProgress", "duration_text", "is_terminal", "progress_bar"]
