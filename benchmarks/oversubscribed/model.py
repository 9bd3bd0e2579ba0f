"""PEVPM model of ``master_worker.py``.

Parameters: ``tasks``; ``t_task``, the master's CPU seconds per task (timed
alone); ``t_nap``, a worker's sleep per task as it really lasts.  The
workers' ``Serial`` is a sleep (``kind = sleep``): it needs no core.

    pevpm predict benchmarks/oversubscribed/model.py -n 8 --machine default \\
        -D tasks=400 -D t_task=0.0012 -D t_nap=0.00508
"""

from pevpm.model.builder import ModelBuilder

WORK, RESULT, STOP = 1, 2, 3


def model():
    b = ModelBuilder(constants={"WORK": WORK, "RESULT": RESULT, "STOP": STOP},
                     parameters={"tasks": 400, "t_task": 0.001, "t_nap": 0.005})
    with b.runon() as role:
        with role.case("procnum == 0"):
            with b.loop("numprocs - 1", index="k"):
                b.serial("parameter t_task")
                b.send(8, dest="k + 1", tag="WORK")
            with b.loop("parameter tasks - (numprocs - 1)"):
                b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", dest="procnum", tag="RESULT",
                          request="done")
                b.serial("parameter t_task")
                b.send(8, dest="done.MPI_SOURCE", tag="WORK")
            with b.loop("numprocs - 1"):
                b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", dest="procnum", tag="RESULT",
                          request="done")
                b.send(8, dest="done.MPI_SOURCE", tag="STOP")
        with (role.case("procnum > 0"), b.loop("parameter tasks + 1"),
              b.on_ranks("order.MPI_TAG != STOP")):
            b.message("MPI_Recv", 8, source=0, dest="procnum", tag="MPI_ANY_TAG",
                      request="order")
            with b.on_ranks("order.MPI_TAG == WORK"):
                b.serial("parameter t_nap", sleep=True)
                b.send(8, dest=0, tag="RESULT")
    b.collective("MPI_Barrier")
    return b
