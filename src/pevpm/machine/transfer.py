"""The interface between the virtual machine and a machine's communication.

The virtual machine asks a communication model how long one message takes,
given what it knows when the message is matched: the operation, the size,
the two ranks, whether they share a node, and the contention (messages in
transit on the busiest link the message crosses, itself included, as counted
by the contention scoreboard).  Models range from a constant to a
distribution measured by MPIBench per size and contention; the engine does
not care which.

>>> t = Transfer("MPI_Send", size=1024, src=0, dst=1, intra_node=False, contention=1)
>>> t.size, t.contention
(1024, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Bound = Literal["min", "max"]


@dataclass(frozen=True)
class Transfer:
    """What the engine knows about one message when it is matched."""

    op: str
    size: int
    src: int
    dst: int
    intra_node: bool
    contention: int


@runtime_checkable
class CommModel(Protocol):
    """A source of message times, in seconds."""

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """End-to-end time: send start at the sender to receive completion at the
        receiver, for a receive posted in time (MPIBench's ``isend`` test)."""

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Time until a non-blocking send returns control (MPIBench's ``isendlocal``)."""

    def bounded(self, which: Bound) -> CommModel:
        """A deterministic copy in which every time is at its minimum or maximum."""
