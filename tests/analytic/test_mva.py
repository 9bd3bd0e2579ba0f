import numpy as np
import pytest

from pevpm.analytic import (
    closed_form_r1,
    closed_form_r2,
    exact_multiclass,
    schweitzer_bard,
    single_class_trajectory,
    solve_closed_network,
    solve_ctmc,
)
from pevpm.errors import AnalyticError

RTOL = 1e-9


def assert_same(a, b):
    np.testing.assert_allclose(a.throughput, b.throughput, rtol=RTOL, atol=0)
    np.testing.assert_allclose(a.residence, b.residence, rtol=RTOL, atol=1e-300)
    np.testing.assert_allclose(a.queue_length, b.queue_length, rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("z, x", [(0.7, 0.3), (1.0, 1.0), (0.05, 2.0), (3.0, 0.0)])
def test_single_class_mva_matches_r1_closed_form(z, x):
    trajectory = single_class_trajectory([x, z], [False, True], 25)
    for i in range(1, 26):
        assert trajectory[i - 1, 0] == pytest.approx(closed_form_r1(i, z, x), rel=RTOL)


@pytest.mark.parametrize("z, x, y", [(0.7, 0.3, 0.2), (0.1, 1.0, 1.0), (2.0, 0.5, 0.01)])
def test_single_class_mva_matches_r2_closed_form_for_both_queues(z, x, y):
    trajectory = single_class_trajectory([z, x, y], [True, False, False], 15)
    for i in range(1, 16):
        assert trajectory[i - 1, 1] == pytest.approx(closed_form_r2(i, z, x, y), rel=RTOL)
        assert trajectory[i - 1, 2] == pytest.approx(closed_form_r2(i, z, y, x), rel=RTOL)


def test_single_class_trajectory_is_batched():
    demands = np.array([[0.3, 0.7], [1.0, 0.1]])
    batched = single_class_trajectory(demands, [False, True], 6)
    for b in range(2):
        alone = single_class_trajectory(demands[b], [False, True], 6)
        assert np.array_equal(batched[:, b], alone)


@pytest.mark.parametrize("population", [1, 2, 5, 9])
def test_single_class_solver_matches_ctmc(population):
    demands = [[0.4], [1.3], [0.2], [0.9]]
    is_delay = [False, True, False, False]
    assert_same(solve_closed_network(demands, is_delay, [population]),
                solve_ctmc(demands, is_delay, [population]))


@pytest.mark.parametrize("population", [(1, 1), (3, 2), (2, 4), (0, 3)])
def test_exact_multiclass_matches_ctmc(population):
    demands = np.array([[1.0, 0.5], [0.3, 2.0], [2.0, 1.0], [0.7, 0.0]])
    is_delay = [False, False, True, False]
    exact = exact_multiclass(demands, is_delay, population)
    assert exact.method == "exact"
    assert_same(exact, solve_ctmc(demands, is_delay, population))


def test_three_class_exact_matches_ctmc():
    demands = np.array([[0.5, 0.2, 0.9], [0.1, 0.8, 0.4], [1.5, 1.0, 0.5]])
    is_delay = [False, False, True]
    assert_same(exact_multiclass(demands, is_delay, [2, 2, 1]),
                solve_ctmc(demands, is_delay, [2, 2, 1]))


def test_schweitzer_is_close_to_exact_and_switch_follows_the_stated_bound():
    demands = np.array([[1.0, 0.5], [0.3, 2.0], [2.0, 1.0]])
    is_delay = [False, False, True]
    population = [6, 5]  # 7 x 6 = 42 population vectors
    exact = solve_closed_network(demands, is_delay, population, max_exact_vectors=42)
    approx = solve_closed_network(demands, is_delay, population, max_exact_vectors=41)
    assert (exact.method, approx.method) == ("exact", "schweitzer")
    np.testing.assert_allclose(approx.throughput, exact.throughput, rtol=0.08)  # 5.2% here
    assert not np.allclose(approx.throughput, exact.throughput, rtol=1e-6)
    direct = schweitzer_bard(demands, is_delay, population)
    np.testing.assert_array_equal(direct.throughput, approx.throughput)


def test_littles_law_and_population_conservation():
    demands = np.array([[1.0, 0.5], [0.3, 2.0], [2.0, 1.0]])
    result = exact_multiclass(demands, [False, False, True], [4, 3])
    assert result.queue_length.sum(axis=0) == pytest.approx([4, 3], rel=1e-12)
    assert result.throughput * result.cycle_time == pytest.approx([4, 3], rel=1e-12)


@pytest.mark.parametrize("demands, is_delay, population, message", [
    ([[1.0], [-1.0]], [False, True], [2], "non-negative"),
    ([[1.0], [1.0]], [False], [2], "one flag per station"),
    ([[1.0], [1.0]], [False, True], [1.5], "non-negative integers"),
    ([[1.0], [1.0]], [False, True], [1, 1], "one count per class"),
    ([[0.0], [0.0]], [False, True], [1], "positive total demand"),
])
def test_invalid_networks(demands, is_delay, population, message):
    with pytest.raises(AnalyticError, match=message):
        solve_closed_network(demands, is_delay, population)


def test_ctmc_refuses_state_spaces_too_large_for_a_dense_solve():
    with pytest.raises(AnalyticError, match="more than 2000"):
        solve_ctmc(np.ones((4, 2)), [False] * 3 + [True], [12, 12])
