"""PEVPM model of ``fft2d.py``: row FFTs, transpose by MPI_Alltoall, row FFTs.

Per iteration every rank computes (``t_serial``: both FFT phases plus the
local packing, measured by calibration for the process count at hand; each
phase varies with the measured spread ``t_sd`` of one phase, a gamma draw), and
exchanges one ``16 * s * s``-byte block (``s = N / numprocs`` complex128
rows) with every other rank in an ``MPI_Alltoall``; the virtual machine
breaks that into point-to-point messages with the algorithm chosen for the
machine (see docs/collectives.md).

    pevpm predict examples/fft2d/model.py -n 2,4 -D iterations=200 -D t_serial=2e-3
"""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(constants={"N": 256},
                     parameters={"iterations": 200, "t_serial": 2.0e-3, "t_sd": 0.0})
    phase = "gamma(parameter t_serial / 2, parameter t_sd)"
    with b.loop("parameter iterations"):
        b.serial(phase)
        with b.on_ranks("numprocs > 1"):
            b.collective("MPI_Alltoall", "16 * (N / numprocs) * (N / numprocs)")
        b.serial(phase)
    return b
