"""PEVPM model of ``jacobi.py``: even/odd halo exchange, then the stencil.

Mirrors the program message for message (see README.md, "Communication
pattern"): one grid row of ``4 * N`` bytes to and from each neighbour with
blocking Send/Recv, even ranks sending first, then one serial segment, the
stencil over the rank's strip: a fixed cost ``t_fixed`` that every rank pays
whatever its strip (the loop's Python work and numpy's per-call costs, timed
as the real program's iteration on a 16 x 16 grid: tens of microseconds,
which is most of an iteration from 16 ranks on) plus the rest of the
one-rank iteration divided by the process count (the thesis's method; both
come from calibration), varying from iteration to iteration with the measured spread
``t_sd`` of one sweep (a gamma draw; each iteration waits for the slower
neighbour).

    pevpm predict examples/jacobi/model.py -n 1,2,4 -D iterations=1000 -D t_iter=1e-4
"""

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(constants={"N": 256},
                     parameters={"iterations": 10000, "t_iter": 1.0e-4, "t_fixed": 0.0,
                                 "t_sd": 0.0})
    row = "4 * N"
    has_up, has_down = "procnum > 0", "procnum < numprocs - 1"
    with b.loop("parameter iterations"):
        with b.runon() as parity:
            with parity.case("procnum % 2 == 0"):
                with b.on_ranks(has_up):
                    b.send(row, dest="procnum - 1")
                with b.on_ranks(has_down):
                    b.send(row, dest="procnum + 1")
                with b.on_ranks(has_down):
                    b.recv(row, source="procnum + 1")
                with b.on_ranks(has_up):
                    b.recv(row, source="procnum - 1")
            with parity.case("procnum % 2 == 1"):
                with b.on_ranks(has_down):
                    b.recv(row, source="procnum + 1")
                b.recv(row, source="procnum - 1")
                b.send(row, dest="procnum - 1")
                with b.on_ranks(has_down):
                    b.send(row, dest="procnum + 1")
        b.serial("gamma(parameter t_fixed + parameter t_iter / numprocs, parameter t_sd)")
    return b
