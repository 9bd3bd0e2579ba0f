"""Steady-state loops: simulate a long loop's first iterations, extrapolate the rest.

Many models spend nearly all their time in one outer loop (``Loop
iterations``) whose iterations, after a few, all look alike: every rank's
clock advances by the same amount per iteration, up to Monte Carlo noise.
Simulating a thousand identical iterations then buys nothing a hundred do
not.  A prediction with a *steady loop* runs every Monte Carlo run with the
loop cut to its first ``m`` iterations, recording each rank's clock and
time breakdown at every iteration end; pooled over the runs, it checks that

* every rank's mean advance per iteration over the last ``w`` iterations
  agrees with its advance over the ``w`` before, within
  :data:`TOLERANCE` (relative) plus three standard errors (the Monte Carlo
  noise of the comparison),
* every rank advances at the pace of the ranks' mean clock, within the
  same bound: the ranks move in lockstep, so what follows the loop starts
  equally late on every rank, and
* the latest rank's clock advances at the pace of the ranks' mean clock,
  within the same bound: the ranks' spread has stopped changing (at 1,024
  ranks on the shipped profile it still grows after 64 iterations, and the
  run time, which follows the latest clock, runs 5% faster than the mean
  clock);

and if so adds the remaining ``N - m`` iterations to each run analytically:
``S = (N - m) mu + sqrt(N - m) sigma z`` seconds, ``mu`` the pooled mean
advance per iteration of the ranks' mean clock, ``sigma**2`` the variance
of a ``2w``-iteration window sum per iteration (autocorrelation included),
``z`` a standard normal drawn from the run's own stream.  Each rank's
finish moves by ``S``, split over compute, communication and waiting as
that rank's last window was.  The estimated error of the mean (three
standard errors of ``mu`` plus its drift between the windows, over the
remaining iterations) must be at most :data:`MAX_ERROR`.

Runs whose ranks are not in lockstep yet because a start-up wave is still
crossing them (ranks settling one after another, at a steady speed through
the rank numbers: the deterministic Jacobi) are projected rank by rank
through that wave instead (:mod:`pevpm.vm.strategies.wave`), when its projection's
error is within :data:`MAX_ERROR`.  Otherwise it doubles ``m`` and tries
again, and simulates every iteration once ``m`` would pass a quarter of
the loop.

Only loops whose every iteration runs the same statements qualify
(:func:`find_loop`): an outer loop (not inside a Runon or Condition) with
the same count on every rank, at least :data:`THRESHOLD` iterations, and a
body without Conditions, ``MPI_ANY_SOURCE`` receives, ``MPI_Test``, nested
loops, or any operand that changes from iteration to iteration (the loop
index, a receive status).  Random serial times and message times are
fine: that is the noise the check allows for.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.vm.kernel.program import compile_model
>>> b = ModelBuilder(parameters={"iterations": 1000})
>>> with b.loop("parameter iterations"):
...     b.sendrecv(8, dest="(procnum + 1) % numprocs", source="(procnum + numprocs - 1) % numprocs")
>>> loop = find_loop(compile_model(b.build()), b.build(), 4, {})
>>> loop.count, loop.loop_pc, loop.next_pc
(1000, 0, 2)
>>> b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE")
>>> find_loop(compile_model(b.build()), b.build(), 4, {}).count
1000
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from pevpm.model.ast import Model
from pevpm.model.expr import ANY_SOURCE
from pevpm.vm.kernel import program as vm
from pevpm.vm.strategies.prediction import RunSummary
from pevpm.vm.strategies.wave import Wave, project_wave

#: Loops shorter than this are simulated whole.
THRESHOLD = 256
#: Iterations simulated at first (doubled while the advance has not settled).
FIRST = 64
#: Relative agreement asked of per-iteration advances (besides the noise).
TOLERANCE = 0.005
#: Standard errors of Monte Carlo noise allowed in the comparisons.
NOISE_SE = 3.0
#: Largest estimated relative error of the mean run time accepted.
MAX_ERROR = 0.01


@dataclass(frozen=True)
class SteadyLoop:
    """The outer loop a prediction may extrapolate: its LOOP and NEXT
    instructions, its iteration count and its place."""

    loop_pc: int
    next_pc: int
    count: int
    where: str


def find_loop(program: vm.Program, model: Model, numprocs: int,
              params: Mapping[str, float] | None) -> SteadyLoop | str:
    """The longest outer loop that qualifies, or why none does."""
    env = {**model.constants, **model.parameters, **(params or {}), "numprocs": numprocs}
    code = program.code
    best, reason, pc = None, "the model has no outer loop", 0
    while pc < len(code):
        if code[pc].op == vm.LOOP:
            found = _qualifies(code, pc, code[pc].exit, env, numprocs)
            if isinstance(found, str):
                reason = found
            elif best is None or found.count > best.count:
                best = found
        pc = _after(code, pc)
    return best if best is not None else reason


def _after(code, pc: int) -> int:
    """The pc after the statement starting at ``pc`` (a whole loop or branch)."""
    ins = code[pc]
    if ins.op in (vm.LOOP, vm.REPEAT, vm.RUNON):
        return ins.exit
    if ins.op == vm.CONDITION:
        p = ins.arms[0][1]
        while code[p].op != vm.JUMP:        # the first arm ends in a jump to the end
            p = _after(code, p)
        return code[p].target
    return pc + 1


def _qualifies(code, loop_pc: int, exit_pc: int, env: dict, numprocs: int) -> SteadyLoop | str:
    ins = code[loop_pc]
    where = ins.where
    if not getattr(ins.count, "invariant", False):
        return f"the loop at {where} has a count that is not fixed for the run"
    counts = {ins.count(dict(env, procnum=r)) for r in range(numprocs)}
    if len(counts) != 1:
        return f"the loop at {where} has a different count on different ranks"
    count = counts.pop()
    for body in code[loop_pc + 1:exit_pc - 1]:
        op = body.op
        if op in (vm.CONDITION, vm.TEST, vm.LOOP, vm.REPEAT):
            return (f"the loop at {where} holds a {vm.OPCODE_NAMES[op].lower()}, whose "
                    "pattern may change from iteration to iteration")
        values = _operands(body)
        if not all(_fixed(v) or _random_only(v) for v in values):
            return (f"the loop at {where} uses a value that changes from iteration to "
                    "iteration (the loop index or a receive status)")
        if op in (vm.RECV, vm.SENDRECV):
            source = body.peer if op == vm.RECV else body.src
            if not _fixed(source) or any(
                    source(dict(env, procnum=r)) == ANY_SOURCE for r in range(numprocs)):
                return f"the loop at {where} receives from MPI_ANY_SOURCE (a race)"
    if count != int(count) or count < THRESHOLD:
        return f"the loop at {where} has {count} iterations (fewer than {THRESHOLD})"
    return SteadyLoop(loop_pc, exit_pc - 1, int(count), where)


def _operands(ins: tuple) -> list:
    if ins.op == vm.RUNON:
        return [predicate for predicate, _ in ins.arms]
    return [value for _, value in vm.operands(ins) if value is not None]


def _fixed(value) -> bool:
    """A value that is the same in every iteration (constant or invariant)."""
    return getattr(value, "invariant", False) or hasattr(value, "value")


def _random_only(value) -> bool:
    """A random draw whose arguments depend on invariant names only."""
    return getattr(value, "random_invariant", False)


def truncated(program: vm.Program, loop: SteadyLoop, iterations: int) -> vm.Program:
    """``program`` with ``loop`` cut to ``iterations`` and its iteration ends marked."""
    code = list(program.code)
    head = code[loop.loop_pc]
    code[loop.loop_pc] = head._replace(count=vm.constant_fn(iterations))
    code[loop.next_pc] = code[loop.next_pc]._replace(op=vm.NEXT_MARKED)
    return replace(program, code=tuple(code))


@dataclass(frozen=True)
class WindowStats:
    """What one truncated run says about its last two windows of ``w`` iterations:
    per rank the mean clock advance per iteration in each window and the time
    breakdown of the last window; the advance of the ranks' mean clock over
    each window (in lockstep every rank keeps its pace in the long run, and
    the mean over ranks is the least noisy estimate of it); the advance of
    the latest rank's clock over each window (what the run time follows: it
    keeps the mean clock's pace only once the ranks' spread stops changing);
    messages matched per iteration; and the run's start-up wave
    projected over the ``remaining`` iterations, or why it has none
    (:mod:`pevpm.vm.strategies.wave`)."""

    first: np.ndarray          # (ranks,) mean advance, window before last
    last: np.ndarray           # (ranks,) mean advance, last window
    kinds: np.ndarray          # (ranks, 3) compute, communication, waiting in the last window
    pace_first: float          # mean-clock advance over the window before last (seconds)
    pace_last: float           # the same over the last window
    top_first: float           # latest-clock advance over the window before last (seconds)
    top_last: float            # the same over the last window
    messages: float            # messages per iteration in the last window
    wave: Wave | str = "not looked for"

    @classmethod
    def of(cls, marks: list[list[tuple]], window: int, remaining: int = 0) -> WindowStats:
        """From a run's marks (one row per iteration end, per rank)."""
        every = np.array(marks, dtype=float)
        wave = project_wave(every[:, :, 0], remaining, window) if remaining else cls.wave
        data = every[:, -(2 * window + 1):]
        clocks = data[:, :, 0]
        first = (clocks[:, window] - clocks[:, 0]) / window
        last = (clocks[:, 2 * window] - clocks[:, window]) / window
        kinds = data[:, 2 * window, 1:4] - data[:, window, 1:4]
        pace, top = clocks.mean(axis=0), clocks.max(axis=0)
        messages = (data[:, 2 * window, 4] - data[:, window, 4]).max() / window
        return cls(first, last, kinds, float(pace[window] - pace[0]),
                   float(pace[2 * window] - pace[window]), float(top[window] - top[0]),
                   float(top[2 * window] - top[window]), float(messages), wave)


