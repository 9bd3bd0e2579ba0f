"""Options every algorithm may read, separate from which algorithm is chosen.

>>> AlgorithmOptions().child_order, AlgorithmOptions(reduce_cost_per_byte=2.0).combine(1000)
('largest-first', 2000.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from pevpm.errors import ModelError
from pevpm.vm.collectives.trees import CHILD_ORDERS


@dataclass(frozen=True)
class AlgorithmOptions:
    """``child_order``: order of a tree parent's sends (``largest-first`` as
    MPICH, or ``smallest-first``); ``acknowledgements``: tree broadcasts wait
    for a zero-byte acknowledgement from every child; ``reduce_cost_per_byte``:
    seconds a reduction operator takes per byte it combines."""

    child_order: str = "largest-first"
    acknowledgements: bool = False
    reduce_cost_per_byte: float = 0.0

    def __post_init__(self) -> None:
        if self.child_order not in CHILD_ORDERS:
            raise ModelError(f"unknown child order {self.child_order!r} "
                             f"(choose from {', '.join(CHILD_ORDERS)})")
        if not self.reduce_cost_per_byte >= 0:
            raise ModelError("reduce cost per byte must be >= 0, "
                             f"got {self.reduce_cost_per_byte!r}")

    def combine(self, nbytes: int) -> float:
        """Seconds to apply the reduction operator to ``nbytes`` bytes."""
        return self.reduce_cost_per_byte * nbytes
