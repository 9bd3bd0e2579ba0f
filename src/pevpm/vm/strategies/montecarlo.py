"""Monte Carlo prediction: many simulated runs of a model, aggregated.

Run ``i`` draws from its own generator, ``default_rng(SeedSequence(seed,
spawn_key=(i,)))`` -- the ``i``-th child of ``SeedSequence(seed).spawn`` -- so
the numbers are the same for the same seed whatever the executor, the
number of workers and the chunking.  The two bound runs (every submodel at
its minimum, then at its maximum) draw any Condition branches from a stream
of their own.

A model whose time goes into one long, regular outer loop is simulated for
the loop's first iterations only and the rest is added analytically once
every rank's pace per iteration has settled, or a start-up wave crossing the
ranks can be projected (:mod:`pevpm.vm.strategies.steady`, :mod:`pevpm.vm.strategies.wave`; the
prediction's ``extrapolation`` says so); ``exact=True`` simulates every
iteration, and so does a run whose extrapolated time passes the virtual-time
limit of its ``limits`` (so the limit stops it as before).  The event limit
counts the events simulated: the iterations added analytically take none.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.machine.presets import parse_machine
>>> b = ModelBuilder()
>>> b.serial("0.001 * (procnum + 1)")
>>> p = predict(b.build(), 4, parse_machine("constant:latency=1e-5"), runs=3, seed=1)
>>> round(p.mean, 6), p.min_bound == p.max_bound
(0.004, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import nullcontext

import numpy as np

from pevpm.errors import EventLimitError, PevpmError
from pevpm.model.ast import Model
from pevpm.model.event_estimate import default_max_events, estimated_events
from pevpm.vm.strategies.executors import chunk_ranges, default_workers, open_executor
from pevpm.vm.strategies.prediction import Prediction, PredictionAccumulator, RunSummary

#: Spawn key of the stream the bound runs draw Condition branches from; no
#: Monte Carlo run index reaches it.
BOUND_STREAM = 2**63 - 1

#: Runs a steady loop's trial is judged on first (the first runs of the
#: prediction): the others are cut only if these settle.
PILOT_RUNS = 20

#: Chunks submitted per worker: enough to balance load and move the progress
#: bar, few enough that scheduling costs nothing next to the runs.
CHUNKS_PER_WORKER = 4


def run_generator(seed: int, index: int) -> np.random.Generator:
    """The generator Monte Carlo run ``index`` uses under ``seed``.

    >>> float(run_generator(1, 0).random()) == float(run_generator(1, 0).random())
    True
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def simulate_runs(model: Model, numprocs: int, machine, params: Mapping | None, seed: int,
                  start: int, stop: int, limits=None) -> list[RunSummary]:
    """Runs ``start..stop-1`` of a Monte Carlo prediction (what a worker executes);
    the model is compiled once for all of them (and for the other chunks this
    process runs: :func:`pevpm.vm.kernel.program.compiled`), and they run on the compiled
    core where it applies (:mod:`pevpm.vm.kernel.fastengine`).

    >>> from pevpm.model.builder import ModelBuilder
    >>> from pevpm.machine.presets import parse_machine
    >>> b = ModelBuilder()
    >>> b.serial(0.5)
    >>> [s.makespan for s in simulate_runs(b.build(), 2, parse_machine("perseus"), None, 0, 0, 3)]
    [0.5, 0.5, 0.5]
    """
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.kernel.program import compiled

    program = compiled(model, params)
    return [RunSummary.of(simulate(model, numprocs, machine, params=params,
                                   rng=run_generator(seed, i), limits=limits, program=program))
            for i in range(start, stop)]


def _simulate_truncated_runs(model: Model, numprocs: int, machine, params: Mapping | None,
                            seed: int, start: int, stop: int, limits, loop,
                            iterations: int, window: int) -> list[tuple]:
    """Runs ``start..stop-1`` with ``loop`` cut to ``iterations``: each run's
    summary and its :class:`~pevpm.vm.strategies.steady.WindowStats`."""
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.kernel.program import compiled
    from pevpm.vm.strategies.steady import WindowStats, truncated

    program = truncated(compiled(model, params), loop, iterations)
    remaining = loop.count - iterations
    out = []
    for i in range(start, stop):
        run = simulate(model, numprocs, machine, params=params, rng=run_generator(seed, i),
                       limits=limits, program=program)
        out.append((RunSummary.of(run), WindowStats.of(run.marks, window, remaining)))
    return out


def _simulate_truncated_bound(model: Model, numprocs: int, machine, params: Mapping | None,
                             seed: int, bound: str, limits, loop, iterations: int,
                             window: int) -> tuple[float, object]:
    """A bound run with ``loop`` cut to ``iterations``: makespan and window statistics."""
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.kernel.program import compiled
    from pevpm.vm.strategies.steady import WindowStats, truncated

    program = truncated(compiled(model, params), loop, iterations)
    run = simulate(model, numprocs, machine, params=params, bound=bound,
                   rng=run_generator(seed, BOUND_STREAM), limits=limits, program=program)
    return float(run.makespan), WindowStats.of(run.marks, window, loop.count - iterations)


