"""The machine profile: one SQLite file holding everything MPIBench measured.

A profile holds, for one machine, any number of *runs* (one per ``n x p``
placement benchmarked) and, per run, *blocks*: one test (``isend``,
``bcast``, ...), variant (``each``/``total`` or ``""``) and message size.
Each block keeps the per-rank per-repetition times (seconds on the global
clock), its outliers, an exact histogram of the rest and a summary.  Later
stages add distribution *fits* per block and *calibration* values (serial
segment timings) through :class:`ProfileWriter`.

Readers open the file read-only, and every open (readers and writers alike)
first checks the whole file (:func:`pevpm.profile.integrity.check_profile`), so
a damaged profile is refused with its first bad row, never half used:

>>> prof = Profile.open(default_profile_path())
>>> key = prof.blocks(test="isend")[0]                    # a BlockKey
>>> key, key.nxp, key.label
(BlockKey(test='isend', variant='', size=0, n=1, p=2), '1x2', 'isend 0 B 1x2')
>>> prof.samples("isend", 1024, nxp="1x2").shape
(1000,)
>>> summary = prof.summary("isend", 1024, nxp="1x2")        # a Summary
>>> summary.count, f"{summary.median * 1e6:.2f} us"
(1000, '3.57 us')
>>> run = prof.runs()[0]                                     # a RunInfo
>>> run.nxp, run.mpi_library
('1x2', 'MPICH Version: 5.0.2')
>>> prof.machine.placements                                  # a MachineInfo
['1x2', '1x4']
>>> prof.close()

Writers add to it (one transaction per block, so an interrupted benchmark
keeps every finished block); ``pevpm fit`` stores a :class:`FitRecord` per
block and family:

>>> import tempfile, shutil, os
>>> folder = tempfile.mkdtemp()
>>> copy = shutil.copy(default_profile_path(), os.path.join(folder, "m.db"))
>>> with ProfileWriter.open(copy) as w:
...     w.store_fit(key, "pearson5", {"a": 3.1, "loc": 1e-6, "scale": 2e-6}, {"ks": 0.4})
>>> with Profile.open(copy) as prof:
...     prof.fits("isend", 0, nxp="1x2")["pearson5"].params     # a FitRecord
{'a': 3.1, 'loc': 1e-06, 'scale': 2e-06}
>>> shutil.rmtree(folder)

This module must not import :mod:`pevpm.bench`: the virtual machine reads
profiles without the benchmark.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Self

import numpy as np

from pevpm import __version__
from pevpm.errors import ProfileError
from pevpm.host import BUSY_THRESHOLD
from pevpm.profile.bounded import connect_read_only
from pevpm.profile.integrity import check_profile
from pevpm.stats.histogram import Histogram
from pevpm.stats.outliers import split_outliers

FORMAT_TAG = "pevpm-profile"
SCHEMA_VERSION = 1
QUANTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
DEFAULT_MAX_RAW_SAMPLES = 1_000_000

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(
    id INTEGER PRIMARY KEY, n INTEGER NOT NULL, p INTEGER NOT NULL, hosts TEXT NOT NULL,
    mpi_library TEXT NOT NULL, mpi_version TEXT NOT NULL, clock TEXT NOT NULL,
    clock_resolution REAL NOT NULL, sync_method TEXT NOT NULL, resend_limit INTEGER NOT NULL,
    plan TEXT NOT NULL, started TEXT NOT NULL, finished TEXT);
CREATE TABLE clock_sync(
    run_id INTEGER NOT NULL REFERENCES runs(id), rank INTEGER NOT NULL, host TEXT NOT NULL,
    offset REAL NOT NULL, drift REAL NOT NULL, error REAL NOT NULL,
    PRIMARY KEY(run_id, rank));
CREATE TABLE blocks(
    id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),
    test TEXT NOT NULL, variant TEXT NOT NULL, size INTEGER NOT NULL,
    n INTEGER NOT NULL, p INTEGER NOT NULL, reps INTEGER NOT NULL, warmup INTEGER NOT NULL,
    start_mode TEXT NOT NULL, ranks INTEGER NOT NULL, samples INTEGER NOT NULL,
    raw_kept INTEGER NOT NULL, outlier_percentile REAL NOT NULL,
    outlier_multiplier REAL NOT NULL, sync_error REAL NOT NULL, elapsed REAL NOT NULL,
    budget_limited INTEGER NOT NULL, created TEXT NOT NULL,
    UNIQUE(test, variant, size, n, p));
CREATE TABLE raw_times(
    block_id INTEGER NOT NULL REFERENCES blocks(id), rank INTEGER NOT NULL,
    reps BLOB, times BLOB NOT NULL, PRIMARY KEY(block_id, rank));
CREATE TABLE outliers(
    block_id INTEGER NOT NULL REFERENCES blocks(id), rank INTEGER NOT NULL,
    rep INTEGER NOT NULL, seconds REAL NOT NULL);
CREATE TABLE histograms(
    block_id INTEGER PRIMARY KEY REFERENCES blocks(id), low REAL NOT NULL,
    bin_width REAL NOT NULL, counts BLOB NOT NULL);
CREATE TABLE summaries(
    block_id INTEGER PRIMARY KEY REFERENCES blocks(id), count INTEGER NOT NULL,
    outliers INTEGER NOT NULL, outlier_threshold REAL NOT NULL, min REAL NOT NULL,
    mean REAL NOT NULL, std REAL NOT NULL, max REAL NOT NULL, quantiles TEXT NOT NULL);
CREATE TABLE fits(
    block_id INTEGER NOT NULL REFERENCES blocks(id), family TEXT NOT NULL,
    params TEXT NOT NULL, goodness TEXT NOT NULL, created TEXT NOT NULL,
    PRIMARY KEY(block_id, family));
CREATE TABLE calibration(key TEXT PRIMARY KEY, value TEXT NOT NULL, created TEXT NOT NULL);
"""

