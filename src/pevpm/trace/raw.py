"""Read what the PMPI tracer wrote: ``rank-R.bin`` records and ``rank-R.txt`` metadata.

A record is 80 bytes (see ``pmpi/pevpm_trace.c``); :data:`RECORD` is its
numpy layout.  Times are the rank's own ``MPI_Wtime``; :attr:`RawRank.offset`
added to them gives rank 0's clock.

>>> RECORD.itemsize
80
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pevpm.errors import PevpmError

RECORD = np.dtype([("t0", "<f8"), ("t1", "<f8"), ("cpu", "<f8"), ("sleep", "<f8"),
                   ("bytes", "<i8"),
                   ("rbytes", "<i8"),
                   ("op", "<i4"), ("comm", "<i4"), ("peer", "<i4"), ("tag", "<i4"),
                   ("peer2", "<i4"), ("tag2", "<i4"), ("req", "<i4"), ("aux", "<i4")])


@dataclass(frozen=True)
class RawRank:
    """One rank's records and metadata."""

    rank: int
    size: int
    offset: float
    ops: tuple[str, ...]            # operation name of each op code
    comms: dict[int, tuple[int, ...]]  # communicator id -> world ranks of its members
    records: np.ndarray             # of RECORD
    #: calls the tracer counted but did not record: MPI function name -> calls
    unrecorded: dict[str, int] = field(default_factory=dict)
    #: Cartesian communicators (MPI_Cart_create, MPI_Cart_sub): id -> (dims, periodic)
    grids: dict[int, tuple[tuple[int, ...], tuple[bool, ...]]] = field(default_factory=dict)

    def op_code(self, name: str) -> int:
        return self.ops.index(name)


def read_rank(directory: Path, rank: int) -> RawRank:
    """Rank ``rank``'s files in ``directory``."""
    meta_path = Path(directory) / f"rank-{rank}.txt"
    bin_path = Path(directory) / f"rank-{rank}.bin"
    if not meta_path.is_file() or not bin_path.is_file():
        raise PevpmError(f"rank {rank} left no trace files (did it call MPI_Finalize?)",
                         str(directory))
    try:
        meta, comms, unrecorded, grids = _read_meta(meta_path)
        record_size = int(meta.get("record", ["0"])[0])
        if record_size != RECORD.itemsize:
            given = (f"{' '.join(meta['record'])[:20]} bytes" if meta.get("record")
                     else "of no stated size (no 'record' line)")
            raise PevpmError(f"trace records are {given}, expected {RECORD.itemsize} bytes",
                             str(meta_path))
        raw = RawRank(int(meta["rank"][0]), int(meta["size"][0]),
                      float(meta.get("offset", ["0"])[0]), tuple(meta["ops"]), comms,
                      _read_records(bin_path), unrecorded, grids)
    except (ValueError, KeyError, IndexError) as exc:
        raise PevpmError(f"not the tracer's metadata ({type(exc).__name__}: {exc})",
                         str(meta_path)) from None
    _check(raw, rank, meta_path)
    return raw


def _read_meta(path: Path) -> tuple[dict[str, list[str]], dict[int, tuple[int, ...]],
                                    dict[str, int], dict]:
    meta: dict[str, list[str]] = {}
    comms: dict[int, tuple[int, ...]] = {}
    unrecorded: dict[str, int] = {}
    grids: dict[int, tuple[tuple[int, ...], tuple[bool, ...]]] = {}
    for line in path.read_bytes().decode("ascii").splitlines():
        key, *values = line.split()
        if key == "comm":
            comms[int(values[0])] = tuple(int(v) for v in values[2:])
        elif key == "cart":
            ndims = int(values[1])
            numbers = [int(v) for v in values[2:]]
            if ndims < 1 or len(numbers) != 2 * ndims or int(values[0]) not in comms:
                raise ValueError(f"a 'cart' line of {ndims} dimensions holds {numbers}")
            grids[int(values[0])] = (tuple(numbers[:ndims]),
                                     tuple(bool(v) for v in numbers[ndims:]))
        elif key == "unrecorded":
            unrecorded[values[0]] = int(values[1])
        else:
            meta[key] = values
    return meta, comms, unrecorded, grids


def _read_records(path: Path) -> np.ndarray:
    size = path.stat().st_size
    if size % RECORD.itemsize:
        raise PevpmError(f"holds {size} bytes, not whole {RECORD.itemsize}-byte records "
                         "(cut short?)", str(path))
    return np.fromfile(path, dtype=RECORD)


def _check(raw: RawRank, rank: int, meta_path: Path) -> None:
    """Refuse records that would not make a trace: a wrong rank or size, unknown op
    codes or communicators, times that are not finite."""
    where = str(meta_path)
    if raw.rank != rank or not 0 <= rank < raw.size:
        raise PevpmError(f"says it is rank {raw.rank} of {raw.size}, expected rank {rank}",
                         where)
    if "COMPLETE" not in raw.ops:
        raise PevpmError("its ops line has no COMPLETE", where)
    records = raw.records
    bad = ((records["op"] < 0) | (records["op"] >= len(raw.ops))
           | ~np.isin(records["comm"], [-1, *raw.comms])
           | ~np.isfinite(records["t0"]) | ~np.isfinite(records["t1"]))
    if not np.isfinite(raw.offset):
        raise PevpmError(f"its clock offset is {raw.offset}", where)
    if bad.any():
        i = int(np.argmax(bad))
        raise PevpmError(f"record {i} is not the tracer's (op {records['op'][i]}, "
                         f"communicator {records['comm'][i]}, times {records['t0'][i]}, "
                         f"{records['t1'][i]})", where.replace(".txt", ".bin"))


def read_raw(directory: Path) -> list[RawRank]:
    """Every rank's records, in rank order."""
    first = read_rank(directory, 0)
    ranks = [first] + [read_rank(directory, r) for r in range(1, first.size)]
    for r in ranks[1:]:
        if r.size != first.size:
            raise PevpmError(f"rank {r.rank} says {r.size} ranks, rank 0 {first.size}",
                             str(directory))
    return ranks
