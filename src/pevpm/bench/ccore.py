"""MPIBench's C timing core: the tests' inner loops and the clock sync's exchanges in C.

The loops in :mod:`pevpm.bench.operations` call MPI through mpi4py, so every
sample there includes the binding's per-call cost (about 0.6 us a call on
the development machine).  Compiled programs do not pay it.  This module
builds ``c/pevpm_bench.c`` with the MPI's own ``mpicc`` (cached like the
tracer, :mod:`pevpm.mpicc`), loads it with ctypes and offers the same
operations: Python still allocates the buffers and stamp arrays, picks the
repetitions and start rule, and derives, collates and stores the samples.

The core must be linked against the MPI library mpi4py loaded; :func:`load_core`
compares the two libraries' version strings and refuses a mismatch.

>>> core = load_core()                                          # doctest: +SKIP
>>> op = core.operation(comm, "send", "", 1024, partner=(1, True))  # doctest: +SKIP
>>> stamps = op.run(100, BarrierStart(comm), core.now)           # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from pevpm.bench.clock import LocalClock
from pevpm.bench.operations import (
    FROM_START,
    STAMPS,
    BarrierStart,
    Buffers,
    ChainStart,
    ComputeGap,
    TimedStart,
    allocate_buffers,
)
from pevpm.errors import BenchmarkError, PevpmError
from pevpm.mpicc import build_library

SOURCE = "pevpm_bench.c"
LIBRARY = "libpevpm_bench.so"
#: Loop kinds in the order of the C enum.
KINDS = ("ping_pong", "blocking", "duplex", "sendrecv", "barrier", "bcast", "reduce",
         "allreduce", "scatter", "gather", "allgather", "alltoall")
_KIND_OF_TEST = {"isend": "ping_pong", "isendlocal": "ping_pong", "send": "blocking",
                 "isendduplex": "duplex"}
_START_MODES = {"barrier": 0, "chain": 1, "time": 2}
_VERSION_CAPACITY = 8192
IDLE_POLL_NS = 50_000
_MONOTONIC = "clock_gettime(CLOCK_MONOTONIC)"

_i64p = ctypes.POINTER(ctypes.c_int64)
_ll = ctypes.c_longlong


def source_text() -> str:
    """The timing core's C source shipped in the package.

    >>> "pevpm_bench_run" in source_text()
    True
    """
    return resources.files("pevpm.bench").joinpath("c", SOURCE).read_text()


def core_library(mpicc: str | None = None) -> Path:
    """Path of the built timing core, compiling it on first use.

    >>> core_library().name                                    # doctest: +SKIP
    'libpevpm_bench.so'
    """
    return build_library(source_text(), SOURCE, LIBRARY, kind="bench", mpicc=mpicc,
                         what="the MPIBench C timing core", command="pevpm bench")


def _pointer(array: np.ndarray | None):
    return None if array is None else ctypes.c_void_p(array.ctypes.data)


def _stamps_pointer(array: np.ndarray | None):
    return None if array is None else array.ctypes.data_as(_i64p)


def _start_arguments(start) -> tuple[int, int, int, int]:
    """(mode, first_ns, spacing_ns, gap_ns) of a start rule of :mod:`operations`."""
    gap_ns = 0
    if isinstance(start, ComputeGap):
        gap_ns, start = start.gap_ns, start.inner
    if isinstance(start, TimedStart):
        return _START_MODES["time"], int(start.first), int(start.spacing), gap_ns
    if isinstance(start, (BarrierStart, ChainStart)):
        return _START_MODES[start.mode], 0, 0, gap_ns
    raise BenchmarkError(f"the C timing core has no start rule {start.mode!r}")


@dataclass
class CTimedOperation:
    """One test at one size for the C core: buffers allocated, ready to run repetitions
    (the C counterpart of :class:`pevpm.bench.operations.TimedOperation`)."""

    name: str
    derivation: str
    stamp_names: tuple[str, ...]
    core: CCore
    fcomm: int
    kind: int
    peer: int
    pings_first: bool
    buffers: Buffers

    def run(self, reps: int, start, now=None) -> dict[str, np.ndarray]:
        """Run ``reps`` repetitions started by ``start``; the stamps by name (local ns).
        ``now`` is ignored: the C loop reads the core's own clock."""
        stamps = [np.zeros(reps, dtype=np.int64) for _ in self.stamp_names]
        pointers = [_stamps_pointer(a) for a in stamps] + [None] * (3 - len(stamps))
        mode, first, spacing, gap = _start_arguments(start)
        rc = self.core.lib.pevpm_bench_run(
            self.fcomm, self.kind, self.peer, int(self.pings_first),
            _pointer(self.buffers.send), _pointer(self.buffers.recv), self.buffers.count,
            mode, first, spacing, gap, reps, *pointers)
        self.core.check(rc, f"{self.name} at {self.buffers.count} elements")
        return dict(zip(self.stamp_names, stamps))


