"""A Monte Carlo prediction: what many simulated runs of one model say together.

The engine returns one :class:`~pevpm.vm.kernel.result.RunResult` per run.  A
worker shrinks each to a :class:`RunSummary` (a few numpy arrays, cheap to
send between processes); :class:`PredictionAccumulator` folds summaries in
run order into a :class:`Prediction`, so the numbers depend only on the runs,
never on which worker produced them or when.

>>> from pevpm.vm.kernel.result import RankTimes, RunResult
>>> def run(t):
...     return RunResult(t, [RankTimes(t - 1, 0.5, 0.5, t)],
...                      {"compute": t - 1, "communication": 1.0, "waiting": 0.0})
>>> acc = PredictionAccumulator(numprocs=1)
>>> for t in (2.0, 4.0):
...     acc.add(RunSummary.of(run(t)))
>>> p = acc.build()
>>> p.mean, p.runs, p.critical_path_shares["communication"]
(3.0, 2, 0.3333333333333333)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from pevpm.errors import SimulationError
from pevpm.vm.kernel.result import KINDS, Outstanding, RunResult
from pevpm.vm.strategies.leftovers import LeftoverSummary, LeftoverTally

#: Longest run time (simulated seconds) a prediction takes: squares of longer
#: times, summed over 10**6 runs (predict's most), would overflow a float; no
#: program runs 1e142 years.
MAX_RUN_SECONDS = 1e150

#: Quantiles reported by :meth:`Prediction.to_dict`.
REPORTED_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@dataclass(frozen=True)
class RunSummary:
    """The parts of one run a prediction keeps.

    ``rank_times`` has one row per rank: compute, communication, waiting
    seconds and finish time.  ``collectives`` maps (op, where, occurrence)
    to per-rank completion times.
    """

    makespan: float
    rank_times: np.ndarray
    critical_path: np.ndarray
    messages_simulated: int
    collectives: dict[tuple[str, str | None, int], np.ndarray]
    outstanding: tuple[Outstanding, ...] = ()
    engine_note: str | None = None      # why the pure-Python engine ran it (None: the core)

    @classmethod
    def of(cls, result: RunResult) -> RunSummary:
        """Shrink one engine result to what the prediction keeps (see module example)."""
        rank_times = np.array([(r.compute, r.communication, r.waiting, r.finish)
                               for r in result.ranks], dtype=float).reshape(-1, 4)
        critical = np.array([result.critical_path.get(k, 0.0) for k in KINDS], dtype=float)
        collectives = {(c.op, c.where, c.occurrence): np.asarray(c.completion, dtype=float)
                       for c in result.collectives}
        return cls(float(result.makespan), rank_times, critical,
                   int(result.messages_simulated), collectives, tuple(result.outstanding),
                   result.engine_note)


@dataclass(frozen=True)
class CollectiveSummary:
    """Mean per-rank completion time of one collective call over the runs it occurred in.

    ``occurrence`` counts calls of the same collective at the same place (the
    k-th iteration of a loop).  ``spread`` is the mean, over runs, of the gap
    between the first and the last rank to complete: the synchronisation the
    collective imposes.
    """

    op: str
    where: str | None
    occurrence: int
    runs: int
    mean_completion: np.ndarray
    sd_completion: np.ndarray
    spread: float

    def to_dict(self, per_rank: bool = True) -> dict:
        """Plain data for JSON: first and last rank's mean completion, spread; with
        ``per_rank``, every rank's mean and sd."""
        out = {"op": self.op, "where": self.where, "occurrence": self.occurrence,
               "runs": self.runs, "first": float(self.mean_completion.min()),
               "last": float(self.mean_completion.max()), "spread": self.spread}
        if per_rank:
            out["mean_completion"] = self.mean_completion.tolist()
            out["sd_completion"] = self.sd_completion.tolist()
        return out


