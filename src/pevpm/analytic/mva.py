"""Mean value analysis of closed product-form queueing networks.

A network has K stations and C job classes. ``demands[k, c]`` is the total
service a class-c job needs from station k per cycle (visits x service
time, seconds). A station is either a *delay* (infinite server: no
queueing) or a *queue* (one server, processor sharing or FCFS with
class-independent service). ``population[c]`` jobs of class c circulate.

Three solvers, one entry point:

- :func:`single_class_trajectory` - exact MVA for one class, vectorised over
  a batch of networks, returning every population 1..N (O(N K)).
- :func:`exact_multiclass` - exact multiclass MVA over all population
  vectors 0 <= n <= N (cost proportional to prod(N_c + 1)).
- :func:`schweitzer_bard` - the approximate Schweitzer/Bard fixed point,
  cost independent of the population size.

:func:`solve_closed_network` picks the single-class recursion for C = 1,
exact multiclass MVA while the number of population vectors prod(N_c + 1)
is at most ``max_exact_vectors`` (default :data:`MAX_EXACT_VECTORS`), and
Schweitzer/Bard beyond; the result says which method ran.

>>> result = solve_closed_network([[1.0], [2.0]], [False, True], [3])
>>> result.method, round(float(result.throughput[0]), 6)
('exact', 0.789474)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pevpm.errors import AnalyticError

MAX_EXACT_VECTORS = 20_000
"""Largest number of population vectors prod(N_c + 1) solved by exact multiclass MVA."""


@dataclass(frozen=True)
class MVAResult:
    """Steady-state means of a closed network.

    ``throughput[c]``: class-c cycles per second; ``residence[k, c]``:
    seconds a class-c job spends at station k per cycle (queueing included);
    ``queue_length[k, c]``: mean number of class-c jobs at station k;
    ``method``: ``"exact"`` or ``"schweitzer"``.

    >>> r = exact_multiclass([[1.0, 0.5], [2.0, 1.0]], [False, True], [2, 1])
    >>> r.method, r.throughput.round(6).tolist(), r.queue_length.shape
    ('exact', [0.526316, 0.526316], (2, 2))
    """

    throughput: np.ndarray
    residence: np.ndarray
    queue_length: np.ndarray
    method: str

    @property
    def cycle_time(self) -> np.ndarray:
        """Mean time for a job of each class to complete one cycle, seconds."""
        return self.residence.sum(axis=0)


def _check_network(demands, is_delay, population) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = np.asarray(demands, dtype=float)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2 or d.shape[0] == 0 or d.shape[1] == 0:
        raise AnalyticError("demands must be a (stations x classes) matrix")
    if np.any(~np.isfinite(d)) or np.any(d < 0):
        raise AnalyticError("service demands must be finite and non-negative")
    delay = np.asarray(is_delay, dtype=bool).reshape(-1)
    if delay.shape != (d.shape[0],):
        raise AnalyticError(f"is_delay needs one flag per station ({d.shape[0]})")
    pop = np.asarray(population).reshape(-1)
    if pop.shape != (d.shape[1],):
        raise AnalyticError(f"population needs one count per class ({d.shape[1]})")
    if np.any(pop < 0) or np.any(pop != np.round(pop)):
        raise AnalyticError(f"populations must be non-negative integers, got {pop.tolist()}")
    pop = pop.astype(np.int64)
    if np.any(d[:, pop > 0].sum(axis=0) <= 0):
        raise AnalyticError("every class with jobs needs a positive total demand")
    return d, delay, pop


def single_class_trajectory(demands, is_delay, max_population: int) -> np.ndarray:
    """Exact single-class MVA for populations 1..N, batched over networks.

    ``demands`` has shape (..., K); the leading axes index independent
    networks sharing the station kinds ``is_delay`` (K,). Returns the
    residence times, shape (N, ..., K): entry [n - 1] is the network with n
    jobs. Throughput at population n is ``n / residence[n - 1].sum(-1)``.

    >>> single_class_trajectory([1.0, 1.0], [False, True], 2)[:, 0].tolist()
    [1.0, 1.5]
    """
    d = np.asarray(demands, dtype=float)
    queue = ~np.asarray(is_delay, dtype=bool)
    if d.shape[-1:] != queue.shape:
        raise AnalyticError("demands' last axis must have one entry per station")
    out = np.empty((max_population,) + d.shape)
    out[..., ~queue] = d[..., ~queue]
    think = d[..., ~queue].sum(axis=-1)
    service = d[..., queue]
    queue_len = np.zeros(service.shape)
    for n in range(1, max_population + 1):
        residence = service * (1.0 + queue_len)
        out[n - 1][..., queue] = residence
        queue_len = (n / (think + residence.sum(axis=-1)))[..., None] * residence
    return out


def exact_multiclass(demands, is_delay, population) -> MVAResult:
    """Exact multiclass MVA (Reiser-Lavenberg) over every population vector.

    Visits the prod(N_c + 1) vectors in lexicographic order, so each
    ``n - e_c`` is solved before ``n``. Only the total queue length per
    station is stored for each vector.

    Two classes sharing a queue (station 0) and a delay (station 1):

    >>> r = exact_multiclass([[1.0, 0.5], [2.0, 1.0]], [False, True], [2, 1])
    >>> r.cycle_time.round(4).tolist()
    [3.8, 1.9]
    """
    d, delay, pop = _check_network(demands, is_delay, population)
    queue = ~delay
    n_stations, n_classes = d.shape
    shape = tuple(int(x) + 1 for x in pop)
    strides = np.array([int(np.prod(shape[c + 1 :])) for c in range(n_classes)])
    total_queue = np.zeros((int(np.prod(shape)), n_stations))
    residence = np.zeros_like(d)
    throughput = np.zeros(n_classes)
    for index, vector in enumerate(np.ndindex(*shape)):
        n = np.array(vector)
        active = np.flatnonzero(n)
        if active.size == 0:
            continue
        seen = total_queue[index - strides[active]].T  # (K, active): queue left behind
        residence = np.zeros_like(d)
        residence[:, active] = np.where(queue[:, None], d[:, active] * (1.0 + seen), d[:, active])
        throughput = np.zeros(n_classes)
        throughput[active] = n[active] / residence[:, active].sum(axis=0)
        total_queue[index] = residence @ throughput
    return MVAResult(throughput, residence, residence * throughput, "exact")


def schweitzer_bard(demands, is_delay, population, tol: float = 1e-12, max_iter: int = 100_000):
    """Approximate MVA: Schweitzer/Bard's fixed point, cost independent of N.

    An arriving class-c job is assumed to see the queue lengths of the full
    population with its own class reduced by one job in proportion,
    ``Q_k(n - e_c) ~ Q_k(n) - Q_kc(n) / N_c``. Iterates until the largest
    change in any queue length is below ``tol`` jobs.

    Against the exact answer (0.789474 cycles/s) of the module example:

    >>> r = schweitzer_bard([[1.0], [2.0]], [False, True], [3])
    >>> r.method, round(float(r.throughput[0]), 6)
    ('schweitzer', 0.75)
    """
    d, delay, pop = _check_network(demands, is_delay, population)
    queue = ~delay[:, None]
    pop_f = pop.astype(float)
    has_jobs = pop > 0
    safe_pop = np.where(has_jobs, pop_f, 1.0)
    visited = d > 0
    q = np.where(visited, pop_f / np.maximum(visited.sum(axis=0), 1), 0.0)
    for _ in range(max_iter):
        seen = q.sum(axis=1, keepdims=True) - q / safe_pop
        residence = np.where(queue, d * (1.0 + seen), d)
        throughput = np.where(has_jobs, pop_f / residence.sum(axis=0), 0.0)
        q_new = residence * throughput
        if np.max(np.abs(q_new - q)) < tol:
            return MVAResult(throughput, residence * has_jobs, q_new, "schweitzer")
        q = q_new
    raise AnalyticError(f"Schweitzer/Bard MVA did not converge in {max_iter} iterations")


def solve_closed_network(demands, is_delay, population, max_exact_vectors: int = MAX_EXACT_VECTORS):
    """Solve a closed network, exactly when affordable, approximately otherwise.

    One class: exact recursion. Several classes: exact multiclass MVA if
    prod(N_c + 1) <= ``max_exact_vectors``, else :func:`schweitzer_bard`.

    >>> r = solve_closed_network([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]],
    ...                          [False, False, True], [1, 1])
    >>> r.method, r.cycle_time.tolist()
    ('exact', [3.0, 3.0])
    """
    d, delay, pop = _check_network(demands, is_delay, population)
    if d.shape[1] == 1:
        n = int(pop[0])
        if n == 0:
            zeros = np.zeros_like(d)
            return MVAResult(np.zeros(1), zeros, zeros, "exact")
        residence = single_class_trajectory(d[:, 0], delay, n)[-1][:, None]
        throughput = n / residence.sum(axis=0)
        return MVAResult(throughput, residence, residence * throughput, "exact")
    vectors = float(np.prod(pop.astype(float) + 1.0))
    if vectors <= max_exact_vectors:
        return exact_multiclass(d, delay, pop)
    return schweitzer_bard(d, delay, pop)
