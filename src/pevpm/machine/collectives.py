"""How a machine runs collectives: named algorithm sets, thresholds, overrides, options.

This is configuration only: the algorithms themselves (point-to-point
programs) are registered in :mod:`pevpm.vm.kernel.collectives.selection`, which
checks that it implements every name listed in :data:`ALGORITHM_NAMES`.

An *algorithm set* names, per family, the algorithm an MPI library uses,
possibly depending on the size and the number of ranks:

* ``mpich-1.2`` - what the thesis found in MPICH 1.2 on Perseus: binomial
  broadcast, fan-in + broadcast barrier, linear scatter / gather (rank
  order), gather + bcast allgather, linear alltoall (everyone to rank 0
  first), binomial reduce, reduce + bcast allreduce.
* ``mpich`` (default) - a current MPICH-like choice with size thresholds
  (binomial / scatter+allgather broadcast, dissemination barrier, binomial
  scatter / gather, recursive doubling / Bruck / ring allgather, Bruck /
  scattered / pairwise alltoall, recursive-doubling allreduce and scan).
* ``qsnet`` - the thesis's APAC NF: hardware broadcast and barrier, and an
  alltoall switching at 2 KB and 8 KB blocks from Bruck to circular to the
  measured distribution (its third algorithm is unknown).
* ``measured`` - every collective sampled from measured distributions.

Two algorithm names are not point-to-point programs: ``hardware``
(QsNet-style bcast / barrier) and ``measured`` (sample the profile); see
:mod:`pevpm.machine.collective_times`.

>>> AlgorithmOptions().child_order, AlgorithmOptions(reduce_cost_per_byte=2.0).combine(1000)
('largest-first', 2000.0)
>>> cfg = CollectiveConfig.parse("library=mpich-1.2, bcast=linear, child-order=smallest-first")
>>> cfg.algorithm("MPI_Bcast", 64, 16), cfg.algorithm("MPI_Alltoall", 64, 16)
('linear', 'linear')
>>> mpich = CollectiveConfig()
>>> mpich.algorithm("MPI_Bcast", 1024, 16), mpich.algorithm("MPI_Bcast", 1 << 20, 16)
('binomial', 'scatter-allgather')
>>> CollectiveConfig.parse("bcast_short=100").algorithm("MPI_Bcast", 1024, 16)
'scatter-allgather'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pevpm.errors import ModelError, PevpmError, did_you_mean
from pevpm.machine.collective_times import ProfileTimes
from pevpm.model.ast import COLLECTIVES
from pevpm.values import parse_number

#: Collective families, in the order their message tags are numbered.
FAMILIES = ("barrier", "bcast", "scatter", "gather", "allgather", "alltoall",
            "reduce", "allreduce", "reduce_scatter", "scan")

#: MPI operation -> the family whose algorithms run it.
FAMILY_OF = {
    "MPI_Barrier": "barrier", "MPI_Bcast": "bcast",
    "MPI_Scatter": "scatter", "MPI_Scatterv": "scatter",
    "MPI_Gather": "gather", "MPI_Gatherv": "gather",
    "MPI_Allgather": "allgather", "MPI_Alltoall": "alltoall",
    "MPI_Reduce": "reduce", "MPI_Allreduce": "allreduce",
    "MPI_Reduce_scatter": "reduce_scatter", "MPI_Scan": "scan",
}
assert set(FAMILY_OF) == COLLECTIVES

#: Orders in which a tree parent sends to its children.
CHILD_ORDERS = ("largest-first", "smallest-first")


@dataclass(frozen=True)
class AlgorithmOptions:
    """``child_order``: order of a tree parent's sends (``largest-first`` as
    MPICH, or ``smallest-first``); ``acknowledgements``: tree broadcasts wait
    for a zero-byte acknowledgement from every child; ``reduce_cost_per_byte``:
    seconds a reduction operator takes per byte it combines; ``alltoall_throttle``:
    how many partners the ``scattered`` alltoall posts before it waits for them
    all (MPICH's ``MPIR_CVAR_ALLTOALL_THROTTLE``, 32; 0: every partner at once)."""

    child_order: str = "largest-first"
    acknowledgements: bool = False
    reduce_cost_per_byte: float = 0.0
    alltoall_throttle: int = 32

    def __post_init__(self) -> None:
        if self.child_order not in CHILD_ORDERS:
            raise ModelError(f"unknown child order {self.child_order!r} "
                             f"(choose from {', '.join(CHILD_ORDERS)})")
        if not self.reduce_cost_per_byte >= 0:
            raise ModelError("reduce cost per byte must be >= 0, "
                             f"got {self.reduce_cost_per_byte!r}")
        if not (isinstance(self.alltoall_throttle, int) and self.alltoall_throttle >= 0):
            raise ModelError("alltoall throttle must be a whole number >= 0, "
                             f"got {self.alltoall_throttle!r}")

    def combine(self, nbytes: int) -> float:
        """Seconds to apply the reduction operator to ``nbytes`` bytes."""
        return self.reduce_cost_per_byte * nbytes


def is_pow2(n: int) -> bool:
    """True for 1, 2, 4, 8, ..."""
    return n > 0 and n & (n - 1) == 0


#: Algorithms that are not point-to-point programs (the engine times them whole).
HARDWARE, MEASURED = "hardware", "measured"
TIMED_ALGORITHMS = frozenset({HARDWARE, MEASURED})
HARDWARE_FAMILIES = frozenset({"bcast", "barrier"})

#: family -> the algorithms the virtual machine implements for it.
ALGORITHM_NAMES: dict[str, tuple[str, ...]] = {
    "barrier": ("binomial", "dissemination"),
    "bcast": ("binomial", "linear", "scatter-allgather"),
    "scatter": ("linear", "binomial"),
    "gather": ("linear", "linear-any-order", "binomial"),
    "allgather": ("gather-bcast", "ring", "recursive-doubling", "bruck"),
    "alltoall": ("linear", "scattered", "circular", "pairwise", "bruck"),
    "reduce": ("binomial", "linear"),
    "allreduce": ("reduce-bcast", "recursive-doubling"),
    "reduce_scatter": ("reduce-scatterv", "pairwise"),
    "scan": ("linear", "recursive-doubling"),
}
assert set(ALGORITHM_NAMES) == set(FAMILIES)

#: Size thresholds in bytes (``bcast_min_procs`` is a rank count); override
#: any of them by name.  Block sizes for alltoall, totals for allgather.
DEFAULT_THRESHOLDS: dict[str, int] = {
    "bcast_short": 12288,
    "bcast_min_procs": 8,
    "allgather_short": 81920,
    "allgather_long": 524288,
    "alltoall_short": 256,
    "alltoall_medium": 32768,
    "qsnet_alltoall_tree": 2048,
    "qsnet_alltoall_circular": 8192,
}

Rule = Callable[[int, int, Mapping[str, int]], str]


def _mpich_bcast(size, n, t):
    return "binomial" if size < t["bcast_short"] or n < t["bcast_min_procs"] \
        else "scatter-allgather"


def _mpich_allgather(size, n, t):
    total = size * n
    if total < t["allgather_long"] and is_pow2(n):
        return "recursive-doubling"
    return "bruck" if total < t["allgather_short"] else "ring"


def _mpich_alltoall(size, n, t):
    if size <= t["alltoall_short"] and n >= 8:
        return "bruck"
    return "scattered" if size <= t["alltoall_medium"] else "pairwise"


def _qsnet_alltoall(size, n, t):
    if size <= t["qsnet_alltoall_tree"]:
        return "bruck"
    return "circular" if size <= t["qsnet_alltoall_circular"] else MEASURED


def _fixed(name: str) -> Rule:
    return lambda size, n, t: name


LIBRARIES: dict[str, dict[str, Rule]] = {
    "mpich-1.2": {
        "barrier": _fixed("binomial"), "bcast": _fixed("binomial"),
        "scatter": _fixed("linear"), "gather": _fixed("linear"),
        "allgather": _fixed("gather-bcast"), "alltoall": _fixed("linear"),
        "reduce": _fixed("binomial"), "allreduce": _fixed("reduce-bcast"),
        "reduce_scatter": _fixed("reduce-scatterv"), "scan": _fixed("linear"),
    },
    "mpich": {
        "barrier": _fixed("dissemination"), "bcast": _mpich_bcast,
        "scatter": _fixed("binomial"), "gather": _fixed("binomial"),
        "allgather": _mpich_allgather, "alltoall": _mpich_alltoall,
        "reduce": _fixed("binomial"), "allreduce": _fixed("recursive-doubling"),
        "reduce_scatter": _fixed("pairwise"), "scan": _fixed("recursive-doubling"),
    },
    "qsnet": {"barrier": _fixed(HARDWARE), "bcast": _fixed(HARDWARE),
              "alltoall": _qsnet_alltoall},
    "measured": {},
}

_OPTION_KEYS = ("library", "child-order", "acks", "reduce-cost", "alltoall-throttle",
                "hardware")


@dataclass(frozen=True)
class CollectiveConfig:
    """How the virtual machine runs collectives.

    ``library`` names an algorithm set; ``overrides`` maps a family
    (``bcast``, ``alltoall``, ...; ``scatter`` covers ``MPI_Scatterv``) to
    an algorithm; ``thresholds`` overrides entries of
    :data:`DEFAULT_THRESHOLDS`; ``options`` tunes the algorithms;
    ``hardware`` turns on QsNet-style hardware bcast and barrier; families
    the set does not know fall back to ``measured``.  ``measured`` is the
    source of measured collective times (a
    :class:`~pevpm.machine.collective_times.CollectiveTimes`), needed only when
    a ``measured`` algorithm is chosen.  Frozen and hashable, so expansions
    can be memoised per configuration.
    """

    library: str = "mpich"
    overrides: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, int] = field(default_factory=dict)
    options: AlgorithmOptions = field(default_factory=AlgorithmOptions)
    hardware: bool = False
    measured: object = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.library not in LIBRARIES:
            raise ModelError(f"unknown collective algorithm set {self.library!r}"
                             + did_you_mean(self.library, LIBRARIES))
        for family, name in dict(self.overrides).items():
            _check_algorithm(family, name)
        for name, value in dict(self.thresholds).items():
            if name not in DEFAULT_THRESHOLDS:
                raise ModelError(f"unknown collective threshold {name!r}"
                                 + did_you_mean(name, DEFAULT_THRESHOLDS))
            if int(value) != value or value < 0:
                raise ModelError(f"threshold {name} must be a whole number >= 0, got {value!r}")
        object.__setattr__(self, "overrides", _Frozen(self.overrides))
        object.__setattr__(self, "thresholds", _Frozen(self.thresholds))

    @classmethod
    def parse(cls, spec: str | Sequence[str], base: CollectiveConfig | None = None
              ) -> CollectiveConfig:
        """Read ``key=value`` items (comma-separated, or one per list entry) on
        top of ``base``: ``FAMILY=ALGORITHM``, ``THRESHOLD=BYTES``,
        ``library=NAME``, ``child-order=largest-first|smallest-first``,
        ``acks=yes|no``, ``reduce-cost=SECONDS_PER_BYTE``, ``alltoall-throttle=N``,
        ``hardware=yes|no``."""
        items = [spec] if isinstance(spec, str) else list(spec)
        cfg = base or cls()
        fields: dict = {}
        overrides, thresholds = dict(cfg.overrides), dict(cfg.thresholds)
        options = cfg.options
        for item in (part.strip() for text in items for part in text.split(",")):
            if not item:
                continue
            key, sep, value = (part.strip() for part in item.partition("="))
            if not sep or not value:
                raise ModelError(f"collective option {item!r} is not of the form key=value")
            key = key.lower()
            if key == "library":
                fields["library"] = value
            elif key == "child-order":
                options = replace(options, child_order=value)
            elif key == "acks":
                options = replace(options, acknowledgements=_yes_no(key, value))
            elif key == "reduce-cost":
                options = replace(options, reduce_cost_per_byte=_number(key, value))
            elif key == "alltoall-throttle":
                options = replace(options, alltoall_throttle=_whole(key, value))
            elif key == "hardware":
                fields["hardware"] = _yes_no(key, value)
            elif key in DEFAULT_THRESHOLDS:
                thresholds[key] = int(_number(key, value))
            elif key in ALGORITHM_NAMES:
                overrides[key] = value
            else:
                raise ModelError(f"unknown collective option {key!r}"
                                 + did_you_mean(key, [*_OPTION_KEYS, *ALGORITHM_NAMES,
                                                  *DEFAULT_THRESHOLDS]))
        return replace(cfg, overrides=overrides, thresholds=thresholds, options=options,
                       **fields)

    @classmethod
    def for_profile(cls, profile, spec: str | Sequence[str] = ()) -> CollectiveConfig:
        """The configuration for the machine a profile measured: the algorithm
        set of its MPI library, measured collectives sampled from its blocks,
        then ``spec`` items (as :meth:`parse`) on top."""
        base = cls(library=library_for(profile.machine.mpi_library),
                   measured=ProfileTimes(profile))
        return cls.parse(spec, base)

    def algorithm(self, op: str, size: int, numprocs: int) -> str:
        """The algorithm that runs ``op`` on ``size`` bytes over ``numprocs`` ranks."""
        family = FAMILY_OF[op]
        if family in self.overrides:
            return self.overrides[family]
        if self.hardware and family in HARDWARE_FAMILIES:
            return HARDWARE
        rule = LIBRARIES[self.library].get(family)
        if rule is None:
            return MEASURED
        thresholds = {**DEFAULT_THRESHOLDS, **self.thresholds}
        return rule(size, numprocs, thresholds)


