import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pevpm.analytic import (
    QCRD_TABLE4,
    SpmdParameters,
    burst_times,
    closed_form_r1,
    closed_form_r2,
    clu_aio_network,
    exact_multiclass,
    solve_closed_network,
    solve_ctmc,
    speedup,
    speedup_surface,
    symmetric_cluster_times,
)
from pevpm.analytic.spmd import comm_scale, speedups, sync_cost
from pevpm.errors import AnalyticError

GENERIC = SpmdParameters(s_par=2.0, s_ser=0.1, s0_com=0.05, sr_com=0.8, s0_io=0.02, sr_io=0.6,
                         w=0.4, n_io=3.0, c=1, g_exponent=0.5)


def z_and_queue(params, p):
    g = 0.0 if p == 1 else p ** -params.g_exponent
    h = sync_cost(params.c, params.sync_cost)
    z = h * (params.s_par / p + params.s_ser) + params.s0_com + (1 - params.w) * g * params.sr_com
    return float(z), params.w * g * params.sr_com


def test_scale_and_sync_functions():
    assert comm_scale([1, 4, 16], 0.5).tolist() == [0.0, 0.5, 0.25]
    assert sync_cost([1, 2, 4]).tolist() == pytest.approx([1, 1.5, 25 / 12])
    assert sync_cost([1, 3], "uniform").tolist() == [1.0, 1.5]


@pytest.mark.parametrize("p, d", [(1, 1), (2, 1), (6, 2), (12, 4)])
def test_sio_is_equation_16_with_closed_form_r1(p, d):
    params = GENERIC.replace(c=2) if p % 2 == 0 else GENERIC
    z, x = z_and_queue(params, p)
    groups = p // params.c
    expected = params.n_io * sum((z + closed_form_r1(i, z, x)) / i for i in range(1, groups + 1))
    compute, io = burst_times("sio", params, p, d)
    assert compute == pytest.approx(expected, rel=1e-9)
    assert io == pytest.approx(params.s0_io + params.sr_io / d, rel=1e-12)


@pytest.mark.parametrize("p, d, c", [(1, 1, 1), (4, 2, 1), (8, 4, 2), (12, 3, 3)])
def test_bus_aio_is_equations_20_21_with_closed_form_r2(p, d, c):
    params = GENERIC.replace(c=c)
    z, s_queue = z_and_queue(params, p)
    groups = p // c
    t_io = params.s0_io + params.sr_io / d / groups
    zn, xn = z * params.n_io, s_queue * params.n_io
    compute, io = burst_times("bus-aio", params, p, d)
    assert compute == pytest.approx(zn + closed_form_r2(groups, zn, xn, t_io), rel=1e-9)
    assert io == pytest.approx(closed_form_r2(groups, zn, t_io, xn), rel=1e-9)


@pytest.mark.parametrize("p, d, c", [(4, 2, 1), (8, 2, 2), (9, 3, 1), (16, 4, 2), (64, 2, 1)])
def test_clu_aio_symmetric_solver_equals_exact_multiclass_mva(p, d, c):
    params = GENERIC.replace(c=c)
    demands, is_delay, population = clu_aio_network(params, p, d)
    mva = solve_closed_network(demands, is_delay, population)
    assert mva.method == "exact"
    compute, io = burst_times("clu-aio", params, p, d)
    assert compute == pytest.approx(mva.residence[d, 0] + mva.residence[d + 1, 0], rel=1e-9)
    assert io == pytest.approx(mva.residence[0, 0], rel=1e-9)


def test_clu_aio_matches_ctmc_and_the_service_matrix_of_section_4_3():
    demands, is_delay, population = clu_aio_network(GENERIC, 6, 2)
    z, s_queue = z_and_queue(GENERIC, 6)
    t_io = GENERIC.s0_io + GENERIC.sr_io / 6
    expected = np.array([[t_io, 0], [0, t_io], [s_queue * 3, s_queue * 3], [z * 3, z * 3]])
    np.testing.assert_allclose(demands, expected, rtol=1e-15)
    assert population == [3, 3] and is_delay.tolist() == [False, False, False, True]
    ctmc = solve_ctmc(demands, is_delay, population)
    compute, io = burst_times("clu-aio", GENERIC, 6, 2)
    assert io == pytest.approx(ctmc.residence[0, 0], rel=1e-9)
    assert compute == pytest.approx(ctmc.residence[2:, 0].sum(), rel=1e-9)


def test_clu_aio_with_one_disk_is_bus_aio_and_large_case_is_exact():
    p = np.array([1, 4, 32])
    np.testing.assert_allclose(speedup("clu-aio", GENERIC, p, 1), speedup("bus-aio", GENERIC, p, 1),
                               rtol=1e-9)
    jobs, classes, disk, queue, delay = 16, 64, 0.01, 0.002, 0.3
    compute, io = symmetric_cluster_times(jobs, classes, disk, queue, delay)
    approx = solve_closed_network(
        np.vstack([np.eye(classes) * disk, np.full((2, classes), [[queue], [delay]])]),
        [False] * (classes + 1) + [True], [jobs] * classes)
    assert approx.method == "schweitzer"  # 17**64 population vectors: exact MVA is out of reach
    assert compute + io == pytest.approx(approx.cycle_time[0], rel=0.05)


def test_all_models_agree_at_one_processor_and_disk():
    for model in ("sio", "bus-aio", "clu-aio"):
        s = speedup(model, GENERIC, 1, 1)
        t1 = GENERIC.reference_time
        assert s == pytest.approx(t1 / (t1 + GENERIC.n_io * GENERIC.s0_com), rel=1e-12)


