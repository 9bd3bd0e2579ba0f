"""The MPI library's eager limit, measured: the largest send that completes
before its receive is posted.

Below the limit a library copies the message out (into shared memory or a
socket) and the send returns; above it the send waits for the receiver
(rendezvous, or a pipeline the receiver has to drive).  The limit is a
property of the library and the path between the two ranks, and it need
not be the documented one: MPICH 5.0.2's shared-memory path here completes
8,100-byte sends on their own and 8,150-byte ones only once the receiver
takes part, where its 64 KiB eager threshold suggests otherwise.

:func:`measure_eager_limit` is collective: ranks 0 and 1 probe sizes by
bisection (rank 1 stays away from MPI while rank 0 tests its send), the
others wait at the barriers.  ``pevpm bench`` records the result in the
profile's ``meta`` table (``eager``), and
:func:`pevpm.machine.profile_model.machine_from_profile` uses it.

>>> largest_completing(lambda size: size <= 8100, 65536)
8100
>>> largest_completing(lambda size: True, 65536), largest_completing(lambda size: False, 65536)
(65536, 0)
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

#: Sizes probed up to this many bytes (a larger limit is reported as this).
PROBE_LIMIT = 1 << 20
#: How long rank 0 tests its send while rank 1 is not receiving.
TEST_SECONDS = 2e-3


def largest_completing(completes: Callable[[int], bool], limit: int) -> int:
    """The largest size in [0, limit] for which ``completes(size)`` holds,
    by bisection (assumes it holds up to some size and not beyond); 0 when
    even an empty message does not complete on its own."""
    if completes(limit):
        return limit
    if not completes(0):
        return 0
    low, high = 0, limit            # completes(low), not completes(high)
    while high - low > 1:
        middle = (low + high) // 2
        if completes(middle):
            low = middle
        else:
            high = middle
    return low


def measure_eager_limit(comm, limit: int = PROBE_LIMIT) -> int | None:
    """Bytes of the largest send from rank 0 to rank 1 that completes while
    rank 1 is not in MPI (every rank calls this); None with one rank."""
    if comm.Get_size() < 2:
        return None
    rank = comm.Get_rank()
    buffer = np.zeros(limit, dtype=np.uint8)

    def completes(size: int) -> bool:
        comm.Barrier()
        done = False
        if rank == 0:
            request = comm.Isend(buffer[:size], dest=1, tag=77)
            end = time.perf_counter() + TEST_SECONDS
            while not done and time.perf_counter() < end:
                done = request.Test()
            request.Wait()
        elif rank == 1:
            time.sleep(2 * TEST_SECONDS)
            comm.Recv(buffer[:size], source=0, tag=77)
        return bool(comm.bcast(done, root=0))

    return largest_completing(completes, limit)