def simulate_bound(model: Model, numprocs: int, machine, params: Mapping | None, seed: int,
                   bound: str, limits=None) -> float:
    """Makespan with every submodel at its ``bound`` (``'min'`` or ``'max'``).

    >>> from pevpm.model.builder import ModelBuilder
    >>> from pevpm.machine.presets import parse_machine
    >>> b = ModelBuilder()
    >>> with b.condition() as arms:
    ...     with arms.case(0.5):
    ...         b.serial(0.001)
    ...     with arms.case(0.5):
    ...         b.serial(0.003)
    >>> simulate_bound(b.build(), 2, parse_machine("perseus"), None, 0, "max") in (0.001, 0.003)
    True
    """
    from pevpm.vm.kernel.fastengine import simulate

    result = simulate(model, numprocs, machine, params=params, bound=bound,
                      rng=run_generator(seed, BOUND_STREAM), limits=limits)
    return float(result.makespan)


def predict(model: Model, numprocs: int, machine, runs: int = 100, seed: int | None = 0,
            params: Mapping | None = None, executor: Executor | str | None = None,
            workers: int | None = None, bounds: bool = True,
            progress: Callable[[int], None] | None = None, limits=None,
            exact: bool = False) -> Prediction:
    """Simulate ``runs`` runs of ``model`` on ``numprocs`` ranks of ``machine``.

    ``executor`` is an open :class:`~concurrent.futures.Executor` (reused, not
    shut down), a name for :func:`pevpm.vm.strategies.executors.open_executor`, or
    ``None`` for a local process pool of ``workers`` processes (in this
    process when ``workers`` is 1).  ``seed=None`` draws fresh entropy and
    records it in :attr:`Prediction.seed`.  ``progress(k)`` is called each
    time ``k`` more runs have finished.  ``limits`` (a
    :class:`pevpm.vm.kernel.engine.Limits`) stops runaway runs; ``None`` sets
    the event limit from the model's own loop counts, as ``pevpm predict``
    does (:mod:`pevpm.model.event_estimate`), and ``Limits()`` sets none.
    ``exact``: never extrapolate a steady loop.

    >>> from pevpm.model.builder import ModelBuilder
    >>> from pevpm.machine.presets import parse_machine
    >>> b = ModelBuilder(parameters={"iterations": 10})
    >>> with b.loop("parameter iterations"):
    ...     b.sendrecv(1024, dest="(procnum + 1) % numprocs",
    ...                source="(procnum + numprocs - 1) % numprocs")
    ...     b.serial("0.01 / numprocs")
    >>> p = predict(b.build(), 8, parse_machine("perseus"), runs=20, seed=1,
    ...             params={"iterations": 100})
    >>> round(p.mean, 4), p.runs, p.params
    (0.15, 20, {'iterations': 100})
    """
    if runs < 1:
        raise PevpmError(f"the number of runs must be at least 1, got {runs}")
    if numprocs < 1:
        raise PevpmError(f"process count must be at least 1, got {numprocs}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    if limits is not None:
        return _predict(model, numprocs, machine, runs, seed, params, executor, workers,
                        bounds, progress, limits, exact)
    from pevpm.vm.kernel.engine import Limits

    estimate = estimated_events(model, numprocs, params)
    default = Limits(max_events=default_max_events(numprocs, estimate))
    try:
        return _predict(model, numprocs, machine, runs, seed, params, executor, workers,
                        bounds, progress, default, exact)
    except EventLimitError as exc:
        raise EventLimitError(
            f"{exc.message}; predict()'s default limit at {numprocs} "
            f"rank{'s' if numprocs > 1 else ''} is "
            f"{default.max_events:,} (the model's loop counts imply about {estimate:,} "
            "events a run): pass limits=Limits(max_events=...) for another, or Limits() "
            "for none", exc.where) from exc


def _predict(model, numprocs, machine, runs, seed, params, executor, workers, bounds,
             progress, limits, exact) -> Prediction:
    """:func:`predict` once its arguments are checked and its limits set."""
    if isinstance(executor, Executor):
        context = nullcontext(executor)
    else:
        context = open_executor(executor or "local", workers)
    chunks = chunk_ranges(runs, (workers or default_workers()) * CHUNKS_PER_WORKER)
    accumulator = PredictionAccumulator(numprocs, seed, dict(params or {}))
    with context as pool:
        if not exact:
            steady, refused_trial = _predict_steady(pool, chunks, model, numprocs, machine, runs,
                                                 seed, params, bounds, progress, limits)
            if isinstance(steady, Prediction):
                return steady
            if refused_trial is not None and runs > PILOT_RUNS:
                return _predict_corrected(pool, chunks, runs, seed, bounds, progress,
                                          refused_trial, steady)
            accumulator.extrapolation = steady     # why not, for a long loop
        run_futures = [pool.submit(simulate_runs, model, numprocs, machine, params, seed,
                                   start, stop, limits) for start, stop in chunks]
        bound_futures = ([pool.submit(simulate_bound, model, numprocs, machine, params,
                                      seed, which, limits) for which in ("min", "max")]
                         if bounds else [])
        try:
            _collect(run_futures, bound_futures, accumulator, progress)
        except EventLimitError as exc:
            why = (accumulator.extrapolation or {}).get("reason")
            if why is None:
                raise
            loop = accumulator.extrapolation.get("loop")    # None: no loop qualified
            which = f"the loop at {loop} could not" if loop else "no loop could"
            raise EventLimitError(f"{exc.message}; {which} be extrapolated: {why}",
                                  exc.where) from exc
    if bounds:
        accumulator.min_bound, accumulator.max_bound = (f.result() for f in bound_futures)
    return accumulator.build()


def _predict_steady(pool, chunks, model, numprocs, machine, runs, seed, params, bounds,
                    progress, limits) -> tuple[Prediction | dict | None, tuple | None]:
    """Extrapolate a steady loop (a Prediction), or say why not (a dict for
    ``Prediction.extrapolation``; None: no long loop); second, the first
    (shortest) refused trial (its arguments and the runs cut there) or None.

    Each trial length is tried on the first :data:`PILOT_RUNS` runs first; only
    if they settle are the other runs cut there too (and all of them judged),
    so a loop that never settles costs the pilot's trials, not every run's."""
    from pevpm.vm.kernel.program import compiled
    from pevpm.vm.strategies import steady

    loop = steady.find_loop(compiled(model, params), model, numprocs, params)
    if isinstance(loop, str):
        return (None if "fewer than" in loop or "no outer loop" in loop else {
            "extrapolated": False, "loop": None, "reason": loop}), None
    _, pilot_chunks, rest_chunks = _pilot_split(runs, chunks)
    iterations, reason, judged, refused_trial = steady.FIRST, "", runs, None
    while iterations <= loop.count // 4:
        window, remaining = iterations // 4, loop.count - iterations
        trial = (model, numprocs, machine, params, seed, limits, loop, iterations, window)
        results = _trial_runs(pool, pilot_chunks, trial)
        assessment = _judge(results, window, remaining)
        bound_futures = []
        if assessment.converged:
            bound_futures = ([pool.submit(_simulate_truncated_bound, model, numprocs, machine,
                                          params, seed, which, limits, loop, iterations, window)
                              for which in ("min", "max")] if bounds else [])
            if rest_chunks:
                results += _trial_runs(pool, rest_chunks, trial)
                assessment = _judge(results, window, remaining)
        if not assessment.converged:
            for future in bound_futures:
                future.cancel()
            reason, judged = assessment.reason, len(results)
            if refused_trial is None:
                refused_trial = (trial, results)
            iterations *= 2
            continue
        accumulator = PredictionAccumulator(numprocs, seed, dict(params or {}))
        for i, (summary, stats) in enumerate(results):
            z = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, 1))).normal()
            extended = steady.extend(summary, stats, assessment, remaining, z)
            if limits is not None and limits.max_time is not None and \
                    extended.makespan > limits.max_time:
                return {"extrapolated": False, "loop": loop.where,
                        "reason": "the whole loop would pass the run's virtual time limit"}, None
            accumulator.add(extended)
        if bounds:
            (low, low_stats), (high, high_stats) = (f.result() for f in bound_futures)
            accumulator.min_bound = low + steady.bound_growth(low_stats, assessment,
                                                              remaining, window)
            accumulator.max_bound = high + steady.bound_growth(high_stats, assessment,
                                                               remaining, window)
        accumulator.extrapolation = {
            "extrapolated": True, "loop": loop.where, "iterations": loop.count,
            "from_iteration": iterations, "estimated_error": assessment.error,
            "wave_settles_by": assessment.settled_by if assessment.waves else None}
        if progress:
            progress(runs)
        return accumulator.build(), None
    among = f" (judged on runs 0-{judged - 1} of {runs})" if judged < runs else ""
    return {"extrapolated": False, "loop": loop.where,
            "reason": f"{reason} after {iterations // 2} of {loop.count} iterations{among}"}, \
        refused_trial


