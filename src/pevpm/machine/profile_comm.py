"""Communication models driven by a measured (or synthetic) machine profile.

:class:`ProfileCommModel` implements :class:`pevpm.machine.transfer.CommModel`
from MPIBench blocks: end-to-end times of blocking sends (``MPI_Send``,
``MPI_Ssend``, ...) from the ``send`` test when the profile has it, of every
other message from the ``isend`` test; local completion of a non-blocking
send from ``isendlocal``.  (From Python the two end-to-end tests differ by
the software cost of the extra calls an Isend/Irecv/Wait exchange makes:
10-20% of a small intra-node message on the development machine.)
Bidirectional exchanges (``Transfer.duplex``) come from a duplex
measurement when the profile has one: an ``MPI_Sendrecv``'s message from the
``sendrecv`` test (else ``isendduplex``), any other from ``isendduplex``
(else ``sendrecv``).  For each message it picks the benchmarked placement
(see :meth:`SeriesIndex.choose`) and interpolates between the two
benchmarked sizes around the message size.

Contention of a block (messages in transit on the busiest link, as the VM's
scoreboard counts them, a pair exchanging both ways counting once): MPIBench's
complement pattern sends ``p`` messages through each node's link at once when
``n >= 2``; with all ranks on one node (``1 x p``) the ``p/2`` pairs share
the node.  So a ``2x1`` or ``1x2`` block has contention 1.

Placement: a model told the run's ranks per node
(:meth:`ProfileCommModel.for_placement`, which the engines call) never borrows
a block measured *oversubscribed* (more ranks on a node than the cores its
origin records) unless the run is oversubscribed too; then it prefers
oversubscribed blocks, whose times include the ranks' sharing of the cores.
Between equally near contention levels it prefers the run's own ranks per
node.

Named models (the thesis's baselines, so one command can compare them):

``full``       sample the whole distribution (empirical or fitted)
``min2x1``     the minimum time of the two-process benchmark (lowest contention)
``mean2x1``    the mean time of the two-process benchmark
``min-nxp``    the minimum of the block matching the message's contention
``mean-nxp``   the mean of the block matching the message's contention

Between sizes ``s0 < s < s1`` the ``full`` model mixes quantiles:
``t = (1-w) F0^-1(u) + w F1^-1(u)`` with ``w = (s-s0)/(s1-s0)`` and one
uniform ``u``, which moves the whole distribution linearly with size as the
latency/bandwidth model ``T = l + s/W`` does; the baselines interpolate
their statistic linearly.

>>> model = ProfileCommModel.from_profile("machine.db", "full")      # doctest: +SKIP
>>> t = Transfer("MPI_Send", 3000, 0, 1, intra_node=True, contention=1)  # doctest: +SKIP
>>> model.transfer_time(t, np.random.default_rng(0))                   # doctest: +SKIP
1.9e-05
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pevpm.errors import ProfileError
from pevpm.machine.transfer import Bound, Transfer
from pevpm.profile.builtin import origin_of
from pevpm.profile.store import (
    BLOCKING_TEST,
    DUPLEX_TEST,
    EXCHANGE_TEST,
    LOCAL_TEST,
    TRANSFER_TEST,
    BlockKey,
    Profile,
    block_contention,
)
from pevpm.stats.distributions import Distribution, Empirical, from_params

BLOCKING_SENDS = frozenset({"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend"})
MODEL_NAMES = ("full", "min2x1", "mean2x1", "min-nxp", "mean-nxp")
#: How the modelled program calls MPI: ``c`` (compiled code: the profile's times
#: as measured) or ``python`` (mpi4py: plus the stored binding cost).
BINDINGS = ("c", "python")
#: Unstable blocks a note names (the rest are counted).
UNSTABLE_SHOWN = 5
SOURCES = ("empirical", "fitted")


@dataclass(frozen=True)
class SizeSeries:
    """One test at one placement: a distribution and summary per benchmarked size."""

    test: str
    nxp: str
    intra_node: bool
    contention: int
    sizes: tuple[int, ...]
    distributions: tuple[Distribution, ...]
    minimums: tuple[float, ...]
    means: tuple[float, ...]
    oversubscribed: bool = False

    @property
    def ranks_per_node(self) -> int:
        """The ``p`` of the block's ``n x p`` placement."""
        return int(self.nxp.split("x")[1])

    def _bracket(self, size: int, extrapolate: bool) -> tuple[int, int, float]:
        """Indices of the sizes around ``size`` and the weight of the upper one."""
        sizes = self.sizes
        if size in sizes:
            i = sizes.index(size)
            return i, i, 0.0
        if sizes[0] < size < sizes[-1]:
            j = bisect.bisect_left(sizes, size)
            return j - 1, j, (size - sizes[j - 1]) / (sizes[j] - sizes[j - 1])
        if not extrapolate or len(sizes) < 2:
            listed = ", ".join(str(s) for s in sizes)
            raise ProfileError(
                f"{self.test} has no data for {size} B at {self.nxp} (benchmarked sizes: {listed} B)"
                + (
                    "; allow extrapolation to extend the nearest two sizes"
                    if len(sizes) > 1
                    else ""
                )
            )
        i, j = (0, 1) if size < sizes[0] else (len(sizes) - 2, len(sizes) - 1)
        return i, j, (size - sizes[i]) / (sizes[j] - sizes[i])

    def sample(self, size: int, rng: np.random.Generator, extrapolate: bool = False) -> float:
        i, j, w = self._bracket(size, extrapolate)
        if i == j:
            return float(self.distributions[i].rvs(random_state=rng))
        u = rng.random()
        low, high = self.distributions[i].ppf(u), self.distributions[j].ppf(u)
        return max(float((1 - w) * low + w * high), 0.0)

    def bound(self, size: int, which: Bound, extrapolate: bool = False) -> float:
        i, j, w = self._bracket(size, extrapolate)

        def value(k: int) -> float:
            d = self.distributions[k]
            return d.min_value() if which == "min" else d.max_value()

        return max((1 - w) * value(i) + w * value(j), 0.0)

    def statistic(self, size: int, which: str, extrapolate: bool = False) -> float:
        i, j, w = self._bracket(size, extrapolate)
        values = self.minimums if which == "min" else self.means
        return max((1 - w) * values[i] + w * values[j], 0.0)


