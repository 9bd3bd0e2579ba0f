"""PEVPM model of ``heat.c``, written by hand (the same as the ``// PEVPM``
directives in heat.c): a barrier, then per iteration two one-cell exchanges
with the neighbours, the two timed regions, one 8-byte Allreduce.

    pevpm predict examples/heat/model.py -n 1,2 --calibration heat.json --weak
"""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(parameters={"iterations": 2000, "t_update": 1e-4, "t_update_sd": 0.0,
                                 "t_change": 1e-4, "t_change_sd": 0.0})
    left = "procnum > 0 ? procnum - 1 : MPI_PROC_NULL"
    right = "procnum < numprocs - 1 ? procnum + 1 : MPI_PROC_NULL"
    b.collective("MPI_Barrier")
    with b.loop("parameter iterations"):
        b.sendrecv(8, dest=left, source=right, tag=0)
        b.sendrecv(8, dest=right, source=left, tag=1)
        b.serial("gamma(parameter t_update, parameter t_update_sd)")
        b.serial("gamma(parameter t_change, parameter t_change_sd)")
        b.collective("MPI_Allreduce", 8)
    return b
