"""The busiest network links of a run, and what they slowed (``predict --explain``).

A :class:`LinkTally` given to :func:`pevpm.vm.kernel.engine.simulate` hears of every
message between two ranks when its time is drawn; it counts, per link of
the message's route, the messages, bytes and seconds in transit, and charges
the time the message *waited* for others to one link, the one that held it
back:

* on a synthetic network (links with bandwidths, the flow model): the
  seconds its bytes took beyond what the route's slowest link alone would
  take, charged to the route's link whose bandwidth was most used when it
  started;
* on a measured switch (the contention scoreboard): ``(1 - 1/c)`` of its
  transfer time at contention level ``c`` (the share a bandwidth divided
  ``c`` ways adds), charged to the link that set the level.

Each link also keeps the waiting by the place in the model that sent the
messages (``jacobi.c:12:9``, a collective's call), so a report can say which
part of the run a link slowed.  :meth:`LinkTally.busiest` ranks the links
by time waited, then by use.

>>> tally = LinkTally(["up 0", "backplane"], [1, 1], None)
>>> tally.add((0, 1), 1024, 2e-3, waited=1e-3, culprit=1, where="m.c:3:5")
>>> [use.row() for use in tally.busiest(makespan=4e-3)]
[('backplane', '50%', 1, 1024, '1.000 ms', 'm.c:3:5'), ('up 0', '50%', 1, 1024, '0.000 ms', '-')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Links a report names.
SHOWN = 5


@dataclass(frozen=True)
class LinkUse:
    """One link over a run: its ``name``, ``utilisation`` (bytes over what its
    bandwidth could carry in the run, or on a measured switch the mean
    messages in transit per unit of capacity), ``messages``, ``bytes``,
    ``waited`` (seconds messages waited on it) and ``slowed`` (the place
    whose messages waited most on it, None when none waited)."""

    name: str
    utilisation: float
    messages: int
    bytes: int
    waited: float
    slowed: str | None

    def row(self) -> tuple[str, str, int, int, str, str]:
        """The table row: link, utilisation, messages, bytes, time waited, place slowed."""
        return (self.name, f"{self.utilisation:.0%}", self.messages, self.bytes,
                f"{self.waited * 1e3:.3f} ms", self.slowed or "-")

    def to_dict(self) -> dict:
        """Plain data for JSON and the HTML report."""
        return {"link": self.name, "utilisation": self.utilisation, "messages": self.messages,
                "bytes": self.bytes, "waited": self.waited, "slowed": self.slowed}


class LinkTally:
    """Per-link totals of one run: ``names`` and ``capacities`` of the links,
    ``bandwidth`` (bytes/s per link, None on a measured switch)."""

    def __init__(self, names: Sequence[str], capacities: Sequence[int],
                 bandwidth: Sequence[float] | None):
        self.names, self.capacities = list(names), list(capacities)
        self.bandwidth = None if bandwidth is None else list(bandwidth)
        n = len(self.names)
        self.messages, self.bytes = [0] * n, [0] * n
        self.busy, self.waited = [0.0] * n, [0.0] * n
        self.places: list[dict[str, float]] = [{} for _ in range(n)]

    def add(self, route: Sequence[int], size: int, seconds: float, waited: float,
            culprit: int, where: str) -> None:
        """A message of ``size`` bytes in transit ``seconds`` on ``route``, which
        waited ``waited`` seconds on link ``culprit``, sent at ``where``."""
        for link in route:
            self.messages[link] += 1
            self.bytes[link] += size
            self.busy[link] += seconds
        if waited > 0:
            self.waited[culprit] += waited
            places = self.places[culprit]
            places[where] = places.get(where, 0.0) + waited

    def message(self, engine, send, contention: int, data: float) -> None:
        """What the reference engine reports of a drawn message (``data``: its
        seconds in the flow model, 0 outside it)."""
        placement = engine.placement
        route = placement.route(send.src, send.dst)
        if engine.network is not None and data > 0:
            slowest = min(self.bandwidth[k] for k in route)
            waited = data - send.size / slowest
            culprit = max(route, key=lambda k: engine.network.load(k, send.posted))
        else:
            waited = send.transfer * (1 - 1 / contention)
            culprit = engine.scoreboard.busiest(route)
        self.add(route, send.size, send.transfer, waited, culprit, send.where)

    def busiest(self, makespan: float, shown: int = SHOWN) -> list[LinkUse]:
        """The ``shown`` links messages waited on longest (then the most used)."""
        uses = []
        for k, name in enumerate(self.names):
            if not self.messages[k]:
                continue
            if self.bandwidth is not None:
                utilisation = self.bytes[k] / (self.bandwidth[k] * makespan)
            else:
                utilisation = self.busy[k] / (self.capacities[k] * makespan)
            places = self.places[k]
            slowed = max(places, key=places.get) if places else None
            uses.append(LinkUse(name, utilisation if makespan > 0 else 0.0, self.messages[k],
                                self.bytes[k], self.waited[k], slowed))
        uses.sort(key=lambda u: (-u.waited, -u.utilisation, u.name))
        return uses[:shown]


def format_links(uses: list[LinkUse], describe: str) -> str:
    """The busiest-links table under its topology line.

    >>> print(format_links([LinkUse("up 0", 0.5, 3, 24, 1e-3, "m.c:3:5")], "one switch"))
      network: one switch
      link                  use  messages        bytes      waited  slowed most
      up 0                  50%         3           24    1.000 ms  m.c:3:5
    """
    lines = [f"  network: {describe}",
             f"  {'link':<18} {'use':>6} {'messages':>9} {'bytes':>12} {'waited':>11}  slowed most"]
    for use in uses:
        name, utilisation, messages, nbytes, waited, slowed = use.row()
        lines.append(f"  {name:<18} {utilisation:>6} {messages:>9} {nbytes:>12} {waited:>11}  "
                     f"{slowed}")
    if not uses:
        lines.append("  (no message crossed a link)")
    return "\n".join(lines)
