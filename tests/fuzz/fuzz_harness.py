"""Run the pevpm command line in this process on one generated input and say
what happened: ``ok`` (status 0), ``error`` (one clean ``pevpm: error:``
line, status 2, or ``pevpm check`` findings, status 1), or a failure:
``traceback`` (an exception escaped or a traceback was printed), ``hang``
(more than :data:`LIMIT_SECONDS` of CPU time, or :data:`WALL_FACTOR` times
that by the wall clock), ``unclean`` (any other status or error
text), ``changed`` (a file that was there before the command, other than
its own output, no longer has the same bytes: :func:`run_checked`).  Used by
tests/fuzz/test_fuzz.py (quick) and benchmarks/fuzz.py (long).

>>> run(["show", "/no/such/model.c"]).kind
'error'
"""

from __future__ import annotations

import _thread
import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from pevpm.cli import main

#: An input that takes longer than this has hung.
#: A command that uses more than this much CPU time (of this process) has hung ...
LIMIT_SECONDS = 20.0
#: ... and so has one that takes this long by the wall clock, whatever its CPU
#: time (a read blocked on a FIFO takes none).  Wall time alone would count a 1 s
#: command as hung when the campaign runs at nice 19 on a machine loaded to 10.
WALL_FACTOR = 6
FAILURES = ("traceback", "hang", "unclean", "changed")
#: Options whose value is a path the command writes.
OUTPUT_OPTIONS = frozenset({"-o", "--output", "--trace", "--perfetto", "--json", "--plot",
                            "--plots"})


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
    """``pevpm ARGV`` in-process: a ``hang`` after ``limit`` seconds of CPU time
    (checked when it ends) or ``limit * WALL_FACTOR`` seconds by the wall clock
    (where it is stopped).
    ``argv`` may start with ``@interrupt=SECONDS``: then the command runs in a
    child process that gets Ctrl-C that long after it started
    (:func:`run_interrupted`; in this process a Ctrl-C during an import would
    leave half-loaded modules behind for the next command)."""
    if argv and argv[0].startswith("@interrupt="):
        return run_interrupted(list(argv[1:]), float(argv[0].split("=", 1)[1]), limit)
    out, err = io.StringIO(), io.StringIO()
    alarm = WallAlarm(limit * WALL_FACTOR)
    status, detail, caught = None, "", []
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        with alarm, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                status = main(list(argv))
            except KeyboardInterrupt:
                raise
            except BaseException:  # noqa: BLE001 - what escapes main is the finding
                detail = traceback.format_exc()
    except KeyboardInterrupt:
        if not alarm.fired.is_set():
            raise
    seconds = time.perf_counter() - start
    hung = alarm.fired.is_set() or time.process_time() - cpu_start > limit
    stderr = err.getvalue()
    shown = [f"{w.category.__name__}: {w.message}" for w in caught]
    return Outcome(list(argv), _kind(status, stderr, detail, hung), status, seconds,
                   stderr, shown, detail)


#: Seconds between two Ctrl-Cs of :class:`WallAlarm` once the first is sent.
REPEAT_SECONDS = 1.0


class WallAlarm:
    """While active, a Ctrl-C (SIGINT, as the user's) to this process ``seconds`` after
    it began, then every :data:`REPEAT_SECONDS` until it ends: a command that
    lost one (it reached Python inside a finalizer, which prints it and goes
    on) still stops.  On the main thread a SIGALRM timer sends them, which a
    busy machine or a C loop holding the GIL cannot delay; elsewhere a thread
    (``_thread.interrupt_main``).  ``fired`` says whether one was sent.

    >>> with WallAlarm(60) as alarm:
    ...     pass
    >>> alarm.fired.is_set()
    False
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.fired = threading.Event()
        self._stop = threading.Event()
        self._previous = None
        self._thread = None

    def _interrupt(self, *_signal) -> None:
        if self._stop.is_set():             # a late alarm, the command already over
            return
        self.fired.set()
        if threading.current_thread() is not threading.main_thread():
            _thread.interrupt_main()
        elif callable(signal.getsignal(signal.SIGINT)):
            signal.raise_signal(signal.SIGINT)      # its handler runs here, at once
        else:                                       # Ctrl-C ignored (a background job)
            raise KeyboardInterrupt

    def _repeat(self) -> None:
        if not self._stop.wait(self.seconds):
            self._interrupt()
            while not self._stop.wait(REPEAT_SECONDS):
                self._interrupt()

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGALRM, self._interrupt)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, REPEAT_SECONDS)
        else:
            self._thread = threading.Thread(target=self._repeat, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        else:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
        return False


#: The child of :func:`run_interrupted`: Ctrl-C raises KeyboardInterrupt even when
#: this process ignores it (as a job started in the background does), then
#: ``python -m pevpm``.
CTRL_C_CHILD = ("import runpy, signal, sys; signal.signal(signal.SIGINT, "
                "signal.default_int_handler); sys.argv[0] = 'pevpm'; "
                "runpy.run_module('pevpm', run_name='__main__')")


def run_interrupted(argv: list[str], delay: float, limit: float = LIMIT_SECONDS) -> Outcome:
    """``python -m pevpm ARGV`` in a child process sent SIGINT (Ctrl-C) ``delay``
    seconds after it started.  It must finish as usual or end with status 130
    and one line; a traceback through :func:`pevpm.cli.main` is a failure.  A
    Ctrl-C that comes while the interpreter is still starting, before pevpm's
    code runs, gives Python's own traceback: counted as ``startup``, apart."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(main.__code__.co_filename).parents[2]), os.environ.get("PYTHONPATH", "")])}
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CTRL_C_CHILD, *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        child.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGINT)
    try:
        _, stderr_bytes = child.communicate(timeout=limit * WALL_FACTOR)
        hung = False
    except subprocess.TimeoutExpired:
        child.kill()
        _, stderr_bytes = child.communicate()
        hung = True
    stderr = stderr_bytes.decode("utf-8", "replace")
    status = child.returncode
    before_main = ("init_import_site" in stderr
                   or ("Traceback (most recent call last)" in stderr and "in main" not in stderr
                       and "KeyboardInterrupt" in stderr))
    if not hung and (before_main or (status == -signal.SIGINT and not stderr.strip())):
        kind = "startup"            # the interpreter had not reached pevpm's code
    else:
        kind = _kind(status, stderr, "", hung)
    return Outcome([f"@interrupt={delay:.3f}", *argv], kind, status,
                   time.perf_counter() - start, stderr)


