"""The PEVPM model of ``cg.py``, written with the Python builder.

The same model as the ``# PEVPM`` comments in ``cg.py``, statement for
statement (docs/tutorial.md puts the two side by side); either file can be
given to ``pevpm predict``:

    pevpm predict examples/tutorial/model.py -n 1,2 --machine default --ppn 2
"""

from pevpm.model.builder import ModelBuilder

PARAMETERS = {"nx": 512, "ny": 512, "iterations": 200,
              "t_matvec_call": 2e-05, "t_matvec_cell": 5e-09,
              "t_update_call": 2e-05, "t_update_cell": 5e-09,
              "t_direction_call": 1e-05, "t_direction_cell": 2e-09}


def model():
    b = ModelBuilder(parameters=PARAMETERS)
    row = "nx * 8"                                     # one grid row of doubles
    strip = "nx * (ny / numprocs)"                     # grid points per rank

    with b.subroutine("exchange"):                     # halo swap, non-blocking
        with b.on_ranks("procnum > 0"):
            b.irecv(row, source="procnum - 1", request="up_in")
            b.isend(row, dest="procnum - 1", request="up_out")
        with b.on_ranks("procnum < numprocs - 1"):
            b.irecv(row, source="procnum + 1", request="down_in")
            b.isend(row, dest="procnum + 1", request="down_out")
        b.waitall()                                    # every outstanding request

    with b.subroutine("solve"):
        b.collective("MPI_Allreduce", 8)
        with b.loop("iterations"):
            b.call("exchange")
            b.serial(f"t_matvec_call + t_matvec_cell * {strip}")
            b.collective("MPI_Allreduce", 8)          # p . Ap
            b.serial(f"t_update_call + t_update_cell * {strip}")
            b.collective("MPI_Allreduce", 8)          # r . r
            b.serial(f"t_direction_call + t_direction_cell * {strip}")

    b.collective("MPI_Barrier")
    b.collective("MPI_Bcast", 24, root=0)              # the problem size
    b.call("solve")
    with b.runon() as ranks:                           # collect x on rank 0, blocking
        with ranks.case("procnum == 0"), b.loop("numprocs - 1", index="source"):
            b.recv("nx * 8 * (ny / numprocs + 1)", source="source + 1")
        with ranks.case("procnum > 0"):
            b.send("nx * 8 * (ny / numprocs)", dest=0)
    return b
