"""Start-up waves (vm.wave): a front crossing the ranks at a steady speed is
projected exactly enough, and anything else is refused or given an error
that covers the truth."""

import numpy as np
import pytest

from pevpm.vm.strategies.wave import Wave, project_wave

SLOW, FAST = 1.0e-3, 0.75e-3


def clocks_of(switch: np.ndarray, iterations: int) -> np.ndarray:
    """Each rank's clock at every iteration end: SLOW per iteration until
    its ``switch`` iteration, FAST after."""
    done = np.arange(1, iterations + 1)[None, :]
    at = switch[:, None]
    return np.where(done < at, SLOW * done, SLOW * at + FAST * (done - at))


def truth(switch: np.ndarray, total: int) -> np.ndarray:
    return clocks_of(switch, total)[:, -1]


@pytest.mark.parametrize("speed, ranks", [(2.0, 1024), (0.5, 64), (3.0, 256)])
def test_a_front_at_a_steady_speed_is_projected_within_its_error(speed, ranks):
    switch = 1 + np.arange(ranks) / speed
    simulated, total = 64, 1000
    wave = project_wave(clocks_of(switch, simulated), total - simulated, 16)
    assert isinstance(wave, Wave)
    projected = clocks_of(switch, simulated)[:, -1] + wave.shift
    exact = truth(switch, total)
    assert abs(projected.max() - exact.max()) <= wave.error + 1e-12
    assert wave.error <= 0.002 * exact.max()
    assert wave.growth == pytest.approx(projected.max() - clocks_of(switch, simulated)[:, -1].max())
    assert wave.settled_by == pytest.approx(min(switch.max(), total), abs=2)


def test_a_front_moving_down_the_ranks_is_projected_too():
    switch = 1 + np.arange(512)[::-1] / 2.0
    wave = project_wave(clocks_of(switch, 64), 936, 16)
    projected = clocks_of(switch, 64)[:, -1] + wave.shift
    assert abs(projected.max() - truth(switch, 1000).max()) <= wave.error


def test_a_front_that_will_not_arrive_within_the_loop_leaves_those_ranks_slow():
    switch = 1 + np.arange(1024) / 0.5          # the last rank would switch at 2,047
    wave = project_wave(clocks_of(switch, 64), 936, 16)
    assert wave.settled_by == 1000
    assert wave.shift[-1] == pytest.approx(936 * SLOW)


def test_two_fronts_meeting_in_the_middle_are_not_one_straight_front():
    ranks = np.arange(1024)
    switch = 1 + np.minimum(ranks, ranks[::-1]) / 2.0
    assert "no straight front" in project_wave(clocks_of(switch, 64), 936, 16)


def test_a_front_that_bends_is_not_straight():
    switch = 1 + np.arange(1024) ** 1.5 / 40
    assert "no straight front" in project_wave(clocks_of(switch, 64), 936, 16)


@pytest.mark.parametrize("clocks, reason", [
    (np.cumsum(np.random.default_rng(1).gamma(4.0, 2.5e-4, (64, 64)), axis=1),
     "no steady front"),
    (np.outer(np.linspace(1, 2, 64), np.arange(1.0, 65.0)), "no moving front"),
    (np.outer(np.ones(64), np.arange(1.0, 65.0)), "every rank has settled"),
    (np.outer(np.ones(64), np.arange(1.0, 20.0)), "too few iterations"),
])
def test_no_front_no_projection(clocks, reason):
    assert reason in project_wave(clocks, 936, 16)
