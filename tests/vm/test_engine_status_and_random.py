"""Receives bind the sender of a wildcard match; uniform() draws from the run's stream."""

import numpy as np
import pytest

from pevpm.errors import ModelError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import Expr
from pevpm.vm.kernel.engine import simulate


def _farm(jobs_per_worker: int):
    """Rank 0 answers whichever worker reports, through the receive's status name."""
    b = ModelBuilder()
    with b.runon() as role:
        with role.case("procnum == 0"), b.loop(f"{jobs_per_worker} * (numprocs - 1)"):
            b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", dest="procnum",
                      request="worker")
            b.send(8, dest="worker.MPI_SOURCE", tag="worker.MPI_TAG + 1")
        with role.case("procnum > 0"), b.loop(jobs_per_worker):
            b.serial("0.001 * procnum")
            b.send(8, dest=0, tag="procnum")
            b.recv(8, source=0, tag="procnum + 1")
    return b.build()


def test_master_replies_to_the_matched_worker():
    # Worker w computes 1 ms * w per job, then a 10 us request and a 10 us reply:
    # nobody waits for anybody else, so worker w ends at jobs * (w ms + 20 us).
    result = simulate(_farm(3), 3, Machine(Constant(10e-6)))
    assert result.ranks[1].finish == pytest.approx(3 * (0.001 + 20e-6), abs=1e-12)
    assert result.ranks[2].finish == pytest.approx(3 * (0.002 + 20e-6), abs=1e-12)
    assert result.makespan == pytest.approx(3 * (0.002 + 20e-6), abs=1e-12)


def test_uniform_times_follow_the_seed():
    b = ModelBuilder()
    with b.loop(1000):
        b.serial("uniform(0.001, 0.003)")
    model = b.build()
    runs = [simulate(model, 1, Machine(Constant(0.0)), rng=np.random.default_rng(s)).makespan
            for s in (7, 7, 8)]
    assert runs[0] == runs[1] != runs[2]
    # 1000 draws of mean 2 ms, sd 0.577 ms: the sum is 2 s within 5 sd (0.09 s).
    assert runs[0] == pytest.approx(2.0, abs=0.09)


def test_random_functions_need_the_virtual_machine():
    with pytest.raises(ModelError, match="draws a random number"):
        Expr.parse("uniform(0, 1)").evaluate({})
    assert Expr.parse("uniform(0, 1)").is_random()
    assert not Expr.parse("uniform(0, 1)").is_constant()


def test_gamma_serial_jitter_makes_neighbours_wait_for_the_slower_one():
    # Two ranks compute gamma(1 ms, 0.5 ms) per iteration and then swap a message on a
    # zero-latency machine: every iteration lasts the longer of the two draws.
    b = ModelBuilder()
    with b.loop(4000):
        b.serial("gamma(0.001, 0.0005)")
        b.sendrecv(0, dest="(procnum + 1) % numprocs", source="(procnum + 1) % numprocs")
    model = b.build()
    makespan = simulate(model, 2, Machine(Constant(0.0)), rng=np.random.default_rng(3)).makespan
    draws = np.random.default_rng(99).gamma(4.0, 0.00025, size=(2, 400_000))
    expected = 4000 * draws.max(axis=0).mean()   # about 4000 * 1.27 ms
    # The sum of 4000 maxima (sd ~0.45 ms each) is within 5 sd (0.14 s) of that.
    assert makespan == pytest.approx(expected, abs=0.14)
    assert makespan > 4000 * 0.001 + 0.5
    one_rank = simulate(model, 1, Machine(Constant(0.0)), rng=np.random.default_rng(3))
    assert one_rank.makespan == pytest.approx(4.0, abs=0.16)


def test_gamma_without_spread_is_its_mean_and_refuses_nonsense():
    rng = {"__rng__": np.random.default_rng(0)}
    assert Expr.parse("gamma(0.002, 0)").evaluate(rng) == 0.002
    with pytest.raises(ModelError, match="undefined"):
        Expr.parse("gamma(0.002, -1)").evaluate(rng)
    with pytest.raises(ModelError, match="undefined"):
        Expr.parse("gamma(0, 0.1)").evaluate(rng)