def snapshot(*roots: Path) -> dict[Path, bytes]:
    """The bytes of every regular file at or under ``roots`` (special files,
    which reading could block on, are skipped)."""
    found: dict[Path, bytes] = {}
    stack = [Path(r) for r in roots]
    while stack:
        path = stack.pop()
        if path.is_symlink():
            continue
        if path.is_dir():
            stack.extend(path.iterdir())
        elif path.is_file():
            found[path.resolve()] = path.read_bytes()
    return found


def _outputs(argv: list[str]) -> tuple[list[Path], list[Path]]:
    """The paths ``argv`` names as outputs, and every other path it names."""
    if argv[:1] and argv[0].startswith("@interrupt="):
        argv = argv[1:]
    outputs, others = [], []
    for i, word in enumerate(argv):
        path = Path(word.partition(":")[0] if ":" in word and not Path(word).exists() else word)
        if i and argv[i - 1] in OUTPUT_OPTIONS and not word.startswith("-"):
            outputs.append(path.resolve())
        elif word != "report" and os.path.lexists(path):
            others.append(path.resolve())
    if argv[:1] == ["report"] and len(argv) > 1 and not argv[1].startswith("-"):
        outputs.append(Path(argv[1]).resolve())           # report DIR redraws DIR
    return outputs, others


#: Names of the files a command writes into an output folder (a report, plots,
#: a trace): inside a folder, only these may change.
FOLDER_FILES = re.compile(r"index\.html|results\.json|recorded-vs-predicted\.json|"
                          r"calibration\.json|trace\.json|machine\.db|\.pevpm-folder|"
                          r"traces(\.otf2|\.def)?|rank-\d+\.txt|.*\.png")


def changed_files(before: dict[Path, bytes], argv: list[str], status) -> list[str]:
    """Files of ``before`` whose bytes the command ``argv`` changed or removed
    though it must not have: any file after an error; after success, any file
    that is not one of its outputs or a file it writes (:data:`FOLDER_FILES`)
    inside an output folder, or is also one of its inputs."""
    outputs, inputs = _outputs(argv)
    changed = []
    for path, data in before.items():
        try:
            now = path.read_bytes() if path.is_file() else None
        except OSError:
            now = None
        if now == data:
            continue
        output = any(path == o or (path.is_relative_to(o) and FOLDER_FILES.fullmatch(path.name))
                     for o in outputs)
        also_input = any(path == i for i in inputs)
        if status != 0 or not output or also_input:
            changed.append(str(path))
    return changed


def run_checked(argv: list[str], roots: list[Path], limit: float = LIMIT_SECONDS) -> Outcome:
    """:func:`run`, then ``changed`` if the command altered a file under ``roots``
    that it must leave as it was (:func:`changed_files`)."""
    before = snapshot(*roots)
    outcome = run(argv, limit)
    if outcome.failed:
        return outcome
    changed = changed_files(before, argv, outcome.status)
    if changed:
        outcome.kind = "changed"
        outcome.detail = "files changed: " + ", ".join(changed[:5]) + "\n" + outcome.stderr
    return outcome


def _kind(status, stderr: str, detail: str, hung: bool) -> str:
    if hung:
        return "hang"
    if status == 130 and stderr == "pevpm: interrupted\n":   # Ctrl-C, ended cleanly
        return "error"
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


#: A line a command prints of its own work (``pevpm extract: 12 MPI calls ->``).
_OWN_LINE = re.compile(r"pevpm [a-z-]+: (?!error)")


def _notes_then_error(lines: list[str]) -> bool:
    """A command's own lines (``pevpm predict: note: ...``, ``pevpm extract:
    failed: ...``: never an error of their own), then the error (with its
    caret lines)."""
    body = [line for line in lines if not _OWN_LINE.match(line)]
    return 1 <= len(body) <= 3 and body[0].startswith("pevpm: error: ") \
        and (len(body) == 1 or body[-1].strip() == "^")


@dataclass
class Tally:
    """Outcomes counted over a fuzzing campaign."""

    kinds: Counter = field(default_factory=Counter)
    by_family: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    inputs: int = 0
    stopped: str | None = None            # the family a campaign stopped in (SIGTERM)
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