def library_for(mpi_library: str) -> str:
    """The algorithm set for an MPI library named as ``MPI_Get_library_version``
    (first line) names it: MPICH 1.x -> ``mpich-1.2``; later MPICH and its
    derivatives (MVAPICH, Intel MPI) -> ``mpich``; Quadrics/Elan -> ``qsnet``;
    anything else -> ``measured``.

    >>> library_for("MPICH Version:      5.0.2"), library_for("MPICH Version: 1.2.0")
    ('mpich', 'mpich-1.2')
    >>> library_for("Open MPI v4.1.5, package: Debian")
    'measured'
    """
    text = mpi_library.lower()
    if any(name in text for name in ("quadrics", "elan", "qsnet")):
        return "qsnet"
    if any(name in text for name in ("mpich", "mvapich", "intel(r) mpi")):
        version = re.search(r"mpich\D*(\d+)\.", text)
        return "mpich-1.2" if version and version.group(1) == "1" else "mpich"
    return MEASURED


class _Frozen(dict):
    """A read-only, hashable dict (so configurations can key a cache)."""

    def __hash__(self) -> int:          # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def __reduce__(self):
        return (_Frozen, (dict(self),))

    def _refuse(self, *args, **kwargs):
        raise TypeError("collective configuration is read-only")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse


def _check_algorithm(family: str, name: str) -> None:
    if family not in ALGORITHM_NAMES:
        raise ModelError(f"unknown collective {family!r}" + did_you_mean(family, ALGORITHM_NAMES))
    known = [*ALGORITHM_NAMES[family], MEASURED] + ([HARDWARE] if family in HARDWARE_FAMILIES else [])
    if name not in known:
        raise ModelError(f"unknown {family} algorithm {name!r} (choose from {', '.join(known)})")


def _yes_no(key: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in ("yes", "true", "on", "1"):
        return True
    if lowered in ("no", "false", "off", "0"):
        return False
    raise ModelError(f"collective option {key} takes yes or no, got {value!r}")


def _number(key: str, value: str) -> float:
    try:
        number = parse_number(value, what=f"collective option {key}")
    except PevpmError as exc:
        raise ModelError(exc.message) from None
    if number < 0:
        raise ModelError(f"collective option {key} must be >= 0, got {value!r}")
    return number




def _whole(key: str, value: str) -> int:
    number = _number(key, value)
    if number != int(number) or number > 2**31 - 1:
        raise ModelError(f"collective option {key} takes a whole number, got {value!r}")
    return int(number)
