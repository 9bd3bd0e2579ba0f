"""PEVPM model of ``bag_of_tasks.py``: a master farming seeded jobs to workers.

Mirrors the program (see README.md, "Communication pattern"): the master
primes every worker with a 24-byte job definition and the job's input, then
answers whichever worker reports back (``MPI_ANY_SOURCE``; the receive's
status ``done.MPI_SOURCE`` names it), drains the last results and sends every
worker a DIE message.  A worker loops until it receives DIE.  Job sizes and
compute times are uniform draws like the program's job stream; a job costs
``overhead + slope * compute`` seconds (from calibration).  In ``--compute
sleep`` mode a rank waiting for a message polls with sleeps of ``poll``
seconds, so a receive that had to wait ends up to one poll late (``poll = 0``
models ``--compute spin``), and so does a send larger than the MPI library's
eager limit (``eager`` bytes: ``validate`` sets it to the profile's measured
limit), which completes only once its receiver takes part.  In sleep mode (``poll > 0``) a job and a poll
are sleeps (``kind = sleep``): they need no core, so 4 or 8 ranks on 2 cores
do not slow each other down (docs/cpu-sharing.md); in spin mode a job is CPU
work.  On one rank the master does every job itself.

    pevpm predict examples/bag_of_tasks/model.py -n 1,2,4,8 -D jobs=400
"""

from pevpm.model.builder import ModelBuilder

#: How late a polled receive that had to wait completes after its message arrived.
POLL_DELAY = "uniform(0, parameter poll)"
JOB_TIME = "parameter overhead + parameter slope * uniform(0, parameter max_compute)"


def _job(b: ModelBuilder) -> None:
    """One job: a sleep in ``--compute sleep`` mode (``poll > 0``), else CPU work."""
    with b.runon() as mode:
        with mode.case("parameter poll > 0"):
            b.serial(JOB_TIME, sleep=True)
        with mode.case("parameter poll == 0"):
            b.serial(JOB_TIME)


def _send_data(b: ModelBuilder, dest: str) -> None:
    """A job's input or output, ``floor(uniform(0, max_size))`` bytes.  Drawn in
    two parts so that a message above the library's eager limit (``eager``)
    can wait for its receiver and be noticed up to a poll late, as the
    program's ``Isend`` and ``Test`` loop does; the sizes keep their
    distribution."""
    eager = "min(parameter eager + 1, parameter max_size)"
    with b.condition() as size:
        with size.case(f"{eager} / parameter max_size"):
            b.send(f"floor(uniform(0, {eager}))", dest=dest, tag="WORK")
        with size.case(f"1 - {eager} / parameter max_size"):
            b.send(f"floor(uniform({eager}, parameter max_size))", dest=dest, tag="WORK")
            b.serial(POLL_DELAY, sleep=True)


def model():
    b = ModelBuilder(
        constants={"DEFN": 3001, "WORK": 3002, "DIE": 3003, "JOBDEF": 24},
        parameters={"jobs": 400, "max_size": 65536, "max_compute": 0.01,
                    "overhead": 0.0, "slope": 1.0, "poll": 0.0, "eager": 65536})
    primed = "min(numprocs - 1, parameter jobs)"
    with b.runon() as role:
        with role.case("numprocs == 1"), b.loop("parameter jobs"):
            _job(b)
        with role.case("procnum == 0"):
            with b.loop(primed, index="k"):
                b.send("JOBDEF", dest="k + 1", tag="DEFN")
                _send_data(b, "k + 1")
            with b.loop(f"parameter jobs - {primed}"):
                _collect_result(b)
                b.send("JOBDEF", dest="done.MPI_SOURCE", tag="DEFN")
                _send_data(b, "done.MPI_SOURCE")
            with b.loop(primed):
                _collect_result(b)
            with b.loop("numprocs - 1", index="k"):
                b.send("JOBDEF", dest="k + 1", tag="DIE")
        with role.case("procnum > 0"), b.repeat("order.MPI_TAG == DIE",
                                                 max="parameter jobs + 1"):
            b.message("MPI_Recv", "JOBDEF", source=0, dest="procnum", tag="MPI_ANY_TAG",
                      request="order")
            b.serial(POLL_DELAY, sleep=True)
            with b.on_ranks("order.MPI_TAG == DEFN"):
                b.recv("parameter max_size", source=0, tag="WORK")
                _job(b)
                b.send("JOBDEF", dest=0, tag="DEFN")
                _send_data(b, "0")
    return b


def _collect_result(b: ModelBuilder) -> None:
    """The master takes the next finished job from whichever worker has one."""
    b.message("MPI_Recv", "JOBDEF", source="MPI_ANY_SOURCE", dest="procnum", tag="DEFN",
              request="done")
    b.serial(POLL_DELAY, sleep=True)
    b.recv("parameter max_size", source="done.MPI_SOURCE", tag="WORK")
