"""Random draws in the compiled core against the reference engine (issue 25).

A draw whose arguments are invariant is folded per rank into a plan and
drawn in C by numpy's samplers on the run's bit generator: the same numbers
as the reference engine's ``Generator`` calls, in the same order.  So every
comparison here is exact: same seed, same run to the bit, and the generator
left in the same state.
"""

import numpy as np
import pytest

from pevpm.errors import ModelError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")

RIGHT, LEFT = "(procnum + 1) % numprocs", "(procnum + numprocs - 1) % numprocs"


def _both(model, n, machine, seed):
    """The reference's run and the core's from the same seed, and the two
    generators after them."""
    ref_rng, core_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    ref = engine.simulate(model, n, machine, rng=ref_rng)
    core = fastengine.simulate(model, n, machine, rng=core_rng)
    return ref, core, ref_rng, core_rng


def _assert_same(ref, core, ref_rng, core_rng):
    assert core.engine_note is None
    assert core.makespan == ref.makespan
    assert core.ranks == ref.ranks
    assert core.critical_path == ref.critical_path
    assert core.messages_simulated == ref.messages_simulated
    assert core_rng.bit_generator.state == ref_rng.bit_generator.state


def _draws_model():
    """Every random function, arguments per rank and per parameter, among
    messages and Condition branches (which draw from the same stream)."""
    b = ModelBuilder(parameters={"lo": 1e-4, "hi": 3e-4, "mu": 2e-4, "sd": 5e-5})
    with b.loop(12):
        b.serial("uniform(parameter lo, parameter hi + procnum * 1e-5)")
        b.irecv(512, source=LEFT, request="r")
        b.send(512, dest=RIGHT)
        b.wait("r")
        b.serial("exponential(parameter mu * (procnum % 3 + 1))")
        with b.condition() as arms:
            with arms.case(0.3):
                b.serial("gamma(parameter mu, parameter sd)")
            with arms.case(0.7):
                b.serial("gamma(2 * parameter mu, parameter sd / 2)")
        b.collective("MPI_Allreduce", 8)
        b.serial("gamma(parameter mu, 0)")              # sd 0: the mean, no draw
    return b.build()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("machine", ["default", "perseus"])
def test_draws_give_the_reference_run_to_the_bit(seed, machine):
    _assert_same(*_both(_draws_model(), 12, parse_machine(machine), seed))


def test_draws_whose_arguments_change_per_iteration_still_agree():
    b = ModelBuilder()
    with b.loop(5, index="i"):
        b.serial("gamma(1e-3 * (i + 1), 1e-4)")
        b.serial("uniform(0, i * 1e-4)")
        b.sendrecv(8, dest=RIGHT, source=LEFT)
    _assert_same(*_both(b.build(), 6, parse_machine("perseus"), 7))


def test_the_core_draws_numpys_own_numbers_in_order():
    """One rank's clock is the running sum of the Generator's draws."""
    b = ModelBuilder(parameters={"t": 2e-3, "sd": 5e-4})
    with b.loop(50):
        b.serial("gamma(parameter t, parameter sd)")
        b.serial("uniform(parameter t, 2 * parameter t)")
        b.serial("exponential(parameter t)")
    run = fastengine.simulate(b.build(), 1, Machine(Constant(0.0)),
                              rng=np.random.default_rng(11))
    rng, clock = np.random.default_rng(11), 0.0
    shape, scale = (2e-3 / 5e-4) ** 2, 5e-4 * 5e-4 / 2e-3
    for _ in range(50):
        clock += float(rng.gamma(shape, scale))
        clock += float(rng.uniform(2e-3, 4e-3))
        clock += float(rng.exponential(2e-3))
    assert run.engine_note is None
    assert run.makespan == clock


def test_many_ranks_draw_the_calibrated_mean_and_sd():
    """Statistical check on the C draws' distribution: 4,000 ranks' single
    gamma(2 ms, 0.5 ms) draws have that mean and sd within 4 standard errors."""
    b = ModelBuilder()
    b.serial("gamma(2e-3, 5e-4)")
    run = fastengine.simulate(b.build(), 4000, Machine(Constant(0.0)),
                              rng=np.random.default_rng(5))
    times = np.array([r.compute for r in run.ranks])
    assert run.engine_note is None
    assert abs(times.mean() - 2e-3) < 4 * 5e-4 / np.sqrt(4000)
    assert abs(times.std() - 5e-4) < 4 * 5e-4 / np.sqrt(2 * 4000)


def test_a_draw_with_arguments_out_of_range_fails_at_its_place_as_in_the_reference():
    b = ModelBuilder()
    b.serial("gamma(procnum - 1, 1e-4)")
    with pytest.raises(ModelError) as core:
        fastengine.simulate(b.build(), 2, Machine(Constant(0.0)))
    with pytest.raises(ModelError) as ref:
        engine.simulate(b.build(), 2, Machine(Constant(0.0)))
    assert str(core.value) == str(ref.value)
    assert "gamma(-1, 0.0001) is undefined: needs finite mean > 0 and sd >= 0" in str(ref.value)
