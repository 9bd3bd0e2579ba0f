"""Cartesian grids as expression functions: MPI_Dims_create's grid, rank
coordinates and MPI_Cart_shift with and without periods."""

import numpy as np
import pytest

from pevpm.errors import DirectiveError, ModelError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.model.cartesian import cart_coord, cart_offset, cart_shift, dims_create, grid
from pevpm.model.directives import parse_directives
from pevpm.model.expr import PROC_NULL, Expr
from pevpm.vm.kernel import engine, fastengine

#: MPI_Dims_create of MPICH 5 (mpi4py's Compute_dims) for a few awkward counts.
MPICH_DIMS = {(72, 2): (9, 8), (180, 2): (15, 12), (360, 3): (10, 6, 6), (16, 3): (4, 2, 2),
              (1024, 2): (32, 32), (1000, 3): (10, 10, 10), (7, 3): (7, 1, 1),
              (64, 4): (4, 4, 2, 2), (1, 2): (1, 1)}


@pytest.mark.parametrize(("n", "ndims"), sorted(MPICH_DIMS))
def test_dims_create_gives_mpich_grid(n, ndims):
    assert grid(n, ndims) == MPICH_DIMS[n, ndims]
    assert [dims_create(n, ndims, d) for d in range(ndims)] == list(MPICH_DIMS[n, ndims])


def test_dims_create_matches_the_installed_mpi():
    mpi = pytest.importorskip("mpi4py.MPI")
    for n in range(1, 200):
        for ndims in (1, 2, 3):
            assert list(grid(n, ndims)) == mpi.Compute_dims(n, ndims), (n, ndims)


def test_coordinates_are_row_major_and_cover_the_grid():
    n, ndims = 24, 3                                    # a 4 x 3 x 2 grid
    coords = {tuple(cart_coord(r, n, ndims, d) for d in range(ndims)) for r in range(n)}
    assert len(coords) == n
    assert [cart_coord(7, n, ndims, d) for d in range(ndims)] == [1, 0, 1]  # 7 = 1*6 + 0*2 + 1


def test_shift_round_trips_and_hits_the_edges():
    n, ndims = 12, 2                                    # 4 x 3
    for r in range(n):
        for d in range(ndims):
            for k in (1, 2):
                periodic = cart_shift(r, n, ndims, d, k, 1)
                assert cart_shift(periodic, n, ndims, d, -k, 1) == r
                plain = cart_shift(r, n, ndims, d, k, 0)
                inside = cart_coord(r, n, ndims, d) + k < grid(n, ndims)[d]
                assert (plain != PROC_NULL) == inside
                if inside:
                    assert plain == periodic
    assert cart_shift(0, n, ndims, 0, -1, 0) == PROC_NULL
    assert cart_shift(0, n, ndims, 0, -1, 1) == 9       # row 0 -> row 3, same column


def test_an_offset_is_one_step_per_dimension_and_null_off_a_plain_grid():
    n, ndims = 27, 3                                    # 3 x 3 x 3
    for r in range(n):
        here = [cart_coord(r, n, ndims, d) for d in range(ndims)]
        for step in [(1, 1, 1), (-1, 0, 1), (0, -1, -1), (1, 0, 0)]:
            there = [c + s for c, s in zip(here, step)]
            plain = cart_offset(r, n, ndims, *step, 0)
            if all(0 <= c < 3 for c in there):
                assert [cart_coord(plain, n, ndims, d) for d in range(ndims)] == there
            else:
                assert plain == PROC_NULL
            wrapped = cart_offset(r, n, ndims, *step, 1)
            assert [cart_coord(wrapped, n, ndims, d) for d in range(ndims)] == \
                [c % 3 for c in there]
    # every interior rank of 4 x 4 x 4 has 26 distinct neighbours
    steps = [(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)
             if (x, y, z) != (0, 0, 0)]
    assert len({cart_offset(21, 64, 3, *s, 0) for s in steps} - {PROC_NULL}) == 26
    assert cart_offset(5, 12, 2, 1, 1, 0, 0) == cart_shift(cart_shift(5, 12, 2, 0, 1, 0),
                                                           12, 2, 1, 1, 0)


@pytest.mark.parametrize(("text", "message"), [
    ("cart_offset(procnum, numprocs, 2, 1, 1, 1, 0)",
     "an offset along dimension 3 of a 2-D grid"),
    ("cart_offset(procnum, numprocs, 4, 1, 1, 1, 0)",
     "the number of dimensions 4 must be at least 1 and at most 3"),
    ("dims_create(numprocs, 2, 2)", "the dimension 2 must be at least 0 and at most 1"),
    ("cart_coord(procnum, numprocs, 2, 0.5)", "the dimension 0.5 is not a whole number"),
    ("cart_shift(procnum + 4, numprocs, 2, 0, 1, 1)", "the rank 4 must be at least 0"),
    ("dims_create(numprocs, 0, 0)", "the number of dimensions 0 must be at least 1"),
])
def test_bad_arguments_are_model_errors(text, message):
    with pytest.raises(ModelError, match=message):
        Expr.parse(text).evaluate({"procnum": 0, "numprocs": 4})


def test_wrong_argument_count_is_a_parse_error():
    with pytest.raises(DirectiveError, match=r"cart_shift\(\) takes 6 argument"):
        Expr.parse("cart_shift(procnum, numprocs, 0, 1)")


def _halo(b: ModelBuilder, periodic: int) -> None:
    """Each rank exchanges 8 bytes with both neighbours in both dimensions."""
    for d in (0, 1):
        for k in (1, -1):
            b.sendrecv(8, dest=f"cart_shift(procnum, numprocs, 2, {d}, {k}, {periodic})",
                       source=f"cart_shift(procnum, numprocs, 2, {d}, {-k}, {periodic})")


@pytest.mark.parametrize(("periodic", "messages"), [(0, 14), (1, 24)])
def test_a_grid_halo_sends_only_to_real_neighbours(periodic, messages):
    b = ModelBuilder()
    _halo(b, periodic)
    machine = Machine(Constant(1.0))
    # 3 x 2 grid: 4 + 4 rows-neighbour and 3 + 3 column-neighbour messages without periods
    fast = fastengine.simulate(b.build(), 6, machine, rng=np.random.default_rng(0))
    ref = engine.simulate(b.build(), 6, machine, rng=np.random.default_rng(0))
    assert fast.messages_simulated == ref.messages_simulated == messages
    assert fast.makespan == ref.makespan == 4.0


def test_directives_accept_cartesian_peers():
    model = parse_directives("""
// PEVPM Message type = MPI_Sendrecv
// PEVPM &       size = 8
// PEVPM &       from = cart_shift(procnum, numprocs, 2, 1, -1, 0)
// PEVPM &       to = cart_shift(procnum, numprocs, 2, 1, 1, 0)
""", "halo.c")
    run = engine.simulate(model, 4, Machine(Constant(0.5)))
    assert run.messages_simulated == 2 and run.makespan == 0.5
