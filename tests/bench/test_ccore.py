"""MPIBench's C timing core under mpiexec -n 2: complete, sane profiles; the binding recorded;
no silent fallback when the core cannot be built."""

import numpy as np
import pytest
from bench_helpers import mpi_env, needs_mpiexec, run_mpi

from pevpm.bench.catalog import CATALOG
from pevpm.bench.ccore import LIBRARY, source_text
from pevpm.bench.options import CHAIN_MIN_REPS
from pevpm.profile.store import Profile

pytestmark = [pytest.mark.mpi, needs_mpiexec]

EVERY_TEST = ",".join(f"{name}{spec.variants[0]}" for name, spec in CATALOG.items())
REPS = 20
SIZES = (0, 1024, 16384)


def _bench(tmp_path, *args, env=None):
    path = tmp_path / "m.db"
    result = run_mpi(2, "-m", "pevpm", "bench", "--sizes", ",".join(map(str, SIZES)),
                     "--reps", str(REPS), "--resend-limit", "50", "--no-progress", *args,
                     "-o", str(path), env=env)
    return path, result


@pytest.fixture(scope="module")
def c_profile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ccore")
    env = mpi_env()
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    path, result = _bench(folder, "--tests", EVERY_TEST, "--binding", "c", env=env)
    assert result.returncode == 0, result.stderr
    return path, result, folder / "cache"


def test_the_core_is_built_once_into_the_cache(c_profile):
    _, _, cache = c_profile
    built = list(cache.glob(f"pevpm/bench/*/{LIBRARY}"))
    assert len(built) == 1
    assert (built[0].parent / "pevpm_bench.c").read_text() == source_text()


def test_every_test_of_the_catalogue_gives_a_complete_block(c_profile):
    path, result, _ = c_profile
    assert "C timing loops" in result.stdout and "note:" not in result.stderr
    expected = {(name, spec.variants[0], size) for name, spec in CATALOG.items()
                for size in (SIZES if spec.sized else (0,))}
    with Profile.open(path) as prof:
        assert {(k.test, k.variant, k.size) for k in prof.blocks()} == expected
        run = prof.runs()[0]
        assert run.binding == "c" and run.clock.startswith("CLOCK_MONOTONIC")
        assert set(prof.stability()) == set(prof.blocks())      # every block checked
        assert run.mpi_library.startswith("MPICH") and run.mpi_version.startswith("MPI ")
        for key in prof.blocks():
            times = prof.samples(key.test, key.size, nxp=key.nxp, variant=key.variant,
                                 by_rank=True)
            chained = prof.block_info(key)["start_mode"] == "chain"
            assert times.shape == (2, CHAIN_MIN_REPS if chained else REPS), key.label
            assert np.all(np.isfinite(times)), key.label
            # end-to-end times compare two clocks: each may be early by the sync error
            assert np.all(times > -run.max_sync_error), key.label
            assert np.median(times) < 0.1, key.label      # no hang-sized sample median


def test_local_completion_is_read_on_one_clock(c_profile):
    """Isend's local completion is two stamps of the sender's own clock: never
    negative, whatever the synchronisation error (each of 2 ranks x 20 reps)."""
    path, _, _ = c_profile
    with Profile.open(path) as prof:
        for size in SIZES:
            assert np.all(prof.samples("isendlocal", size) >= 0)


def test_python_binding_is_recorded(tmp_path):
    path, result = _bench(tmp_path, "--tests", "isend,bcast", "--binding", "python")
    assert result.returncode == 0, result.stderr
    assert "Python (mpi4py) timing loops" in result.stdout
    with Profile.open(path) as prof:
        assert prof.runs()[0].binding == "python"
        assert len(prof.blocks()) == 2 * len(SIZES)


@pytest.fixture
def broken_mpicc(tmp_path):
    compiler = tmp_path / "mpicc"
    compiler.write_text("#!/bin/sh\necho 'mpicc: error: no compiler here' >&2\nexit 1\n")
    compiler.chmod(0o755)
    env = mpi_env()
    env["MPICC"] = str(compiler)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


def test_binding_c_without_a_core_is_one_error(tmp_path, broken_mpicc):
    path, result = _bench(tmp_path, "--tests", "isend", "--binding", "c", env=broken_mpicc)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("pevpm: error:")]
    assert len(errors) == 1 and "--binding c" in errors[0] and "no compiler here" in errors[0]
    assert "Traceback" not in result.stderr
    assert not path.exists()


def test_auto_binding_without_a_core_says_so_and_times_in_python(tmp_path, broken_mpicc):
    path, result = _bench(tmp_path, "--tests", "isend", env=broken_mpicc)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and "Python (mpi4py) loops" in notes[0]
    assert "no compiler here" in notes[0]
    with Profile.open(path) as prof:
        assert prof.runs()[0].binding == "python"



def test_binding_cost_is_stored_per_block(tmp_path):
    """Isend's local completion is one MPI call: through mpi4py it costs that call plus
    the binding's, so the Python median is the larger (200 reps x 2 ranks each)."""
    path, result = _bench(tmp_path, "--tests", "isendlocal,bcast", "--binding-cost",
                          "--reps", "200")
    assert result.returncode == 0, result.stderr
    with Profile.open(path) as prof:
        costs = prof.binding_costs()
        assert set(costs) == set(prof.blocks())
        for key, cost in costs.items():
            assert cost.c == pytest.approx(prof.summary(key.test, key.size).median, rel=0.05)
            assert cost.python > 0 and cost.seconds >= 0
        local = costs[prof.resolve("isendlocal", 0)]
        assert local.python > local.c


def test_binding_cost_needs_the_c_core():
    from pevpm.bench.options import BenchOptions
    from pevpm.errors import BenchmarkError

    with pytest.raises(BenchmarkError, match="--binding-cost .* --binding python"):
        BenchOptions(output="m.db", binding="python", binding_cost=True).validate(2, None)
