"""Closed-form scaling laws: Amdahl, Gustafson, Hill-Marty, Sun-Chen, Khanyile.

Every law is a small function vectorised over processor (or core) counts:
arguments broadcast like numpy arrays, and the result is a float array (a
0-d result comes back as a plain float). Speedups are dimensionless; times
are in seconds, sizes in bits, bandwidths in bits per second and distances
in metres.

>>> round(amdahl_speedup(16, 0.95), 4)
9.1429
>>> round(gustafson_speedup(16, 0.95), 2)
15.25
>>> fit_amdahl([1, 2, 4, 8], [1.0, 1.818, 3.077, 4.706])  # doctest: +ELLIPSIS
0.1...
"""

from __future__ import annotations

import numpy as np

from pevpm.errors import AnalyticError

SPEED_OF_LIGHT = 299_792_458.0
"""Speed of light in vacuum, metres per second."""


def _result(values: np.ndarray) -> np.ndarray | float:
    values = np.asarray(values, dtype=float)
    return float(values) if values.ndim == 0 else values


def _fraction(value, name: str) -> np.ndarray:
    value = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(value)) or np.any((value < 0) | (value > 1)):
        raise AnalyticError(f"{name} must lie in [0, 1], got {value.tolist()}")
    return value


def _at_least(value, minimum: float, name: str) -> np.ndarray:
    value = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(value)) or np.any(value < minimum):
        raise AnalyticError(f"{name} must be >= {minimum:g}, got {value.tolist()}")
    return value


def amdahl_speedup(processors, parallel_fraction) -> np.ndarray | float:
    """Fixed-size speedup ``1 / ((1 - f) + f / N)`` (Amdahl).

    ``processors`` N >= 1; ``parallel_fraction`` f in [0, 1] is the share of
    the one-processor run time that parallelises perfectly. Dimensionless.

    >>> amdahl_speedup([1, 2, 4], 0.5).round(4).tolist()
    [1.0, 1.3333, 1.6]
    """
    n = _at_least(processors, 1, "processor count")
    f = _fraction(parallel_fraction, "parallel fraction")
    return _result(1.0 / ((1.0 - f) + f / n))


def gustafson_speedup(processors, parallel_fraction) -> np.ndarray | float:
    """Scaled speedup ``(1 - f) + f N`` (Gustafson): the parallel work grows with N.

    ``parallel_fraction`` f is measured on the N-processor run. Dimensionless.

    >>> gustafson_speedup([1, 10], 0.9).tolist()
    [1.0, 9.1]
    """
    n = _at_least(processors, 1, "processor count")
    f = _fraction(parallel_fraction, "parallel fraction")
    return _result((1.0 - f) + f * n)


def _core_perf(bce_per_core) -> np.ndarray:
    """Hill and Marty's usual assumption perf(r) = sqrt(r) for a core built from r BCEs."""
    return np.sqrt(_at_least(bce_per_core, 1, "BCEs per core r"))


def _chip(total_bce, bce_per_core) -> tuple[np.ndarray, np.ndarray]:
    n = _at_least(total_bce, 1, "chip size n (BCEs)")
    r = _at_least(bce_per_core, 1, "BCEs per core r")
    if np.any(r > n):
        raise AnalyticError("BCEs per core r must not exceed the chip size n")
    return n, r


def hill_marty_symmetric(total_bce, parallel_fraction, bce_per_core=1) -> np.ndarray | float:
    """Symmetric multicore speedup ``1 / ((1-f)/perf(r) + f r / (perf(r) n))``.

    A chip of n base-core equivalents (BCEs) holds n/r cores of r BCEs each,
    and a core of r BCEs runs sequential code perf(r) = sqrt(r) times faster
    than one BCE. Dimensionless, relative to one BCE.

    >>> round(hill_marty_symmetric(16, 0.9, 4), 4)
    6.1538
    """
    n, r = _chip(total_bce, bce_per_core)
    f = _fraction(parallel_fraction, "parallel fraction")
    perf = _core_perf(r)
    return _result(1.0 / ((1.0 - f) / perf + f * r / (perf * n)))


def hill_marty_asymmetric(total_bce, parallel_fraction, bce_per_core=1) -> np.ndarray | float:
    """Asymmetric chip: one big core of r BCEs plus n - r single-BCE cores.

    Speedup ``1 / ((1-f)/perf(r) + f / (perf(r) + n - r))``: the big core runs
    the serial part alone and joins the small cores for the parallel part.

    >>> round(hill_marty_asymmetric(16, 0.9, 4), 4)
    8.75
    """
    n, r = _chip(total_bce, bce_per_core)
    f = _fraction(parallel_fraction, "parallel fraction")
    perf = _core_perf(r)
    return _result(1.0 / ((1.0 - f) / perf + f / (perf + n - r)))


def hill_marty_dynamic(total_bce, parallel_fraction, bce_per_core=1) -> np.ndarray | float:
    """Dynamic chip: r BCEs fuse into one core for serial code, all n work in parallel.

    Speedup ``1 / ((1-f)/perf(r) + f/n)``.

    >>> round(hill_marty_dynamic(16, 0.9, 4), 4)
    9.4118
    """
    n, r = _chip(total_bce, bce_per_core)
    f = _fraction(parallel_fraction, "parallel fraction")
    return _result(1.0 / ((1.0 - f) / _core_perf(r) + f / n))


