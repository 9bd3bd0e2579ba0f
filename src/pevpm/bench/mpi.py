"""mpi4py's ``MPI`` for MPIBench, initialised at ``MPI_THREAD_FUNNELED``.

mpi4py asks for ``MPI_THREAD_MULTIPLE`` unless told otherwise, and at that
level MPICH takes a lock around every call.  A compiled program
that calls ``MPI_Init`` runs without those locks, and so should the loops that
time MPI for it: on the development machine the C core's chained 8-byte
``isend`` ping-pong (four calls a side per message) took 0.1-0.4 us more per
message under ``MPI_THREAD_MULTIPLE`` than under ``MPI_THREAD_SINGLE``, with
the same loop (``benchmarks/bench_thread_level.py``).  Only the main thread
of a benchmark rank calls MPI (the interrupt watcher never does), so
``MPI_THREAD_FUNNELED`` is the level it needs.  Each run records the level
it got in the profile (:func:`thread_level`); it is ``MPI_THREAD_MULTIPLE``
only where something imported ``mpi4py.MPI`` before MPIBench did.

Every MPIBench module imports MPI from here:

>>> from pevpm.bench.mpi import MPI, thread_level   # doctest: +SKIP
>>> thread_level()                                   # doctest: +SKIP
'MPI_THREAD_FUNNELED'
"""

from __future__ import annotations

import mpi4py

mpi4py.rc.thread_level = "funneled"

from mpi4py import MPI

_LEVELS = {MPI.THREAD_SINGLE: "MPI_THREAD_SINGLE", MPI.THREAD_FUNNELED: "MPI_THREAD_FUNNELED",
           MPI.THREAD_SERIALIZED: "MPI_THREAD_SERIALIZED",
           MPI.THREAD_MULTIPLE: "MPI_THREAD_MULTIPLE"}


def thread_level() -> str:
    """The thread support MPI gave this process, e.g. ``'MPI_THREAD_FUNNELED'``."""
    return _LEVELS.get(MPI.Query_thread(), f"thread level {MPI.Query_thread()}")
