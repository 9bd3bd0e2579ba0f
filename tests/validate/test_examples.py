"""The example programs compute the right thing at every process count."""

import itertools

import numpy as np
import pytest

from pevpm.errors import PevpmError
from pevpm.validate.calibration import load_example
from pevpm.validate.runner import run_once

pytestmark = pytest.mark.mpi


def serial_jacobi(size, iterations, seed):
    grid = np.random.default_rng(seed).random((size, size), dtype=np.float32)
    for _ in range(iterations):
        new = grid.copy()
        new[1:-1, 1:-1] = np.float32(0.25) * (
            ((grid[1:-1, :-2] + grid[1:-1, 2:]) + grid[:-2, 1:-1]) + grid[2:, 1:-1])
        grid = new
    return float(grid.sum(dtype=np.float64))


@pytest.mark.parametrize("nprocs", [2, 3])
def test_jacobi_matches_a_serial_stencil_whatever_the_strips(nprocs):
    # 10 rows over 3 ranks leaves a remainder; 3 ranks puts an even rank last.
    record = run_once("jacobi", nprocs, ["--size", "10", "--iterations", "7", "--seed", "5"])
    assert record["nprocs"] == nprocs
    assert [r["rows"] for r in record["ranks"]] == [
        load_example("jacobi").strip_rows(10, nprocs, r)[1] for r in range(nprocs)]
    assert record["extra"]["checksum"] == pytest.approx(serial_jacobi(10, 7, 5), rel=1e-12)


def test_jacobi_strips_cover_the_grid_without_overlap():
    strip_rows = load_example("jacobi").strip_rows
    for size, nprocs in [(256, 1), (256, 3), (10, 4), (5, 5)]:
        strips = [strip_rows(size, nprocs, r) for r in range(nprocs)]
        assert strips[0][0] == 0
        assert all(a[0] + a[1] == b[0] for a, b in itertools.pairwise(strips))
        assert strips[-1][0] + strips[-1][1] == size


@pytest.mark.parametrize("nprocs", [1, 3])
def test_bag_of_tasks_does_every_job_once(nprocs):
    args = ["--jobs", "30", "--max-compute", "0.002", "--compute", "sleep", "--seed", "9"]
    record = run_once("bag_of_tasks", nprocs, args)
    jobs = load_example("bag_of_tasks").job_stream(30, 65536, 0.002, 9)
    computed = sum(r["compute"] for r in record["ranks"])
    assert computed >= jobs[:, 1].sum()  # every job's compute time was spent
    if nprocs > 1:
        assert sum(record["extra"]["jobs_per_worker"]) == 30
        assert record["ranks"][0]["compute"] == 0.0  # the master only communicates


def test_bag_of_tasks_with_more_workers_than_jobs_still_stops():
    record = run_once("bag_of_tasks", 4, ["--jobs", "2", "--max-compute", "0.001",
                                          "--compute", "sleep"])
    assert sorted(record["extra"]["jobs_per_worker"]) == [0, 1, 1]


def test_job_stream_is_fixed_by_the_seed():
    job_stream = load_example("bag_of_tasks").job_stream
    a, b = job_stream(50, 1000, 0.5, seed=3), job_stream(50, 1000, 0.5, seed=3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, job_stream(50, 1000, 0.5, seed=4))
    assert (a[:, [0, 2]] == np.floor(a[:, [0, 2]])).all() and a[:, [0, 2]].max() < 1000


@pytest.mark.parametrize("nprocs", [1, 4])
def test_fft2d_equals_numpy_fft2(nprocs):
    record = run_once("fft2d", nprocs, ["--size", "16", "--iterations", "2", "--check"])
    assert record["extra"]["check_error"] < 1e-12


def test_fft2d_rejects_a_size_the_ranks_do_not_divide():
    with pytest.raises(PevpmError, match="size must be a positive multiple of nprocs"):
        run_once("fft2d", 3, ["--size", "16"])
