"""Models used by the engine tests and benchmarks/engine_jacobi.py."""

from __future__ import annotations

from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine

ROW = "xsize * sizeof(float)"


def jacobi_model(iterations: int = 100, t: float = 3.24, xsize: int = 256):
    """The thesis's Figure 86 Jacobi: even/odd blocking halo exchange, then
    ``Serial t/numprocs`` (numprocs must be even)."""
    b = ModelBuilder(constants={"xsize": xsize}, parameters={"t": t})
    with b.loop(iterations):
        with b.runon() as parity:
            with parity.case("procnum % 2 == 0"):
                with b.on_ranks("procnum != 0"):
                    b.send(ROW, dest="procnum - 1")
                b.send(ROW, dest="procnum + 1")
                b.recv(ROW, source="procnum + 1")
                with b.on_ranks("procnum != 0"):
                    b.recv(ROW, source="procnum - 1")
            with parity.case("procnum % 2 != 0"):
                with b.on_ranks("procnum != numprocs - 1"):
                    b.recv(ROW, source="procnum + 1")
                b.recv(ROW, source="procnum - 1")
                b.send(ROW, dest="procnum - 1")
                with b.on_ranks("procnum != numprocs - 1"):
                    b.send(ROW, dest="procnum + 1")
        b.serial("parameter t / numprocs")
    return b.build()


def ring_model(rounds: int, serial: float):
    """A token passed around the ring ``rounds`` times; each hop computes ``serial``."""
    b = ModelBuilder()
    right, left = "(procnum + 1) % numprocs", "(procnum + numprocs - 1) % numprocs"
    with b.loop(rounds), b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.serial(serial)
            b.send(8, dest=right)
            b.recv(8, source=left)
        with ranks.case("procnum != 0"):
            b.recv(8, source=left)
            b.serial(serial)
            b.send(8, dest=right)
    return b.build()


def figure5_model(nonblocking: bool):
    """Thesis Figure 5: each of three ranks sends to the next, then receives
    from the previous one."""
    b = ModelBuilder()
    if nonblocking:
        b.isend(1024, dest="(procnum + 1) % 3", request="out")
    else:
        b.send(1024, dest="(procnum + 1) % 3")
    b.recv(1024, source="(procnum + 2) % 3")
    if nonblocking:
        b.wait("out")
    return b.build()


def check_wide_ring(model, machine, small_ranks: int, messages_per_rank: int,
                    ranks: int = 46_400) -> None:
    """Run ring ``model`` on ``ranks`` ranks (past 46,340, where the core's
    bucket keys number the tags) on the compiled core and check it matches
    the reference engine's run on ``small_ranks``: the makespan, and the last
    rank's times (both last ranks send to rank 0)."""
    small = engine.simulate(model, small_ranks, machine)
    run = fastengine.simulate(model, ranks, machine)
    assert run.engine_note is None
    assert run.messages_simulated == messages_per_rank * ranks
    assert run.makespan == small.makespan
    assert run.ranks[ranks - 1] == small.ranks[small_ranks - 1]
