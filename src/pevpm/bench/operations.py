"""The timed MPI operations: tight loops writing into preallocated timestamp arrays.

Each loop does, per repetition, only: wait for the synchronised start, read
the clock, make the MPI call(s), read the clock.  Timestamps are local
nanoseconds; :func:`derive_times` turns the collated global stamps of all
ranks into one time per rank per repetition afterwards.

>>> op = build_operation(comm, "bcast", "", 1024, partner=None)   # doctest: +SKIP
>>> stamps = op.run(reps=100, start=BarrierStart(comm), now=clock.now)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pevpm.bench.catalog import CATALOG
from pevpm.bench.mpi import MPI

_TAG = 7302
PAGE_BYTES = 4096


def aligned_buffer(count: int, dtype=np.uint8, fill: float = 0) -> np.ndarray:
    """A ``count``-element array starting on a page boundary, filled with ``fill``.

    Every message buffer is page aligned (as OSU and IMB do): on the
    development machine a 16 KiB ping-pong between a send and a receive buffer
    whose addresses happened to differ by 16 bytes modulo 4 KiB ran twice as
    slowly as with aligned buffers, an artefact no communication model sees.

    >>> buffer = aligned_buffer(3, np.float64, fill=1)
    >>> buffer.ctypes.data % PAGE_BYTES, buffer.tolist()
    (0, [1.0, 1.0, 1.0])
    """
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(count * itemsize + PAGE_BYTES, dtype=np.uint8)
    start = -raw.ctypes.data % PAGE_BYTES
    array = raw[start:start + count * itemsize].view(dtype)
    array.fill(fill)
    return array


class BarrierStart:
    """Start each repetition when a barrier releases (cheap; leaves the barrier's skew)."""

    mode = "barrier"

    def __init__(self, comm):
        self._barrier = comm.Barrier

    def wait(self, rep: int) -> None:
        self._barrier()


class ChainStart:
    """No synchronisation: each repetition starts when the last one ends here, as in a
    communication loop (messages find the receiver already waiting, caches warm)."""

    mode = "chain"

    def wait(self, rep: int) -> None:
        pass


class ComputeGap:
    """Compute for ``seconds`` before each repetition, then start as ``inner`` does.

    The computation streams over 256 KiB of float32 (a stencil's working set),
    so the messages that follow meet the caches and timers a program's
    messages meet after its serial segments: on the development machine a
    1 KiB message took 3.2 us chained, 3.6 us after a barrier and 5.2 us after
    60 us of this (``benchmarks/bench_harness_effects.py``).
    """

    SCRATCH_FLOATS = 65536

    def __init__(self, inner, seconds: float, now: Callable[[], int]):
        self.inner = inner
        self.mode = f"{inner.mode}+gap {seconds * 1e6:g}us"
        self.gap_ns = int(seconds * 1e9)
        self._now = now
        self._scratch = np.ones(self.SCRATCH_FLOATS, dtype=np.float32)
        self._out = np.empty_like(self._scratch)

    def wait(self, rep: int) -> None:
        now, until = self._now, self._now() + self.gap_ns
        while now() < until:
            np.multiply(self._scratch, np.float32(0.5), out=self._out)
        self.inner.wait(rep)


class TimedStart:
    """Start repetition ``rep`` at local time ``first_ns + rep * spacing_ns``, agreed on
    the global clock beforehand; every rank spins until then (accurate start)."""

    mode = "time"

    def __init__(self, first_local_ns: int, spacing_ns: int, now: Callable[[], int]):
        self.first = first_local_ns
        self.spacing = spacing_ns
        self._now = now

    def wait(self, rep: int) -> None:
        target = self.first + rep * self.spacing
        now = self._now
        while now() < target:
            pass


@dataclass
class TimedOperation:
    """One test at one size, buffers allocated, ready to run repetitions."""

    name: str
    derivation: str
    loop: Callable
    stamp_names: tuple[str, ...]

    def run(self, reps: int, start, now: Callable[[], int]) -> dict[str, np.ndarray]:
        # Python lists: storing into one costs less inside the timed window than
        # storing into a numpy array.
        stamps = {name: [0] * reps for name in self.stamp_names}
        self.loop(reps, start, now, stamps)
        return {name: np.array(values, dtype=np.int64) for name, values in stamps.items()}


@dataclass
class Buffers:
    """The buffers of one test at one size: ``send`` and ``recv`` (``None`` where this
    rank passes none, e.g. a non-root's whole buffer) and ``count`` elements per call
    (bytes; float64 numbers for the reductions).

    >>> b = allocate_buffers("allgather", "total", 1024, nprocs=4, root=False)
    >>> b.send.size, b.recv.size, b.count
    (256, 1024, 256)
    """

    send: np.ndarray | None
    recv: np.ndarray | None
    count: int


#: Per test: how its samples are derived from the stamps, and the stamps one
#: repetition takes (in this order in every binding).
STAMPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "isend": ("end_to_end", ("send_start", "send_return", "recv_done")),
    "isendlocal": ("local_send", ("send_start", "send_return", "recv_done")),
    "isendduplex": ("end_to_end", ("send_start", "send_return", "recv_done")),
    "send": ("end_to_end", ("send_start", "recv_done")),
}
FROM_START = ("from_start", ("start", "end"))


