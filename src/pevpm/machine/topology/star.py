"""One switch: every node on its own full-duplex link to a shared backplane.

The thesis's switched cluster and SimGrid's flat ``<cluster>`` (a StarZone).
Links, by id: ``up k`` (0..n-1) and ``down k`` (n..2n-1), node k's link to
the switch in each direction; ``mem k`` (2n..3n-1); ``backplane`` (3n, when
the switch has one: always without figures, with SimGrid's ``bb_bw`` /
``bb_lat`` otherwise); then, with a ``limiter`` (SimGrid's
``limiter_link``), ``limiter k``, shared by node k's sends and receives.
Route between two nodes: [limiter a], up a, [backplane], down b, [limiter b].

>>> net = Star(2, backbone=False, bandwidth=125e6, latency=50e-6, limiter=150e6)
>>> [net.link_names[i] for i in net.node_route(0, 1)]
['limiter 0', 'up 0', 'down 1', 'limiter 1']
>>> net.link_bandwidth[0], net.link_latency[0]
(125000000.0, 5e-05)
"""

from __future__ import annotations

from pevpm.machine.topology.network import Network, check_size


class Star(Network):
    """``nodes`` nodes on one switch (see module doc).  Without ``bandwidth``
    the links carry no figures (the communication model prices messages) and
    the backplane carries ``backplane_capacity`` messages at full speed."""

    kind = "single switch"
    routing = "up, backplane, down"

    def __init__(self, nodes: int, *, backplane_capacity: int = 1, backbone: bool = True,
                 bandwidth: float | None = None, latency: float | None = None,
                 backbone_bandwidth: float | None = None, backbone_latency: float | None = None,
                 limiter: float | None = None, loopback_bandwidth: float | None = None,
                 loopback_latency: float | None = None, host_names: list[str] | None = None,
                 cores: int | None = None):
        check_size(nodes, 3 * nodes + 1 + (nodes if limiter is not None else 0))
        super().__init__(nodes, timed=bandwidth is not None, host_names=host_names, cores=cores)
        if not backbone:
            self.routing = "up, down"
        for direction in ("up", "down"):
            for k in range(nodes):
                self._add_link(f"{direction} {k}", latency, bandwidth)
        self._add_memory(loopback_latency, loopback_bandwidth)
        self._backplane = (self._add_link("backplane", backbone_latency, backbone_bandwidth,
                                          backplane_capacity) if backbone else None)
        self._limiter = ([self._add_link(f"limiter {k}", 0.0, limiter) for k in range(nodes)]
                         if limiter is not None else None)

    def _route(self, a: int, b: int) -> list[int]:
        n = self.nodes
        route = [a] + ([self._backplane] if self._backplane is not None else []) + [n + b]
        if self._limiter:
            route = [self._limiter[a], *route, self._limiter[b]]
        return route

    def _far_pairs(self):
        return [(0, min(1, self.nodes - 1))]

    def levels(self) -> list[str]:
        cap = self.capacities[self._backplane] if self._backplane is not None else None
        return [f"switch: {self.nodes} node links"
                + (f", backplane carrying {cap} message(s) at full speed" if cap else "")]
