"""Which profile block served which messages, and which links held them up:
``pevpm predict --explain``.

:func:`explain_network` runs a model once on the reference engine with its
machine's profile communication model wrapped by a recorder, and groups
every time drawn by what served it: the kind of time (a message's transfer
or a send's local completion), the MPI operation, whether it was a
bidirectional exchange, and the profile block (test and ``n x p`` placement,
marked when that placement was oversubscribed).  Each :class:`BlockUse` says
how many messages it served, their size range and the contention they met.
The same run tallies the network's links (:mod:`pevpm.vm.kernel.links`): the
busiest, what they carried, how long messages waited on them and where in
the model.  :func:`explain` gives the blocks alone.

>>> from pevpm.model.builder import ModelBuilder
>>> from pevpm.machine.presets import parse_machine
>>> b = ModelBuilder()
>>> b.sendrecv(8192, dest="(procnum + 1) % numprocs", source="(procnum + 1) % numprocs")
>>> [use.row() for use in explain(b.build(), 2, parse_machine("default"))]
[('transfer', 'MPI_Sendrecv', 'duplex', 'sendrecv 1x2', '8192', '1', 2)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from pevpm.errors import PevpmError
from pevpm.machine.machine import Machine
from pevpm.machine.transfer import Bound, Transfer
from pevpm.model.ast import Model
from pevpm.vm.kernel import engine
from pevpm.vm.kernel.links import LinkTally, LinkUse


@dataclass(frozen=True)
class BlockUse:
    """Messages one profile block served: ``kind`` (``transfer`` or ``local
    completion``), ``op``, ``duplex``, the block's ``test`` and ``nxp``
    (``oversubscribed``: more ranks than cores when measured), how many
    ``messages``, and the ranges of their sizes (bytes) and contention."""

    kind: str
    op: str
    duplex: bool
    test: str
    nxp: str
    oversubscribed: bool
    messages: int
    sizes: tuple[int, int]
    contention: tuple[int, int]

    def row(self) -> tuple[str, str, str, str, str, str, int]:
        """The table row: kind, operation, exchange, block, sizes, contention, messages."""
        def span(low, high) -> str:
            return f"{low}" if low == high else f"{low}..{high}"

        block = f"{self.test} {self.nxp}" + (" (oversubscribed)" if self.oversubscribed else "")
        return (self.kind, self.op, "duplex" if self.duplex else "one-way", block,
                span(*self.sizes), span(*self.contention), self.messages)

    def to_dict(self) -> dict:
        """Plain data for JSON and the HTML report."""
        kind, op, exchange, block, sizes, contention, messages = self.row()
        return {"kind": kind, "op": op, "exchange": exchange, "block": block, "sizes": sizes,
                "contention": contention, "messages": messages}


class _Recorder:
    """A profile communication model that tallies the block behind every draw."""

    def __init__(self, inner, tally: dict):
        self.inner, self.tally = inner, tally

    def _note(self, transfer: Transfer, local: bool) -> None:
        series = self.inner.series_for(transfer, local)
        if series is None:
            return
        key = ("local completion" if local else "transfer", transfer.op, transfer.duplex,
               series.test, series.nxp, series.oversubscribed)
        use = self.tally.get(key)
        size, level = transfer.size, transfer.contention
        if use is None:
            self.tally[key] = BlockUse(*key, 1, (size, size), (level, level))
        else:
            self.tally[key] = replace(
                use, messages=use.messages + 1,
                sizes=(min(use.sizes[0], size), max(use.sizes[1], size)),
                contention=(min(use.contention[0], level), max(use.contention[1], level)))

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        self._note(transfer, local=False)
        return self.inner.transfer_time(transfer, rng)

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        self._note(transfer, local=True)
        return self.inner.local_completion_time(transfer, rng)

    def bounded(self, which: Bound) -> _Recorder:
        return _Recorder(self.inner.bounded(which), self.tally)

    def for_placement(self, ranks_per_node: int) -> _Recorder:
        return _Recorder(self.inner.for_placement(ranks_per_node), self.tally)


#: Which engine runs an explained run, and why (``pevpm predict --explain`` prints it).
ENGINE_NOTE = ("the pure-Python engine ran the explained run: the compiled core does not "
               "tally the profile blocks and links a run uses")


@dataclass(frozen=True)
class Explanation:
    """One run explained: the profile ``blocks`` it drew from (None: the
    communication model has no blocks), its busiest ``links`` and the
    ``network`` they belong to (the placement's one-line description);
    ``engine_note`` says which engine ran it and why."""

    blocks: list[BlockUse] | None
    links: list[LinkUse]
    network: str
    engine_note: str = ENGINE_NOTE


def explain_network(model: Model, numprocs: int, machine: Machine, *,
                    params: Mapping[str, float] | None = None, seed: int = 0,
                    limits: engine.Limits | None = None) -> Explanation:
    """Run 0 of ``seed`` (as a Monte Carlo prediction makes it) on the reference
    engine, its blocks (most messages first) and busiest links."""
    from pevpm.vm.strategies.montecarlo import run_generator

    tally: dict = {}
    profiled = hasattr(machine.comm, "series_for")
    recorded = replace(machine, comm=_Recorder(machine.comm, tally)) if profiled else machine
    placement = machine.topology.place(numprocs)
    links = LinkTally(placement.link_names, placement.capacities, placement.link_bandwidth)
    run = engine.simulate(model, numprocs, recorded, params=params,
                          rng=run_generator(seed, 0), limits=limits, link_tally=links)
    blocks = sorted(tally.values(), key=lambda use: (-use.messages, use.kind, use.op, use.test,
                                                     use.nxp)) if profiled else None
    return Explanation(blocks, links.busiest(run.makespan), placement.describe())


def explain(model: Model, numprocs: int, machine: Machine, *,
            params: Mapping[str, float] | None = None, seed: int = 0,
            limits: engine.Limits | None = None) -> list[BlockUse]:
    """The profile blocks of :func:`explain_network`'s run;
    :class:`~pevpm.errors.PevpmError` when the machine's communication model
    is not a profile's."""
    if not hasattr(machine.comm, "series_for"):
        raise PevpmError(f"--explain needs a machine profile (the communication model is "
                         f"{type(machine.comm).__name__}, which has no blocks)")
    return explain_network(model, numprocs, machine, params=params, seed=seed,
                           limits=limits).blocks


def format_explanation(numprocs: int, uses: list[BlockUse]) -> str:
    """The text table of :func:`explain` for one process count.

    >>> use = BlockUse("transfer", "MPI_Send", False, "send", "1x2", False, 4, (8, 64), (1, 1))
    >>> print(format_explanation(2, [use]))
    2 ranks: profile blocks used by one run
      kind              operation       exchange  block                          sizes (B)         contention  messages
      transfer          MPI_Send        one-way   send 1x2                       8..64             1                  4
    """
    lines = [f"{numprocs} rank{'s' if numprocs != 1 else ''}: profile blocks used by one run",
             (f"  {'kind':<17} {'operation':<15} {'exchange':<9} {'block':<30} "
             f"{'sizes (B)':<17} {'contention':<11} {'messages':>8}")]
    for use in uses:
        kind, op, exchange, block, sizes, contention, messages = use.row()
        lines.append(f"  {kind:<17} {op:<15} {exchange:<9} {block:<30} {sizes:<17} "
                     f"{contention:<11} {messages:>8}")
    if not uses:
        lines.append("  (no message drew a time from the profile)")
    return "\n".join(lines)