def test_qcrd_surface_shape_monotone_in_p_and_communication_bound():
    p = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    d = [1, 2, 4, 8, 16, 32, 64]
    surface = speedup_surface("bus-aio", QCRD_TABLE4, p, d)
    assert surface.shape == (10, 7)
    assert np.all(np.diff(surface, axis=0) >= -1e-12)  # monotone in p
    # the bottleneck is the communication queue: its total demand p * w g(p) SR_COM n_io is
    # constant for g = 1/p, so s(p) saturates at T1 / (w SR_COM n_io) = 9.127...
    bound = QCRD_TABLE4.reference_time / (QCRD_TABLE4.w * QCRD_TABLE4.sr_com)
    assert np.all(surface <= bound * (1 + 1e-9))
    assert surface[-1] == pytest.approx(bound, rel=1e-6)
    # disks hardly matter: SR_IO is 0.1% of T1
    assert np.ptp(surface, axis=1).max() < 1e-3 * surface.max()


def test_btio_worked_example_reproduces_table_3():
    # Sec. 5.1: 830 + 10 MFlop per step at 120 MFlop/s, t0 = 150 us, 27 MB/s, w = 0.23,
    # g = p^(-1/6), I/O every 5 steps (10 MB, 3 nodes at 10 MB/s), SIO, c = 1.
    for p, messages, kbytes, measured, model in ((9, 18, 64, 11.5, 13.1), (64, 48, 18, 6.0, 6.2)):
        volume_mb = messages * kbytes / 1000
        params = SpmdParameters(s_par=6.9, s_ser=0.08, s0_com=150e-6 * messages,
                                sr_com=volume_mb / 27 / p ** (-1 / 6), sr_io=1.0, w=0.23,
                                n_io=5, g_exponent=1 / 6)
        compute, io = burst_times("sio", params, p, 3)
        assert compute + io == pytest.approx(model, rel=0.02)


def test_uniform_sync_cost_is_less_pessimistic_for_sio():
    harmonic = speedup("sio", GENERIC.replace(c=4), 16, 2)
    uniform = speedup("sio", GENERIC.replace(c=4, sync_cost="uniform"), 16, 2)
    assert uniform > harmonic


@pytest.mark.parametrize("make, message", [
    (lambda: GENERIC.replace(w=1.2), r"w must lie in \[0, 1\]"),
    (lambda: GENERIC.replace(w=-0.1), r"w must lie in \[0, 1\]"),
    (lambda: GENERIC.replace(sr_com=-1.0), "sr_com must be a finite number >= 0"),
    (lambda: GENERIC.replace(s_par=float("nan")), "s_par must be a finite number"),
    (lambda: GENERIC.replace(s_par=0.0, s_ser=0.0), "s_par \\+ s_ser must be positive"),
    (lambda: GENERIC.replace(c=0), "c must be an integer >= 1"),
    (lambda: GENERIC.replace(n_io=0), "n_io"),
    (lambda: GENERIC.replace(sync_cost="normal"), "sync_cost must be one of"),
    (lambda: GENERIC.replace(colour=1), "unknown SPMD parameter"),
    (lambda: speedup("clu-aio", GENERIC, 6, 4), "p/c to be a multiple of d: p/c = 6 and d = 4"),
    (lambda: speedup("clu-aio", GENERIC.replace(c=2), 8, 3), "p/c = 4 and d = 3"),
    (lambda: speedup("sio", GENERIC.replace(c=8), 4, 1), "c = 8 exceeds processor count p = 4"),
    (lambda: speedup("bus-aio", GENERIC.replace(c=3), 4, 1), "p = 4 is not a multiple of c = 3"),
    (lambda: speedup("bus-aio", GENERIC, 0, 1), "processor count p must be a positive integer"),
    (lambda: speedup("sio", GENERIC, 4, 1.5), "disk count d must be a positive integer"),
    (lambda: speedup("bus-aio", GENERIC.replace(sync_cost="uniform"), 4, 1), "SIO model only"),
    (lambda: speedup("mesh", GENERIC, 4, 1), "unknown SPMD model 'mesh'"),
])
def test_invalid_parameters_are_clear_errors(make, message):
    with pytest.raises(AnalyticError, match=message):
        make()


@settings(max_examples=25, deadline=None)
@given(jobs=st.integers(1, 4), classes=st.integers(1, 3),
       demands=st.tuples(*[st.floats(0.0, 5.0) for _ in range(2)], st.floats(0.01, 5.0)))
def test_symmetric_cluster_solver_equals_exact_mva_for_random_networks(jobs, classes, demands):
    disk, queue, delay = demands
    matrix = np.vstack([np.eye(classes) * disk, np.full((2, classes), [[queue], [delay]])])
    exact = exact_multiclass(matrix, [False] * (classes + 1) + [True], [jobs] * classes)
    compute, io = symmetric_cluster_times(jobs, classes, disk, queue, delay)
    assert io == pytest.approx(exact.residence[0, 0], rel=1e-9, abs=1e-300)
    assert compute == pytest.approx(exact.residence[classes:, 0].sum(), rel=1e-9)


@pytest.mark.parametrize("model", ["sio", "bus-aio", "clu-aio"])
def test_batched_speedups_equal_one_set_at_a_time(model):
    sets = [GENERIC, GENERIC.replace(w=0.9, sr_io=0.1), GENERIC.replace(s_par=7.0, n_io=1.0)]
    p, d = np.array([[4, 8], [16, 32]]), np.array([[1, 2], [4, 4]])
    batch = speedups(model, sets, p, d)
    assert batch.shape == (3, 2, 2)
    for k, params in enumerate(sets):
        np.testing.assert_allclose(batch[k], speedup(model, params, p, d), rtol=1e-13)
    with pytest.raises(AnalyticError, match="share c and sync_cost"):
        speedups(model, [GENERIC, GENERIC.replace(c=2)], p, d)
