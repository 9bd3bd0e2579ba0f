"""The interface between the virtual machine and a machine's communication.

The virtual machine asks a communication model how long one message takes,
given what it knows when the message is matched: the operation, the size,
the two ranks, whether they share a node, and the contention (messages in
transit on the busiest link the message crosses, itself included, as counted
by the contention scoreboard).  Models range from a constant to a
distribution measured by MPIBench per size and contention; the engine does
not care which.

``duplex`` marks a bidirectional exchange: the message is sent by an
``MPI_Sendrecv``, or another goes the opposite way between the same two
ranks while it is in transit.

>>> t = Transfer("MPI_Send", size=1024, src=0, dst=1, intra_node=False, contention=1)
>>> t.size, t.contention, t.duplex
(1024, 1, False)

A rank's message to itself never reaches the communication model: MPI copies
the buffer in memory, which :func:`self_copy_time` costs at
:data:`LOCAL_COPY_RATE` (the engines charge no local completion for it and
do not put it on the contention scoreboard).

>>> f"{self_copy_time(8192) * 1e6:.3f} us"
'0.819 us'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
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
    duplex: bool = False


#: Bytes per second at which a rank's message to itself is copied: a
#: memory-to-memory copy of buffers that are not in cache (read and write).
#: On the development machine ``numpy.copyto`` ran at 18 GB/s for 8 KiB and
#: 37-46 GB/s for 64 KiB-8 MiB with the data in cache; a program's buffers
#: usually are not, so the rate is set nearer DRAM copy speed.
LOCAL_COPY_RATE = 10e9


def self_copy_time(size: int) -> float:
    """Seconds a message of ``size`` bytes from a rank to itself takes."""
    return size / LOCAL_COPY_RATE


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


def for_placement(comm: CommModel, node_of: Sequence[int]) -> CommModel:
    """``comm`` for a run whose rank ``r`` is on node ``node_of[r]``: a model
    with a ``for_placement(ranks_per_node)`` method (a profile's, which picks
    blocks measured at the run's own ranks per node) gets the most ranks any
    node holds; any other model is returned as it is.

    >>> from pevpm.machine.comm_models import Constant
    >>> model = Constant(1e-6)
    >>> for_placement(model, [0, 0, 1]) is model
    True
    """
    place = getattr(comm, "for_placement", None)
    if place is None or not node_of:
        return comm
    return place(max(Counter(node_of).values()))
