"""Timing a serial region: batches for the mean, single calls for the spread.

:func:`time_call` times batches of calls, long enough for the clock to be
accurate, and reports the median over batches; :func:`call_spread` times
single calls, whose variation a rank that waits for its neighbours pays
for; :func:`neighbours_running` keeps the other cores busy with the same
work meanwhile, as the other ranks of a real job would.  :func:`time_region`
does all three around a probe of the machine's load
(:mod:`pevpm.host`) and measures again when the machine
was busy.

>>> timing = time_region(lambda: sum(range(200)), name="sum", calls=200, repeats=3,
...                      min_batch=0.001, probe_interval=0.01)
>>> timing.name, timing.spread.calls, timing.batches["median"] > 0
('sum', 200, True)
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from pevpm.calibrate.robust import RobustSummary, robust_summary
from pevpm.errors import PevpmError
from pevpm.host import MachineState, disturbance, probe_machine


def time_call(fn, repeats: int = 7, min_batch: float = 0.02) -> dict:
    """Seconds per call of ``fn()``: median, mean, sd, min, max over ``repeats`` batches.

    The batch length (calls per batch) doubles until one batch lasts ``min_batch``.

    >>> stats = time_call(lambda: sum(range(1000)), repeats=3, min_batch=0.001)
    >>> sorted(stats) == ['calls_per_batch', 'max', 'mean', 'median', 'min', 'repeats', 'sd']
    True
    """
    if repeats < 1:
        raise PevpmError(f"need at least one repeat, got {repeats}")
    calls = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - t0 >= min_batch:
            break
        calls *= 2
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls)
    return {"median": statistics.median(samples), "mean": statistics.fmean(samples),
            "sd": statistics.stdev(samples) if repeats > 1 else 0.0,
            "min": min(samples), "max": max(samples), "repeats": repeats,
            "calls_per_batch": calls}


def call_spread(fn, calls: int = 2000) -> dict:
    """Mean and standard deviation (seconds) of ``calls`` individually timed calls.

    :func:`time_call` times batches, which hides how much one call varies; a
    rank that waits for its neighbour each iteration pays for that variation.

    >>> spread = call_spread(lambda: None, calls=10)
    >>> sorted(spread), spread["sd"] >= 0
    (['calls', 'mean', 'sd'], True)
    """
    times = single_call_times(fn, calls)
    return {"mean": float(times.mean()), "sd": float(times.std()), "calls": calls}


def single_call_times(fn: Callable[[], object], calls: int) -> np.ndarray:
    """Seconds each of ``calls`` calls of ``fn()`` took, timed one by one.

    >>> single_call_times(lambda: None, 5).shape
    (5,)
    """
    if calls < 1:
        raise PevpmError(f"need at least one call to time, got {calls}")
    times = np.empty(calls)
    for index in range(calls):
        began = time.perf_counter()
        fn()
        times[index] = time.perf_counter() - began
    return times


def _spin(fn, stop) -> None:
    while not stop.is_set():
        fn()


@contextlib.contextmanager
def neighbours_running(fn, nprocs: int):
    """While the block runs, ``fn`` runs in a loop in as many other processes
    as the other ranks of an ``nprocs``-rank job that get a core of their own
    here: a rank's kernel is timed while its neighbours compute too (shared
    caches, memory bandwidth and clocks slow it, as in the real run).

    >>> with neighbours_running(lambda: None, 1):
    ...     pass
    """
    count = min(nprocs, os.cpu_count() or 1) - 1
    if count <= 0:
        yield
        return
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    workers = [context.Process(target=_spin, args=(fn, stop), daemon=True)
               for _ in range(count)]
    for worker in workers:
        worker.start()
    try:
        yield
    finally:
        stop.set()
        for worker in workers:
            worker.join(5)
            if worker.is_alive():
                worker.terminate()


@dataclass(frozen=True)
class RegionTiming:
    """What :func:`time_region` measured for one region at one rank count.

    ``batches``: :func:`time_call`'s figures (seconds per call);
    ``spread``: a :class:`RobustSummary` of single calls; ``before`` /
    ``after``: the machine's load around the measurement; ``attempts``:
    how many times it was measured (more than one when the machine was
    busy); ``disturbed``: why the kept attempt still looks disturbed, or
    ``None``.

    >>> t = time_region(lambda: None, "noop", calls=20, repeats=2, min_batch=0.001,
    ...                 retries=0, probe_interval=0.01)
    >>> t.to_dict()["spread"]["calls"], t.attempts
    (20, 1)
    """

    name: str
    nprocs: int
    batches: dict
    spread: RobustSummary
    before: MachineState
    after: MachineState
    attempts: int
    disturbed: str | None

    def to_dict(self) -> dict:
        """Plain data for JSON: the figures, the spread and both machine states."""
        return {"name": self.name, "nprocs": self.nprocs, "batches": self.batches,
                "spread": self.spread.to_dict(), "before": self.before.to_dict(),
                "after": self.after.to_dict(), "attempts": self.attempts,
                "disturbed": self.disturbed}


def time_region(fn: Callable[[], object], name: str = "region", *, nprocs: int = 1,
                calls: int = 2000, repeats: int = 7, min_batch: float = 0.02,
                retries: int = 2, probe_interval: float = 0.2) -> RegionTiming:
    """Time ``fn()`` as a rank of an ``nprocs``-rank job would run it here.

    The other ``nprocs - 1`` ranks' work runs alongside (on the cores there
    are); the machine is probed before and after; a measurement during
    which other processes were busy is taken again, up to ``retries`` more
    times, and the quietest attempt is kept (``disturbed`` says what was
    still wrong with it).
    """
    if nprocs < 1:
        raise PevpmError(f"a job has at least one rank, got {nprocs}")

    def measure():
        with neighbours_running(fn, nprocs):
            return time_call(fn, repeats, min_batch), robust_summary(single_call_times(fn, calls))

    watched = quietest(measure, retries, probe_interval)
    batches, spread = watched.value
    return RegionTiming(name, nprocs, batches, spread, watched.before, watched.after,
                        watched.attempts, watched.disturbed)


@dataclass(frozen=True)
class Watched:
    """A measurement's ``value`` with the machine's state ``before`` and ``after``
    it, the ``attempts`` it took and why it still looks ``disturbed`` (or None).

    >>> from pevpm.host import MachineState
    >>> quiet = MachineState(load=0.1, cores=2, others=0.0, spin_rate=4e7)
    >>> Watched(1.5, quiet, quiet, 1, None).disturbed is None
    True
    """

    value: object
    before: MachineState
    after: MachineState
    attempts: int
    disturbed: str | None


def quietest(measure: Callable[[], object], retries: int = 2, probe_interval: float = 0.2,
             on_retry: Callable[[str], None] = lambda why: None) -> Watched:
    """Run ``measure()`` between two probes of the machine; while other processes
    kept it busy, measure again (up to ``retries`` more times, ``on_retry(why)``
    before each) and keep the quietest attempt.

    >>> watched = quietest(lambda: 42, retries=0, probe_interval=0.01)
    >>> watched.value, watched.attempts
    (42, 1)
    """
    best, best_others = None, 0.0
    for attempt in range(1, retries + 2):
        before = probe_machine(probe_interval)
        value = measure()
        after = probe_machine(probe_interval)
        busiest = max(before, after, key=lambda state: state.others)
        why = disturbance(before, busiest) if busiest.busy() else None
        if best is None or busiest.others < best_others:
            best, best_others = Watched(value, before, after, attempt, why), busiest.others
        if why is None:
            break
        if attempt <= retries:
            on_retry(why)
    return replace(best, attempts=attempt)