@dataclass(frozen=True)
class Prediction:
    """Predicted run time of a model on ``numprocs`` ranks.

    ``makespans`` holds one run time per Monte Carlo run, in run order.
    ``min_bound``/``max_bound`` are the run times with every message and every
    random computation at its minimum/maximum (``gamma`` and ``exponential``
    draws at their 0.1% and 99.9% points,
    :data:`pevpm.model.expr.BOUND_QUANTILES`), widened to take in the shortest
    and longest Monte Carlo run, so ``min_bound <= mean <= max_bound``
    (``None`` when not computed).  ``breakdown_mean`` and
    ``breakdown_sd`` have one row per rank and one column per kind of time
    (:data:`pevpm.vm.kernel.result.KINDS`: compute, communication, waiting);
    ``finish_mean`` is each rank's mean finish time.  ``extrapolation``
    says whether a steady loop was extrapolated (:mod:`pevpm.vm.strategies.steady`):
    ``{"extrapolated": True, "loop", "iterations", "from_iteration",
    "estimated_error"}`` (a relative error of the mean), or
    ``{"extrapolated": False, "loop", "reason"}`` for a long loop simulated
    whole; ``None`` when there was no long loop or ``exact`` was asked.
    ``outstanding`` lists the requests runs left unmatched or never
    completed (:mod:`pevpm.vm.strategies.leftovers`).  ``engine_notes`` says, once per
    reason, how many runs the pure-Python engine ran instead of the compiled
    core and why (empty: the core ran every run).

    :func:`pevpm.vm.strategies.montecarlo.predict` returns one.  Here rank 0 computes
    for 10 ms, ranks 1-3 for 2 or 4 ms at random, then all meet in a barrier:

    >>> from pevpm.model.builder import ModelBuilder
    >>> from pevpm.machine.presets import parse_machine
    >>> from pevpm.vm.strategies.montecarlo import predict
    >>> b = ModelBuilder()
    >>> with b.runon() as ranks:
    ...     with ranks.case("procnum == 0"):
    ...         b.serial(0.010)
    ...     with ranks.case("procnum > 0"):
    ...         with b.condition() as arms:
    ...             with arms.case(0.5):
    ...                 b.serial(0.002)
    ...             with arms.case(0.5):
    ...                 b.serial(0.004)
    >>> b.collective("MPI_Barrier")
    >>> p = predict(b.build(), 4, parse_machine("constant:latency=1e-4"), runs=50, seed=1)
    >>> p.runs, round(p.mean, 4), p.sd
    (50, 0.0102, 0.0)
    >>> round(p.min_bound, 4), round(p.max_bound, 4)
    (0.0102, 0.0102)
    >>> [round(float(t), 3) for t in p.breakdown()["waiting"]]
    [0.0, 0.007, 0.007, 0.007]
    >>> p.collectives[0].op, p.collectives[0].runs              # a CollectiveSummary
    ('MPI_Barrier', 50)
    >>> sorted(p.to_dict(per_rank=False))[:5]
    ['breakdown_totals', 'collectives', 'critical_path', 'engine_notes', 'extrapolation']
    >>> p.engine_notes                          # the compiled core ran every run
    ()
    """

    numprocs: int
    seed: int | None
    makespans: np.ndarray
    breakdown_mean: np.ndarray
    breakdown_sd: np.ndarray
    finish_mean: np.ndarray
    critical_path_seconds: dict[str, float]
    messages_simulated: int
    collectives: tuple[CollectiveSummary, ...] = ()
    min_bound: float | None = None
    max_bound: float | None = None
    params: dict = field(default_factory=dict)
    extrapolation: dict | None = None
    outstanding: tuple[LeftoverSummary, ...] = ()
    engine_notes: tuple[str, ...] = ()

    @property
    def runs(self) -> int:
        """Number of Monte Carlo runs."""
        return int(self.makespans.size)

    @property
    def mean(self) -> float:
        """Mean predicted run time (seconds)."""
        return float(self.makespans.mean())

    @property
    def sd(self) -> float:
        """Sample standard deviation of the run time (0 for a single run or equal runs)."""
        if self.runs == 1 or self.makespans.min() == self.makespans.max():
            return 0.0
        return float(self.makespans.std(ddof=1))

    @property
    def median(self) -> float:
        """Median predicted run time (seconds)."""
        return self.quantile(0.5)

    def quantile(self, q):
        """Run-time quantile(s) ``q`` in [0, 1] (numpy's linear interpolation)."""
        out = np.quantile(self.makespans, q)
        return float(out) if np.ndim(out) == 0 else out

    @property
    def critical_path_shares(self) -> dict[str, float]:
        """Fraction of the critical path spent in each kind of time (sums to 1)."""
        total = sum(self.critical_path_seconds.values())
        return {k: (v / total if total > 0 else 0.0)
                for k, v in self.critical_path_seconds.items()}

    def breakdown(self) -> dict[str, np.ndarray]:
        """Mean seconds per rank for each kind of time."""
        return {kind: self.breakdown_mean[:, i] for i, kind in enumerate(KINDS)}

    def to_dict(self, per_rank: bool = True) -> dict:
        """Plain data for JSON; ``per_rank=False`` drops the per-rank arrays."""
        out = {
            "numprocs": self.numprocs,
            "runs": self.runs,
            "seed": self.seed,
            "params": dict(self.params),
            "mean": self.mean,
            "sd": self.sd,
            "min": float(self.makespans.min()),
            "max": float(self.makespans.max()),
            "quantiles": {str(q): self.quantile(q) for q in REPORTED_QUANTILES},
            "min_bound": self.min_bound,
            "max_bound": self.max_bound,
            "messages_simulated": self.messages_simulated,
            "critical_path": {"seconds": dict(self.critical_path_seconds),
                              "shares": self.critical_path_shares},
            "breakdown_totals": {kind: float(self.breakdown_mean[:, i].sum())
                                 for i, kind in enumerate(KINDS)},
            "collectives": [c.to_dict(per_rank) for c in self.collectives],
            "extrapolation": self.extrapolation,
            "outstanding": [left.to_dict() for left in self.outstanding],
            "engine_notes": list(self.engine_notes),
        }
        if per_rank:
            out["makespans"] = self.makespans.tolist()
            out["per_rank"] = {
                **{kind: self.breakdown_mean[:, i].tolist() for i, kind in enumerate(KINDS)},
                **{f"{kind}_sd": self.breakdown_sd[:, i].tolist()
                   for i, kind in enumerate(KINDS)},
                "finish": self.finish_mean.tolist(),
            }
        return out

    def to_json(self, per_rank: bool = True, **dumps_kwargs) -> str:
        """:meth:`to_dict` as JSON text (``dumps_kwargs`` go to :func:`json.dumps`)."""
        return json.dumps(self.to_dict(per_rank), **dumps_kwargs)