def _best_stored_fit(profile: Profile, key: BlockKey) -> Distribution:
    records = profile.fits(key)
    if not records:
        raise ProfileError(
            f"no stored fits for {key.label}; run `pevpm fit {profile.path}` first",
            where=profile.path,
        )

    def rank(record) -> tuple[float, float]:
        goodness = record.goodness
        return goodness.get("rank", math.inf), goodness.get("aic", math.inf)

    best = min(records.values(), key=rank)
    return from_params(best.family, best.params)


def _oversubscribed(keys: Sequence[BlockKey], cores: int | None) -> bool:
    """Whether ``keys`` ran more ranks per node than the node's ``cores`` (the
    profile origin's; ``None``: not recorded, so no).  (A block's recorded
    ``conditions`` do not say: their ``cores`` is one bound rank's affinity.)"""
    return cores is not None and any(key.p > cores for key in keys)


def _all_fitted(profile: Profile, test: str) -> bool:
    """Whether every block of ``test`` has a stored fit."""
    return all(profile.fits(key) for key in profile.blocks(test=test) if key.variant == "")


def load_series(profile: Profile, test: str, source: str = "empirical",
                binding: str = "c", missing: list[str] | None = None) -> list[SizeSeries]:
    """Every placement of ``test`` in ``profile`` as a :class:`SizeSeries`.

    ``source="empirical"`` samples the measured times (outliers included);
    ``source="fitted"`` uses the best distribution stored by ``pevpm fit``.
    ``binding="python"`` (a program calling MPI through mpi4py) adds to the
    empirical times of blocks measured with MPIBench's C core the binding cost
    ``bench --binding-cost`` stored for them (:meth:`Profile.binding_shift`);
    the labels of blocks that need it and have none are appended to ``missing``.

    >>> from pevpm.profile.builtin import open_profile
    >>> with open_profile("default") as prof:
    ...     [(s.nxp, s.contention, s.oversubscribed) for s in load_series(prof, "sendrecv")]
    [('1x2', 1, False), ('1x4', 2, True)]
    """
    cores = origin_of(profile).cores
    if source not in SOURCES:
        raise ProfileError(
            f"unknown distribution source {source!r}; choose from {', '.join(SOURCES)}"
        )
    keys = profile.blocks(test=test)
    if not keys:
        have = sorted({key.test for key in profile.blocks()})
        raise ProfileError(
            f"profile has no {test} blocks; it has: {', '.join(have) or 'no blocks at all'}",
            where=profile.path,
        )
    by_placement: dict[tuple[int, int], list[BlockKey]] = {}
    for key in keys:
        if key.variant == "":
            by_placement.setdefault((key.n, key.p), []).append(key)
    series = []
    for (n, p), placement_keys in sorted(by_placement.items()):
        placement_keys.sort(key=lambda k: k.size)
        distributions, minimums, means = [], [], []
        for key in placement_keys:
            shift = profile.binding_shift(key, binding) if binding != "c" else 0.0
            if shift is None or (shift and source == "fitted"):
                if missing is not None:
                    missing.append(key.label)
                shift = 0.0
            if source == "fitted":
                distributions.append(_best_stored_fit(profile, key))
            else:
                distributions.append(Empirical.from_samples(profile.samples(key) + shift))
            summary = profile.summary(key)
            minimums.append(summary.min + shift)
            means.append(summary.mean + shift)
        first = placement_keys[0]
        series.append(
            SizeSeries(
                test=test,
                nxp=first.nxp,
                intra_node=n == 1,
                contention=block_contention(first),
                sizes=tuple(k.size for k in placement_keys),
                distributions=tuple(distributions),
                minimums=tuple(minimums),
                means=tuple(means),
                oversubscribed=_oversubscribed(placement_keys, cores),
            )
        )
    return series


