"""Data movements shared by many collectives: tree and linear fan-out / fan-in.

Each function appends one rank's part of the movement to a
:class:`~pevpm.vm.kernel.collectives.script.RankScript`.  ``edge_bytes(rel)`` gives
the bytes that travel over the edge between relative rank ``rel`` and its
parent (its own block, its subtree's blocks, or the whole buffer).

``tag`` (default: the script's tag) keeps phases of one collective apart.
Sends are ``MPI_Isend`` (so a parent pays a local-completion delay per
earlier child) completed by a ``MPI_Waitall`` at the end of the movement.
"""

from __future__ import annotations

from collections.abc import Callable

from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.script import RankScript
from pevpm.vm.kernel.collectives.trees import binomial_children, binomial_parent

EdgeBytes = Callable[[int], int]


def tree_fan_out(s: RankScript, call: CollectiveCall, edge_bytes: EdgeBytes, *,
                 order: str = "largest-first", ack_tag: int | None = None,
                 tag: int | None = None) -> None:
    """Receive from the binomial-tree parent, then Isend to every child.

    With ``ack_tag`` each receiver returns a zero-byte acknowledgement to its
    parent at once, and a parent completes only after it has every child's
    acknowledgement (MPICH over TCP waiting for its Isends).
    """
    rel = call.rel
    parent = binomial_parent(rel)
    if parent is not None:
        s.recv(call.absolute(parent), edge_bytes(rel), tag=tag)
        if ack_tag is not None:
            s.isend(call.absolute(parent), 0, tag=ack_tag)
    children = binomial_children(rel, call.numprocs, order)
    for child in children:
        s.isend(call.absolute(child), edge_bytes(child), tag=tag)
    if ack_tag is not None:
        for child in children:
            s.recv(call.absolute(child), 0, tag=ack_tag)
    s.waitall()


def tree_fan_in(s: RankScript, call: CollectiveCall, edge_bytes: EdgeBytes, *,
                combine_seconds: EdgeBytes = lambda rel: 0.0, tag: int | None = None) -> None:
    """Receive from every binomial-tree child (smallest subtree first, as MPICH
    does), paying ``combine_seconds(child)`` after each, then send to the parent."""
    rel = call.rel
    for child in binomial_children(rel, call.numprocs, "smallest-first"):
        s.recv(call.absolute(child), edge_bytes(child), tag=tag)
        s.compute(combine_seconds(child))
    parent = binomial_parent(rel)
    if parent is not None:
        s.isend(call.absolute(parent), edge_bytes(rel), tag=tag)
    s.waitall()


def linear_fan_out(s: RankScript, call: CollectiveCall, edge_bytes: EdgeBytes, *,
                   tag: int | None = None) -> None:
    """The root Isends to every other rank in rank order; the others receive."""
    if call.rank == call.root:
        for rank in range(call.numprocs):
            if rank != call.root:
                s.isend(rank, edge_bytes(call.rel_of(rank)), tag=tag)
        s.waitall()
    else:
        s.recv(call.root, edge_bytes(call.rel), tag=tag)


def linear_fan_in(s: RankScript, call: CollectiveCall, edge_bytes: EdgeBytes, *,
                  any_order: bool = False,
                  combine_seconds: EdgeBytes = lambda rel: 0.0) -> None:
    """Every other rank Isends to the root.  The root receives in rank order
    (blocking receives: one late sender holds up all later ones) or, with
    ``any_order``, posts every receive at once and takes them as they come."""
    if call.rank != call.root:
        s.isend(call.root, edge_bytes(call.rel))
        s.waitall()
        return
    others = [rank for rank in range(call.numprocs) if rank != call.root]
    for rank in others:
        if any_order:
            s.irecv(rank, edge_bytes(call.rel_of(rank)))
        else:
            s.recv(rank, edge_bytes(call.rel_of(rank)))
            s.compute(combine_seconds(call.rel_of(rank)))
    s.waitall()
    if any_order:
        for rank in others:
            s.compute(combine_seconds(call.rel_of(rank)))
