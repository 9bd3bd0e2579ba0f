"""A small model with every kind of randomness, shared by the Monte Carlo tests
and the script they run under ``mpiexec``."""

from scipy import stats

from pevpm.machine.comm_models import PerSizeDistribution
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder


def random_model(iterations: int = 5, branches: bool = True):
    """Even ranks send to the next odd rank after 1 ms of work, or, with
    ``branches``, after a random 1 ms (probability 1/4) or 2 ms of work."""
    b = ModelBuilder()
    with b.loop(iterations):
        if branches:
            with b.condition() as arms:
                with arms.case(1):
                    b.serial(1e-3)
                with arms.case(3):
                    b.serial(2e-3)
        else:
            b.serial(1e-3)
        with b.runon() as ranks:
            with ranks.case("procnum % 2 == 0"):
                b.send(1024, dest="procnum + 1")
            with ranks.case("procnum % 2 == 1"):
                b.recv(1024, source="procnum - 1")
    return b.build()


def noisy_machine() -> Machine:
    """Message times uniform in [100, 200] us at 0 bytes, [200, 400] us at 4 KiB."""
    return Machine(PerSizeDistribution({0: stats.uniform(1e-4, 1e-4),
                                        4096: stats.uniform(2e-4, 2e-4)}))