def _profile_notes(imported: str | None, instant: bool, unstable: list,
                   missing: list[str]) -> tuple[str, ...]:
    """What a prediction from this profile should say about it: imported averages,
    sends that return at once, unstable blocks, blocks without a binding cost."""
    notes = []
    if imported:
        notes.append(f"imported profile: {imported}")
    if instant:
        notes.append(f"{LOCAL_TEST}: not in OSU/IMB output; in predictions from this profile "
                     "a send returns as soon as it starts")
    if unstable:
        shown = ", ".join(f"{key.label} ({verdict.check} {verdict.shift:+.0%})"
                          for key, verdict in unstable[:UNSTABLE_SHOWN])
        if len(unstable) > UNSTABLE_SHOWN:
            shown += f" and {len(unstable) - UNSTABLE_SHOWN} more"
        notes.append(f"unstable blocks: {len(unstable)} point-to-point block(s) changed while "
                     "measured (halves: second half's median against the first's; repeat: "
                     f"a repeat at the end of the run against the block): {shown}; a "
                     "prediction using them can move by as much; re-measure them on a "
                     "quieter machine")
    if missing:
        notes.append(f"binding: {len(missing)} block(s) measured with MPIBench's C core have "
                     f"no stored mpi4py cost (first: {missing[0]}); this Python program's "
                     "messages there omit mpi4py's per-call cost (bench --binding-cost "
                     "measures it; fitted distributions never get it)")
    return tuple(notes)


