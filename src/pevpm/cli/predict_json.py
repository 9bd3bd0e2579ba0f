"""What ``pevpm predict --json`` writes for one rank count.

By default every rank's summary (its compute, communication and waiting time,
its finish) and every collective *call site* once: how many calls it made,
their spread between the first and the last rank to complete, and the first
and last completion.  ``--json-full`` writes :meth:`Prediction.to_dict` whole:
each call of each collective with every rank's completion time, which is
megabytes for a loop of collectives on 1,024 ranks.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.machine.presets import parse_machine
>>> from pevpm.vm.strategies.montecarlo import predict
>>> b = ModelBuilder()
>>> with b.loop(3):
...     b.serial("1e-3 * (procnum + 1)")
...     b.collective("MPI_Barrier")
>>> p = predict(b.build(), 2, parse_machine("constant:latency=0"), runs=2, workers=1)
>>> [(s["op"], s["calls"], s["spread"], s["last"]) for s in prediction_entry(p)["collectives"]]
[('MPI_Barrier', 3, 0.0, 0.006)]
>>> len(prediction_entry(p, full=True)["collectives"])
3
"""

from __future__ import annotations

from dataclasses import replace


def prediction_entry(prediction, full: bool = False) -> dict:
    """``prediction`` as plain data: its collectives by call site, or (``full``) by call
    with every rank's completion time."""
    if full:
        return prediction.to_dict()
    entry = replace(prediction, collectives=()).to_dict()
    entry["collectives"] = collective_sites(prediction.collectives)
    return entry


def collective_sites(collectives) -> list[dict]:
    """One entry per collective call site (operation and place), in the order the
    sites were first reached: ``calls``, the most ``runs`` a call was in, ``spread``
    (mean over calls of the mean gap between the first and last rank to complete),
    ``spread_max`` (the widest call's), ``first`` and ``last`` (the earliest and
    latest mean completion of any rank in any call)."""
    sites: dict[tuple, dict] = {}
    for c in collectives:
        first, last = float(c.mean_completion.min()), float(c.mean_completion.max())
        site = sites.get((c.op, c.where))
        if site is None:
            sites[(c.op, c.where)] = {"op": c.op, "where": c.where, "calls": 1, "runs": c.runs,
                                      "spread": c.spread, "spread_max": c.spread,
                                      "first": first, "last": last}
            continue
        site["calls"] += 1
        site["runs"] = max(site["runs"], c.runs)
        site["spread"] += c.spread
        site["spread_max"] = max(site["spread_max"], c.spread)
        site["first"], site["last"] = min(site["first"], first), max(site["last"], last)
    for site in sites.values():
        site["spread"] /= site["calls"]
    return list(sites.values())
