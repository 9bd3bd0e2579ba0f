"""The ``--coll`` command-line option, for any subcommand that runs the VM.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_collective_arguments(parser)
>>> args = parser.parse_args(["--coll", "library=mpich-1.2", "--coll", "bcast=linear,acks=yes"])
>>> cfg = collective_config(args)
>>> cfg.library, cfg.algorithm("MPI_Bcast", 8, 4), cfg.options.acknowledgements
('mpich-1.2', 'linear', True)
"""

from __future__ import annotations

from pevpm.machine.collectives import LIBRARIES, CollectiveConfig

HELP = ("collective algorithms and options, KEY=VALUE[,KEY=VALUE...], repeatable: "
        f"library={'|'.join(LIBRARIES)}; FAMILY=ALGORITHM (e.g. bcast=binomial, "
        "alltoall=circular, gather=linear-any-order, barrier=hardware, scan=measured); "
        "THRESHOLD=BYTES (e.g. bcast_short=12288); child-order=largest-first|smallest-first; "
        "acks=yes|no; reduce-cost=SECONDS_PER_BYTE; hardware=yes|no")


def add_collective_arguments(parser) -> None:
    """Add ``--coll KEY=VALUE`` (repeatable) to an argparse parser."""
    parser.add_argument("--coll", action="append", default=[], metavar="KEY=VALUE", help=HELP)


def collective_config(args, base: CollectiveConfig | None = None) -> CollectiveConfig:
    """The configuration the parsed ``--coll`` options describe (bad ones raise ModelError)."""
    return CollectiveConfig.parse(args.coll, base)