def sun_chen_fixed_time(total_bce, parallel_fraction, bce_per_core=1) -> np.ndarray | float:
    """Sun and Chen's fixed-time multicore speedup ``(1 - f) + m f`` with m = n / r.

    The parallel workload grows so that the run time stays fixed as the chip
    grows from r to n BCEs. Dimensionless.

    >>> sun_chen_fixed_time(16, 0.9, 4)
    3.7
    """
    n, r = _chip(total_bce, bce_per_core)
    f = _fraction(parallel_fraction, "parallel fraction")
    return _result((1.0 - f) + (n / r) * f)


def message_time(bits, bandwidth, distance=0.0, overhead=0.0, velocity_factor=0.67):
    """Khanyile et al.'s bound on one message's time, seconds: ``L/tau + sigma_max dist + eps``.

    ``bits`` L is the message size in bits, ``bandwidth`` tau the network's
    bandwidth bound in bits/s, ``distance`` the cable length in metres,
    ``overhead`` eps the per-message send plus receive overhead in seconds.
    The delay per metre is the propagation delay 1 / (c x NVP) of a cable
    with normal velocity of propagation ``velocity_factor`` (0.67 for their
    cluster; Shaffer's 7.67e-6 s per mile is NVP ~ 0.7).

    >>> round(message_time(8e6, 1e9, distance=1000.0, overhead=1e-5), 9)
    0.008014979
    """
    size = _at_least(bits, 0, "message size (bits)")
    tau = _at_least(bandwidth, 0, "bandwidth (bits/s)")
    if np.any(tau <= 0):
        raise AnalyticError("bandwidth must be positive")
    dist = _at_least(distance, 0, "distance (m)")
    eps = _at_least(overhead, 0, "per-message overhead (s)")
    nvp = np.asarray(velocity_factor, dtype=float)
    if np.any(~((nvp > 0) & (nvp <= 1))):
        raise AnalyticError(f"velocity factor must lie in (0, 1], got {nvp.tolist()}")
    return _result(size / tau + dist / (SPEED_OF_LIGHT * nvp) + eps)


def khanyile_time(
    nodes,
    sequential_time,
    parallel_fraction,
    messages=0,
    bits=0.0,
    bandwidth=1.0,
    distance=0.0,
    overhead=0.0,
    velocity_factor=0.67,
    node_speeds=None,
) -> np.ndarray | float:
    """Khanyile et al.'s estimated run time on m nodes, seconds (their eqs. 12-18).

    ``T_EST(m) = T_comp(m) + T_comm(m, L)`` where ``T_comp = T_seq / S_FT(m)``
    with Sun-Chen's fixed-time speedup ``S_FT = (1 - f) + m f``, and
    ``T_comm = messages x message_time(L)`` (``messages`` broadcasts against
    ``nodes``: the count of messages on the critical path of the m-node run).
    The slowest node governs the computation: ``node_speeds`` (relative to the
    processor that measured ``sequential_time``) scales T_comp by
    1 / min(node_speeds).

    >>> round(khanyile_time(4, 10.0, 0.9, messages=6, bits=8e6, bandwidth=1e9), 6)
    2.750703
    """
    m = _at_least(nodes, 1, "node count")
    t_seq = _at_least(sequential_time, 0, "sequential time (s)")
    f = _fraction(parallel_fraction, "parallel fraction")
    count = _at_least(messages, 0, "message count")
    slowdown = 1.0
    if node_speeds is not None:
        speeds = np.asarray(node_speeds, dtype=float)
        if speeds.size == 0 or np.any(~(speeds > 0)):
            raise AnalyticError("node speeds must be positive")
        slowdown = 1.0 / speeds.min()
    t_comp = slowdown * t_seq / ((1.0 - f) + m * f)
    t_msg = message_time(bits, bandwidth, distance, overhead, velocity_factor)
    return _result(t_comp + count * t_msg)


def fit_amdahl(processors, speedups) -> float:
    """Serial fraction s = 1 - f of Amdahl's law fitted to measured speedups.

    Amdahl's normalised time is linear in s: ``1/S = 1/N + s (1 - 1/N)``, so
    the least-squares fit of the measured times relative to the one-rank time
    (1/S) has the closed form below, clipped to [0, 1]. Points with N = 1
    carry no information. Use ``amdahl_speedup(N, 1 - s)`` to predict.

    >>> round(fit_amdahl([2, 4, 8], amdahl_speedup([2, 4, 8], 0.9)), 12)
    0.1
    """
    n = _at_least(processors, 1, "processor count")
    s_obs = np.asarray(speedups, dtype=float)
    if n.shape != s_obs.shape or n.ndim != 1:
        raise AnalyticError("processors and speedups must be 1-D lists of the same length")
    if np.any(~(s_obs > 0)) or np.any(~np.isfinite(s_obs)):
        raise AnalyticError("measured speedups must be positive and finite")
    slope = 1.0 - 1.0 / n
    if not np.any(slope > 0):
        raise AnalyticError("fitting Amdahl's law needs at least one run on more than one processor")
    target = 1.0 / s_obs - 1.0 / n
    serial = float(np.dot(slope, target) / np.dot(slope, slope))
    return min(max(serial, 0.0), 1.0)
