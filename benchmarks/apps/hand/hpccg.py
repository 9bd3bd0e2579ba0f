"""A PEVPM model of HPCCG 1.0 (Mantevo) written by hand from its README and
``HPCCG.cpp``, to set beside the model ``pevpm extract`` writes from traces
(``benchmarks/apps/compare.py``).

HPCCG solves a 27-point 3-D problem by conjugate gradients, weak scaling:
every rank holds ``nx * ny * nz`` rows and the ranks are stacked along z, so
a rank exchanges one ``nx * ny`` plane of doubles with the rank below and the
one above (``exchange_externals``: a receive posted for each neighbour, a
blocking send to each, then a wait for each receive).  Each iteration: the
dot product r.r (an Allreduce of one double; not in the first), the vector
update, the exchange, the sparse matrix-vector product, the dot product
p.Ap (an Allreduce), two vector updates.  The computation of an iteration
is the same on every rank at every count (weak scaling): ``t_iter``, measured
on one rank (the whole run's time over its iterations).

    pevpm predict benchmarks/apps/hand/hpccg.py -n 64 -D t_iter=0.000146
    pevpm predict benchmarks/apps/hand/hpccg.py -n 64 -D t_iter=0.005 -D nx=48 -D ny=48
"""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(parameters={"iterations": 149, "t_iter": 1.5e-4, "nx": 16, "ny": 16})
    plane = "8 * parameter nx * parameter ny"
    below, above = "procnum > 0", "procnum < numprocs - 1"
    with b.loop("parameter iterations"):
        b.collective("MPI_Allreduce", 8)                        # r.r
        with b.on_ranks(below):
            b.irecv(plane, source="procnum - 1", request="from_below")
        with b.on_ranks(above):
            b.irecv(plane, source="procnum + 1", request="from_above")
        with b.on_ranks(below):
            b.send(plane, dest="procnum - 1")
        with b.on_ranks(above):
            b.send(plane, dest="procnum + 1")
        with b.on_ranks(below):
            b.wait("from_below")
        with b.on_ranks(above):
            b.wait("from_above")
        b.serial("0.8 * parameter t_iter")                      # sparsemv
        b.collective("MPI_Allreduce", 8)                        # p.Ap
        b.serial("0.2 * parameter t_iter")                      # the vector updates
    return b