#: Added after schema version 1 shipped: the machine's state while each block
#: ran (``others``: cores' worth of CPU other processes used; ``load``: the
#: 1-minute load average; ``cores``: cores the ranks could use).  Created
#: when a profile is opened for writing; profiles without it have no record.
_CONDITIONS_TABLE = """
CREATE TABLE IF NOT EXISTS conditions(
    block_id INTEGER PRIMARY KEY REFERENCES blocks(id), others REAL NOT NULL,
    load REAL NOT NULL, cores INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS stability(
    block_id INTEGER PRIMARY KEY REFERENCES blocks(id), first_median REAL NOT NULL,
    second_median REAL NOT NULL, p_value REAL NOT NULL, retries INTEGER NOT NULL,
    max_shift REAL NOT NULL, max_p REAL NOT NULL, check_kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS binding_costs(
    block_id INTEGER PRIMARY KEY REFERENCES blocks(id), python_median REAL NOT NULL,
    c_median REAL NOT NULL);
"""

#: ``binding_costs`` (``pevpm bench --binding-cost``): per block measured with the
#: C core, the median of the same block timed with the mpi4py loops; the
#: difference is what the binding adds to each such call from Python.


def default_profile_path() -> Path:
    """Path of the profile shipped with pevpm (measured on the development machine)."""
    return Path(str(resources.files("pevpm") / "data" / "default-profile.db"))


def parse_nxp(nxp) -> tuple[int, int] | None:
    """``"2x4"``, ``(2, 4)`` or ``None`` -> ``(n, p)`` or ``None``.

    >>> parse_nxp("2x4"), parse_nxp((1, 2)), parse_nxp(None)
    ((2, 4), (1, 2), None)
    """
    if nxp is None:
        return None
    if isinstance(nxp, str):
        parts = nxp.lower().split("x")
        if len(parts) == 2 and all(part.strip().isdigit() for part in parts):
            return int(parts[0]), int(parts[1])
        raise ProfileError(f"placement {nxp!r} is not of the form NxP (e.g. 2x4)")
    n, p = nxp
    return int(n), int(p)


@dataclass(frozen=True)
class BlockKey:
    """Identity of one test block: test, variant, message size (bytes), n nodes x p per node."""

    test: str
    variant: str
    size: int
    n: int
    p: int

    @property
    def nxp(self) -> str:
        """The placement as text: ``"1x2"``."""
        return f"{self.n}x{self.p}"

    @property
    def label(self) -> str:
        """How messages name the block: ``"isend 1024 B 1x2"``."""
        name = f"{self.test}{self.variant}"
        return f"{name} {self.size} B {self.nxp}"


#: The point-to-point tests the communication models read: a non-blocking
#: send's completion (transfers), a blocking send, and a transfer within a node;
#: bidirectional exchanges: an MPI_Sendrecv call, non-blocking sends both ways.
TRANSFER_TEST = "isend"
BLOCKING_TEST = "send"
LOCAL_TEST = "isendlocal"
DUPLEX_TEST = "sendrecv"
EXCHANGE_TEST = "isendduplex"