@dataclass(frozen=True)
class SeriesIndex:
    """The series of one test, chosen by intra/inter node and contention."""

    test: str
    series: tuple[SizeSeries, ...]
    _chosen: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def choose(self, intra_node: bool, contention: int, baseline: bool,
               ranks_per_node: int | None = None, oversubscribed: bool = False) -> SizeSeries:
        """The series for a message.  Candidates, the first group that has
        any: blocks of the message's node class (intra/inter) that the run may
        borrow, such blocks of the other class, all of its class, all.  A run
        may borrow any block unless it is not ``oversubscribed`` and the block
        was.  Among the candidates: an oversubscribed run prefers
        oversubscribed blocks; then the nearest contention on a log scale (ties
        go up; a two-process ``baseline``: the lowest contention); then the
        run's own ``ranks_per_node`` (``None``: no preference).  (The ``p`` of
        an inter-node block is its link contention, which a run with fewer
        ranks per node meets at a hot spot, so ranks per node only breaks ties.)

        >>> from pevpm.profile.builtin import open_profile
        >>> with open_profile("default") as prof:
        ...     index = SeriesIndex("isend", tuple(load_series(prof, "isend")))
        >>> index.choose(True, 2, False, ranks_per_node=2).nxp
        '1x2'
        >>> index.choose(True, 2, False, ranks_per_node=8, oversubscribed=True).nxp
        '1x4'
        """
        query = (intra_node, contention, baseline, ranks_per_node, oversubscribed)
        if query not in self._chosen:
            self._chosen[query] = self._choose(*query)
        return self._chosen[query]

    def _choose(self, intra_node: bool, contention: int, baseline: bool,
                ranks_per_node: int | None, oversubscribed: bool) -> SizeSeries:
        same = [s for s in self.series if s.intra_node == intra_node]
        groups = [[s for s in same if oversubscribed or not s.oversubscribed],
                  [s for s in self.series if oversubscribed or not s.oversubscribed],
                  same, list(self.series)]
        pool = next(group for group in groups if group)
        target = math.log(max(contention, 1))

        def rank(s: SizeSeries) -> tuple:
            if baseline:
                return s.contention, s.nxp
            return (s.oversubscribed != oversubscribed, abs(math.log(s.contention) - target),
                    -s.contention, s.ranks_per_node != ranks_per_node, s.nxp)

        return min(pool, key=rank)

    def notes(self, leaves_node: bool = True) -> tuple[str, ...]:
        """What this test lacks: ``inter-node`` or ``intra-node`` placements
        (missing inter-node ones matter only to a run in which some message
        ``leaves_node``)."""
        kinds = {s.intra_node for s in self.series}
        if len(kinds) == 2 or (kinds == {True} and not leaves_node):
            return ()
        have = "intra-node (1xp)" if True in kinds else "inter-node"
        missing = "inter-node" if True in kinds else "intra-node"
        return (f"{self.test}: only {have} placements measured; {missing} messages use them",)