def _predict_corrected(pool, chunks, runs, seed, bounds, progress, refused_trial,
                       refusal: dict) -> Prediction:
    """A loop whose runs did not settle: the first :data:`PILOT_RUNS` runs
    simulated whole, the others cut where ``refused_trial`` cut them and
    extrapolated, corrected by what the pilots' whole runs added
    (:mod:`pevpm.vm.strategies.corrected`).  If that correction is too uncertain, the
    other runs are simulated whole too (the pilots' runs are kept)."""
    from pevpm.vm.strategies import corrected, steady

    (model, numprocs, machine, params, _, limits, loop, iterations, window), results = \
        refused_trial
    remaining = loop.count - iterations
    pilot, pilot_chunks, rest_chunks = _pilot_split(runs, chunks)
    whole_futures = [pool.submit(simulate_runs, model, numprocs, machine, params, seed,
                                 start, stop, limits) for start, stop in pilot_chunks]
    bound_futures = ([pool.submit(simulate_bound, model, numprocs, machine, params, seed,
                                  which, limits) for which in ("min", "max")]
                     if bounds else [])
    if len(results) < runs:
        results = results + _trial_runs(pool, rest_chunks, refused_trial[0])
    plain = steady.plain_assessment([stats for _, stats in results], window)
    extended = [steady.extend(summary, stats, plain, remaining, 0.0)
                for summary, stats in results]
    whole = [summary for future in whole_futures for summary in future.result()]
    if progress:
        progress(pilot)
    fit = corrected.Correction.fit(np.array([s.makespan for s in whole]),
                                   np.array([s.makespan for s in extended[:pilot]]))
    accumulator = PredictionAccumulator(numprocs, seed, dict(params or {}))
    for summary in whole:
        accumulator.add(summary)
    rest = runs - pilot
    mean = float(np.mean([s.makespan for s in whole]))
    error = corrected.estimated_error(fit, rest, runs, mean)
    if error <= steady.MAX_ERROR:
        for i in range(pilot, runs):
            pick = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, 2)))
            y = extended[i].makespan
            accumulator.add(corrected.corrected_summary(
                extended[i], fit.correct(y, int(pick.integers(pilot)))))
        accumulator.extrapolation = {
            "extrapolated": True, "loop": loop.where, "iterations": loop.count,
            "from_iteration": iterations, "estimated_error": error, "wave_settles_by": None,
            "corrected_by": pilot, "why_corrected": refusal["reason"]}
        if progress:
            progress(rest)
    else:
        run_futures = [pool.submit(simulate_runs, model, numprocs, machine, params, seed,
                                   start, stop, limits) for start, stop in rest_chunks]
        accumulator.extrapolation = dict(refusal, reason=(
            f"{refusal['reason']}; corrected by {pilot} whole runs it would be uncertain "
            f"by {error:.1%}"))
        _collect(run_futures, [], accumulator, progress)
    if bounds:
        accumulator.min_bound, accumulator.max_bound = (f.result() for f in bound_futures)
    return accumulator.build()