@dataclass(frozen=True)
class Assessment:
    """Whether the runs settled, and the per-iteration pace to extrapolate with
    (or, with ``waves``, that every run is extrapolated through its own
    start-up wave, :mod:`pevpm.vm.strategies.wave`)."""

    converged: bool
    reason: str
    pace: float = 0.0          # mean seconds per iteration
    sigma: float = 0.0         # sd of the pace per sqrt(iteration)
    shares: np.ndarray | None = None   # (ranks, 3) breakdown of a rank's advance
    messages: float = 0.0
    error: float = 0.0         # estimated relative error of the extrapolated mean
    waves: bool = False        # each run moves as its own wave projection says
    settled_by: int = 0        # (waves) iteration by which the front reaches the last rank


def assess(stats: list[WindowStats], window: int, remaining: int,
           makespan: float) -> Assessment:
    """Pool the runs' window statistics and test convergence, lockstep and
    the precision of the pace (both windows: ``2 window`` iterations) for
    ``remaining`` iterations to come after a mean run time of ``makespan``;
    runs whose ranks are not yet in lockstep may still be projected through
    a start-up wave (:func:`assess_waves`)."""
    first = np.array([s.first for s in stats])
    last = np.array([s.last for s in stats])
    runs = len(stats)
    a1, a2 = first.mean(axis=0), last.mean(axis=0)
    paces = (np.array([s.pace_first for s in stats])
             + np.array([s.pace_last for s in stats])) / (2 * window)
    pace = float(paces.mean())
    ahead = (np.array([s.top_first for s in stats])
             + np.array([s.top_last for s in stats])) / (2 * window) - paces
    drift = float(np.mean([s.pace_last - s.pace_first for s in stats]) / window)
    if runs > 1:
        se = (last - first).std(axis=0, ddof=1) / math.sqrt(runs)
        sigma = float(np.std(paces, ddof=1) * math.sqrt(2 * window))
        pace_se = float(np.std(paces, ddof=1) / math.sqrt(runs))
        ahead_se = float(np.std(ahead, ddof=1) / math.sqrt(runs))
    else:
        se = np.zeros_like(a1)
        sigma = pace_se = ahead_se = 0.0
    # one test per rank: widen the noise allowance with the number of ranks
    # (the expected largest of that many standard normals), so a thousand
    # ranks do not fail by chance alone
    z = max(NOISE_SE, math.sqrt(2 * math.log(max(a1.size, 1))) + 1)
    bound = TOLERANCE * np.abs(a2) + z * se
    if not np.all(np.abs(a2 - a1) <= bound):
        worst = int(np.argmax(np.abs(a2 - a1) - bound))
        return assess_waves(stats, remaining, makespan,
                            f"rank {worst}'s advance per iteration still changes")
    if not np.all(np.abs(a2 - pace) <= TOLERANCE * pace + z * (se + pace_se)):
        return assess_waves(stats, remaining, makespan, "the ranks do not advance in lockstep")
    spreading = float(ahead.mean())
    if abs(spreading) > TOLERANCE * pace + NOISE_SE * ahead_se:
        return assess_waves(stats, remaining, makespan,
                            f"the latest rank's clock still moves {abs(spreading) / pace:.1%} "
                            f"per iteration {'faster' if spreading > 0 else 'slower'} than the "
                            "ranks' mean clock (their spread still changes)")
    error = estimated_error(pace, pace_se, abs(drift), remaining, makespan)
    if error > MAX_ERROR:
        return Assessment(False, f"the extrapolated mean would be uncertain by {error:.1%} "
                                 f"(pace standard error {pace_se / pace:.2%}, drift "
                                 f"{abs(drift) / pace:.2%}, allowed {MAX_ERROR:.0%})")
    return Assessment(True, "", pace, sigma, _shares(stats), _messages(stats), error)


