"""Run the pevpm command line in this process on one generated input and say
what happened: ``ok`` (status 0), ``error`` (one clean ``pevpm: error:``
line, status 2, or ``pevpm check`` findings, status 1), or a failure:
``traceback`` (an exception escaped or a traceback was printed), ``hang``
(more than :data:`LIMIT_SECONDS`), ``unclean`` (any other status or error
text).  Used by tests/fuzz/test_fuzz.py (quick) and benchmarks/fuzz.py (long).

>>> run(["show", "/no/such/model.c"]).kind
'error'
"""

from __future__ import annotations

import _thread
import contextlib
import io
import threading
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field

from pevpm.cli import main

#: An input that takes longer than this has hung.
LIMIT_SECONDS = 20.0
FAILURES = ("traceback", "hang", "unclean")


@dataclass
class Outcome:
    """What one command did."""

    argv: list[str]
    kind: str
    status: int | None
    seconds: float
    stderr: str
    warnings: list[str] = field(default_factory=list)
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES

    def describe(self) -> str:
        return (f"{self.kind} (status {self.status}, {self.seconds:.1f} s): pevpm "
                f"{' '.join(self.argv)}\n{self.detail or self.stderr}")


def run(argv: list[str], limit: float = LIMIT_SECONDS) -> Outcome:
    """``pevpm ARGV`` in-process, stopped (a ``hang``) after ``limit`` seconds."""
    out, err = io.StringIO(), io.StringIO()
    fired = threading.Event()

    def interrupt() -> None:
        fired.set()
        _thread.interrupt_main()

    timer = threading.Timer(limit, interrupt)
    timer.daemon = True
    status, detail, caught = None, "", []
    start = time.perf_counter()
    try:
        timer.start()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                status = main(list(argv))
            except KeyboardInterrupt:
                raise
            except BaseException:  # noqa: BLE001 - what escapes main is the finding
                detail = traceback.format_exc()
        timer.cancel()
    except KeyboardInterrupt:
        if not fired.is_set():
            raise
    finally:
        timer.cancel()
    seconds = time.perf_counter() - start
    stderr = err.getvalue()
    shown = [f"{w.category.__name__}: {w.message}" for w in caught]
    return Outcome(list(argv), _kind(status, stderr, detail, fired.is_set()), status, seconds,
                   stderr, shown, detail)


def _kind(status, stderr: str, detail: str, hung: bool) -> str:
    if hung:
        return "hang"
    if detail or "Traceback (most recent call last)" in stderr:
        return "traceback"
    if status == 0:
        return "ok"
    if status == 1:                       # pevpm check: findings on standard output
        return "error" if "pevpm: error" not in stderr else "unclean"
    if status == 2:
        lines = [line for line in stderr.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("pevpm: error: ")]
        clean = len(errors) == 1 and (len(lines) == 1 or (
            len(lines) == 3 and lines[-1].strip() == "^") or _notes_then_error(lines))
        return "error" if clean else "unclean"
    if status == 141 and not stderr:      # closed standard output
        return "error"
    return "unclean"


def _notes_then_error(lines: list[str]) -> bool:
    """``pevpm predict: note: ...`` lines, then the error (with its caret lines)."""
    body = [line for line in lines if not line.startswith("pevpm predict: note: ")]
    return 1 <= len(body) <= 3 and body[0].startswith("pevpm: error: ") \
        and (len(body) == 1 or body[-1].strip() == "^")


@dataclass
class Tally:
    """Outcomes counted over a fuzzing campaign."""

    kinds: Counter = field(default_factory=Counter)
    by_family: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    inputs: int = 0
    generator_errors: list = field(default_factory=list)
    warned: int = 0
    warnings: dict = field(default_factory=dict)
    slowest: float = 0.0

    def add(self, family: str, outcome: Outcome) -> None:
        self.kinds[outcome.kind] += 1
        self.by_family.setdefault(family, Counter())[outcome.kind] += 1
        self.warned += bool(outcome.warnings)
        for warning in outcome.warnings:
            self.warnings.setdefault(warning, " ".join(outcome.argv))
        self.slowest = max(self.slowest, outcome.seconds)
        if outcome.failed:
            self.failures.append((family, outcome))

    @property
    def total(self) -> int:
        return sum(self.kinds.values())


def small_profile(path) -> str:
    """Write a small synthetic machine profile (2 placements, 3 sizes) at ``path``."""
    outcome = run(["machine", "new", "-o", str(path), "--latency", "5us", "--bandwidth",
                   "1GB/s", "--sizes", "0,1024,65536", "--placements", "1x2,2x1",
                   "--samples", "60", "--force"], limit=120)
    if outcome.kind != "ok":
        raise RuntimeError(outcome.describe())
    return str(path)
