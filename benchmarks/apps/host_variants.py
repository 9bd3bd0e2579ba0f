"""A model's prediction at one rank count on a machine profile whose host is
changed: how much of an error at a count that shared its cores comes from
the host the profile describes (docs/apps.md, "the 4-rank errors").

For each variant, the mean run time and, per rank, the mean seconds spent
computing, communicating and waiting (``Prediction.breakdown_mean``).  A
variant sets fields of the profile's ``Topology``: ``cores=4`` (a core per
rank where the profile's host had 2), ``wait=sleep`` (ranks blocked in MPI
leave their core, where the profile's MPICH busy-polls).

    python benchmarks/apps/host_variants.py WORK/npb-cg/model.py 4 cores=4 wait=sleep
"""

from __future__ import annotations

import argparse
import dataclasses

from pevpm import parse_machine, predict
from pevpm.model.model_file import run_model_file


def variant(machine, spec: str):
    """``machine`` with one ``Topology`` field set from ``FIELD=VALUE``.

    >>> variant(parse_machine("default"), "cores=4").topology.cores
    4
    """
    field, _, value = spec.partition("=")
    return dataclasses.replace(machine, topology=dataclasses.replace(
        machine.topology, **{field: int(value) if value.isdigit() else value}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("ranks", type=int)
    parser.add_argument("variants", nargs="*", help="FIELD=VALUE of the profile's Topology")
    parser.add_argument("--machine", default="default")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    loaded = run_model_file(args.model, seconds=600)
    base = parse_machine(args.machine)
    for spec in ["as profiled", *args.variants]:
        machine = base if spec == "as profiled" else variant(base, spec)
        result = predict(loaded, args.ranks, machine, runs=args.runs)
        ranks = "; ".join("/".join(f"{s * 1e3:.1f}" for s in row)
                          for row in result.breakdown_mean)
        print(f"{args.machine} {spec}: mean {result.mean:.4f} s; per rank compute/"
              f"communication/waiting (ms): {ranks}")


if __name__ == "__main__":
    main()
