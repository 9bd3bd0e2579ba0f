"""Cartesian process grids as expression functions: MPI_Dims_create, the
coordinates of a rank and MPI_Cart_shift, so one model serves every rank count;
and ``xor`` for butterfly partners.

Ranks are laid out row-major as MPI lays them out (the last dimension varies
fastest).  ``dims_create`` picks the grid MPICH picks: the most even
factorisation of the rank count into ``ndims`` factors, largest first (the
smallest spread between the largest and the smallest factor; on a tie, the
larger smallest factor).

>>> [dims_create(12, 2, d) for d in range(2)], [dims_create(72, 2, d) for d in range(2)]
([4, 3], [9, 8])
>>> [cart_coord(5, 12, 2, d) for d in range(2)]     # rank 5 of a 4 x 3 grid
[1, 2]
>>> cart_shift(5, 12, 2, 0, 1, 0), cart_shift(11, 12, 2, 0, 1, 0) == PROC_NULL
(8, True)
>>> cart_shift(11, 12, 2, 0, 1, 1)                  # periodic: wraps to row 0
2

``cart_shift_asc`` shifts on the same grid with its dimensions smallest first;
``cart_offset`` steps along up to three dimensions at once (a diagonal
neighbour of a 3-D halo exchange):

>>> cart_offset(0, 8, 3, 1, 1, 1, 0), cart_offset(7, 8, 3, 1, 0, 0, 0) == PROC_NULL
(7, True)
"""

from __future__ import annotations

from functools import lru_cache

#: MPI_PROC_NULL as models see it (kept equal to :data:`pevpm.model.expr.PROC_NULL`).
PROC_NULL = -1_000_003

#: Largest number of dimensions accepted.
MAX_DIMS = 16


def _whole(value, what: str, low: int, high: int | None = None) -> int:
    if value != int(value):
        raise ValueError(f"{what} {value} is not a whole number")
    value = int(value)
    if value < low or (high is not None and value > high):
        upper = "" if high is None else f" and at most {high}"
        raise ValueError(f"{what} {value} must be at least {low}{upper}")
    return value


@lru_cache(maxsize=1024)
def grid(nnodes: int, ndims: int) -> tuple[int, ...]:
    """The dimensions of the grid of ``nnodes`` ranks in ``ndims`` dimensions.

    >>> grid(360, 3), grid(7, 2), grid(1, 3)
    ((10, 6, 6), (7, 1), (1, 1, 1))
    """
    return min(_factorisations(nnodes, ndims, nnodes), key=lambda d: (d[0] - d[-1], -d[-1], d))


def _factorisations(n: int, k: int, largest: int) -> list[tuple[int, ...]]:
    """Every way to write ``n`` as ``k`` factors in non-increasing order, none over ``largest``."""
    if k == 1:
        return [(n,)] if n <= largest else []
    found = []
    for f in range(min(n, largest), 0, -1):
        if n % f == 0:
            found.extend((f, *rest) for rest in _factorisations(n // f, k - 1, f))
    return found


def _checked_grid(nnodes, ndims, dim, ascending: bool = False) -> tuple[tuple[int, ...], int]:
    nnodes = _whole(nnodes, "the rank count", 1, 1 << 24)
    ndims = _whole(ndims, "the number of dimensions", 1, MAX_DIMS)
    dim = _whole(dim, "the dimension", 0, ndims - 1)
    dims = grid(nnodes, ndims)
    return (dims[::-1] if ascending else dims), dim


def dims_create(nnodes, ndims, dim) -> int:
    """The size of dimension ``dim`` (0-based) of MPI_Dims_create(nnodes, ndims)."""
    dims, dim = _checked_grid(nnodes, ndims, dim)
    return dims[dim]


def _stride(dims: tuple[int, ...], dim: int) -> int:
    stride = 1
    for size in dims[dim + 1:]:
        stride *= size
    return stride


def cart_coord(rank, nnodes, ndims, dim) -> int:
    """The coordinate in dimension ``dim`` of ``rank`` (MPI_Cart_coords)."""
    dims, dim = _checked_grid(nnodes, ndims, dim)
    rank = _whole(rank, "the rank", 0, int(nnodes) - 1)
    return rank // _stride(dims, dim) % dims[dim]


def xor(a, b) -> int:
    """Bitwise exclusive or of two whole numbers >= 0: the partner of a
    butterfly or recursive-doubling exchange (``xor(procnum, 1 << k)``).

    >>> [xor(r, 2) for r in range(4)]
    [2, 3, 0, 1]
    """
    return _whole(a, "xor's first argument", 0) ^ _whole(b, "xor's second argument", 0)


def cart_shift(rank, nnodes, ndims, dim, disp, periodic, ascending: bool = False) -> int:
    """The rank ``disp`` steps from ``rank`` along dimension ``dim``: the
    destination MPI_Cart_shift gives (its source is the shift by ``-disp``).
    Off the edge of a non-periodic dimension it is MPI_PROC_NULL."""
    dims, dim = _checked_grid(nnodes, ndims, dim, ascending)
    rank = _whole(rank, "the rank", 0, int(nnodes) - 1)
    disp = _whole(disp, "the displacement", -(1 << 30))
    stride = _stride(dims, dim)
    here = rank // stride % dims[dim]
    there = here + disp
    if periodic:
        there %= dims[dim]
    elif not 0 <= there < dims[dim]:
        return PROC_NULL
    return rank + (there - here) * stride


def cart_shift_asc(rank, nnodes, ndims, dim, disp, periodic) -> int:
    """:func:`cart_shift` on the same grid with its dimensions the other way
    round, smallest first (LAMMPS lays its ranks out so: 1 x 2 x 2 at 4 ranks,
    where MPI_Dims_create gives 2 x 2 x 1).

    >>> [cart_shift_asc(r, 4, 3, 1, 1, 1) for r in range(4)]     # a 1 x 2 x 2 grid
    [2, 3, 0, 1]
    """
    return cart_shift(rank, nnodes, ndims, dim, disp, periodic, ascending=True)


def cart_offset(rank, nnodes, ndims, dx, dy, dz, periodic) -> int:
    """The rank at offset ``(dx, dy, dz)`` from ``rank`` on the grid of
    ``ndims`` (at most 3) dimensions: each step as :func:`cart_shift` takes
    it; MPI_PROC_NULL where any step leaves a non-periodic grid.  Offsets in
    dimensions the grid lacks must be 0 (``dz`` of a 2-D grid).

    >>> [cart_offset(4, 9, 2, 1, -1, 0, p) for p in (0, 1)]    # a 3 x 3 grid
    [6, 6]
    >>> cart_offset(0, 9, 2, -1, -1, 0, 0) == PROC_NULL, cart_offset(0, 9, 2, -1, -1, 0, 1)
    (True, 8)
    """
    ndims = _whole(ndims, "the number of dimensions", 1, 3)
    offsets = [_whole(d, "the offset", -(1 << 30)) for d in (dx, dy, dz)]
    if any(offsets[ndims:]):
        raise ValueError(f"an offset along dimension {ndims + 1} of a {ndims}-D grid")
    there = _whole(rank, "the rank", 0, int(nnodes) - 1)
    for dim, disp in enumerate(offsets[:ndims]):
        if disp:
            there = cart_shift(there, nnodes, ndims, dim, disp, periodic)
            if there == PROC_NULL:
                break
    return there
