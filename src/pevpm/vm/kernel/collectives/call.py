"""One rank's view of one collective call: what every algorithm reads.

Sizes follow the MPI calls an annotator copies from the program:

* ``MPI_Bcast``, ``MPI_Reduce``, ``MPI_Allreduce``, ``MPI_Scan``: ``size`` is
  the whole buffer in bytes;
* ``MPI_Scatter``, ``MPI_Gather``, ``MPI_Allgather``, ``MPI_Alltoall``,
  ``MPI_Reduce_scatter``: ``size`` is one rank's block in bytes (MPI's
  ``count * extent``; MPIBench's "total" size is ``numprocs`` times this);
* ``MPI_Scatterv``, ``MPI_Gatherv``: ``size`` is either one block size for
  every rank or a sequence of ``numprocs`` block sizes (the counts array).

>>> c = CollectiveCall("MPI_Scatterv", (4, 8, 12), root=1, rank=0, numprocs=3)
>>> c.family, c.rel, c.block(2), c.blocks_from_rel(0, 2)
('scatter', 2, 12, 20)
"""

from __future__ import annotations

from dataclasses import dataclass

from pevpm.errors import ModelError
from pevpm.machine.collectives import FAMILY_OF
from pevpm.model.expr import PROC_NULL
from pevpm.values import shown
from pevpm.vm.kernel.collectives.trees import absolute, relative


def normalise_size(op: str, size, numprocs: int) -> int | tuple[int, ...]:
    """Check a collective's size and make it hashable (a tuple for counts arrays)."""
    if isinstance(size, (list, tuple)):
        if op not in ("MPI_Scatterv", "MPI_Gatherv"):
            raise ModelError(f"{op} takes one size, not a list of {len(size)}")
        if len(size) != numprocs:
            raise ModelError(f"{op} sizes list has {len(size)} entries for {numprocs} ranks")
        sizes = tuple(int(s) for s in size)
        if min(sizes, default=0) < 0:
            raise ModelError(f"{op} has a negative block size in {list(sizes)}")
        return sizes
    if int(size) != size or size < 0:
        raise ModelError(f"{op} size must be a non-negative whole number of bytes, got {size!r}")
    return int(size)


@dataclass(frozen=True)
class CollectiveCall:
    """What one rank knows about one collective call."""

    op: str
    size: int | tuple[int, ...]
    root: int
    rank: int
    numprocs: int

    def __post_init__(self) -> None:
        if self.op not in FAMILY_OF:
            raise ModelError(f"{self.op} is not a collective operation")
        if self.numprocs < 1:
            raise ModelError(f"a collective needs at least one rank, got {self.numprocs}")
        for name, value in (("rank", self.rank), ("root", self.root)):
            if not 0 <= value < self.numprocs:
                shown_value = "MPI_PROC_NULL" if value == PROC_NULL else shown(value)
                raise ModelError(f"{self.op} {name} {shown_value} is outside "
                                 f"0..{self.numprocs - 1}")
        object.__setattr__(self, "size", normalise_size(self.op, self.size, self.numprocs))

    @property
    def family(self) -> str:
        return FAMILY_OF[self.op]

    @property
    def rel(self) -> int:
        """This rank relative to the root."""
        return relative(self.rank, self.root, self.numprocs)

    def absolute(self, rel: int) -> int:
        return absolute(rel, self.root, self.numprocs)

    def rel_of(self, rank: int) -> int:
        return relative(rank, self.root, self.numprocs)

    @property
    def nbytes(self) -> int:
        """The size as one number (the largest block for a counts array)."""
        return max(self.size) if isinstance(self.size, tuple) else self.size

    def block(self, rank: int) -> int:
        """Bytes of ``rank``'s block (scatter/gather families)."""
        return self.size[rank] if isinstance(self.size, tuple) else self.size

    def blocks_from_rel(self, first_rel: int, count: int) -> int:
        """Bytes of the blocks of relative ranks ``first_rel .. first_rel+count-1``."""
        return sum(self.block(self.absolute(r)) for r in range(first_rel, first_rel + count))
