import numpy as np
import pytest
from scipy import stats

from pevpm.errors import ModelError
from pevpm.machine.comm_models import Constant, Hockney, LogGP, PerSizeDistribution, PointMass
from pevpm.machine.transfer import CommModel, Transfer


def t(size, contention=1, intra=False):
    return Transfer("MPI_Send", size, 0, 1, intra, contention)


RNG = np.random.default_rng(0)


def test_all_models_follow_the_protocol():
    for model in (Constant(1.0), Hockney(1e-5, 1e8), LogGP(1e-5, 1e-6, 1e-6, 1e-9),
                  PerSizeDistribution({8: PointMass(1.0)})):
        assert isinstance(model, CommModel)


def test_hockney():
    h = Hockney(latency=2e-5, bandwidth=1e8, intra_latency=1e-6, intra_bandwidth=1e9)
    assert h.transfer_time(t(10**6), RNG) == pytest.approx(2e-5 + 1e-2)
    assert h.transfer_time(t(10**6, intra=True), RNG) == pytest.approx(1e-6 + 1e-3)
    shared = Hockney(latency=0.0, bandwidth=1e6, share_bandwidth=True)
    assert shared.transfer_time(t(10**6, contention=4), RNG) == pytest.approx(4.0)
    assert Hockney(0.0, 1e6).transfer_time(t(10**6, contention=4), RNG) == pytest.approx(1.0)


def test_loggp():
    m = LogGP(L=10.0, o=2.0, g=3.0, G=0.5)
    assert m.transfer_time(t(1), RNG) == 14.0
    assert m.transfer_time(t(101), RNG) == 64.0
    assert m.transfer_time(t(0), RNG) == 14.0
    assert m.local_completion_time(t(1), RNG) == 3.0


def test_per_size_interpolates_and_extrapolates():
    m = PerSizeDistribution({100: PointMass(1.0), 200: PointMass(2.0), 400: PointMass(6.0)},
                            local=0.25)
    assert [m.transfer_time(t(s), RNG) for s in (0, 100, 150, 300, 400, 600)] == \
        [1.0, 1.0, 1.5, 4.0, 6.0, 10.0]
    assert m.local_completion_time(t(1), RNG) == 0.25


def test_per_size_draws_from_the_distributions_with_the_rng():
    m = PerSizeDistribution({1000: stats.norm(5.0, 0.5)})
    draws = [m.transfer_time(t(1000), np.random.default_rng(7)) for _ in range(2)]
    assert draws[0] == draws[1]
    many = [m.transfer_time(t(1000), RNG) for _ in range(4000)]
    assert np.mean(many) == pytest.approx(5.0, abs=0.05)   # 6 standard errors


def test_bounds():
    m = PerSizeDistribution({8: stats.uniform(1.0, 2.0), 16: stats.expon(3.0)},
                            local=stats.uniform(0.5, 0.5))
    lo, hi = m.bounded("min"), m.bounded("max")
    assert lo.transfer_time(t(8), None) == 1.0 and hi.transfer_time(t(8), None) == 3.0
    assert lo.transfer_time(t(16), None) == 3.0
    assert hi.transfer_time(t(16), None) == pytest.approx(3.0 + stats.expon.ppf(0.999))
    assert (lo.local_completion_time(t(8), None), hi.local_completion_time(t(8), None)) == \
        (0.5, 1.0)


def test_bad_tables():
    with pytest.raises(ModelError):
        PerSizeDistribution({})
    with pytest.raises(ModelError):
        PerSizeDistribution({8: 1.0})
