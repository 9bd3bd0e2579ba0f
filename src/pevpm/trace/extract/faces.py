"""Message sizes that follow the faces of a grid past the traced counts.

A strong-scaling program on a grid (CloverLeaf: one 2-D mesh cut into
chunks) sends its neighbours a face of its chunk, and the face shrinks as
the grid grows: 96 cells long at 2 ranks (a 2 x 1 grid), 48 at 4 (2 x 2),
12 at 64 (8 x 8).  A rank program seen at the largest traced count only
(corner ranks united, :mod:`pevpm.trace.extract.edges`) has one value per
message, which would stay the same at every count.

:func:`face_law` looks at the largest point-to-point message of each traced
count: where it follows ``a + b * f(p)`` with ``f(p)`` the largest face of
the grid ``MPI_Dims_create`` gives at ``p`` ranks (the product of the other
dimensions' ``1 / dims[e]``; ``b > 0``), and shrinks by more than
:data:`SAME_SIZE` between the two largest counts, each one-count message
along dimension ``d`` is scaled by ``(a + b * f_d(p)) / (a + b * f_d(top))``
(:meth:`FaceLaw.size`): its face at ``p`` ranks over its face where it was
traced, the halo's constant part (``a``: corners, depth) kept.  A
weak-scaling program (its messages the same size at every count) gets no
law.

>>> law = face_law({1: 0, 2: 16160, 4: 8480}, 2, False)
>>> law.base, law.per_face
(800.0, 15360.0)
>>> law.size(424, 1, 4)
'424 * (800 + 15360 / dims_create(numprocs, 2, 0)) / 8480'
>>> from pevpm.model.expr import Expr
>>> Expr.parse(law.size(424, 1, 4)).evaluate({"numprocs": 64})     # 8 x 8: 12 + 5 cells
136
>>> face_law({2: 800, 4: 800}, 2, False) is None                  # weak scaling
True
>>> shift_of("cart_shift(procnum, numprocs, 2, 1, -1, 0)"), shift_of("procnum + 1")
((2, False, 1), None)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pevpm.model.cartesian import grid

#: Largest sizes at the two largest counts closer than this (relative) are
#: taken as the same: a weak-scaling program, whose faces do not shrink.
SAME_SIZE = 0.05

#: How far (relative) a third traced count's largest size may be from the law.
FACE_FIT = 0.05

_SHIFT = re.compile(r"cart_shift(_asc)?\(procnum, numprocs, (\d+), (\d+), ")


def shift_of(peer: str | None) -> tuple[int, bool, int] | None:
    """The grid's dimensions, whether it is ``cart_shift_asc``'s, and the
    dimension a ``cart_shift`` peer expression shifts along (None: another peer)."""
    found = _SHIFT.match(peer or "")
    return (int(found.group(2)), bool(found.group(1)), int(found.group(3))) if found else None


def _others(ndims: int, ascending: bool, dim: int) -> list[int]:
    """The ``dims_create`` indices of the dimensions other than ``dim`` (a
    ``cart_shift_asc`` grid has its dimensions the other way round)."""
    own = ndims - 1 - dim if ascending else dim
    return [e for e in range(ndims) if e != own]


def _face(p: int, ndims: int, ascending: bool, dim: int) -> float:
    dims = grid(p, ndims)
    return 1 / math.prod(dims[e] for e in _others(ndims, ascending, dim))


def _largest_face(p: int, ndims: int, ascending: bool) -> float:
    return max(_face(p, ndims, ascending, d) for d in range(ndims))


@dataclass(frozen=True)
class FaceLaw:
    """The largest message's size as ``base + per_face * face`` on a grid of
    ``ndims`` dimensions (``ascending``: ``cart_shift_asc``'s)."""

    base: float
    per_face: float
    ndims: int
    ascending: bool

    def size(self, size: float, dim: int, top: int) -> str:
        """The expression of a message of ``size`` bytes along ``dim``, traced
        at ``top`` ranks only, at any count."""
        others = [f"dims_create(numprocs, {self.ndims}, {e})"
                  for e in _others(self.ndims, self.ascending, dim)]
        face = others[0] if len(others) == 1 else f"({' * '.join(others)})"
        there = self.base + self.per_face * _face(top, self.ndims, self.ascending, dim)
        return f"{size:g} * ({self.base:g} + {self.per_face:g} / {face}) / {there:g}"

    def describe(self) -> str:
        return (f"{self.base:g} + {self.per_face:g} * (the largest face of the "
                f"{self.ndims}-D grid: the product of 1 / dims over the other dimensions)")


def face_law(largest: dict[int, int], ndims: int, ascending: bool) -> FaceLaw | None:
    """The law of the largest message per count over the grid's largest face
    (fitted on the two largest counts that sent any, the others checked
    within :data:`FACE_FIT`), or None where the sizes do not shrink with the
    face by more than :data:`SAME_SIZE`, need a negative constant or grow."""
    counts = sorted(p for p, v in largest.items() if v > 0)
    if len(counts) < 2:
        return None
    faces = {p: _largest_face(p, ndims, ascending) for p in counts}
    low, high = counts[-2], counts[-1]
    if faces[low] == faces[high] or abs(largest[low] / largest[high] - 1) <= SAME_SIZE:
        return None
    per_face = (largest[low] - largest[high]) / (faces[low] - faces[high])
    base = largest[high] - per_face * faces[high]
    if per_face <= 0 or base < -1e-9 * largest[high]:
        return None
    law = FaceLaw(max(base, 0.0), per_face, ndims, ascending)
    if any(abs((law.base + law.per_face * faces[p]) / largest[p] - 1) > FACE_FIT
           for p in counts):
        return None
    return law
