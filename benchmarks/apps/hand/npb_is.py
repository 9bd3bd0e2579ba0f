"""A PEVPM model of NPB 3.3's IS (integer sort, MPI, class S) written by hand
from the NPB report's description of the benchmark and ``IS/is.c``, to set
beside the model ``pevpm extract`` writes (``benchmarks/apps/compare.py``).

Class S sorts ``2^16`` keys shared out evenly (strong scaling).  Each of the
11 rankings (one untimed, then 10) counts the rank's keys into 512 buckets,
sums the bucket counts over all ranks (an Allreduce of the 512 counts and 5
test values, 4 bytes each), tells every rank how many keys it will get (an
Alltoall of one int per peer), sends them (an Alltoallv: on average
``4 * 2^16 / p`` bytes per rank, ``1 / p`` of them to each peer) and ranks
the keys it got.  After the loop: the time's maximum (a Reduce), the full
verification (each rank but the last receives one key from the next, each
but the first sends one to the previous) and the verification count (a
Reduce).  The computation of a ranking divides among the ranks: ``t_iter /
numprocs``, ``t_iter`` measured on one rank.

    pevpm predict benchmarks/apps/hand/npb_is.py -n 64 -D t_iter=0.0015
    pevpm predict benchmarks/apps/hand/npb_is.py -n 64 -D t_iter=0.2 -D keys=8388608 -D buckets=1024

(class A: ``2^23`` keys, 1,024 buckets).
"""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(parameters={"iterations": 11, "t_iter": 1.5e-3,
                                 "keys": 2**16, "buckets": 512})
    b.collective("MPI_Bcast", 4, root="0")
    with b.loop("parameter iterations"):
        b.serial("0.5 * parameter t_iter / numprocs")               # bucket counts
        b.collective("MPI_Allreduce", "4 * (parameter buckets + 5)")
        b.collective("MPI_Alltoall", 4)
        b.collective("MPI_Alltoall", "4 * parameter keys / (numprocs * numprocs)")   # the Alltoallv
        b.serial("0.5 * parameter t_iter / numprocs")               # ranking
    b.collective("MPI_Reduce", 8, root="0")
    with b.on_ranks("procnum < numprocs - 1"):
        b.irecv(4, source="procnum + 1", request="next_key")
    with b.on_ranks("procnum > 0"):
        b.send(4, dest="procnum - 1")
    with b.on_ranks("procnum < numprocs - 1"):
        b.wait("next_key")
    b.collective("MPI_Reduce", 4, root="0")
    return b
