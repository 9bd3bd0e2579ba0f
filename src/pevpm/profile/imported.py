"""Import the benchmark results cluster users already have: OSU and IMB text output.

The OSU micro-benchmarks (``osu_latency``, ``osu_multi_lat``, ``osu_bw``,
``osu_bibw`` and the collective tests, 5.x and 7.x) and the Intel MPI
Benchmarks (``IMB-MPI1``: PingPong, PingPing, Sendrecv, Exchange and the
collectives, 2019 and later) print one line per message size.  Each becomes
a block of a profile, named as MPIBench names its tests:

==========================  =====================================================
OSU / IMB                   profile block
==========================  =====================================================
latency, multi_lat,         ``send`` and ``isend`` (one-way time: half the round
PingPong                    trip of a blocking ping-pong)
PingPing                    ``isendduplex``
Sendrecv                    ``sendrecv``
Exchange                    ``exchange`` (no MPIBench counterpart; not predicted)
bw, bibw                    ``bw``, ``bibw``: size / bandwidth per message
                            (streaming, not used by predictions)
collectives                 ``bcast``, ``reduce``, ``allreduce``, ``barrier``,
                            ``scatter``/``gather``/``allgather``/``alltoall``
                            (variant ``each``: the size is per process)
==========================  =====================================================

They report averages (and sometimes minima and maxima), not distributions.
Each block therefore holds :data:`SAMPLES` times of a stated shape
(:func:`stated_shape`): a shifted exponential with the reported mean,
starting at the reported minimum, or at :data:`FLOOR` of the mean when no
minimum is reported.  The profile says so (its ``imported`` meta key), and
predictions from it print it as a note.

>>> table = parse_text("# OSU MPI Latency Test v5.3\\n# Size  Latency (us)\\n0  0.70\\n1024  1.07\\n",
...                    "osu_latency.txt")
>>> table.source, [(r.tests, r.size, r.mean) for r in table.rows]
('OSU 5.3', [(('send', 'isend'), 0, 7e-07), (('send', 'isend'), 1024, 1.07e-06)])
>>> isinstance(table, Table), isinstance(table.rows[0], Row)
(True, True)
>>> parse_text("hello\\n", "notes.txt")
Traceback (most recent call last):
pevpm.errors.ProfileError: notes.txt:1: not OSU micro-benchmark or Intel MPI Benchmarks output (no OSU or IMB title line)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pevpm.errors import ProfileError
from pevpm.profile.store import BlockKey, ProfileWriter

#: Times stored per imported block.
SAMPLES = 200
#: Where the stated shape starts when only the mean is reported (fraction of it).
FLOOR = 0.9
SHAPE = (f"OSU/IMB report averages, not distributions: each imported block holds "
         f"{SAMPLES} times of a shifted exponential with the reported mean, starting at "
         f"the reported minimum (or {FLOOR:.0%} of the mean when none is reported)")

_OSU_TITLE = re.compile(r"^#\s*OSU MPI(?:-[A-Z]+)? (.+?) Test v(\d+(?:\.\d+)*)\b")
_IMB_TITLE = re.compile(r"Intel\(R\) MPI Benchmarks\s+([\w.]+)")
_IMB_SECTION = re.compile(r"^#\s*Benchmarking\s+(\S+)")
_IMB_PROCS = re.compile(r"^#\s*#processes\s*=\s*(\d+)")
_COLLECTIVES = ("allreduce", "reduce", "bcast", "barrier", "scatter", "gather", "allgather",
                "alltoall")
_PER_PROCESS = ("scatter", "gather", "allgather", "alltoall")
_OSU_POINT_TO_POINT = {"latency": ("send", "isend"), "multi latency": ("send", "isend"),
                       "bandwidth": ("bw",), "bi-directional bandwidth": ("bibw",)}
_IMB_POINT_TO_POINT = {"pingpong": ("send", "isend"), "pingping": ("isendduplex",),
                       "sendrecv": ("sendrecv",), "exchange": ("exchange",)}


@dataclass(frozen=True)
class Row:
    """One reported size of one test: mean (and minimum, maximum) seconds per operation."""

    tests: tuple[str, ...]
    size: int
    procs: int | None
    mean: float
    minimum: float | None = None
    maximum: float | None = None
    iterations: int | None = None
    line: int = 0


@dataclass
class Table:
    """What one file reported: ``source`` (``"OSU 5.3"``), its rows and any
    benchmarks skipped (IMB sections with no profile counterpart)."""

    source: str
    rows: list[Row] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def parse_text(text: str, name: str) -> Table:
    """Parse OSU or IMB output; a foreign or damaged file is one :class:`ProfileError`
    naming ``name`` and the line."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if _OSU_TITLE.match(line.strip()):
            return _parse_osu(lines, number, name)
        if any(_IMB_TITLE.search(later) for later in lines[number - 1:number + 3]):
            return _parse_imb(lines, name)
        break
    raise ProfileError("not OSU micro-benchmark or Intel MPI Benchmarks output (no OSU or "
                       "IMB title line)", where=f"{name}:{_first_text_line(lines)}")


