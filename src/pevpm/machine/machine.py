"""A machine to simulate on: communication model, topology, processors, protocol.

>>> from pevpm.machine.comm_models import Hockney
>>> m = Machine(Hockney(latency=5e-5, bandwidth=1e8), Topology(procs_per_node=2),
...             eager_limit=16384)
>>> m.is_eager(1024), m.is_eager(65536)
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.processor import ProcessorModel
from pevpm.machine.topology import Topology
from pevpm.machine.transfer import CommModel

#: When a message's bytes start to flow on a network with link figures.
FLOW_STARTS = ("send", "match")
#: How flows share a link: reserved in the order they are drawn, or max-min
#: fairly with re-rating as flows start and end (pevpm.vm.kernel.maxmin), every flow
#: alike or weighted as SimGrid's SMPI network model weighs them.
FLOW_SHARINGS = ("reserve", "max-min", "simgrid")


@dataclass(frozen=True)
class Machine:
    """Everything about the machine the virtual machine needs.

    ``comm``: message times; ``topology``: nodes, placement, links (default
    one rank per node); ``processors``: speeds and processor ids (``None``:
    take them from the model's ``Default`` directive); ``eager_limit``:
    blocking sends of at most this many bytes return after their local
    completion time instead of waiting to be matched (0, the default, turns
    the eager protocol off: the thesis's semantics); ``collectives``:
    which algorithms run collectives (``None``: MPICH's); ``node_contention``:
    ``False`` costs every message at contention 1 whatever the scoreboard
    counts on its links (the thesis's restricted PEVPM, for comparison);
    ``flow_start``: on a network with link figures, when a message's bytes
    start to flow: ``"send"`` (when it is sent: the thesis's messages, in
    flight before their receive is posted) or ``"match"`` (when the send and
    its receive have both been posted: SimGrid SMPI's rendezvous, for
    comparisons with it); ``flow_sharing``: how the flows crossing a link
    share it: ``"reserve"`` (each takes what the flows drawn before it left,
    fixed when drawn), ``"max-min"`` (max-min fair, re-rated whenever a flow
    starts or ends) or ``"simgrid"`` (the same, each flow weighted as
    SimGrid's SMPI model weighs it: less over longer routes).
    """

    comm: CommModel
    topology: Topology = field(default_factory=Topology)
    processors: ProcessorModel | None = None
    eager_limit: int = 0
    collectives: CollectiveConfig | None = None
    node_contention: bool = True
    flow_start: str = "send"
    flow_sharing: str = "reserve"

    def __post_init__(self) -> None:
        if self.eager_limit < 0:
            raise ValueError(f"eager_limit must be >= 0 bytes, got {self.eager_limit}")
        if self.flow_start not in FLOW_STARTS:
            raise ValueError(f"flow_start must be one of {FLOW_STARTS}, got {self.flow_start!r}")
        if self.flow_sharing not in FLOW_SHARINGS:
            raise ValueError(f"flow_sharing must be one of {FLOW_SHARINGS}, "
                             f"got {self.flow_sharing!r}")

    def is_eager(self, size: int) -> bool:
        """Whether a blocking send of ``size`` bytes completes locally."""
        return 0 < self.eager_limit and size <= self.eager_limit