class CExchange:
    """The clock synchronisation's ping-pong loops in C (see :mod:`pevpm.bench.clock`)."""

    def __init__(self, core: CCore):
        self.core = core

    def pings(self, comm, peer: int, tag: int, resend_limit: int) -> tuple[int, int, int]:
        """Reference side; (best round trip, its send time, the peer's arrival stamp) in ns."""
        best = np.zeros(3, dtype=np.int64)
        rc = self.core.lib.pevpm_sync_serve(comm.py2f(), peer, tag, resend_limit,
                                            _stamps_pointer(best))
        self.core.check(rc, "clock synchronisation")
        return int(best[0]), int(best[1]), int(best[2])

    def echo(self, comm, reference: int, tag: int) -> None:
        """Peer side: stamp and echo every ping until the reference stops."""
        rc = self.core.lib.pevpm_sync_follow(comm.py2f(), reference, tag, IDLE_POLL_NS)
        self.core.check(rc, "clock synchronisation")


class CCore:
    """The loaded timing core: its clock, its operations and its sync exchanges."""

    def __init__(self, path: Path):
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as exc:
            raise BenchmarkError(f"cannot load the C timing core {path} ({exc})") from None
        lib.pevpm_now_ns.restype = ctypes.c_int64
        lib.pevpm_now_ns.argtypes = []
        lib.pevpm_library_version.restype = ctypes.c_int
        lib.pevpm_library_version.argtypes = [ctypes.c_char_p, ctypes.c_int]
        lib.pevpm_bench_run.restype = ctypes.c_int
        lib.pevpm_bench_run.argtypes = (
            [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
             ctypes.c_void_p, _ll, ctypes.c_int, _ll, _ll, _ll, _ll, _i64p, _i64p, _i64p])
        lib.pevpm_sync_serve.restype = ctypes.c_int
        lib.pevpm_sync_serve.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                         ctypes.c_int, _i64p]
        lib.pevpm_sync_follow.restype = ctypes.c_int
        lib.pevpm_sync_follow.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, _ll]
        self.lib = lib
        self.path = path
        self.now = lib.pevpm_now_ns
        self.exchange = CExchange(self)

    @property
    def library_version(self) -> str:
        """``MPI_Get_library_version`` of the MPI the core was linked against."""
        text = ctypes.create_string_buffer(_VERSION_CAPACITY)
        self.lib.pevpm_library_version(text, _VERSION_CAPACITY)
        return text.value.decode(errors="replace")

    def check(self, rc: int, what: str) -> None:
        """Raise a :class:`BenchmarkError` naming ``what`` when an MPI call failed."""
        if rc != 0:
            from pevpm.bench.mpi import MPI

            raise BenchmarkError(f"MPI error in the C timing core ({what}): "
                                 f"{MPI.Get_error_string(rc).strip()}")

    def operation(self, comm, name: str, variant: str, size: int,
                  partner: tuple[int, bool] | None) -> CTimedOperation:
        """Allocate buffers for test ``name`` at ``size`` bytes and bind its C loop."""
        buffers = allocate_buffers(name, variant, size, comm.Get_size(), comm.Get_rank() == 0)
        derivation, stamp_names = STAMPS.get(name, FROM_START)
        peer, pings_first = partner if partner else (-1, False)
        kind = KINDS.index(_KIND_OF_TEST.get(name, name))
        return CTimedOperation(name, derivation, stamp_names, self, comm.py2f(), kind, peer,
                               pings_first, buffers)


class CoreClock(LocalClock):
    """The C core's clock (``CLOCK_MONOTONIC`` read in C), for the Python side's own
    stamps, so they compare with the loops' stamps.

    >>> CoreClock(load_core()).name                              # doctest: +SKIP
    'CLOCK_MONOTONIC (C core)'
    """

    name = "CLOCK_MONOTONIC (C core)"

    def __init__(self, core: CCore):
        # Where perf_counter is CLOCK_MONOTONIC (Linux) the Python side reads it
        # directly: the same clock without a ctypes call in the Python loops.
        same = time.get_clock_info("perf_counter").implementation == _MONOTONIC
        self.now = time.perf_counter_ns if same else core.now

    @property
    def resolution_ns(self) -> float:
        return max(time.clock_getres(time.CLOCK_MONOTONIC) * 1e9, 1.0)


def _first_line(version: str) -> str:
    """The first line of an MPI library version, without NULs or surrounding blanks
    (Open MPI's comes with a trailing NUL through mpi4py).

    >>> _first_line("Open MPI v4.1.4, package: Debian\\x00")
    'Open MPI v4.1.4, package: Debian'
    """
    return (version.replace("\x00", "").strip().splitlines() or [""])[0].strip()


def load_core(mpicc: str | None = None) -> CCore:
    """Build (first time) and load the C timing core; refuse one linked against an MPI
    other than the one mpi4py loaded.  Raises :class:`PevpmError` saying why.

    >>> load_core().library_version.startswith("MPICH")     # doctest: +SKIP
    True
    """
    core = CCore(core_library(mpicc))
    from pevpm.bench.mpi import MPI

    ours, theirs = _first_line(core.library_version), _first_line(MPI.Get_library_version())
    if ours != theirs:
        raise PevpmError(f"the C timing core was built against {ours!r} but mpi4py runs "
                         f"{theirs!r} (set MPICC to that MPI's mpicc)", "pevpm bench")
    return core
