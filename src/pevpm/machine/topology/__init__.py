"""What a cluster's network is and where the ranks run on it.

:class:`Topology` (processes per node, placement, cores, a network) places
ranks and gives a :class:`Placement` (node of each rank, links, routes),
which is all the engines read.  The networks: one switch
(:mod:`.star`, the default), fat-trees (:mod:`.fattree`), tori
(:mod:`.torus`), dragonflies (:mod:`.dragonfly`) and hand-drawn graphs
(:mod:`.graph`); :mod:`.parse` turns a ``--topology`` spec or file into one.

>>> Topology(procs_per_node=2).place(4).node_of
[0, 0, 1, 1]
"""

from pevpm.host import WAIT_STYLES
from pevpm.machine.topology.cluster import Topology
from pevpm.machine.topology.network import Network
from pevpm.machine.topology.placement import PLACEMENTS, Placement

__all__ = ["PLACEMENTS", "WAIT_STYLES", "Network", "Placement", "Topology"]
