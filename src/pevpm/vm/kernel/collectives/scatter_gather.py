"""MPI_Scatter(v) and MPI_Gather(v): linear and binomial; the root keeps its own block.

>>> from pevpm.vm.kernel.collectives.call import CollectiveCall
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(0, -1)
>>> scatter_binomial(s, CollectiveCall("MPI_Scatter", 10, root=0, rank=0, numprocs=8),
...                  AlgorithmOptions())
>>> [(m.dst.evaluate({}), m.size.evaluate({})) for m in s.statements()[:3]]
[(4, 40), (2, 20), (1, 10)]
"""

from __future__ import annotations

from pevpm.machine.collectives import AlgorithmOptions
from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.moves import (
    linear_fan_in,
    linear_fan_out,
    tree_fan_in,
    tree_fan_out,
)
from pevpm.vm.kernel.collectives.script import RankScript
from pevpm.vm.kernel.collectives.trees import subtree_size


def _own_block(call: CollectiveCall):
    return lambda rel: call.block(call.absolute(rel))


def _subtree_blocks(call: CollectiveCall):
    return lambda rel: call.blocks_from_rel(rel, subtree_size(rel, call.numprocs))


def scatter_linear(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """The root Isends each rank its block in rank order ((n-1)/n of the data moves)."""
    linear_fan_out(s, call, _own_block(call))


def scatter_binomial(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Each tree edge carries the blocks of the child's whole subtree
    (half the data in the first step, a quarter in the next, ...)."""
    tree_fan_out(s, call, _subtree_blocks(call), order=opts.child_order)


def gather_linear(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """MPICH 1.x: the others Isend, the root receives in rank order."""
    linear_fan_in(s, call, _own_block(call))


def gather_linear_any_order(s: RankScript, call: CollectiveCall,
                            opts: AlgorithmOptions) -> None:
    """The root posts every receive at once and takes messages as they arrive."""
    linear_fan_in(s, call, _own_block(call), any_order=True)


def gather_binomial(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Reverse of the binomial scatter: subtrees' blocks are concatenated upward."""
    tree_fan_in(s, call, _subtree_blocks(call))


SCATTER_ALGORITHMS = {"linear": scatter_linear, "binomial": scatter_binomial}
GATHER_ALGORITHMS = {"linear": gather_linear, "linear-any-order": gather_linear_any_order,
                     "binomial": gather_binomial}
