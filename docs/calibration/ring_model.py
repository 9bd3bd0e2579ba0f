"""PEVPM model of ring.py: a compute region, then one Sendrecv around the ring.

``t_compute`` and ``t_compute_sd`` come from ``pevpm calibrate``:

    pevpm calibrate -o ring.json -- mpiexec -n 2 python ring.py
    pevpm predict ring_model.py -n 2..64 --calibration ring.json --machine default
"""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(parameters={"iterations": 200, "size": 8192,
                                 "t_compute": 1e-3, "t_compute_sd": 0.0})
    with b.loop("parameter iterations"):
        b.serial("gamma(parameter t_compute, parameter t_compute_sd)")
        b.sendrecv("parameter size", dest="(procnum + 1) % numprocs",
                   source="(procnum + numprocs - 1) % numprocs")
    return b