def plain_assessment(stats: list[WindowStats], window: int) -> Assessment:
    """Extend every run at the pooled mean pace, without noise (what
    :mod:`pevpm.vm.strategies.corrected` fits its correction on when the runs did not
    settle)."""
    paces = [(s.pace_first + s.pace_last) / (2 * window) for s in stats]
    return Assessment(True, "", float(np.mean(paces)), 0.0, _shares(stats), _messages(stats))


def assess_waves(stats: list[WindowStats], remaining: int, makespan: float,
                 reason: str) -> Assessment:
    """Extrapolate every run through its own start-up wave if every run has
    one whose projection is precise enough; otherwise not, for ``reason``
    (the lockstep test's) or the projection's own."""
    waves = [s.wave for s in stats]
    if not all(isinstance(w, Wave) for w in waves):
        return Assessment(False, reason)
    total = makespan + float(np.mean([w.growth for w in waves]))
    error = max(w.error for w in waves) / total if total > 0 else 0.0
    settled_by = max(w.settled_by for w in waves)
    if error > MAX_ERROR:
        return Assessment(False, f"a start-up wave still crosses the ranks (the last settles "
                                 f"near iteration {settled_by}) and its projection would be "
                                 f"uncertain by {error:.1%} (allowed {MAX_ERROR:.0%})")
    return Assessment(True, "", shares=_shares(stats), messages=_messages(stats), error=error,
                      waves=True, settled_by=settled_by)