def _first_text_line(lines: list[str]) -> int:
    return next((i for i, line in enumerate(lines, 1) if line.strip()), 1)


def _numbers(line: str, number: int, name: str, count: int) -> list[float]:
    words = line.split()
    try:
        values = [float(word) for word in words]
    except ValueError:
        values = []
    if len(values) != count or not all(math.isfinite(v) and v >= 0 for v in values):
        raise ProfileError(f"expected {count} non-negative numbers, found {line.strip()!r}",
                           where=f"{name}:{number}")
    return values


def _columns(header: str) -> list[str]:
    return [word.strip().lower() for word in re.split(r"\s{2,}", header.strip("# \t")) if word]


def _osu_tests(title: str, number: int, name: str) -> tuple[str, ...]:
    words = title.lower()
    if words in _OSU_POINT_TO_POINT:
        return _OSU_POINT_TO_POINT[words]
    collective = words.removesuffix(" latency").replace("broadcast", "bcast")
    if collective in _COLLECTIVES:
        return (collective,)
    raise ProfileError(f"OSU test {title!r} has no profile counterpart (import latency, "
                       "multi_lat, bw, bibw or the blocking collectives)",
                       where=f"{name}:{number}")


def _parse_osu(lines: list[str], first: int, name: str) -> Table:
    match = _OSU_TITLE.match(lines[first - 1].strip())
    title, version = match.group(1), match.group(2)
    tests = _osu_tests(title, first, name)
    table = Table(f"OSU {version}")
    columns: list[str] | None = None
    for number, line in enumerate(lines[first:], first + 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("#"):
            if columns is None and ("size" in text.lower() or "latency" in text.lower()):
                columns = _columns(text)
            continue
        if columns is None:
            raise ProfileError("data before the column header line", where=f"{name}:{number}")
        values = dict(zip(columns, _numbers(text, number, name, len(columns))))
        table.rows.append(_osu_row(tests, values, number, name))
    if not table.rows:
        raise ProfileError(f"no results in this OSU {title} output",
                           where=f"{name}:{len(lines)}")
    return table


def _pick(values: dict[str, float], *words: str, without: tuple[str, ...] = ()) -> float | None:
    for column, value in values.items():
        if all(w in column for w in words) and not any(w in column for w in without):
            return value
    return None


def _osu_row(tests: tuple[str, ...], values: dict[str, float], number: int, name: str) -> Row:
    size = int(values.get("size", 0))
    iterations = _pick(values, "iterations")
    if tests[0] in ("bw", "bibw"):
        bandwidth = _pick(values, "bandwidth") or _pick(values, "mb/s")
        if not bandwidth:
            raise ProfileError("no bandwidth on this line", where=f"{name}:{number}")
        return Row(tests, size, None, size / (bandwidth * 1e6), line=number)
    mean = _pick(values, "latency", without=("min", "max"))
    if mean is None:
        raise ProfileError("no latency column in this OSU output", where=f"{name}:{number}")
    low, high = _pick(values, "min"), _pick(values, "max")
    return Row(tests, size, None, mean * 1e-6, None if low is None else low * 1e-6,
               None if high is None else high * 1e-6,
               None if iterations is None else int(iterations), number)


def _imb_tests(benchmark: str) -> tuple[str, ...] | None:
    word = benchmark.lower()
    if word in _IMB_POINT_TO_POINT:
        return _IMB_POINT_TO_POINT[word]
    return (word,) if word in _COLLECTIVES else None


def _parse_imb(lines: list[str], name: str) -> Table:
    version = next(m.group(1) for line in lines if (m := _IMB_TITLE.search(line)))
    table = Table(f"IMB {version}")
    tests: tuple[str, ...] | None = None
    procs: int | None = None
    columns: list[str] | None = None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if (section := _IMB_SECTION.match(text)) is not None:
            tests, procs, columns = _imb_tests(section.group(1)), None, None
            if tests is None:
                table.skipped.append(section.group(1))
            continue
        if (count := _IMB_PROCS.match(text)) is not None:
            procs = int(count.group(1))
            continue
        if text.startswith(("#bytes", "#repetitions")):
            columns = [word.lstrip("#").lower() for word in text.split()]
            continue
        if not text or text.startswith("#") or columns is None:
            continue
        values = _numbers(text, number, name, len(columns))
        if tests is None:
            continue
        if procs is None:
            raise ProfileError("results before the '#processes' line", where=f"{name}:{number}")
        table.rows.append(_imb_row(tests, procs, dict(zip(columns, values)), number))
    if not table.rows:
        raise ProfileError("no results of a benchmark pevpm imports (PingPong, PingPing, "
                           "Sendrecv, Exchange, collectives) in this IMB output",
                           where=f"{name}:{len(lines)}")
    return table


def _imb_row(tests: tuple[str, ...], procs: int, values: dict[str, float], number: int) -> Row:
    mean = values.get("t[usec]", values.get("t_avg[usec]"))
    low, high = values.get("t_min[usec]"), values.get("t_max[usec]")
    return Row(tests, int(values.get("bytes", 0)), procs, mean * 1e-6,
               None if low is None else low * 1e-6, None if high is None else high * 1e-6,
               int(values["repetitions"]) if "repetitions" in values else None, number)


def stated_shape(mean: float, minimum: float | None = None, count: int = SAMPLES) -> np.ndarray:
    """``count`` times with mean ``mean``: a shifted exponential from ``minimum`` (else
    ``FLOOR * mean``), taken at evenly spaced quantiles and scaled so the mean is exact.

    >>> times = stated_shape(2.0, 1.5)
    >>> round(float(times.mean()), 12), float(times.min()) >= 1.5
    (2.0, True)
    >>> stated_shape(1.0, 1.0, count=3).tolist()
    [1.0, 1.0, 1.0]
    """
    start = FLOOR * mean if minimum is None or minimum > mean else minimum
    tail = -np.log1p(-(np.arange(count) + 0.5) / count)
    return start + (mean - start) * tail / tail.mean()


def import_file(path: str | Path, output: str | Path, procs: int | None = None,
                nodes: int = 1) -> tuple[Table, list[BlockKey]]:
    """Read OSU or IMB output at ``path`` into the profile ``output`` (created if
    missing); returns what was read and the blocks written.

    ``procs``: the process count of OSU runs (their output does not say it;
    default 2); ``nodes``: how many nodes those processes ran on (default 1).
    IMB states the process count of every section.

    >>> table, keys = import_file("osu_latency.txt", "cluster.db")   # doctest: +SKIP
    """
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise ProfileError(f"cannot read ({exc.strerror})", where=str(path)) from None
    table = parse_text(text, str(path))
    if nodes < 1:
        raise ProfileError(f"--nodes must be at least 1 (got {nodes})")
    groups: dict[int, list[Row]] = {}
    for row in table.rows:
        groups.setdefault(row.procs or procs or 2, []).append(row)
    keys: list[BlockKey] = []
    with ProfileWriter.open(output) as writer:
        writer.set_metadata(imported=SHAPE)
        for count, rows in sorted(groups.items()):
            if count % nodes:
                raise ProfileError(f"{count} processes do not spread evenly over {nodes} "
                                   "nodes", where=str(path))
            n, p = nodes, count // nodes
            run = writer.begin_run(
                n=n, p=p, hosts=[f"imported-node{i}" for i in range(n)],
                mpi_library=f"unknown (imported from {table.source} output)",
                mpi_version="unknown", clock="imported", clock_resolution=1e-9,
                sync_method="none", resend_limit=0,
                plan={"binding": "c", "imported": {"file": path.name, "source": table.source,
                                                   "shape": SHAPE}})
            for row in rows:
                times = stated_shape(row.mean, row.minimum)[np.newaxis, :]
                for test in row.tests:
                    key = BlockKey(test, "each" if test in _PER_PROCESS else "", row.size, n, p)
                    writer.write_block(run, key, times, reps=SAMPLES, warmup=0,
                                       start_mode="imported", sync_error=0.0, elapsed=0.0)
                    keys.append(key)
            writer.finish_run(run, [])
    return table, keys
