"""Reference solution of a small closed network as a continuous-time Markov chain.

Independent of MVA: the state is the number of jobs of each class at each
station, service is exponential (queues share their server equally among
the jobs present, delays serve everyone at once), each class visits the
stations where its demand is positive once per cycle in station order, and
the stationary distribution comes from a dense linear solve. Only for small
populations (the state space grows combinatorially); used to check the
MVA solvers.

>>> r = solve_ctmc([[1.0], [2.0]], [False, True], [3])
>>> round(float(r.throughput[0]), 6)
0.789474
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from pevpm.analytic.mva import MVAResult, _check_network
from pevpm.errors import AnalyticError

MAX_STATES = 2_000
"""Largest state space solved (dense generator: 2000 states take 32 MB)."""


def compositions(total: int, parts: int):
    """All tuples of ``parts`` non-negative integers summing to ``total``.

    >>> list(compositions(2, 2))
    [(0, 2), (1, 1), (2, 0)]
    """
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1,) + bars + (total + parts - 1,)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(parts))


def solve_ctmc(demands, is_delay, population) -> MVAResult:
    """Mean throughputs, residence times and queue lengths from the exact CTMC."""
    d, delay, pop = _check_network(demands, is_delay, population)
    n_stations, n_classes = d.shape
    routes = [np.flatnonzero(d[:, c] > 0) for c in range(n_classes)]
    size = math.prod(math.comb(int(pop[c]) + len(routes[c]) - 1, len(routes[c]) - 1)
                     for c in range(n_classes))
    if size > MAX_STATES:
        raise AnalyticError(f"CTMC has {size} states, more than {MAX_STATES}")
    per_class = [list(compositions(int(pop[c]), len(routes[c]))) for c in range(n_classes)]
    states = list(itertools.product(*per_class))
    index = {state: i for i, state in enumerate(states)}

    def occupancy(state) -> np.ndarray:
        jobs = np.zeros((n_stations, n_classes))
        for c, counts in enumerate(state):
            jobs[routes[c], c] = counts
        return jobs

    generator = np.zeros((len(states), len(states)))
    completions = np.zeros((len(states), n_classes))  # class-c departures from its first station
    occupancies = np.array([occupancy(s) for s in states])
    for i, state in enumerate(states):
        jobs = occupancies[i]
        for c in range(n_classes):
            route = routes[c]
            for pos, k in enumerate(route):
                if jobs[k, c] == 0:
                    continue
                share = 1.0 if delay[k] else 1.0 / jobs[k].sum()
                rate = jobs[k, c] * share / d[k, c]
                counts = list(state[c])
                counts[pos] -= 1
                counts[(pos + 1) % len(route)] += 1
                target = index[state[:c] + (tuple(counts),) + state[c + 1 :]]
                generator[i, target] += rate
                generator[i, i] -= rate
                if pos == 0:
                    completions[i, c] += rate
    system = generator.T.copy()
    system[-1, :] = 1.0
    rhs = np.zeros(len(states))
    rhs[-1] = 1.0
    prob = np.linalg.solve(system, rhs)
    throughput = prob @ completions
    queue_length = np.tensordot(prob, occupancies, axes=1)
    safe = np.where(throughput > 0, throughput, 1.0)
    residence = np.where(throughput > 0, queue_length / safe, 0.0)
    return MVAResult(throughput, residence, queue_length, "ctmc")
