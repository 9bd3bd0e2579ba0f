"""Small models of the loops benchmarks time, for comparing predictions with them.

>>> type(blocking_pingpong(1024, iterations=10)).__name__
'Model'
"""

from __future__ import annotations

from pevpm.model.ast import Model
from pevpm.model.builder import ModelBuilder


def blocking_pingpong(size: int, iterations: int) -> Model:
    """The blocking ping-pong of osu_latency and IMB PingPong: rank 0 sends ``size``
    bytes to rank 1 (MPI_Send) and receives them back, ``iterations`` times; half the
    run time over ``iterations`` is their reported latency.

    >>> from pevpm.machine.presets import parse_machine
    >>> from pevpm.vm.kernel.fastengine import simulate
    >>> run = simulate(blocking_pingpong(0, 100), 2, parse_machine("constant:latency=1us"))
    >>> round(run.makespan / 100 / 2 * 1e6, 3)
    1.0
    """
    b = ModelBuilder()
    with b.loop(iterations), b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.send(size, dest=1)
            b.recv(size, source=1)
        with ranks.case("procnum == 1"):
            b.recv(size, source=0)
            b.send(size, dest=0)
    return b.build()
