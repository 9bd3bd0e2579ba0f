import numpy as np
import pytest

from pevpm.analytic import laws
from pevpm.errors import AnalyticError


def test_amdahl_and_gustafson_closed_forms():
    n = np.array([1, 2, 8, 1024])
    assert np.allclose(laws.amdahl_speedup(n, 0.9), 1 / (0.1 + 0.9 / n), rtol=1e-15)
    assert np.allclose(laws.gustafson_speedup(n, 0.9), 0.1 + 0.9 * n, rtol=1e-15)
    assert laws.amdahl_speedup(10**9, 0.95) == pytest.approx(20, rel=1e-7)  # 1/s bound


def test_hill_marty_variants_agree_at_one_bce_cores_and_order_for_big_cores():
    n = np.array([16, 64, 256])
    for law in (laws.hill_marty_symmetric, laws.hill_marty_asymmetric, laws.hill_marty_dynamic):
        assert np.allclose(law(n, 0.9, 1), laws.amdahl_speedup(n, 0.9), rtol=1e-14)
    big = n[1:]  # more than one 16-BCE core
    sym = laws.hill_marty_symmetric(big, 0.975, 16)
    asym = laws.hill_marty_asymmetric(big, 0.975, 16)
    dyn = laws.hill_marty_dynamic(big, 0.975, 16)
    assert np.all(sym < asym) and np.all(asym < dyn)
    # Hill and Marty's example: n = 256, r = 16, f = 0.975, symmetric speedup
    assert laws.hill_marty_symmetric(256, 0.975, 16) == pytest.approx(
        1 / (0.025 / 4 + 0.975 * 16 / (4 * 256)), rel=1e-14)


def test_sun_chen_is_gustafson_in_cores():
    assert laws.sun_chen_fixed_time(64, 0.9, 4) == pytest.approx(0.1 + 16 * 0.9)


def test_message_time_propagation_matches_khanyile_and_shaffer():
    # Khanyile eq. (19): 1/(299792.458 km/s * 0.67) = 0.0049 ms per km
    per_km = laws.message_time(0, 1.0, distance=1000.0)
    assert per_km == pytest.approx(1 / (299792.458 * 0.67), rel=1e-12)
    assert round(per_km * 1e3, 4) == 0.0050
    # Shaffer's 7.67e-6 s per mile is a cable with NVP ~ 0.7
    assert laws.message_time(0, 1.0, distance=1609.344, velocity_factor=0.7) == pytest.approx(
        7.67e-6, rel=1e-3)


def test_khanyile_time_adds_fixed_time_computation_and_messages():
    t = laws.khanyile_time([1, 4], 12.0, 0.75, messages=[0, 3], bits=1e6, bandwidth=1e8,
                           overhead=1e-3)
    assert t.tolist() == pytest.approx([12.0, 12.0 / (0.25 + 3.0) + 3 * (0.01 + 1e-3)])
    slow = laws.khanyile_time(4, 12.0, 0.75, node_speeds=[1.0, 0.5, 2.0])
    assert slow == pytest.approx(2 * 12.0 / 3.25)


def test_fit_amdahl_recovers_serial_fraction_and_is_least_squares_in_time():
    procs = [1, 2, 4, 8, 16]
    assert laws.fit_amdahl(procs, laws.amdahl_speedup(procs, 0.93)) == pytest.approx(0.07)
    rng = np.random.default_rng(7)
    noisy = laws.amdahl_speedup(procs, 0.9) * (1 + 0.02 * rng.standard_normal(5))
    s = laws.fit_amdahl(procs, noisy)
    n = np.array(procs, float)
    cost = lambda x: np.sum((1 / noisy - (x + (1 - x) / n)) ** 2)
    assert cost(s) <= min(cost(s + 1e-4), cost(s - 1e-4))
    assert abs(s - 0.1) < 0.02
    assert laws.fit_amdahl([2, 4], [2.0, 4.5]) == 0.0  # superlinear clips to 0


@pytest.mark.parametrize("call, message", [
    (lambda: laws.amdahl_speedup(4, 1.2), "parallel fraction must lie in"),
    (lambda: laws.amdahl_speedup(0, 0.5), "processor count must be >= 1"),
    (lambda: laws.hill_marty_symmetric(4, 0.5, 8), "must not exceed the chip size"),
    (lambda: laws.message_time(-8, 1e9), "message size"),
    (lambda: laws.message_time(8, 1e9, velocity_factor=1.5), "velocity factor"),
    (lambda: laws.khanyile_time(2, -1.0, 0.5), "sequential time"),
    (lambda: laws.fit_amdahl([1, 1], [1.0, 1.0]), "more than one processor"),
    (lambda: laws.fit_amdahl([2, 4], [1.0]), "same length"),
])
def test_invalid_inputs_are_analytic_errors(call, message):
    with pytest.raises(AnalyticError, match=message):
        call()