@dataclass(frozen=True)
class ProfileCommModel:
    """A :class:`~pevpm.machine.transfer.CommModel` sampling a machine profile.

    Build it with :meth:`from_profile`.  ``model`` is one of
    :data:`MODEL_NAMES`; ``extrapolate`` lets sizes outside the benchmarked
    range extend the two nearest sizes linearly instead of raising
    :class:`~pevpm.errors.ProfileError`; ``bound`` makes every ``full`` time
    its minimum or its maximum (see :meth:`bounded`).  ``duplex`` and
    ``exchange`` hold the ``sendrecv`` and ``isendduplex`` series when
    measured; ``ranks_per_node`` and ``oversubscribed`` describe the run's
    placement (see :meth:`for_placement`); ``cores``: the profile's cores per
    node (``None``: not recorded); ``profile_notes``: what the profile itself
    makes worth saying (imported averages, missing binding costs);
    ``instant_local``: with no ``isendlocal`` blocks, sends return at once
    (imported profiles: OSU and IMB do not measure it) instead of failing.
    """

    transfer: SeriesIndex
    local: SeriesIndex | None
    model: str = "full"
    extrapolate: bool = False
    bound: Bound | None = None
    available_tests: tuple[str, ...] = ()
    blocking: SeriesIndex | None = None
    duplex: SeriesIndex | None = None
    exchange: SeriesIndex | None = None
    cores: int | None = None
    ranks_per_node: int | None = None
    oversubscribed: bool = False
    profile_notes: tuple[str, ...] = ()
    instant_local: bool = False

    def __post_init__(self) -> None:
        if self.model not in MODEL_NAMES:
            raise ProfileError(
                f"unknown communication model {self.model!r}; choose from {', '.join(MODEL_NAMES)}"
            )

    @classmethod
    def from_profile(
        cls,
        profile: Profile | str | Path,
        model: str = "full",
        *,
        source: str = "empirical",
        extrapolate: bool = False,
        binding: str = "c",
    ) -> ProfileCommModel:
        """Load the ``isend`` and (if present) ``send``, ``isendlocal``,
        ``sendrecv`` and ``isendduplex`` blocks (the last two, with ``source=
        "fitted"``, only when every block of theirs has stored fits: they are
        an option, and exchanges use the other tests without them).

        ``binding="python"``: the times a program calling MPI through mpi4py
        sees (see :func:`load_series`); blocks lacking a stored binding cost
        are named in :attr:`notes`."""
        if binding not in BINDINGS:
            raise ProfileError(f"unknown binding {binding!r}; choose from {', '.join(BINDINGS)}")
        opened = profile if isinstance(profile, Profile) else Profile.open(profile)
        missing: list[str] = []
        try:
            tests = tuple(sorted({key.test for key in opened.blocks()}))
            transfer, local, blocking = (
                SeriesIndex(test, tuple(load_series(opened, test, source, binding, missing)))
                if test == TRANSFER_TEST or test in tests else None
                for test in (TRANSFER_TEST, LOCAL_TEST, BLOCKING_TEST))
            duplex, exchange = (
                SeriesIndex(test, tuple(load_series(opened, test, source, binding, missing)))
                if test in tests and (source != "fitted" or _all_fitted(opened, test)) else None
                for test in (DUPLEX_TEST, EXCHANGE_TEST))
            cores = origin_of(opened).cores
            imported = opened.metadata.get("imported")
            unstable = [(key, verdict) for key, verdict in opened.stability().items()
                        if not verdict.stable and key.test in tests and key.variant == ""]
        finally:
            if opened is not profile:
                opened.close()
        instant = bool(imported) and local is None
        notes = _profile_notes(imported, instant, unstable, missing)
        return cls(transfer, local, model, extrapolate, None, tests, blocking, duplex, exchange,
                   cores, profile_notes=notes, instant_local=instant)

    def for_placement(self, ranks_per_node: int) -> ProfileCommModel:
        """This model for a run with at most ``ranks_per_node`` ranks on a node:
        blocks are chosen for that placement, oversubscribed when it exceeds
        the profile's cores per node (see :meth:`SeriesIndex.choose`).

        >>> model = ProfileCommModel.from_profile("default")   # doctest: +SKIP
        >>> model.for_placement(8).oversubscribed               # doctest: +SKIP
        True
        """
        return replace(self, ranks_per_node=ranks_per_node,
                       oversubscribed=self.cores is not None and ranks_per_node > self.cores)

    @property
    def notes(self) -> tuple[str, ...]:
        """Fallbacks this profile forces (e.g. no inter-node measurements)."""
        return self.notes_for(leaves_node=True)

    def notes_for(self, leaves_node: bool) -> tuple[str, ...]:
        """The fallback notes that apply to runs in which some message can
        (``leaves_node``) or cannot leave its node: a profile measured on one
        node only matters to messages between nodes."""
        indexes = [index for index in (self.transfer, self.blocking, self.local) if index]
        notes = [note for index in indexes for note in index.notes(leaves_node)]
        notes.extend(self.profile_notes)
        if self.blocking is None:
            notes.append(f"{BLOCKING_TEST}: not measured; blocking sends use the "
                         f"{TRANSFER_TEST} times (benchmark --tests {BLOCKING_TEST} for their own)")
        notes.extend(f"{test}: no stored fits; bidirectional exchanges use the one-way tests "
                     f"(pevpm fit --tests {test})"
                     for test, index in ((DUPLEX_TEST, self.duplex), (EXCHANGE_TEST, self.exchange))
                     if index is None and test in self.available_tests)
        return tuple(notes)

    def index_for(self, transfer: Transfer, local: bool = False) -> SeriesIndex | None:
        """The test whose blocks serve ``transfer`` (``local``: its local completion):
        ``isendlocal``; a duplex measurement for a bidirectional exchange; ``send``
        for a blocking send; else ``isend``.  None: local completion not measured."""
        if local:
            return self.local
        if transfer.duplex:
            preferred = ((self.duplex, self.exchange) if transfer.op == "MPI_Sendrecv"
                         else (self.exchange, self.duplex))
            measured = next((index for index in preferred if index is not None), None)
            if measured is not None:
                return measured
        if self.blocking is not None and transfer.op in BLOCKING_SENDS:
            return self.blocking
        return self.transfer

    def series_for(self, transfer: Transfer, local: bool = False) -> SizeSeries | None:
        """The benchmarked placement that serves ``transfer`` (see :meth:`index_for`
        and :meth:`SeriesIndex.choose`); None when local completion is not measured."""
        index = self.index_for(transfer, local)
        if index is None:
            return None
        return index.choose(transfer.intra_node, transfer.contention,
                            self.model.endswith("2x1"), self.ranks_per_node,
                            self.oversubscribed)

    def _time(self, transfer: Transfer, rng: np.random.Generator, local: bool) -> float:
        if transfer.size < 0:
            raise ProfileError(f"negative message size {transfer.size} for {transfer.op}")
        series = self.series_for(transfer, local)
        if self.model == "full":
            if self.bound is not None:
                return series.bound(transfer.size, self.bound, self.extrapolate)
            return series.sample(transfer.size, rng, self.extrapolate)
        statistic = "min" if self.model.startswith("min") else "mean"
        return series.statistic(transfer.size, statistic, self.extrapolate)

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """End-to-end time of one message (seconds), from the blocks of
        :meth:`index_for`."""
        return self._time(transfer, rng, local=False)

    def draw_plan(self, transfer: Transfer, local: bool = False) -> tuple | None:
        """How :meth:`transfer_time` (``local``: :meth:`local_completion_time`)
        draws a time for ``transfer``, as data for the compiled engine core:
        ``("fixed", seconds)``; ``("one", knots, cdf)``: one uniform through an
        empirical inverse CDF; ``("mix", w, knots0, cdf0, knots1, cdf1)``: one
        uniform through two, mixed with weight ``w`` and kept >= 0; or None
        when only the method itself can draw it (fitted distributions)."""
        if transfer.size < 0:
            return None
        series = self.series_for(transfer, local)
        if series is None:
            return ("fixed", 0.0) if local and self.instant_local else None
        if self.model != "full":
            statistic = "min" if self.model.startswith("min") else "mean"
            return ("fixed", series.statistic(transfer.size, statistic, self.extrapolate))
        if self.bound is not None:
            return ("fixed", series.bound(transfer.size, self.bound, self.extrapolate))
        i, j, w = series._bracket(transfer.size, self.extrapolate)
        first, second = series.distributions[i], series.distributions[j]
        if not (isinstance(first, Empirical) and isinstance(second, Empirical)):
            return None
        if i == j:
            return ("one", first.knots, first.cdf_values)
        return ("mix", w, first.knots, first.cdf_values, second.knots, second.cdf_values)

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Time until a non-blocking send returns (seconds), from ``isendlocal``."""
        if self.local is None and self.instant_local:
            return 0.0
        if self.local is None:
            raise ProfileError(
                f"profile has no {LOCAL_TEST} blocks (needed for when a non-blocking send "
                f"returns); it has: {', '.join(self.available_tests)}"
            )
        return self._time(transfer, rng, local=True)

    def with_model(self, model: str) -> ProfileCommModel:
        """The same data under another named model."""
        return replace(self, model=model)

    def bounded(self, which: Bound) -> ProfileCommModel:
        """Deterministic copy: ``full`` times at their minimum or maximum (the
        baselines are deterministic already)."""
        if which not in ("min", "max"):
            raise ProfileError(f"bound must be 'min' or 'max', got {which!r}")
        return replace(self, bound=which)


def compare_models(
    profile: Profile | str | Path, names: Sequence[str] = MODEL_NAMES, **options
) -> dict[str, ProfileCommModel]:
    """One model per name, loaded once from the same profile, for side-by-side runs.

    >>> models = compare_models("machine.db")                 # doctest: +SKIP
    >>> sorted(models)                                         # doctest: +SKIP
    ['full', 'mean-nxp', 'mean2x1', 'min-nxp', 'min2x1']
    """
    base = ProfileCommModel.from_profile(profile, "full", **options)
    return {name: base.with_model(name) for name in names}
