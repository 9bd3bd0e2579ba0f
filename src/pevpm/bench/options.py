"""MPIBench options: parsing and every check that can be made before MPI starts.

Everything here runs on each rank before ``mpi4py`` is imported, so bad input
is refused without any MPI work (only rank 0 reports it, see
:func:`launcher_rank_and_size`).

>>> parse_sizes("0-1024-4096,64K")
[0, 1024, 2048, 3072, 4096, 65536]
>>> parse_sizes("1-*4-64")
[1, 4, 16, 64]
>>> parse_duration("50us"), parse_duration("2")
(5e-05, 2.0)
>>> parse_placements("1x2, 2X1,all")
['1x2', '2x1', 'all']
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field

from pevpm.bench.catalog import CATALOG, DEFAULT_TESTS, resolve_test
from pevpm.bench.clock import SYNC_METHODS, THESIS_RESEND_LIMIT
from pevpm.errors import BenchmarkError

#: Start rules; ``auto`` chains the one-way point-to-point tests (as the latency
#: loops of OSU and IMB run) and starts every other test after a barrier.
START_MODES = ("auto", "barrier", "time", "chain")
#: Which loops time the operations: ``c`` (the C core, :mod:`pevpm.bench.ccore`),
#: ``python`` (mpi4py) or ``auto`` (C where it builds, else Python with a note).
BINDINGS = ("auto", "c", "python")
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_NUMBER = r"(\d+)([kKmMgG]?)"
_RANGE = re.compile(rf"^{_NUMBER}-(\*?){_NUMBER}-{_NUMBER}$")
_SINGLE = re.compile(rf"^{_NUMBER}$")
_PLACEMENT = re.compile(r"^([1-9][0-9]*)x([1-9][0-9]*)$")
_DURATION = re.compile(r"^([0-9]*\.?[0-9]+(?:e-?[0-9]+)?)\s*(ns|us|ms|s|min)?$")
_PER_SECOND = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0, "min": 1 / 60, None: 1.0}
MAX_SIZES = 10_000
#: Largest message size (1 TiB): more than any buffer a benchmark can send, and
#: well inside the profile's 64-bit integers.
MAX_SIZE = 2**40
#: Fewest timed repetitions of a chained block.  A chained small-message
#: repetition costs microseconds, so a thousand cost milliseconds, and a
#: prediction reads the block's mean: from ``--quick``'s 100 a single slow
#: repetition moved the mean 0.1-0.2 us (OSU's latency loop times 1,000-10,000
#: iterations per size, IMB's 1,000).
CHAIN_MIN_REPS = 1000
#: Fewest untimed repetitions a chained block runs in its timed loop first.
#: After a block change, the first 50-100 chained repetitions at 1-64 KiB ran
#: 0.2-0.5 us slower than the rest here (``benchmarks/bench_block_reps.py``);
#: OSU skips 100 iterations below 8 KiB.
CHAIN_MIN_LEAD = 100


def _bytes(digits: str, unit: str) -> int:
    return int(digits) * _UNITS[unit.lower()]


def parse_sizes(text: str) -> list[int]:
    """Message sizes from ``start-step-stop`` ranges (``start-*factor-stop`` for geometric
    steps), single sizes, K/M/G suffixes (powers of 1024), comma separated; sorted, unique."""
    sizes: set[int] = set()
    for token in (t.strip() for t in str(text).split(",")):
        if not token:
            continue
        if token.startswith("-"):
            raise BenchmarkError(f"--sizes: negative message size {token!r}")
        single, ranged = _SINGLE.match(token), _RANGE.match(token)
        if single:
            sizes.add(_bytes(*single.groups()))
        elif ranged:
            start = _bytes(ranged.group(1), ranged.group(2))
            geometric = ranged.group(3) == "*"
            step = _bytes(ranged.group(4), ranged.group(5))
            stop = _bytes(ranged.group(6), ranged.group(7))
            sizes.update(_expand(token, start, step, stop, geometric))
        else:
            raise BenchmarkError(
                f"--sizes: cannot read {token!r}; use START-STEP-STOP, START-*FACTOR-STOP "
                "or single sizes such as 0,1024,64K"
            )
        if len(sizes) > MAX_SIZES:
            raise BenchmarkError(f"--sizes: more than {MAX_SIZES} sizes")
    if not sizes:
        raise BenchmarkError("--sizes: no sizes given")
    if max(sizes) > MAX_SIZE:
        raise BenchmarkError(f"--sizes: message size {max(sizes)} is above the largest, "
                             f"{MAX_SIZE} bytes (1 TiB)")
    return sorted(sizes)


def _expand(token: str, start: int, step: int, stop: int, geometric: bool) -> list[int]:
    if stop < start:
        raise BenchmarkError(f"--sizes: range {token!r} ends before it starts")
    if geometric:
        if step < 2 or start < 1:
            raise BenchmarkError(f"--sizes: geometric range {token!r} needs start >= 1 and "
                                 "factor >= 2")
        out, size = [], start
        while size <= stop:
            out.append(size)
            size *= step
        return out
    if step < 1:
        raise BenchmarkError(f"--sizes: range {token!r} needs a positive step")
    if (stop - start) // step + 1 > MAX_SIZES:
        raise BenchmarkError(f"--sizes: range {token!r} has more than {MAX_SIZES} sizes")
    return list(range(start, stop + 1, step))


def parse_duration(text) -> float:
    """``'50us'``, ``'1.5ms'``, ``'30s'``, ``'2min'`` or a plain number of seconds."""
    match = _DURATION.match(str(text).strip())
    if not match:
        raise BenchmarkError(f"cannot read duration {text!r}; e.g. 50us, 2ms, 30s, 5min")
    return float(match.group(1)) / _PER_SECOND[match.group(2)]


def parse_placements(text: str) -> list[str]:
    """``NxP`` placements (or ``all``), comma separated, normalised, duplicates dropped."""
    placements = []
    for token in (word.strip().lower() for word in text.split(",")):
        if not token:
            continue
        if token != "all" and not _PLACEMENT.match(token):
            raise BenchmarkError(f"--placements: cannot read {token!r}; give NxP (nodes x "
                                 "processes per node, e.g. 1x2,2x1) or all")
        placements.append(token)
    if not placements:
        raise BenchmarkError("--placements: no placements given")
    return list(dict.fromkeys(placements))


def launcher_rank_and_size() -> tuple[int, int] | None:
    """Rank and size announced by the MPI launcher's environment, if any (no MPI calls)."""
    for rank_var, size_var in (("PMI_RANK", "PMI_SIZE"),
                               ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                               ("PMIX_RANK", "PMIX_SIZE")):
        if rank_var in os.environ and size_var in os.environ:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return None


