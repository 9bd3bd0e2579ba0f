"""Random runs: seeds reproduce, bounds bracket."""

import numpy as np
import pytest
from engine_models import jacobi_model
from scipy import stats

from pevpm.errors import ModelError
from pevpm.machine.comm_models import PerSizeDistribution
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.vm.kernel.engine import simulate

MACHINE = Machine(PerSizeDistribution({1024: stats.uniform(1e-4, 2e-4)}, local=1e-6),
                  Topology(procs_per_node=2))


def test_same_seed_same_run_different_seed_different_run():
    model = jacobi_model(10, t=0.01)
    a, b = (simulate(model, 8, MACHINE, rng=np.random.default_rng(42)) for _ in range(2))
    c = simulate(model, 8, MACHINE, rng=np.random.default_rng(43))
    assert a.makespan == b.makespan and a.ranks == b.ranks and a.critical_path == b.critical_path
    assert c.makespan != a.makespan


def test_bounds_bracket_random_runs():
    model = jacobi_model(10, t=0.01)
    low = simulate(model, 8, MACHINE, bound="min").makespan
    high = simulate(model, 8, MACHINE, bound="max").makespan
    runs = [simulate(model, 8, MACHINE, rng=np.random.default_rng(s)).makespan for s in range(3)]
    assert low < min(runs) and max(runs) < high
    # a bounded run draws nothing at random
    assert simulate(model, 8, MACHINE, bound="min", rng=np.random.default_rng(9)).makespan == low


def test_unknown_bound_is_an_error():
    with pytest.raises(ModelError, match="bound must be 'min' or 'max'"):
        simulate(jacobi_model(1), 2, MACHINE, bound="mean")


def test_random_runs_account_for_every_second():
    run = simulate(jacobi_model(10, t=0.01), 8, MACHINE, rng=np.random.default_rng(5))
    for rank in run.ranks:
        assert rank.total == pytest.approx(rank.finish, rel=1e-12)
    assert sum(run.critical_path.values()) == pytest.approx(run.makespan, rel=1e-12)
    assert run.critical_path["compute"] == pytest.approx(10 * 0.01 / 8, rel=1e-12)
