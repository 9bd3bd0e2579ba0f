import numpy as np
import pytest

from pevpm.analytic import QCRD_TABLE4, SpmdParameters, average_error, fit_spmd, speedup
from pevpm.errors import AnalyticError

TRUE = SpmdParameters(s_par=1.0, s_ser=0.02, s0_com=0.01, sr_com=0.5, s0_io=0.01, sr_io=0.3,
                      w=0.4, n_io=2.0, g_exponent=0.5)
FREE = ("w", "s0_com", "sr_com", "sr_io")
P, D = (a.ravel() for a in np.meshgrid([1, 2, 4, 8, 16, 32], [1, 2, 4, 8], indexing="ij"))
START = TRUE.replace(w=0.8, s0_com=0.05, sr_com=0.2, sr_io=0.1)


def test_average_error_is_the_papers_measure():
    s_obs = np.array([2.0, 4.0, 5.0])
    s = np.array([2.2, 4.0, 4.0])
    assert average_error(s, s_obs) == pytest.approx(np.sqrt(0.1**2 + 0.2**2) / 3)


def test_fit_recovers_parameters_from_an_exact_surface():
    observed = speedup("bus-aio", TRUE, P, D)
    fit = fit_spmd("bus-aio", P, D, observed, START, free=FREE, starts=3, seed=0)
    for name in FREE:
        assert fit.values[name] == pytest.approx(getattr(TRUE, name), rel=1e-6)
        assert fit.std[name] < 1e-6
    assert fit.average_error < 1e-10
    assert fit.params.s_par == TRUE.s_par  # the scale anchor stays fixed


def test_fit_with_noise_recovers_parameters_within_reported_uncertainty():
    rng = np.random.default_rng(2024)
    noise = 0.01
    clean = speedup("bus-aio", TRUE, P, D)
    observed = clean * (1 + noise * rng.standard_normal(clean.shape))
    fit = fit_spmd("bus-aio", P, D, observed, START, free=FREE, starts=3, seed=0)
    for name in ("w", "sr_com", "sr_io"):
        value, std = fit.values[name], fit.std[name]
        assert 0 < std < 0.1 * getattr(TRUE, name)
        assert abs(value - getattr(TRUE, name)) < 3 * std
    # the fit can only improve on the true parameters; both sit near noise / sqrt(N)
    assert fit.average_error <= average_error(clean, observed)
    assert 0.5 * noise / np.sqrt(P.size) < fit.average_error < 2 * noise / np.sqrt(P.size)


def test_qcrd_table4_surface_fits_itself_with_zero_error():
    p, d = (a.ravel() for a in np.meshgrid([1, 2, 4, 8, 16, 32, 64], [1, 2, 4, 8, 16, 32],
                                           indexing="ij"))
    assert p.size == 42  # as many points as the paper's QCRD surface
    observed = speedup("bus-aio", QCRD_TABLE4, p, d)
    fit = fit_spmd("bus-aio", p, d, observed, QCRD_TABLE4, starts=1)
    assert fit.average_error < 1e-12
    for name, value in fit.values.items():
        assert value == pytest.approx(getattr(QCRD_TABLE4, name), abs=1e-9)


def test_fit_is_reproducible_from_its_seed():
    observed = speedup("bus-aio", TRUE, P, D) * 1.01
    a = fit_spmd("bus-aio", P, D, observed, START, free=("w", "sr_com"), starts=2, seed=5)
    b = fit_spmd("bus-aio", P, D, observed, START, free=("w", "sr_com"), starts=2, seed=5)
    assert a.values == b.values


@pytest.mark.parametrize("kwargs, message", [
    ({"free": ("w", "s_par", "s_ser", "s0_com", "sr_com", "s0_io", "sr_io")}, "scaled together"),
    ({"free": ("c",)}, "cannot fit c"),
    ({"free": ()}, "nothing to fit"),
    ({"starts": 0}, "starts must be >= 1"),
])
def test_fit_rejects_ill_posed_requests(kwargs, message):
    observed = speedup("bus-aio", TRUE, P, D)
    with pytest.raises(AnalyticError, match=message):
        fit_spmd("bus-aio", P, D, observed, TRUE, **kwargs)


def test_fit_needs_enough_valid_observations():
    with pytest.raises(AnalyticError, match="cannot determine"):
        fit_spmd("bus-aio", [1, 2], [1, 1], [1.0, 1.5], TRUE, free=FREE)
    with pytest.raises(AnalyticError, match="positive and finite"):
        fit_spmd("bus-aio", [1, 2], [1, 1], [1.0, -1.5], TRUE, free=("w",))
