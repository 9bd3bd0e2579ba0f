"""DP*Graph timing graphs (Li et al.): per-node code segments plus communication edges.

Each processing node runs a sequence of code segments (seconds) and takes
part in messages; a message of n elements costs its sender
``t_send(n) = c n + k_l`` and its receiver ``t_recv(n) = c' n + k_l'``, one
linear model per MPI send mode fitted by least squares from measured
(size, time) pairs. The execution time is the largest per-node sum,
``T_exec = max_i sum_j t_i^j``. A linear model with a negative intercept
(as fitted in the paper) is clamped at zero for tiny messages.

>>> comm = {"standard": SendModeCost(LinearCost(4e-7, 0.0), LinearCost(5e-7, 0.0))}
>>> graph = TimingGraph({"0": [0.1, 0.2], "1": [0.15]},
...                     [Message("0", "1", 100_000, "standard")])
>>> [round(t, 3) for t in graph.node_times(comm).values()], round(graph.execution_time(comm), 3)
([0.34, 0.2], 0.34)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pevpm.errors import AnalyticError, PevpmError
from pevpm.values import checked_number


@dataclass(frozen=True)
class LinearCost:
    """t(n) = per_element * n + latency, seconds, for a message of n elements."""

    per_element: float
    latency: float

    def time(self, elements) -> np.ndarray | float:
        """Cost in seconds for ``elements`` (array-like), never negative."""
        t = np.maximum(self.per_element * np.asarray(elements, dtype=float) + self.latency, 0.0)
        return float(t) if t.ndim == 0 else t


@dataclass(frozen=True)
class SendModeCost:
    """Sender and receiver cost models of one send mode."""

    sender: LinearCost
    receiver: LinearCost


def fit_linear_cost(elements, times) -> LinearCost:
    """Least-squares fit of t(n) = c n + k_l to measured (n, t) pairs.

    >>> cost = fit_linear_cost([100, 200, 300], [1.5, 2.5, 3.5])
    >>> round(cost.per_element, 12), round(cost.latency, 12)
    (0.01, 0.5)
    """
    n = np.asarray(elements, dtype=float).ravel()
    t = np.asarray(times, dtype=float).ravel()
    if n.size != t.size:
        raise AnalyticError(f"{n.size} message sizes but {t.size} times")
    if np.unique(n).size < 2:
        raise AnalyticError("fitting t(n) = c n + k_l needs at least two distinct message sizes")
    if np.any(n < 0) or np.any(t < 0) or not np.all(np.isfinite(t)):
        raise AnalyticError("message sizes and times must be non-negative and finite")
    slope, intercept = np.polyfit(n, t, 1)
    return LinearCost(float(slope), float(intercept))


def fit_send_mode(elements, sender_times, receiver_times) -> SendModeCost:
    """Fit one send mode's sender and receiver models from the same message sizes.

    >>> cost = fit_send_mode([0, 100, 200], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    >>> round(cost.sender.latency, 9), round(cost.receiver.latency, 9)
    (1.0, 2.0)
    """
    return SendModeCost(fit_linear_cost(elements, sender_times),
                        fit_linear_cost(elements, receiver_times))


@dataclass(frozen=True)
class Message:
    """A communication edge: ``elements`` sent from node ``source`` to node ``dest``."""

    source: str
    dest: str
    elements: float
    mode: str = "standard"


def _time(value, what: str) -> float:
    """A segment time or message size from a graph file: a finite number >= 0
    (:func:`pevpm.values.checked_number`'s rules)."""
    try:
        number = checked_number(value, what=what)
    except PevpmError as exc:
        raise AnalyticError(exc.message) from None
    if number < 0:
        raise AnalyticError(f"{what} must be >= 0, got {number!r}"
                            + (" (a negative size)" if what.endswith("size") else ""))
    return number


@dataclass
class TimingGraph:
    """Code segments per node and the messages between nodes."""

    segments: dict[str, list[float]]
    messages: list[Message] = field(default_factory=list)

    def __post_init__(self):
        self.segments = {str(node): list(times) for node, times in self.segments.items()}
        for node, times in self.segments.items():
            self.segments[node] = [_time(t, f"node {node}: segment time") for t in times]
        for i, msg in enumerate(self.messages):
            for end in (msg.source, msg.dest):
                if str(end) not in self.segments:
                    raise AnalyticError(f"message {i}: unknown node {end!r} "
                                        f"(nodes: {', '.join(self.segments)})")
            if msg.source == msg.dest:
                raise AnalyticError(f"message {i}: node {msg.source!r} sends to itself")
            _time(msg.elements, f"message {i}: size")

    def node_times(self, comm: dict[str, SendModeCost]) -> dict[str, float]:
        """Sum of each node's segment times and its send and receive costs, seconds."""
        totals = {node: float(sum(times)) for node, times in self.segments.items()}
        for i, msg in enumerate(self.messages):
            if msg.mode not in comm:
                raise AnalyticError(f"message {i}: no cost model for send mode {msg.mode!r} "
                                    f"(have: {', '.join(comm) or 'none'})")
            cost = comm[msg.mode]
            totals[str(msg.source)] += cost.sender.time(msg.elements)
            totals[str(msg.dest)] += cost.receiver.time(msg.elements)
        for node, total in totals.items():
            if not np.isfinite(total):
                raise AnalyticError(f"node {node}: its time overflows ({total} s): its segment "
                                    "times and message costs add up past 1.8e308 s")
        return totals

    def execution_time(self, comm: dict[str, SendModeCost]) -> float:
        """T_exec = max over nodes of the node's summed times, seconds."""
        return max(self.node_times(comm).values())