class PredictionAccumulator:
    """Folds run summaries, strictly in run order, into a :class:`Prediction`.

    Memory stays proportional to ranks x collective calls, not to runs, apart
    from one float per run for the makespan.
    """

    def __init__(self, numprocs: int, seed: int | None = None, params: dict | None = None):
        self.numprocs = numprocs
        self.seed = seed
        self.params = dict(params or {})
        self._makespans: list[float] = []
        self._sum = np.zeros((numprocs, 4))
        self._sumsq = np.zeros((numprocs, 3))
        self._critical = np.zeros(len(KINDS))
        self._messages = 0
        self._collectives: dict[tuple, list] = {}
        self._leftovers = LeftoverTally()
        self._engine_notes: dict[str, int] = {}      # why -> runs the pure-Python engine ran
        self.min_bound: float | None = None
        self.max_bound: float | None = None
        self.extrapolation: dict | None = None

    def add(self, run: RunSummary) -> None:
        """Fold in the next run (runs must arrive in run order); a run longer than
        :data:`MAX_RUN_SECONDS` is an error, as its statistics would overflow."""
        if not run.makespan <= MAX_RUN_SECONDS:
            raise SimulationError(
                f"run {len(self._makespans)} on {self.numprocs} rank"
                f"{'s' if self.numprocs > 1 else ''} lasted {run.makespan:.6g} simulated "
                f"seconds, more than the {MAX_RUN_SECONDS:g} s a prediction's statistics can "
                "take without overflowing: a Serial time, size or loop count of the model is "
                "far too large (--max-time stops runs earlier)")
        self._makespans.append(run.makespan)
        self._sum += run.rank_times
        self._sumsq += run.rank_times[:, :3] ** 2
        self._critical += run.critical_path
        self._messages += run.messages_simulated
        self._leftovers.add(run.outstanding)
        if run.engine_note is not None:
            self._engine_notes[run.engine_note] = self._engine_notes.get(run.engine_note, 0) + 1
        for key, completion in run.collectives.items():
            entry = self._collectives.setdefault(key, [0, 0.0, 0.0, 0.0])
            entry[0] += 1
            entry[1] = entry[1] + completion
            entry[2] = entry[2] + completion ** 2
            entry[3] += float(completion.max() - completion.min()) if completion.size else 0.0

    def build(self) -> Prediction:
        """The :class:`Prediction` of the runs added so far."""
        n = len(self._makespans)
        if n == 0:
            raise ValueError("a prediction needs at least one run")
        mean = self._sum / n
        var = np.maximum(self._sumsq / n - mean[:, :3] ** 2, 0.0) * (n / (n - 1) if n > 1 else 0)
        collectives = tuple(
            CollectiveSummary(op, where, occurrence, count, total / count,
                              np.sqrt(np.maximum(sq / count - (total / count) ** 2, 0.0)),
                              spread / count)
            for (op, where, occurrence), (count, total, sq, spread)
            in self._collectives.items())
        return Prediction(
            numprocs=self.numprocs, seed=self.seed, makespans=np.array(self._makespans),
            breakdown_mean=mean[:, :3], breakdown_sd=np.sqrt(var), finish_mean=mean[:, 3],
            critical_path_seconds={k: float(v / n) for k, v in zip(KINDS, self._critical)},
            messages_simulated=self._messages, collectives=collectives,
            min_bound=_widened(min, self.min_bound, self._makespans),
            max_bound=_widened(max, self.max_bound, self._makespans), params=self.params,
            extrapolation=self.extrapolation, outstanding=self._leftovers.build(),
            engine_notes=tuple(engine_note(count, n, why)
                               for why, count in self._engine_notes.items()))


def _widened(pick, bound: float | None, makespans: list[float]) -> float | None:
    """A bound run's time widened to take in every run made: a run is a time the
    program can take, so no bound lies inside the runs' range (the bound runs
    put random computation at a quantile and Condition branches at a draw)."""
    return None if bound is None else float(pick(bound, pick(makespans)))


def engine_note(count: int, runs: int, why: str) -> str:
    """The note for ``count`` of ``runs`` runs the pure-Python engine ran for ``why``.

    >>> engine_note(3, 100, "the compiled core does not run MPI_Test")
    'the pure-Python engine ran 3 of 100 runs: the compiled core does not run MPI_Test'
    """
    runs_text = "the run" if runs == 1 else f"all {runs} runs" if count == runs \
        else f"{count} of {runs} runs"
    return f"the pure-Python engine ran {runs_text}: {why}"