def _pilot_split(runs: int, chunks: list[tuple[int, int]]) -> tuple[int, list, list]:
    """The pilot runs' count, their chunks (as many as ``chunks``) and the other
    runs' chunks."""
    pilot = min(runs, PILOT_RUNS)
    return (pilot, chunk_ranges(pilot, len(chunks)),
            [(max(start, pilot), stop) for start, stop in chunks if stop > pilot])


def _judge(results: list[tuple], window: int, remaining: int):
    """:func:`pevpm.vm.strategies.steady.assess` of truncated runs (summary, statistics)."""
    from pevpm.vm.strategies import steady

    return steady.assess([stats for _, stats in results], window, remaining,
                         float(np.mean([summary.makespan for summary, _ in results])))


def _trial_runs(pool, parts: list[tuple[int, int]], trial: tuple) -> list[tuple]:
    """The runs of ``parts`` (start, stop) with the loop cut as ``trial`` says,
    in run order: each run's summary and window statistics."""
    model, numprocs, machine, params, seed, limits, loop, iterations, window = trial
    futures = [pool.submit(_simulate_truncated_runs, model, numprocs, machine, params, seed,
                           start, stop, limits, loop, iterations, window)
               for start, stop in parts]
    return [result for future in futures for result in future.result()]


def _collect(run_futures: list[Future], bound_futures: list[Future],
             accumulator: PredictionAccumulator,
             progress: Callable[[int], None] | None) -> None:
    """Fold chunks into ``accumulator`` in run order as soon as every earlier
    chunk is in, so finished runs do not pile up in memory; report finished
    runs; on the first failure cancel what has not started and raise it."""
    pending = set(run_futures) | set(bound_futures)
    folded = 0
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            if future.exception() is not None:
                for other in pending:
                    other.cancel()
                raise future.exception()
        while folded < len(run_futures) and run_futures[folded].done():
            summaries = run_futures[folded].result()
            for summary in summaries:
                accumulator.add(summary)
            run_futures[folded] = None  # let the chunk's results go
            folded += 1
            if progress:
                progress(len(summaries))
