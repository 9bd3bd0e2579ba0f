"""Command-line options shared by several subcommands: ``-D NAME=VALUE``, ``--coll``,
``--topology`` and ``--placement``.

>>> parse_defines(["iterations=100", "t = 1.5e-3"])
{'iterations': 100, 't': 0.0015}

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_collective_arguments(parser)
>>> args = parser.parse_args(["--coll", "library=mpich-1.2", "--coll", "bcast=linear,acks=yes"])
>>> cfg = collective_config(args)
>>> cfg.library, cfg.algorithm("MPI_Bcast", 8, 4), cfg.options.acknowledgements
('mpich-1.2', 'linear', True)
"""

from __future__ import annotations

from pevpm.errors import PevpmError
from pevpm.machine.collectives import LIBRARIES, CollectiveConfig
from pevpm.values import parse_number

HELP = ("collective algorithms and options, KEY=VALUE[,KEY=VALUE...], repeatable: "
        f"library={'|'.join(LIBRARIES)}; FAMILY=ALGORITHM (e.g. bcast=binomial, "
        "alltoall=circular, gather=linear-any-order, barrier=hardware, scan=measured); "
        "THRESHOLD=BYTES (e.g. bcast_short=12288); child-order=largest-first|smallest-first; "
        "acks=yes|no; reduce-cost=SECONDS_PER_BYTE; hardware=yes|no")


def add_topology_arguments(parser) -> None:
    """Add ``--topology SPEC|FILE`` and ``--placement HOW`` (docs/topology.md)."""
    parser.add_argument(
        "--topology", metavar="SPEC|FILE",
        help="the network between the nodes instead of one switch: fat-tree:k=4,n=3,oversub=4 | "
             "fat-tree:m=8,n=3 | torus:8x8x8 | dragonfly:groups=9,chassis=1,routers=9,nodes=4 | "
             "switch:nodes=64, each with optional bw=,lat=,limiter=,cores=; or a SimGrid platform "
             "(.xml) or pevpm description (.yaml) file (docs/topology.md)")
    parser.add_argument(
        "--placement", metavar="HOW",
        help="where the ranks run: block (fill each node in turn), cyclic (one rank per node "
             "in turn), random (shuffled slots, from --seed), or an mpiexec host file "
             "(lines 'host', 'host:N' or 'host slots=N'); default: the machine's (block)")


def add_collective_arguments(parser) -> None:
    """Add ``--coll KEY=VALUE`` (repeatable) to an argparse parser."""
    parser.add_argument("--coll", action="append", default=[], metavar="KEY=VALUE", help=HELP)


def collective_config(args, base: CollectiveConfig | None = None) -> CollectiveConfig:
    """The configuration the parsed ``--coll`` options describe (bad ones raise ModelError)."""
    return CollectiveConfig.parse(args.coll, base)


def parse_defines(defines: list[str] | None) -> dict[str, int | float]:
    """``-D NAME=VALUE`` options as model parameters: whole numbers stay ``int``,
    others become ``float``; a missing ``=``, a name that is not an identifier,
    a value that is not a finite number is a :class:`PevpmError` naming the item."""
    params: dict[str, int | float] = {}
    for item in defines or ():
        name, eq, raw = (part.strip() for part in item.partition("="))
        if not eq or not name.isidentifier() or not raw:
            raise PevpmError(f"expected NAME=VALUE, got {item!r}", "-D")
        params[name] = parse_number(raw, "-D", f"value of {name}")
    return params
