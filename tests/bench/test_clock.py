import numpy as np
import pytest

from pevpm.bench.clock import (
    GlobalClock,
    LocalClock,
    SkewedClock,
    SyncPoint,
    WtimeClock,
    _tree_distances,
    pick_clock,
)


def test_linear_interpolation_between_sync_points():
    clock = GlobalClock(LocalClock())
    clock.add(SyncPoint(1_000, -500.0, 10.0, 20))
    clock.add(SyncPoint(3_000, -300.0, 12.0, 24))
    assert clock.to_global(np.array([1_000, 2_000, 3_000])).tolist() == [500, 1_600, 2_700]
    assert clock.drift == 0.1
    assert clock.drift_residual_ns == 0.0


def test_error_is_worst_endpoint_plus_resolution_plus_nonlinearity():
    clock = GlobalClock(LocalClock())
    for local, offset in [(0, 0.0), (1000, 150.0), (2000, 100.0)]:
        clock.add(SyncPoint(local, offset, 10.0, 20))
    assert clock.drift_residual_ns == 90.0  # middle is 100 off the line, 10 explained by error
    assert clock.error_between(0, 1) == 10.0 + clock.local.resolution_ns + 90.0


def test_tree_rounds_are_logarithmic():
    assert _tree_distances(1) == []
    assert _tree_distances(2) == [1]
    assert _tree_distances(5) == [4, 2, 1]
    assert len(_tree_distances(1024)) == 10


def test_skewed_clock_is_linear_in_true_time():
    clock = SkewedClock(offset_ns=1_000_000, drift=0.5)
    a = clock.now()
    b = clock.now()
    assert b >= a > 1_000_000


def test_sync_points_must_move_forward():
    clock = GlobalClock(LocalClock())
    clock.add(SyncPoint(10, 0.0, 1.0, 2))
    with pytest.raises(ValueError, match="increasing"):
        clock.add(SyncPoint(10, 0.0, 1.0, 2))


def test_the_finer_clock_is_picked():
    assert type(pick_clock(lambda: 1.5, wtick=1e-6)) is LocalClock
    fine = pick_clock(lambda: 1.5, wtick=1e-12)
    assert isinstance(fine, WtimeClock) and fine.now() == 1_500_000_000
    assert fine.resolution_ns == 1.0