def allocate_buffers(name: str, variant: str, size: int, nprocs: int, root: bool) -> Buffers:
    """Page-aligned buffers for test ``name`` at ``size`` bytes (see :class:`Buffers`)."""
    if CATALOG[name].paired:
        return Buffers(aligned_buffer(size, fill=1), aligned_buffer(size), size)
    if name == "barrier":
        return Buffers(None, None, 0)
    if name == "bcast":
        return Buffers(aligned_buffer(size), None, size)
    if name in ("reduce", "allreduce"):
        count = size // 8
        return Buffers(aligned_buffer(count, np.float64, 1), aligned_buffer(count, np.float64),
                       count)
    per_proc = size if variant != "total" else size // nprocs
    whole = aligned_buffer(per_proc * nprocs)
    part = aligned_buffer(per_proc)
    if name == "scatter":
        return Buffers(whole if root else None, part, per_proc)
    if name == "gather":
        return Buffers(part, whole if root else None, per_proc)
    if name == "allgather":
        return Buffers(part, whole, per_proc)
    return Buffers(aligned_buffer(per_proc * nprocs, fill=1), whole, per_proc)


def build_operation(comm, name: str, variant: str, size: int,
                    partner: tuple[int, bool] | None) -> TimedOperation:
    """Allocate buffers and pick the Python (mpi4py) loop for test ``name`` at ``size``
    bytes (:mod:`pevpm.bench.ccore` has the C loops)."""
    buffers = allocate_buffers(name, variant, size, comm.Get_size(), comm.Get_rank() == 0)
    derivation, stamp_names = STAMPS.get(name, FROM_START)
    send, recv = buffers.send, buffers.recv
    if name in ("isend", "isendlocal"):
        peer, pings_first = partner
        loop = _ping_pong_loop(comm, send, recv, peer, pings_first)
    elif name == "send":
        peer, pings_first = partner
        loop = _blocking_ping_pong_loop(comm, send, recv, peer, pings_first)
    elif name == "isendduplex":
        loop = _duplex_loop(comm, send, recv, partner[0])
    elif name == "sendrecv":
        peer = partner[0]
        loop = _call_loop(_bind(comm.Sendrecv, send, peer, _TAG, recv, peer, _TAG))
    else:
        loop = _call_loop(_collective_call(comm, name, buffers))
    return TimedOperation(name, derivation, loop, stamp_names)


def _bind(function, *args):
    def call():
        function(*args)
    return call


def _collective_call(comm, name: str, buffers: Buffers) -> Callable:
    send, recv = buffers.send, buffers.recv
    if name == "barrier":
        return comm.Barrier
    if name == "bcast":
        return _bind(comm.Bcast, send, 0)
    if name == "reduce":
        return _bind(comm.Reduce, send, recv, MPI.SUM, 0)
    if name == "allreduce":
        return _bind(comm.Allreduce, send, recv, MPI.SUM)
    if name == "scatter":
        return _bind(comm.Scatter, send, recv, 0)
    if name == "gather":
        return _bind(comm.Gather, send, recv, 0)
    if name == "allgather":
        return _bind(comm.Allgather, send, recv)
    return _bind(comm.Alltoall, send, recv)