def block_contention(key: BlockKey) -> int:
    """Messages sharing the busiest link in a point-to-point block.

    See :mod:`pevpm.machine.profile_comm` for why.

    >>> block_contention(BlockKey("isend", "", 0, 2, 1))
    1
    >>> block_contention(BlockKey("isend", "", 0, 1, 4))
    2
    """
    return max(1, key.p // 2) if key.n == 1 else key.p


@dataclass(frozen=True)
class BlockStability:
    """A block's two halves compared (:mod:`pevpm.bench.stability`; ``check``
    ``"repeat"``: the block against a repeat of it at the end of the run): their
    medians (s), the test's p-value, the measurements repeated before the kept
    one, and the rule: unstable when ``p_value < max_p`` and the medians differ
    by more than ``max_shift``.

    >>> BlockStability(1e-6, 1.3e-6, 1e-9, 1, 0.1, 0.001).stable
    False
    """

    first: float
    second: float
    p_value: float
    retries: int
    max_shift: float
    max_p: float
    check: str = "halves"

    @property
    def shift(self) -> float:
        """The second half's median relative to the first's (``0.3``: 30% slower)."""
        return self.second / self.first - 1 if self.first > 0 else 0.0

    @property
    def stable(self) -> bool:
        """Whether the halves agree by the stated rule."""
        return not (self.p_value < self.max_p and abs(self.shift) > self.max_shift)


@dataclass(frozen=True)
class BindingCost:
    """One block's median time with the Python (mpi4py) and the C timing loops (s).

    >>> cost = BindingCost(python=2.3e-6, c=1.5e-6)
    >>> f"{cost.seconds * 1e6:.1f} us"
    '0.8 us'
    """

    python: float
    c: float

    @property
    def seconds(self) -> float:
        """What the binding adds to one such operation (never below zero)."""
        return max(self.python - self.c, 0.0)


@dataclass(frozen=True)
class BlockConditions:
    """The machine's state while a block ran: ``others`` cores' worth of CPU used
    by other processes, the 1-minute ``load`` average, the ``cores`` the ranks had.

    >>> BlockConditions(others=0.9, load=2.5, cores=2).busy
    True
    """

    others: float
    load: float
    cores: int

    @property
    def busy(self) -> bool:
        """Whether other processes used more than :data:`pevpm.host.BUSY_THRESHOLD` cores."""
        return self.others > BUSY_THRESHOLD


@dataclass(frozen=True)
class Summary:
    """Statistics of all samples of a block (seconds); ``quantiles`` maps percent -> value."""

    count: int
    outliers: int
    outlier_threshold: float
    min: float
    mean: float
    std: float
    max: float
    quantiles: dict[int, float]

    @property
    def median(self) -> float:
        """The 50th percentile (seconds)."""
        return self.quantiles[50]


@dataclass(frozen=True)
class RunInfo:
    """One benchmark run: placement, MPI library, clock and its per-rank sync error."""

    id: int
    n: int
    p: int
    hosts: list[str]
    mpi_library: str
    mpi_version: str
    clock: str
    clock_resolution: float
    sync_method: str
    resend_limit: int
    plan: dict
    started: str
    finished: str | None
    sync_error: dict[int, float] = field(default_factory=dict)

    @property
    def nxp(self) -> str:
        """The placement as text: ``"1x2"``."""
        return f"{self.n}x{self.p}"

    @property
    def max_sync_error(self) -> float:
        """The largest per-rank clock synchronisation error bound (seconds)."""
        return max(self.sync_error.values(), default=0.0)

    @property
    def binding(self) -> str:
        """Which loops timed the run: ``"c"`` (MPIBench's C core, what compiled programs
        see) or ``"python"`` (mpi4py; every run stored before the C core existed).

        >>> RunInfo(1, 1, 2, [], "", "", "", 0, "", 1, {"binding": "c"}, "", None).binding
        'c'
        """
        return self.plan.get("binding", "python")


@dataclass(frozen=True)
class MachineInfo:
    """What the profile says about the machine as a whole."""

    name: str
    hosts: list[str]
    mpi_library: str
    mpi_version: str
    runs: list[RunInfo]

    @property
    def placements(self) -> list[str]:
        """Every benchmarked placement, sorted: ``["1x2", "1x4"]``."""
        return sorted({run.nxp for run in self.runs})


@dataclass(frozen=True)
class FitRecord:
    """A fitted distribution stored for a block by the fitter."""

    family: str
    params: dict
    goodness: dict
    created: str


def _quote(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _check_header(conn: sqlite3.Connection, path: str) -> None:
    try:
        check_profile(conn, path, FORMAT_TAG, SCHEMA_VERSION)
    except ProfileError:
        conn.close()
        raise


class Profile:
    """Read-only view of a machine profile.  Use :meth:`open`."""

    def __init__(self, conn: sqlite3.Connection, path: str):
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, path) -> Profile:
        """Open ``path`` read-only; :class:`ProfileError` if missing, foreign, too
        new or damaged."""
        path = Path(path)
        if not path.is_file():
            raise ProfileError("no such profile file", where=str(path))
        try:
            conn = connect_read_only(path.resolve().as_uri() + "?mode=ro", str(path))
        except sqlite3.Error as exc:
            raise ProfileError(f"cannot open ({exc})", where=str(path)) from None
        _check_header(conn, str(path))
        conn.bound(str(path))       # the check ended with a progress handler of its own
        return cls(conn, str(path))

    def close(self) -> None:
        """Close the file (or use the profile as a context manager)."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- machine and runs -------------------------------------------------
    def runs(self) -> list[RunInfo]:
        """Every benchmark run stored, oldest first."""
        result = []
        rows = self._conn.execute(
            "SELECT id, n, p, hosts, mpi_library, mpi_version, clock, clock_resolution,"
            " sync_method, resend_limit, plan, started, finished FROM runs ORDER BY id"
        ).fetchall()
        for row in rows:
            errors = dict(
                self._conn.execute(
                    "SELECT rank, error FROM clock_sync WHERE run_id=? ORDER BY rank", (row[0],)
                )
            )
            result.append(
                RunInfo(
                    id=row[0], n=row[1], p=row[2], hosts=json.loads(row[3]),
                    mpi_library=row[4], mpi_version=row[5], clock=row[6],
                    clock_resolution=row[7], sync_method=row[8], resend_limit=row[9],
                    plan=json.loads(row[10]), started=row[11], finished=row[12],
                    sync_error=errors,
                )
            )
        return result

    def clock_sync(self, run_id: int) -> list[dict]:
        """Per-rank clock synchronisation of a run: host, offset, drift, error (seconds)."""
        rows = self._conn.execute(
            "SELECT rank, host, offset, drift, error FROM clock_sync WHERE run_id=? ORDER BY rank",
            (run_id,),
        )
        keys = ("rank", "host", "offset", "drift", "error")
        return [dict(zip(keys, row)) for row in rows]

    @property
    def metadata(self) -> dict[str, str]:
        """The profile's ``meta`` table: format, machine name, creation and origin keys
        (see :mod:`pevpm.profile.builtin`)."""
        return dict(self._conn.execute("SELECT key, value FROM meta"))

    @property
    def machine(self) -> MachineInfo:
        """The machine as a whole: name, hosts, MPI library and runs."""
        meta = self.metadata
        runs = self.runs()
        hosts = sorted({host for run in runs for host in run.hosts})
        last = runs[-1] if runs else None
        return MachineInfo(
            name=meta.get("machine", ""),
            hosts=hosts,
            mpi_library=last.mpi_library if last else "",
            mpi_version=last.mpi_version if last else "",
            runs=runs,
        )

    # -- blocks -------------------------------------------------------------
    def blocks(self, test: str | None = None, nxp=None) -> list[BlockKey]:
        """Stored blocks, optionally only one test and/or placement, sorted."""
        sql = "SELECT test, variant, size, n, p FROM blocks"
        clauses, args = [], []
        if test is not None:
            clauses.append("test=?")
            args.append(test)
        placement = parse_nxp(nxp)
        if placement is not None:
            clauses.append("n=? AND p=?")
            args.extend(placement)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY test, variant, n, p, size"
        return [BlockKey(*row) for row in self._conn.execute(sql, args)]

    def block_info(self, key: BlockKey) -> dict:
        """Bookkeeping of one block: reps, warmup, start mode, ranks, samples, ..."""
        cursor = self._conn.execute(
            "SELECT * FROM blocks WHERE test=? AND variant=? AND size=? AND n=? AND p=?",
            (key.test, key.variant, key.size, key.n, key.p),
        )
        row = cursor.fetchone()
        if row is None:
            raise ProfileError(f"no block {key.label}", where=self.path)
        return dict(zip([col[0] for col in cursor.description], row))

    def block_binding(self, key: BlockKey) -> str:
        """Which loops measured block ``key``: ``"c"`` or ``"python"`` (its run's
        :attr:`RunInfo.binding`)."""
        run_id = self.block_info(key)["run_id"]
        return next((run.binding for run in self.runs() if run.id == run_id), "python")

    def binding_shift(self, key: BlockKey, binding: str) -> float | None:
        """Seconds to add to block ``key``'s times for a program calling MPI through
        ``binding``: 0 where the block was measured through it; the stored
        binding cost for a Python program and a block of the C core; ``None``
        when that cost was not measured.

        >>> with Profile.open(default_profile_path()) as prof:     # measured with mpi4py
        ...     prof.binding_shift(prof.blocks(test="isend")[0], "python")
        0.0
        """
        measured = self.block_binding(key)
        if measured == binding or binding == "c":
            return 0.0
        cost = self.binding_costs().get(key)
        return cost.seconds if cost else None

    def block_conditions(self, key: BlockKey) -> BlockConditions | None:
        """The machine's load while ``key`` was measured, or ``None`` if not recorded
        (blocks from before conditions were recorded, synthetic profiles)."""
        try:
            row = self._conn.execute(
                "SELECT c.others, c.load, c.cores FROM conditions c JOIN blocks b "
                "ON b.id = c.block_id WHERE b.test=? AND b.variant=? AND b.size=? AND b.n=? "
                "AND b.p=?", (key.test, key.variant, key.size, key.n, key.p)).fetchone()
        except sqlite3.OperationalError:          # no conditions table in this profile
            return None
        return BlockConditions(*row) if row else None

    def stability(self) -> dict[BlockKey, BlockStability]:
        """Every block's stability verdict, where the benchmark checked it (empty for
        profiles from before the check)."""
        rows = self._per_block("stability", "first_median, second_median, p_value, retries, "
                               "max_shift, max_p, check_kind")
        return {key: BlockStability(*values) for key, values in rows}

    def binding_costs(self) -> dict[BlockKey, BindingCost]:
        """What mpi4py adds to each block's operation, where ``bench --binding-cost``
        measured it (empty otherwise)."""
        rows = self._per_block("binding_costs", "python_median, c_median")
        return {key: BindingCost(*values) for key, values in rows}

    def _per_block(self, table: str, columns: str) -> list[tuple[BlockKey, tuple]]:
        """``columns`` of an optional per-block ``table`` with each row's block (none
        when the profile predates the table)."""
        try:
            rows = self._conn.execute(
                f"SELECT b.test, b.variant, b.size, b.n, b.p, {columns} FROM {table} t "
                "JOIN blocks b ON b.id = t.block_id "
                "ORDER BY b.test, b.variant, b.n, b.p, b.size").fetchall()
        except sqlite3.OperationalError:          # a profile from before the table
            return []
        return [(BlockKey(*row[:5]), tuple(row[5:])) for row in rows]

    def resolve(self, test: str, size: int, nxp=None, variant: str | None = None) -> BlockKey:
        """Find the one block matching the arguments; unspecified parts must be unambiguous."""
        candidates = [
            key for key in self.blocks(test=test, nxp=nxp)
            if key.size == size and (variant is None or key.variant == variant)
        ]
        if len(candidates) == 1:
            return candidates[0]
        wanted = f"{test}{'' if variant is None else ' ' + variant} size {size}"
        if nxp is not None:
            wanted += f" at {nxp}"
        if not candidates:
            have = sorted({(k.test, k.variant, k.nxp) for k in self.blocks(test=test)})
            hint = ", ".join(f"{t}{v and ' ' + v} {x}" for t, v, x in have) or "none"
            raise ProfileError(f"no block for {wanted} (this test has: {hint})", where=self.path)
        options = ", ".join(f"{k.variant or '-'} {k.nxp}" for k in candidates)
        raise ProfileError(
            f"{wanted} is ambiguous ({options}); pass variant= and/or nxp=", where=self.path
        )

    def _block_id(self, key: BlockKey) -> int:
        return int(self.block_info(key)["id"])

    def _key(self, test, size, nxp, variant) -> BlockKey:
        if isinstance(test, BlockKey):
            return test
        return self.resolve(test, size, nxp=nxp, variant=variant)

    def samples(self, test, size: int | None = None, nxp=None, variant: str | None = None,
                by_rank: bool = False) -> np.ndarray:
        """Raw times in seconds (outliers included) of one block.

        ``test`` may be a :class:`BlockKey`.  Flat array by default; with
        ``by_rank=True`` a (ranks, kept reps) array.  When the run was too large
        to keep everything, this is the stored per-rank random subsample.
        """
        block_id = self._block_id(self._key(test, size, nxp, variant))
        rows = self._conn.execute(
            "SELECT times FROM raw_times WHERE block_id=? ORDER BY rank", (block_id,)
        ).fetchall()
        per_rank = [np.frombuffer(row[0], dtype="<f8") for row in rows]
        for rank, values in enumerate(per_rank):
            if not np.isfinite(values).all():
                raise ProfileError(f"damaged profile: block {block_id} rank {rank} has "
                                   "non-finite raw times", where=self.path)
        if by_rank:
            return np.vstack(per_rank) if per_rank else np.zeros((0, 0))
        return np.concatenate(per_rank) if per_rank else np.zeros(0)

    def summary(self, test, size: int | None = None, nxp=None,
                variant: str | None = None) -> Summary:
        """Summary statistics of one block (over all samples, outliers included)."""
        block_id = self._block_id(self._key(test, size, nxp, variant))
        row = self._conn.execute(
            "SELECT count, outliers, outlier_threshold, min, mean, std, max, quantiles"
            " FROM summaries WHERE block_id=?",
            (block_id,),
        ).fetchone()
        quantiles = {int(k): v for k, v in json.loads(row[7]).items()}
        return Summary(*row[:7], quantiles=quantiles)

    def histogram(self, test, size: int | None = None, nxp=None,
                  variant: str | None = None) -> Histogram:
        """Exact histogram of all non-outlier samples of one block."""
        block_id = self._block_id(self._key(test, size, nxp, variant))
        low, width, blob = self._conn.execute(
            "SELECT low, bin_width, counts FROM histograms WHERE block_id=?", (block_id,)
        ).fetchone()
        counts = np.frombuffer(blob, dtype="<i8").copy()
        return Histogram(low + width * np.arange(counts.size + 1), counts)

    def outliers(self, test, size: int | None = None, nxp=None,
                 variant: str | None = None) -> np.ndarray:
        """Outlying times (seconds) of one block, in (rank, rep) order."""
        block_id = self._block_id(self._key(test, size, nxp, variant))
        rows = self._conn.execute(
            "SELECT seconds FROM outliers WHERE block_id=? ORDER BY rank, rep", (block_id,)
        ).fetchall()
        return np.array([row[0] for row in rows], dtype=float)

    def fits(self, test, size: int | None = None, nxp=None,
             variant: str | None = None) -> dict[str, FitRecord]:
        """Fitted distributions stored for one block, by family name."""
        block_id = self._block_id(self._key(test, size, nxp, variant))
        rows = self._conn.execute(
            "SELECT family, params, goodness, created FROM fits WHERE block_id=?", (block_id,)
        )
        return {
            family: FitRecord(family, json.loads(params), json.loads(goodness), created)
            for family, params, goodness, created in rows
        }

    def stored_fits(self) -> list[tuple[BlockKey, str]]:
        """Every (block, family) that has a stored fit."""
        rows = self._conn.execute(
            "SELECT b.test, b.variant, b.size, b.n, b.p, f.family FROM fits f"
            " JOIN blocks b ON b.id = f.block_id ORDER BY b.test, b.variant, b.n, b.p, b.size"
        )
        return [(BlockKey(*row[:5]), row[5]) for row in rows]

    def calibration(self) -> dict:
        """All calibration values (JSON-decoded) by key."""
        rows = self._conn.execute("SELECT key, value FROM calibration ORDER BY key")
        return {key: json.loads(value) for key, value in rows}


class ProfileWriter(Profile):
    """Read-write access: create a profile, add runs, blocks, fits and calibration.

    >>> with ProfileWriter.open("m.db", machine="mycluster") as w:   # doctest: +SKIP
    ...     w.set_calibration("jacobi.row_update_s", 1.2e-6)
    """

    @classmethod
    def open(cls, path, machine: str = "") -> ProfileWriter:
        """Open ``path`` for writing, creating an empty profile if it does not exist;
        an existing profile must pass the same checks as for reading."""
        path = Path(path)
        fresh = not path.exists() or path.stat().st_size == 0
        try:
            conn = sqlite3.connect(str(path))
            if fresh:
                meta = [("format", FORMAT_TAG), ("schema_version", str(SCHEMA_VERSION)),
                        ("machine", machine), ("created", _now()), ("created_by", __version__)]
                inserts = "".join(
                    f"INSERT INTO meta(key, value) VALUES ({_quote(k)}, {_quote(v)});"
                    for k, v in meta
                )
                conn.executescript(f"BEGIN;{_SCHEMA}{inserts}COMMIT;")
        except sqlite3.Error as exc:
            raise ProfileError(f"cannot open for writing ({exc})", where=str(path)) from None
        _check_header(conn, str(path))
        try:
            conn.executescript(_CONDITIONS_TABLE)
        except sqlite3.Error as exc:
            raise ProfileError(f"cannot open for writing ({exc})", where=str(path)) from None
        return cls(conn, str(path))

    def begin_run(self, *, n: int, p: int, hosts: list[str], mpi_library: str,
                  mpi_version: str, clock: str, clock_resolution: float, sync_method: str,
                  resend_limit: int, plan: dict) -> int:
        """Record the start of a benchmark run; returns its id."""
        with self._conn:
            cursor = self._conn.execute(
                "INSERT INTO runs(n, p, hosts, mpi_library, mpi_version, clock, clock_resolution,"
                " sync_method, resend_limit, plan, started) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (n, p, json.dumps(hosts), mpi_library, mpi_version, clock, clock_resolution,
                 sync_method, resend_limit, json.dumps(plan), _now()),
            )
        return int(cursor.lastrowid)

    def finish_run(self, run_id: int, sync: list[dict]) -> None:
        """Mark a run complete and store its per-rank clock sync (rank, host, offset, drift, error)."""
        with self._conn:
            self._store_sync(run_id, sync)
            self._conn.execute("UPDATE runs SET finished=? WHERE id=?", (_now(), run_id))

    def _store_sync(self, run_id: int, sync: list[dict]) -> None:
        self._conn.executemany(
            "INSERT OR REPLACE INTO clock_sync(run_id, rank, host, offset, drift, error)"
            " VALUES (?,?,?,?,?,?)",
            [(run_id, s["rank"], s["host"], s["offset"], s["drift"], s["error"]) for s in sync],
        )

    def latest_run(self) -> RunInfo | None:
        """The most recent run, or None in an empty profile."""
        runs = self.runs()
        return runs[-1] if runs else None

    def write_block(self, run_id: int, key: BlockKey, times: np.ndarray, *, reps: int,
                    warmup: int, start_mode: str, sync_error: float, elapsed: float,
                    budget_limited: bool = False, outlier_rule=(99.0, 10.0),
                    bin_width: float | None = None,
                    max_raw_samples: int = DEFAULT_MAX_RAW_SAMPLES, seed: int | list[int] = 0,
                    sync: list[dict] | None = None,
                    conditions: BlockConditions | None = None) -> None:
        """Store one finished block in a single transaction.

        ``times`` is a (ranks, reps) array of seconds.  Outliers are split by
        ``outlier_rule`` = (percentile, multiplier); the histogram of the rest
        uses ``bin_width`` (None: automatic).  If there are more than
        ``max_raw_samples`` values a per-rank random subsample (seeded by
        ``seed``) is kept; summary, histogram and outliers stay exact.
        ``sync`` (per-rank clock sync so far) and ``conditions`` (the
        machine's load meanwhile) are stored alongside.
        """
        times = np.asarray(times, dtype=float)
        if times.ndim != 2 or times.size == 0:
            raise ProfileError(f"block {key.label}: times must be a non-empty (ranks, reps) "
                               "array")
        if not np.isfinite(times).all():
            raise ProfileError(f"block {key.label}: times must be finite numbers")
        ranks, count = times.shape
        flat = times.ravel()
        split = split_outliers(flat, *outlier_rule)
        body = flat[~split.is_outlier]
        hist = Histogram.of(body, bin_width)
        quantiles = dict(zip(QUANTILES, np.percentile(flat, QUANTILES).tolist()))
        keep = min(count, max(1, max_raw_samples // max(ranks, 1)))
        rng = np.random.default_rng(seed)
        with self._conn:
            old = self._conn.execute(
                "SELECT id FROM blocks WHERE test=? AND variant=? AND size=? AND n=? AND p=?",
                (key.test, key.variant, key.size, key.n, key.p),
            ).fetchone()
            if old is not None:
                self._delete_block(old[0])
            cursor = self._conn.execute(
                "INSERT INTO blocks(run_id, test, variant, size, n, p, reps, warmup, start_mode,"
                " ranks, samples, raw_kept, outlier_percentile, outlier_multiplier, sync_error,"
                " elapsed, budget_limited, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_id, key.test, key.variant, key.size, key.n, key.p, reps, warmup, start_mode,
                 ranks, flat.size, keep * ranks, float(outlier_rule[0]), float(outlier_rule[1]),
                 sync_error, elapsed, int(budget_limited), _now()),
            )
            block_id = cursor.lastrowid
            if conditions is not None:
                self._conn.execute(
                    "INSERT OR REPLACE INTO conditions(block_id, others, load, cores) "
                    "VALUES (?,?,?,?)",
                    (block_id, conditions.others, conditions.load, conditions.cores))
            for rank in range(ranks):
                if keep < count:
                    chosen = np.sort(rng.choice(count, size=keep, replace=False))
                    reps_blob = chosen.astype("<i4").tobytes()
                    values = times[rank, chosen]
                else:
                    reps_blob, values = None, times[rank]
                self._conn.execute(
                    "INSERT INTO raw_times(block_id, rank, reps, times) VALUES (?,?,?,?)",
                    (block_id, rank, reps_blob, values.astype("<f8").tobytes()),
                )
            where = np.flatnonzero(split.is_outlier)
            self._conn.executemany(
                "INSERT INTO outliers(block_id, rank, rep, seconds) VALUES (?,?,?,?)",
                [(block_id, int(i // count), int(i % count), float(flat[i])) for i in where],
            )
            self._conn.execute(
                "INSERT INTO histograms(block_id, low, bin_width, counts) VALUES (?,?,?,?)",
                (block_id, float(hist.edges[0]), hist.bin_width or 0.0,
                 hist.counts.astype("<i8").tobytes()),
            )
            self._conn.execute(
                "INSERT INTO summaries(block_id, count, outliers, outlier_threshold, min, mean,"
                " std, max, quantiles) VALUES (?,?,?,?,?,?,?,?,?)",
                (block_id, flat.size, split.count, split.threshold, float(flat.min()),
                 float(flat.mean()), float(flat.std()), float(flat.max()), json.dumps(quantiles)),
            )
            if sync:
                self._store_sync(run_id, sync)

    def _delete_block(self, block_id: int) -> None:
        for table in ("raw_times", "outliers", "histograms", "summaries", "fits", "conditions",
                      "binding_costs", "stability"):
            self._conn.execute(f"DELETE FROM {table} WHERE block_id=?", (block_id,))
        self._conn.execute("DELETE FROM blocks WHERE id=?", (block_id,))

    def store_fit(self, key: BlockKey, family: str, params: dict,
                  goodness: dict | None = None) -> None:
        """Store (or replace) a fitted distribution for a block."""
        block_id = self._block_id(key)
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO fits(block_id, family, params, goodness, created)"
                " VALUES (?,?,?,?,?)",
                (block_id, family, json.dumps(params), json.dumps(goodness or {}), _now()),
            )

    def set_calibration(self, key: str, value) -> None:
        """Store (or replace) a JSON-serialisable calibration value."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO calibration(key, value, created) VALUES (?,?,?)",
                (key, json.dumps(value), _now()),
            )

    def store_stability(self, key: BlockKey, verdict: BlockStability) -> None:
        """Store block ``key``'s stability verdict."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO stability(block_id, first_median, second_median, "
                "p_value, retries, max_shift, max_p, check_kind) VALUES (?,?,?,?,?,?,?,?)",
                (self._block_id(key), verdict.first, verdict.second, verdict.p_value,
                 verdict.retries, verdict.max_shift, verdict.max_p, verdict.check))

    def store_binding_cost(self, key: BlockKey, *, python: float, c: float) -> None:
        """Store the medians of block ``key`` timed by the Python and the C loops."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO binding_costs(block_id, python_median, c_median) "
                "VALUES (?,?,?)", (self._block_id(key), python, c))

    def set_machine_name(self, name: str) -> None:
        """Name the machine (the ``machine`` meta key)."""
        self.set_metadata(machine=name)

    def set_metadata(self, **values: str) -> None:
        """Store (or replace) ``meta`` keys, e.g. where the profile was measured."""
        with self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                   [(key, str(value)) for key, value in values.items()])
