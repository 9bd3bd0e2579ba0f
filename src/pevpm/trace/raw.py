"""Read what the PMPI tracer wrote: ``rank-R.bin`` records and ``rank-R.txt`` metadata.

A record is 80 bytes (see ``pmpi/pevpm_trace.c``); :data:`RECORD` is its
numpy layout.  Times are the rank's own ``MPI_Wtime``; :attr:`RawRank.offset`
added to them gives rank 0's clock.

>>> RECORD.itemsize
80
"""

from __future__ import annotations

from dataclasses import dataclass
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

    def op_code(self, name: str) -> int:
        return self.ops.index(name)


def read_rank(directory: Path, rank: int) -> RawRank:
    """Rank ``rank``'s files in ``directory``."""
    meta_path = Path(directory) / f"rank-{rank}.txt"
    bin_path = Path(directory) / f"rank-{rank}.bin"
    if not meta_path.is_file() or not bin_path.is_file():
        raise PevpmError(f"rank {rank} left no trace files (did it call MPI_Finalize?)",
                         str(directory))
    meta: dict[str, list[str]] = {}
    comms: dict[int, tuple[int, ...]] = {}
    for line in meta_path.read_text().splitlines():
        key, *values = line.split()
        if key == "comm":
            comms[int(values[0])] = tuple(int(v) for v in values[2:])
        else:
            meta[key] = values
    if int(meta.get("record", ["0"])[0]) != RECORD.itemsize:
        raise PevpmError(f"trace records are {meta.get('record')} bytes, expected "
                         f"{RECORD.itemsize}", str(meta_path))
    records = np.fromfile(bin_path, dtype=RECORD)
    return RawRank(int(meta["rank"][0]), int(meta["size"][0]),
                   float(meta.get("offset", ["0"])[0]), tuple(meta["ops"]), comms, records)


def read_raw(directory: Path) -> list[RawRank]:
    """Every rank's records, in rank order."""
    first = read_rank(directory, 0)
    return [first] + [read_rank(directory, r) for r in range(1, first.size)]
