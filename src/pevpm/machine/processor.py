"""Processor model: which processor each rank runs on and how fast it is.

``Serial`` times in a model are valid at a processor's *timing basis* (MHz);
a rank whose processor runs at ``speed`` MHz takes ``time * basis / speed``
(the thesis's linear-in-clock assumption).  Each rank also has a processor
id, which selects the ``Serial on <id>`` statements that apply to it.

>>> procs = ProcessorModel("perseus", speed=500.0, timing_basis=1000.0, speeds={1: 1000.0})
>>> procs.for_ranks(2, {})
(['perseus', 'perseus'], [2.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pevpm.errors import ModelError
from pevpm.model.ast import Defaults, Processor

DEFAULT_PROCESSOR = "default"


@dataclass(frozen=True)
class ProcessorModel:
    """Processor id and clock speed of every rank.

    ``name``: processor id of every rank (``Serial on <id>``); ``speed``: clock
    in MHz, ``None`` runs serial times exactly as written; ``speeds`` and
    ``names``: per-rank overrides (heterogeneous nodes); ``timing_basis``: MHz
    at which serial times are valid when the model declares no basis for the
    processor.
    """

    name: str = DEFAULT_PROCESSOR
    speed: float | None = None
    speeds: Mapping[int, float] = field(default_factory=dict)
    names: Mapping[int, str] = field(default_factory=dict)
    timing_basis: float | None = None

    @classmethod
    def from_defaults(cls, defaults: Defaults) -> ProcessorModel:
        """The processors a model's ``Default`` directive declares."""
        return cls(name=defaults.processor or DEFAULT_PROCESSOR, speed=defaults.speed,
                   speeds=dict(defaults.speeds))

    def processor_id(self, rank: int) -> str:
        return self.names.get(rank, self.name)

    def for_ranks(self, numprocs: int, declared: Mapping[str, Processor]
                  ) -> tuple[list[str], list[float]]:
        """Processor id and serial-time scale factor (basis / speed) of each rank.

        ``declared`` holds the model's processor descriptions (their timing bases).
        """
        ids, factors = [], []
        for rank in range(numprocs):
            pid = self.processor_id(rank)
            speed = self.speeds.get(rank, self.speed)
            ids.append(pid)
            if speed is None:
                factors.append(1.0)
                continue
            if not speed > 0:
                raise ModelError(f"processor speed of rank {rank} must be > 0 MHz, got {speed!r}")
            basis = declared[pid].timing_basis if pid in declared else self.timing_basis
            if basis is None:
                raise ModelError(f"rank {rank} runs processor {pid!r} at {speed} MHz but no "
                                 f"timing basis is known for {pid!r}: declare "
                                 f"'Processor description = {pid}' with a timing basis")
            factors.append(basis / speed)
        return ids, factors
