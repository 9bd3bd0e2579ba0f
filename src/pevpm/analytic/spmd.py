"""Cremonesi and Gennaro's queueing-network models of SPMD programs.

A program runs cycles of ``n_io`` computation bursts (CPU then
communication) followed by one I/O burst, on p processors and d disks;
processors synchronise in groups of c. Three models (paper sec. 4):

- ``"sio"``: synchronous I/O; the computation burst is a fork-join over the
  p/c groups, eq. (16), and T_IO = S0_IO + SR_IO/d, eq. (18).
- ``"bus-aio"``: asynchronous I/O to one shared I/O node; a closed network
  of p/c jobs with a delay z n_io, a communication queue S_queue n_io and an
  I/O queue S0_IO + (SR_IO/d)/(p/c), eqs. (19-21).
- ``"clu-aio"``: asynchronous I/O to d I/O nodes each serving a cluster of
  p/(c d) groups; a multiclass network with d classes, eq. (14) and the
  service matrix G of sec. 4.3, solved exactly through the symmetry of its
  classes (:func:`symmetric_cluster_times`).

with ``z = h(c)(S_par/p + S_ser) + S0_COM + (1 - w) g(p) SR_COM`` (15),
``S_queue = w g(p) SR_COM`` (9), ``g(p) = p ** -g_exponent`` for p > 1 and
g(1) = 0, and ``h(c) = sum_{i<=c} 1/i`` (exponential CPU bursts) or
``2c/(c+1)`` (uniform, SIO only). The speedup, eq. (3), is
``s(p, d) = T1 / (T_CPU + T_COM + T_IO)(p, d)`` with
``T1 = (S_par + S_ser) n_io + S0_IO + SR_IO``. Note that at p = 1 the model
still charges the start-up S0_COM, so s(1, 1) = T1 / (T1 + n_io S0_COM).

Times are seconds per burst (any one unit will do: speedups only depend on
ratios).

>>> round(float(speedup("bus-aio", QCRD_TABLE4, 64, 8)), 4)
8.9362
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from pevpm.analytic.ctmc import compositions
from pevpm.analytic.mva import single_class_trajectory
from pevpm.errors import AnalyticError

MODELS = ("sio", "bus-aio", "clu-aio")
SYNC_COSTS = ("harmonic", "uniform")
TIME_PARAMETERS = ("s_par", "s_ser", "s0_com", "sr_com", "s0_io", "sr_io")


@dataclass(frozen=True)
class SpmdParameters:
    """Parameters of Table 1 of the paper (times in seconds per burst).

    ``s_par``/``s_ser``: parallel and serial CPU time of one CPU burst on one
    processor; ``s0_com``: communication start-up per burst; ``sr_com``:
    transfer time per burst at g(p) = 1; ``s0_io``/``sr_io``: serial and
    parallel part of one I/O burst; ``w``: contention level in [0, 1] (0 =
    fully connected delay, 1 = shared bus queue); ``n_io``: computation
    bursts per I/O burst; ``c``: synchronisation group size; ``g_exponent``:
    a in g(p) = p ** -a, (r - 1)/r for r-dimensional block data; ``sync_cost``:
    ``"harmonic"`` or ``"uniform"`` h(c).

    >>> SpmdParameters(s_par=1.0, w=1.5)
    Traceback (most recent call last):
    ...
    pevpm.errors.AnalyticError: contention level w must lie in [0, 1], got 1.5
    """

    s_par: float
    s_ser: float = 0.0
    s0_com: float = 0.0
    sr_com: float = 0.0
    s0_io: float = 0.0
    sr_io: float = 0.0
    w: float = 0.0
    n_io: float = 1.0
    c: int = 1
    g_exponent: float = 1.0
    sync_cost: str = "harmonic"

    def __post_init__(self):
        for name in TIME_PARAMETERS:
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise AnalyticError(f"time {name} must be a finite number >= 0, got {value!r}")
        if self.s_par + self.s_ser <= 0:
            raise AnalyticError("the CPU burst needs work: s_par + s_ser must be positive")
        if not (0.0 <= self.w <= 1.0):
            raise AnalyticError(f"contention level w must lie in [0, 1], got {self.w}")
        if not (math.isfinite(self.n_io) and self.n_io > 0):
            raise AnalyticError(f"n_io (bursts per I/O burst) must be positive, got {self.n_io}")
        if isinstance(self.c, bool) or int(self.c) != self.c or self.c < 1:
            raise AnalyticError(f"synchronisation level c must be an integer >= 1, got {self.c}")
        if not (math.isfinite(self.g_exponent) and self.g_exponent >= 0):
            raise AnalyticError(f"g_exponent must be >= 0, got {self.g_exponent}")
        if self.sync_cost not in SYNC_COSTS:
            raise AnalyticError(f"sync_cost must be one of {', '.join(SYNC_COSTS)}, "
                                f"got {self.sync_cost!r}")
        object.__setattr__(self, "c", int(self.c))

    def replace(self, **changes) -> SpmdParameters:
        """A copy with some fields changed (validated again)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise AnalyticError(f"unknown SPMD parameter(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    @property
    def reference_time(self) -> float:
        """T1 of eq. (1): one cycle on one processor and one disk, seconds."""
        return (self.s_par + self.s_ser) * self.n_io + self.s0_io + self.sr_io


QCRD_TABLE4 = SpmdParameters(
    s_par=0.71, s_ser=0.0, s0_com=0.049, sr_com=0.41, s0_io=0.0, sr_io=0.001,
    w=0.19, n_io=1.0, c=1, g_exponent=1.0,
)
"""QCRD stage 2 (paper's Table 4, BUS-AIO, c = 1, g = 1/p): times relative to T1 with n_io = 1."""


def sync_cost(c, kind: str = "harmonic") -> np.ndarray:
    """h(c): mean of the slowest of c CPU bursts relative to one burst, eqs. (5-6).

    >>> float(sync_cost(3)), float(sync_cost(3, "uniform"))
    (1.8333333333333333, 1.5)
    """
    c = np.asarray(c, dtype=float)
    if kind == "uniform":
        return 2.0 * c / (c + 1.0)
    if kind == "harmonic":
        harmonic = np.cumsum(1.0 / np.arange(1, int(c.max()) + 1))
        return harmonic[c.astype(int) - 1]
    raise AnalyticError(f"unknown synchronisation cost {kind!r}")


def comm_scale(p, exponent: float) -> np.ndarray:
    """g(p) = p ** -exponent for p > 1, and g(1) = 0 (no communication on one processor).

    >>> comm_scale([1, 2, 4], 1.0).tolist()
    [0.0, 0.5, 0.25]
    """
    """g(p) = p ** -exponent for p > 1, and g(1) = 0 by definition (eq. 7)."""
    p = np.asarray(p, dtype=float)
    return np.where(p > 1, p ** -float(exponent), 0.0)


def _grid(model: str, params: SpmdParameters, p, d) -> tuple[np.ndarray, np.ndarray]:
    if model not in MODELS:
        raise AnalyticError(f"unknown SPMD model {model!r}; choose one of {', '.join(MODELS)}")
    if params.sync_cost != "harmonic" and model != "sio":
        raise AnalyticError("the uniform h(c) applies to the SIO model only: the queueing "
                            "networks of the AIO models assume exponential CPU bursts")
    p_arr, d_arr = np.broadcast_arrays(np.asarray(p), np.asarray(d))
    for name, values in (("processor count p", p_arr), ("disk count d", d_arr)):
        if np.any(values < 1) or np.any(values != np.round(values)):
            raise AnalyticError(f"{name} must be a positive integer, got {values.tolist()}")
    p_arr, d_arr = p_arr.astype(np.int64), d_arr.astype(np.int64)
    c = params.c
    if np.any(c > p_arr):
        raise AnalyticError(f"synchronisation level c = {c} exceeds processor count "
                            f"p = {int(p_arr.min())}")
    bad = p_arr % c != 0
    if np.any(bad):
        raise AnalyticError(f"p = {int(p_arr[bad].flat[0])} is not a multiple of c = {c}")
    if model == "clu-aio":
        bad = (p_arr // c) % d_arr != 0
        if np.any(bad):
            pb, db = int(p_arr[bad].flat[0]), int(d_arr[bad].flat[0])
            raise AnalyticError(f"CLU-AIO needs p/c to be a multiple of d: p/c = {pb // c} "
                                f"and d = {db} (p = {pb}, c = {c})")
    return p_arr, d_arr


def _delay_and_queue(params: SpmdParameters, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z of eq. (15) and S_queue of eq. (9) for each processor count."""
    g = comm_scale(p, params.g_exponent)
    h = sync_cost(params.c, params.sync_cost)
    z = h * (params.s_par / p + params.s_ser) + params.s0_com + (1 - params.w) * g * params.sr_com
    return z, params.w * g * params.sr_com


def _sio(param_sets: list[SpmdParameters], p: np.ndarray, d: np.ndarray):
    groups = p // param_sets[0].c
    unique, inverse = np.unique(groups, return_inverse=True)
    z, s_queue = (np.array(v) for v in zip(*(_delay_and_queue(params, unique * params.c)
                                              for params in param_sets)))  # (sets, groups)
    r1 = single_class_trajectory(np.stack([s_queue, z], axis=-1), [False, True],
                                 int(unique.max()))[..., 0]  # (population, sets, groups)
    i = np.arange(1, r1.shape[0] + 1)[:, None, None]
    terms = np.where(i <= unique, (z + r1) / i, 0.0)
    n_io = np.array([params.n_io for params in param_sets])[:, None]
    compute = (n_io * terms.sum(axis=0))[:, inverse.ravel()].reshape((-1,) + p.shape)
    io = np.array([params.s0_io + params.sr_io / d for params in param_sets])
    return compute, io


def _bus_aio(param_sets: list[SpmdParameters], p: np.ndarray, d: np.ndarray):
    groups = (p // param_sets[0].c).ravel()
    demands = []
    for params in param_sets:
        z, s_queue = _delay_and_queue(params, p.ravel())
        t_io = params.s0_io + params.sr_io / d.ravel() / groups
        demands.append(np.stack([z * params.n_io, s_queue * params.n_io, t_io], axis=-1))
    trajectory = single_class_trajectory(np.array(demands), [True, False, False],
                                         int(groups.max()))  # (population, sets, points, 3)
    residence = trajectory[groups - 1, :, np.arange(groups.size)].transpose(1, 0, 2)
    shape = (len(param_sets),) + p.shape
    return (residence[..., 0] + residence[..., 1]).reshape(shape), residence[..., 2].reshape(shape)


def clu_aio_network(params: SpmdParameters, p: int, d: int) -> tuple[np.ndarray, np.ndarray, list]:
    """The CLU-AIO network as a generic multiclass network (for any MVA solver).

    Returns the (d + 2) x d demand matrix G of sec. 4.3 (rows 0..d-1 the
    disks, class j using disk j only; row d the shared communication queue;
    row d + 1 the CPU/communication delay), the delay flags and the
    population vector (p/(c d), ..., p/(c d)).

    >>> demands, is_delay, population = clu_aio_network(QCRD_TABLE4, 16, 2)
    >>> demands.shape, is_delay.tolist(), population
    ((4, 2), [False, False, False, True], [8, 8])
    """
    p_arr, _ = _grid("clu-aio", params, p, d)
    p = int(p_arr)
    z, s_queue = _delay_and_queue(params, np.asarray(float(p)))
    groups = p // params.c
    demands = np.zeros((d + 2, d))
    demands[np.arange(d), np.arange(d)] = params.s0_io + params.sr_io / groups
    demands[d] = s_queue * params.n_io
    demands[d + 1] = z * params.n_io
    is_delay = [False] * (d + 1) + [True]
    return demands, np.array(is_delay), [groups // d] * d


def _log_power(base: float, exponents: np.ndarray) -> np.ndarray:
    """log(base ** e) elementwise with 0 ** 0 = 1."""
    exponents = np.asarray(exponents, dtype=float)
    if base > 0:
        return exponents * math.log(base)
    return np.where(exponents > 0, -np.inf, 0.0)


def _log_factorial(n) -> np.ndarray:
    from scipy.special import gammaln  # here, so `pevpm analytic --help` stays light

    return gammaln(np.asarray(n, dtype=float) + 1.0)


def symmetric_cluster_times(jobs: int, classes: int, disk: float, queue: float, delay: float):
    """Exact per-cycle times of the symmetric CLU-AIO network, by normalising constants.

    ``classes`` identical classes of ``jobs`` jobs each; class j visits its
    own disk (demand ``disk``), one queue shared by all classes (``queue``)
    and a delay (``delay``). The product form makes the classes interact
    only through the shared queue, whose factor B!/prod(b_j!) turns the
    normalising constant into ``G = sum_B B! queue^B [x^B] prod_j U_j(x)``
    with ``U(x) = sum_b F(jobs - b) x^b / b!`` and ``F(m) = sum_a disk^a
    delay^(m-a) / (m-a)!``. Then, for class 1, ``X = G(n - e_1)/G(n)`` and
    the mean disk queue is ``sum_m disk^m G(n - m e_1)/G(n)``. Everything is
    computed in logarithms, so p = 1024, d = 64 takes milliseconds and is
    exact (exact MVA would need (jobs + 1) ** classes population vectors).
    Returns (time at the queue plus delay, time at the disk) per cycle.

    >>> [round(t, 12) for t in symmetric_cluster_times(1, 2, 1.0, 1.0, 1.0)]
    [2.333333333333, 1.0]
    """
    if int(jobs) != jobs or jobs < 1 or int(classes) != classes or classes < 1:
        raise AnalyticError(f"need integer jobs >= 1 and classes >= 1, got {jobs}, {classes}")
    if min(disk, queue, delay) < 0 or not all(map(math.isfinite, (disk, queue, delay))):
        raise AnalyticError("demands must be finite and non-negative")
    if delay + queue + disk <= 0:
        raise AnalyticError("the network needs a positive total demand")
    jobs, classes = int(jobs), int(classes)
    m = np.arange(jobs + 1)
    # log F(m) for m = 0..jobs: the disk plus delay share of one class with m jobs.
    log_f = np.array([np.logaddexp.reduce(_log_power(disk, np.arange(v + 1))
                                          + _log_power(delay, v - np.arange(v + 1))
                                          - _log_factorial(v - np.arange(v + 1)))
                      for v in m])

    def log_u(population: int) -> np.ndarray:
        b = np.arange(population + 1)
        return log_f[population - b] - _log_factorial(b)

    others = np.array([0.0])  # log coefficients of U_jobs(x) ** (classes - 1)
    u_full = log_u(jobs)
    for _ in range(classes - 1):
        product = np.full(others.size + jobs, -np.inf)
        for i, term in enumerate(u_full):
            product[i:i + others.size] = np.logaddexp(product[i:i + others.size], term + others)
        others = product
    j = np.arange(others.size)
    # V_i = sum_j (i+j)! queue^(i+j) q_j, so that G(n - m e_1) = sum_i u_{jobs-m}(i) V_i.
    v = np.array([np.logaddexp.reduce(_log_factorial(i + j) + _log_power(queue, i + j) + others)
                  for i in m])
    log_g = np.array([np.logaddexp.reduce(log_u(jobs - k) + v[: jobs - k + 1]) for k in m])
    throughput = math.exp(log_g[1] - log_g[0])
    disk_jobs = float(np.sum(np.exp(_log_power(disk, m[1:]) + log_g[1:] - log_g[0])))
    cycle = jobs / throughput
    return cycle - disk_jobs / throughput, disk_jobs / throughput


def _clu_aio(param_sets: list[SpmdParameters], p: np.ndarray, d: np.ndarray):
    compute = np.empty((len(param_sets),) + p.shape)
    io = np.empty_like(compute)
    for k, params in enumerate(param_sets):
        for index in np.ndindex(p.shape):
            pi, di = int(p[index]), int(d[index])
            groups = pi // params.c
            z, s_queue = _delay_and_queue(params, np.asarray(float(pi)))
            compute[(k, *index)], io[(k, *index)] = symmetric_cluster_times(
                groups // di, di, params.s0_io + params.sr_io / groups,
                float(s_queue) * params.n_io, float(z) * params.n_io)
    return compute, io


_SOLVERS = {"sio": _sio, "bus-aio": _bus_aio, "clu-aio": _clu_aio}


def burst_times(model: str, params: SpmdParameters, p, d) -> tuple[np.ndarray, np.ndarray]:
    """Per-cycle times (T_CPU + T_COM, T_IO), seconds, broadcast over p and d.

    >>> compute, io = burst_times("bus-aio", QCRD_TABLE4, 64, 8)
    >>> round(float(compute), 5), float(io) < 1e-5
    (0.07956, True)
    """
    p_arr, d_arr = _grid(model, params, p, d)
    compute, io = _SOLVERS[model]([params], p_arr, d_arr)
    return compute[0], io[0]


def speedup(model: str, params: SpmdParameters, p, d) -> np.ndarray:
    """s(p, d) of eq. (3), broadcast over p and d.

    >>> speedup("sio", SpmdParameters(s_par=1.0), [1, 2], 1).round(4).tolist()
    [1.0, 1.3333]
    """
    return speedups(model, [params], p, d)[0]


def speedups(model: str, param_sets: list[SpmdParameters], p, d) -> np.ndarray:
    """s(p, d) for several parameter sets at once, shape (sets, ...broadcast p, d...).

    The sets must share ``c`` and ``sync_cost``; SIO and BUS-AIO solve them
    all in one vectorised MVA pass (this is what makes fitting fast).

    >>> speedups("bus-aio", [QCRD_TABLE4, QCRD_TABLE4.replace(w=0.5)], 64, 8).round(4).tolist()
    [8.9362, 3.4683]
    """
    first = param_sets[0]
    if any((q.c, q.sync_cost) != (first.c, first.sync_cost) for q in param_sets):
        raise AnalyticError("parameter sets solved together must share c and sync_cost")
    p_arr, d_arr = _grid(model, first, p, d)
    compute, io = _SOLVERS[model](list(param_sets), p_arr, d_arr)
    t1 = np.array([q.reference_time for q in param_sets]).reshape((-1,) + (1,) * p_arr.ndim)
    return t1 / (compute + io)


def speedup_surface(model: str, params: SpmdParameters, p_values, d_values) -> np.ndarray:
    """Speedup on the grid p_values x d_values, shape (len(p_values), len(d_values)).

    >>> speedup_surface("bus-aio", QCRD_TABLE4, [16, 64], [1, 8]).round(3).tolist()
    [[5.689, 5.691], [8.936, 8.936]]
    """
    p_grid, d_grid = np.meshgrid(np.asarray(p_values), np.asarray(d_values), indexing="ij")
    return speedup(model, params, p_grid, d_grid)


def _closed_form(population: int, x: float, others: list[float], z: float) -> float:
    """x sum (e1+1) W / sum W over e1 + ... + e_last = population - 1 (eqs. 17, 22)."""
    if int(population) != population or population < 1:
        raise AnalyticError(f"population must be an integer >= 1, got {population}")
    n = int(population) - 1
    parts = 2 + len(others)
    exps = np.array(list(compositions(n, parts)), dtype=float)
    bases = np.array([x, *others, z], dtype=float)
    log_w = sum(_log_power(base, exps[:, j]) for j, base in enumerate(bases))
    log_w = log_w - _log_factorial(exps[:, -1])
    weights = np.exp(log_w - log_w.max())
    return float(x * np.dot(exps[:, 0] + 1, weights) / weights.sum())


def closed_form_r1(i: int, z: float, x: float) -> float:
    """R1(i, z, x) of eq. (17): time at a queue x shared by i jobs that also visit a delay z.

    >>> closed_form_r1(2, 1.0, 1.0)
    1.5
    """
    return _closed_form(i, x, [], z)


def closed_form_r2(i: int, z: float, x: float, y: float) -> float:
    """R2(i, z, x, y) of eq. (22): time at queue x in a network with delay z and queues x, y.

    >>> round(closed_form_r2(3, 1.0, 0.5, 0.25), 6)
    0.833333
    """
    return _closed_form(i, x, [y], z)
