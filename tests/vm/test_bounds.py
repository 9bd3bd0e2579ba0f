"""The min/max bounds bound: computation at its extremes, never inside the runs (issue 29)."""

import pytest
from scipy import stats

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.engine import simulate as reference_simulate
from pevpm.vm.strategies.montecarlo import predict


def _gamma_model(collective: bool = True):
    b = ModelBuilder()
    with b.loop(4):
        b.serial("gamma(1.0, 0.1)")
        if collective:
            b.collective("MPI_Allreduce", size=8)
    return b.build()


def test_bounds_put_gamma_computation_at_its_quantiles():
    """One rank, no messages: the bounds are four draws at the 0.1% and 99.9% points."""
    p = predict(_gamma_model(collective=False), 1, parse_machine("constant:latency=0"),
                runs=20, seed=0, workers=1)
    low, high = (stats.gamma.ppf(q, 100, scale=0.01) for q in (0.001, 0.999))
    assert p.min_bound == pytest.approx(4 * low, rel=1e-9)
    assert p.max_bound == pytest.approx(4 * high, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("numprocs", [1, 16])
def test_bounds_never_inside_the_runs(seed, numprocs):
    """The report of issue 29: a min bound above the mean at 1 and at many ranks."""
    p = predict(_gamma_model(), numprocs, parse_machine("constant:latency=1e-5"),
                runs=30, seed=seed, workers=1)
    assert p.min_bound <= p.makespans.min() <= p.mean <= p.makespans.max() <= p.max_bound


def test_reference_and_compiled_engines_agree_on_bound_runs():
    from pevpm.vm.kernel.fastengine import simulate

    model, machine = _gamma_model(), parse_machine("constant:latency=1e-5")
    for which in ("min", "max"):
        assert simulate(model, 4, machine, bound=which).makespan == pytest.approx(
            reference_simulate(model, 4, machine, bound=which).makespan, rel=1e-12)