def _call_loop(call: Callable) -> Callable:
    def loop(reps, start, now, stamps):
        begin, end = stamps["start"], stamps["end"]
        wait = start.wait
        for rep in range(reps):
            wait(rep)
            begin[rep] = now()
            call()
            end[rep] = now()
    return loop


def _ping_pong_loop(comm, send, recv, peer: int, pings_first: bool) -> Callable:
    isend, irecv = comm.Isend, comm.Irecv

    def loop(reps, start, now, stamps):
        send_start, send_return, recv_done = (stamps["send_start"], stamps["send_return"],
                                              stamps["recv_done"])
        wait = start.wait
        for rep in range(reps):
            incoming = irecv(recv, peer, _TAG)
            wait(rep)
            if pings_first:
                send_start[rep] = now()
                outgoing = isend(send, peer, _TAG)
                send_return[rep] = now()
                outgoing.Wait()
                incoming.Wait()
                recv_done[rep] = now()
            else:
                incoming.Wait()
                recv_done[rep] = now()
                send_start[rep] = now()
                outgoing = isend(send, peer, _TAG)
                send_return[rep] = now()
                outgoing.Wait()
    return loop


def _blocking_ping_pong_loop(comm, send, recv, peer: int, pings_first: bool) -> Callable:
    """Like :func:`_ping_pong_loop` with blocking calls, the receive posted only when
    the process gets to it (as in a plain Send/Recv program); no stamp in between."""
    blocking_send, blocking_recv = comm.Send, comm.Recv

    def loop(reps, start, now, stamps):
        send_start, recv_done = stamps["send_start"], stamps["recv_done"]
        wait = start.wait
        for rep in range(reps):
            wait(rep)
            if pings_first:
                send_start[rep] = now()
                blocking_send(send, peer, _TAG)
                blocking_recv(recv, peer, _TAG)
                recv_done[rep] = now()
            else:
                blocking_recv(recv, peer, _TAG)
                recv_done[rep] = now()
                send_start[rep] = now()
                blocking_send(send, peer, _TAG)
    return loop


def _duplex_loop(comm, send, recv, peer: int) -> Callable:
    isend, irecv = comm.Isend, comm.Irecv

    def loop(reps, start, now, stamps):
        send_start, send_return, recv_done = (stamps["send_start"], stamps["send_return"],
                                              stamps["recv_done"])
        wait = start.wait
        for rep in range(reps):
            incoming = irecv(recv, peer, _TAG)
            wait(rep)
            send_start[rep] = now()
            outgoing = isend(send, peer, _TAG)
            send_return[rep] = now()
            incoming.Wait()
            recv_done[rep] = now()
            outgoing.Wait()
    return loop


def derive_times(derivation: str, stamps: dict[str, np.ndarray],
                 partners: list[int] | None) -> np.ndarray:
    """Global stamps of all ranks (each (ranks, reps) int64 ns) -> (ranks, reps) seconds.

    ``end_to_end``: receive completion here minus the partner's send start;
    ``local_send``: time until Isend returned; ``from_start``: completion minus
    the earliest start of that repetition over all ranks (the synchronised start).

    >>> s = {"start": np.array([[0, 100], [10, 100]]), "end": np.array([[50, 160], [40, 130]])}
    >>> (derive_times("from_start", s, None) * 1e9).round().tolist()
    [[50.0, 60.0], [40.0, 30.0]]
    """
    if derivation == "end_to_end":
        sent = stamps["send_start"][np.asarray(partners)]
        return (stamps["recv_done"] - sent) * 1e-9
    if derivation == "local_send":
        return (stamps["send_return"] - stamps["send_start"]) * 1e-9
    if derivation == "from_start":
        return (stamps["end"] - stamps["start"].min(axis=0)) * 1e-9
    raise ValueError(f"unknown derivation {derivation!r}")