def available_memory_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), or None where unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


@dataclass
class BenchOptions:
    """A benchmark plan and how to run it; :meth:`validate` refuses impossible ones.

    ``placements`` lists the ``NxP`` placements benchmarked inside one launch
    (empty: the launch's own); ``launch`` tags the runs of one launch so
    ``--resume`` finds all of them (set when the benchmark starts).
    """

    output: str
    tests: list[tuple[str, str]] = field(
        default_factory=lambda: [resolve_test(t) for t in DEFAULT_TESTS])
    sizes: list[int] = field(default_factory=lambda: parse_sizes("0,1K,4K,16K,64K"))
    reps: int = 1000
    warmup: int = 10
    ppn: int | None = None
    placements: list[str] = field(default_factory=list)
    launch: str = ""
    resume: bool = False
    sync: str = "pairwise"
    resend_limit: int = THESIS_RESEND_LIMIT
    start: str = "auto"
    spacing: float | None = None
    gap: float | None = None
    budget: float = 60.0
    outlier_percentile: float = 99.0
    outlier_multiplier: float = 10.0
    bin_width: float | None = None
    max_raw: int = 1_000_000
    seed: int = 0
    machine: str = ""
    bind: bool = True
    progress: bool = True
    binding: str = "auto"
    binding_cost: bool = False
    stability_retries: int = 1
    stability_repeat: bool = True

    def blocks(self) -> list[tuple[str, str, int]]:
        """(test, variant, size) in run order; size-less tests run once at size 0."""
        plan = []
        for name, variant in self.tests:
            sizes = self.sizes if CATALOG[name].sized else [0]
            plan.extend((name, variant, size) for size in sizes)
        return plan

    def start_for(self, test: str, shared_cores: bool = False) -> str:
        """The start rule of ``test``'s blocks: ``--start``, with ``auto`` resolved:
        ``chain`` for the one-way tests where every rank of a node has a core of
        its own, ``barrier`` otherwise (ranks that share cores run a chained
        pair only while both are scheduled, so its samples would time the
        scheduler's slices; the barrier lines the ranks up as before).

        >>> options = BenchOptions("x.db")
        >>> options.start_for("send"), options.start_for("sendrecv"), options.start_for("bcast")
        ('chain', 'barrier', 'barrier')
        >>> options.start_for("send", shared_cores=True)
        'barrier'
        """
        if self.start != "auto":
            return self.start
        return "chain" if CATALOG[test].one_way and not shared_cores else "barrier"

    def reps_for(self, mode: str) -> int:
        """The timed repetitions of a block started by ``mode`` (before the time
        budget's cap): ``--reps``, and at least :data:`CHAIN_MIN_REPS` when chained.

        >>> options = BenchOptions("x.db", reps=100)
        >>> options.reps_for("chain"), options.reps_for("barrier")
        (1000, 100)
        """
        return max(self.reps, CHAIN_MIN_REPS) if mode == "chain" else self.reps

    def lead_for(self, mode: str) -> int:
        """Untimed repetitions run in the same loop just before the timed ones and
        discarded, for chained blocks: ``--warmup``, at least :data:`CHAIN_MIN_LEAD`
        (as OSU's skipped iterations), so the timed repetitions start on a warm
        path and not after the collectives that agree the repetition count.  A
        barrier-started repetition gets none: it starts after a barrier anyway.

        >>> BenchOptions("x.db").lead_for("chain"), BenchOptions("x.db").lead_for("barrier")
        (100, 0)
        """
        return max(self.warmup, CHAIN_MIN_LEAD) if mode == "chain" else 0

    @property
    def paired_tests(self) -> list[str]:
        """The point-to-point tests of the plan (they pair processes), sorted."""
        return sorted({name for name, _ in self.tests if CATALOG[name].paired})

    def plan(self) -> dict:
        """JSON-ready description stored with the run (``--resume`` replays it)."""
        data = asdict(self)
        data.pop("resume")
        data.pop("progress")
        data["tests"] = [list(t) for t in self.tests]
        return data

    @classmethod
    def from_plan(cls, plan: dict, **overrides) -> BenchOptions:
        data = dict(plan, **overrides)
        data["tests"] = [tuple(t) for t in data["tests"]]
        data.setdefault("binding", "python")     # plans stored before the C core
        data.setdefault("stability_retries", 0)  # and before the stability check
        data.setdefault("stability_repeat", False)
        return cls(**data)

    def validate(self, nprocs: int | None, memory: int | None) -> None:
        """Refuse options that cannot work; ``nprocs``/``memory`` may be unknown (None)."""
        if self.reps < 1:
            raise BenchmarkError(f"--reps must be at least 1 (got {self.reps})")
        if self.warmup < 0:
            raise BenchmarkError(f"--warmup must not be negative (got {self.warmup})")
        if self.resend_limit < 1:
            raise BenchmarkError(f"--resend-limit must be at least 1 (got {self.resend_limit})")
        if self.ppn is not None and self.ppn < 1:
            raise BenchmarkError(f"--ppn must be at least 1 (got {self.ppn})")
        if self.sync not in SYNC_METHODS:
            raise BenchmarkError(f"--sync must be one of {', '.join(SYNC_METHODS)}")
        if self.binding not in BINDINGS:
            raise BenchmarkError(f"--binding must be one of {', '.join(BINDINGS)}")
        if not 0 <= self.stability_retries <= 10:
            raise BenchmarkError(f"--stability-retries must be 0 to 10 (got "
                                 f"{self.stability_retries})")
        if self.binding_cost and self.binding == "python":
            raise BenchmarkError("--binding-cost compares the Python loops with the C core; "
                                 "it cannot go with --binding python")
        if self.start not in START_MODES:
            raise BenchmarkError(f"--start must be one of {', '.join(START_MODES)}")
        if self.budget <= 0:
            raise BenchmarkError("--budget must be positive")
        if self.spacing is not None and self.spacing <= 0:
            raise BenchmarkError("--spacing must be positive")
        if self.gap is not None and (self.gap <= 0 or self.start == "time"):
            raise BenchmarkError("--gap must be positive and goes with --start auto, barrier or chain")
        if self.bin_width is not None and self.bin_width <= 0:
            raise BenchmarkError("--bin-width must be positive")
        if not 0 < self.outlier_percentile <= 100:
            raise BenchmarkError("--outlier-percentile is in percent, in (0, 100] (99 = thesis)")
        if self.outlier_multiplier < 1:
            raise BenchmarkError("--outlier-multiplier must be at least 1")
        if any(size < 0 for size in self.sizes):
            raise BenchmarkError("--sizes: negative message size")
        if nprocs is None:
            return
        if nprocs < 2:
            raise BenchmarkError("MPIBench needs at least 2 processes (run under mpiexec -n N)")
        paired = self.paired_tests
        if paired and nprocs % 2 and not self.placements:
            raise BenchmarkError(f"{', '.join(paired)} pair processes: the process count must "
                                 f"be even (got {nprocs})")
        if self.ppn is not None and nprocs % self.ppn:
            raise BenchmarkError(f"--ppn {self.ppn} does not divide the process count {nprocs}")
        if memory is not None:
            self._check_memory(nprocs, memory)

    def _check_memory(self, nprocs: int, memory: int) -> None:
        local = min(self.ppn or nprocs, nprocs)
        for name, variant, size in self.blocks():
            need = CATALOG[name].buffer_bytes(variant, size, nprocs) * local
            if need > memory // 2:
                raise BenchmarkError(
                    f"{name}{variant} at {size} bytes needs about {need / 2**20:.0f} MiB of "
                    f"buffers per node but only {memory / 2**20:.0f} MiB are available; "
                    "lower the largest --sizes"
                )