def _shares(stats: list[WindowStats]) -> np.ndarray:
    """Each rank's split of its last window over compute, communication and
    waiting, pooled over the runs."""
    kinds = np.array([s.kinds for s in stats]).mean(axis=0)
    totals = kinds.sum(axis=1, keepdims=True)
    return np.divide(kinds, totals, out=np.full_like(kinds, 1 / 3), where=totals > 0)


def _messages(stats: list[WindowStats]) -> float:
    return float(np.mean([s.messages for s in stats]))


def extend(summary: RunSummary, stats: WindowStats, assessment: Assessment, remaining: int,
           z: float) -> RunSummary:
    """``summary`` of a truncated run (with window statistics ``stats``) with
    ``remaining`` iterations added."""
    if assessment.waves:
        shift, growth = stats.wave.shift, stats.wave.growth
    else:
        shift = max(remaining * assessment.pace
                    + math.sqrt(remaining) * assessment.sigma * z, 0.0)
        growth = shift
    times = summary.rank_times.copy()
    times[:, :3] += np.reshape(shift, (-1, 1)) * assessment.shares
    times[:, 3] += shift
    makespan = summary.makespan + growth
    scale = makespan / summary.makespan if summary.makespan > 0 else 1.0
    return RunSummary(makespan, times, summary.critical_path * scale,
                      summary.messages_simulated + round(remaining * assessment.messages),
                      summary.collectives, summary.outstanding, summary.engine_note)


def bound_growth(stats: WindowStats, assessment: Assessment, remaining: int,
                 window: int) -> float:
    """How much a bound run's time grows over the ``remaining`` iterations:
    through its own wave, or at the pace of its own last window."""
    if assessment.waves and isinstance(stats.wave, Wave):
        return stats.wave.growth
    return remaining * stats.pace_last / window


def estimated_error(pace: float, pace_se: float, drift: float, remaining: int,
                    makespan: float) -> float:
    """Relative error of the extrapolated mean run time: the remaining
    iterations times three standard errors of the pace plus the drift of the
    pace between the two windows, over the extrapolated mean.  (The drift is
    not capped: the per-rank convergence test allows for the noise of a
    thousand ranks, so it does not bound the pooled pace's drift.)

    >>> round(estimated_error(1.0, 0.001, 0.002, 900, 100.0), 4)
    0.0045
    """
    total = makespan + remaining * pace
    if total <= 0:
        return 0.0
    return remaining * (NOISE_SE * pace_se + drift) / total
