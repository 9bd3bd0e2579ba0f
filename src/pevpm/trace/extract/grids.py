"""The Cartesian grid a program laid all its ranks on (``MPI_Cart_create``),
as a rule that gives its dimensions at every traced rank count, and the peer
expressions it offers :func:`pevpm.trace.extract.peers.peer_expression` first.

A program that chooses its own grid and shifts on it (LAMMPS: 1 x 2 x 2 at 4
ranks) has peers that offsets from ``procnum`` reproduce only at the traced
counts.  Where every traced count's grid is the one ``MPI_Dims_create``
gives, or that grid with its dimensions smallest first, with the same
number of dimensions and periods, its shifts are written as ``cart_shift``
or ``cart_shift_asc`` (:mod:`pevpm.model.cartesian`), which hold at any count.

>>> from pevpm.trace.events import Grid
>>> rule = grid_rule({2: Grid((0, 1), (1, 1, 2), (True,) * 3),
...                   4: Grid((0, 1, 2, 3), (1, 2, 2), (True,) * 3)}, notes := [])
>>> rule.candidates(source=False)[:2]
('cart_shift_asc(procnum, numprocs, 3, 0, 1, 1)', 'cart_shift_asc(procnum, numprocs, 3, 0, -1, 1)')
>>> notes[0][:72]
'the ranks lie on a 3-D grid, MPI_Cart_create at every traced count: 1 x '

A program that lays its ranks on that grid itself, without periods, and
exchanges with every neighbour it has, diagonal ones too (LULESH's 26), gets
a :class:`NeighbourRule` once its ranks are one program
(:func:`pevpm.trace.extract.edges.grid_sides`): each step of one along one
dimension as a ``cart_shift``, the others as a ``cart_offset``.

>>> NeighbourRule(2).candidates(source=False)[3:5]
('cart_shift(procnum, numprocs, 2, 1, -1, 0)', 'cart_offset(procnum, numprocs, 2, -1, -1, 0, 0)')
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from pevpm.model.cartesian import grid
from pevpm.trace.events import Grid, Trace


@dataclass(frozen=True)
class GridRule:
    """A grid of ``ndims`` dimensions as ``MPI_Dims_create`` picks it for any
    count (``ascending``: its dimensions smallest first), with its periods."""

    ndims: int
    periodic: tuple[bool, ...]
    ascending: bool

    def candidates(self, source: bool) -> tuple[str, ...]:
        """The shifts by one along each dimension: ``-1`` first for a source,
        ``+1`` first for a destination, so that where a dimension of 2 cannot
        tell them apart every rank still sends one way and receives from the
        other (a shift, as ``MPI_Cart_shift`` gives them)."""
        function = "cart_shift_asc" if self.ascending else "cart_shift"
        disps = (-1, 1) if source else (1, -1)
        return tuple(f"{function}(procnum, numprocs, {self.ndims}, {d}, {disp}, "
                     f"{int(self.periodic[d])})"
                     for d in range(self.ndims) for disp in disps)


@dataclass(frozen=True)
class NeighbourRule:
    """The ``ndims``-D grid ``MPI_Dims_create`` picks for any count, without
    periods, every neighbour of a rank a peer (at most 3 dimensions)."""

    ndims: int

    def candidates(self, source: bool) -> tuple[str, ...]:
        """The steps along one dimension first (as :meth:`GridRule.candidates`
        orders them), then every diagonal step: one in each of two dimensions
        or more, as ``cart_offset`` writes it."""
        faces = GridRule(self.ndims, (False,) * self.ndims, False).candidates(source)
        steps = product((-1, 0, 1), repeat=self.ndims)
        diagonal = tuple("cart_offset(procnum, numprocs, {}, {}, 0)".format(
            self.ndims, ", ".join(map(str, (*step, *(0,) * (3 - self.ndims)))))
            for step in steps if sum(map(bool, step)) > 1)
        return faces + diagonal


def world_grids(traces: list[Trace]) -> dict[int, Grid]:
    """The first grid over every rank (in world order) of each trace that has one."""
    out = {}
    for t in traces:
        spanning = [g for g in t.grids if g.spans(t.numprocs)]
        if spanning:
            out[t.numprocs] = spanning[0]
    return out


def _shape(g: Grid) -> str:
    return " x ".join(map(str, g.dims))


def grid_rule(grids: dict[int, Grid], notes: list[str]) -> GridRule | None:
    """The rule the traced grids (by rank count) follow, noted, or None (noted
    when there were grids but no rule gives them all)."""
    if not grids:
        return None
    seen = ", ".join(f"{_shape(g)} at {n}" for n, g in sorted(grids.items()))
    first = grids[min(grids)]
    if any(len(g.dims) != len(first.dims) or g.periodic != first.periodic
           for g in grids.values()):
        notes.append(f"the ranks lie on Cartesian grids ({seen}) whose dimensions or periods "
                     "differ between counts: peers are not written on a grid")
        return None
    ndims = len(first.dims)
    for ascending in (False, True):
        if all(g.dims == (grid(n, ndims)[::-1] if ascending else grid(n, ndims))
               for n, g in grids.items()):
            order = ("MPI_Dims_create's grid with its dimensions smallest first"
                     if ascending else "MPI_Dims_create's grid")
            periods = ", ".join("periodic" if p else "not periodic" for p in first.periodic)
            notes.append(f"the ranks lie on a {ndims}-D grid, MPI_Cart_create at every traced "
                         f"count: {seen} ranks ({periods}), {order} at each: its shifts are "
                         f"written as {'cart_shift_asc' if ascending else 'cart_shift'}, which "
                         "gives that grid at any count (inferred: the grid at untraced counts "
                         "is the program's choice)")
            return GridRule(ndims, first.periodic, ascending)
    notes.append(f"the ranks lie on Cartesian grids ({seen}) that are not MPI_Dims_create's "
                 "at every count, in either order: peers are not written on a grid")
    return None
