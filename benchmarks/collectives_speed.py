"""How fast the virtual machine runs collectives (simulated messages per CPU second).

Each case is a loop of 10 calls of one collective on N ranks with constant
message times; expansions are memoised, so the first call of each
(collective, size, root, rank) pays for building its statements.

    PYTHONPATH=src python benchmarks/collectives_speed.py --ranks 32,128
"""

from __future__ import annotations

import argparse
import time

from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.collectives import CollectiveConfig, algorithm_for
from pevpm.vm.kernel.fastengine import simulate

CASES = (("MPI_Bcast", 1024), ("MPI_Barrier", 0), ("MPI_Allreduce", 1024),
         ("MPI_Alltoall", 1024), ("MPI_Gather", 1024))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="32,128")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--coll", default="library=mpich")
    args = parser.parse_args()
    cfg = CollectiveConfig.parse(args.coll)
    machine = Machine(Constant(latency=1e-5, local=1e-6), eager_limit=1 << 20,
                      collectives=cfg)
    print(f"{'collective':14} {'ranks':>5} {'algorithm':18} {'messages':>9} {'CPU s':>6} "
          f"{'msg/s':>8}")
    for n in (int(x) for x in args.ranks.split(",")):
        for op, size in CASES:
            builder = ModelBuilder()
            with builder.loop(args.calls):
                builder.collective(op, size, root=0)
            start = time.process_time()
            result = simulate(builder.build(), n, machine)
            cpu = time.process_time() - start
            print(f"{op:14} {n:>5} {algorithm_for(op, size, n, cfg):18} "
                  f"{result.messages_simulated:>9} {cpu:>6.2f} "
                  f"{result.messages_simulated / cpu:>8.0f}")


if __name__ == "__main__":
    main()
