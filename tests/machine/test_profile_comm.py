"""Profile-driven communication model: block choice, size interpolation, baselines, errors."""

import pickle

import numpy as np
import pytest

from pevpm.errors import ProfileError
from pevpm.machine.profile_comm import (
    MODEL_NAMES,
    ProfileCommModel,
    block_contention,
    compare_models,
)
from pevpm.machine.transfer import CommModel, Transfer
from pevpm.profile.store import BlockKey, ProfileWriter
from pevpm.profile.synthetic import HypotheticalMachine, write_profile

US = 1e-6


def uniform_times(low_us, high_us, ranks=2, reps=500):
    """Deterministic times evenly spread over [low, high] microseconds."""
    return np.linspace(low_us, high_us, ranks * reps).reshape(ranks, reps) * US


def write_blocks(path, blocks):
    """blocks: {(test, size, n, p): (low_us, high_us)}"""
    with ProfileWriter.open(path, machine="test") as writer:
        runs = {}
        for (test, size, n, p), (low, high) in blocks.items():
            if (n, p) not in runs:
                runs[(n, p)] = writer.begin_run(
                    n=n,
                    p=p,
                    hosts=["h0"],
                    mpi_library="x",
                    mpi_version="1",
                    clock="c",
                    clock_resolution=1e-9,
                    sync_method="pairwise",
                    resend_limit=10,
                    plan={},
                )
            times = uniform_times(low, high, ranks=n * p)
            writer.write_block(
                runs[(n, p)],
                BlockKey(test, "", size, n, p),
                times,
                reps=times.shape[1],
                warmup=0,
                start_mode="barrier",
                sync_error=0.0,
                elapsed=0.0,
            )
    return path


@pytest.fixture
def profile(tmp_path):
    # 2x1 (contention 1) and 2x4 (contention 4), sizes 0 and 1000 bytes.
    return write_blocks(
        tmp_path / "m.db",
        {
            ("isend", 0, 2, 1): (10, 20),
            ("isend", 1000, 2, 1): (30, 40),
            ("isend", 0, 2, 4): (20, 40),
            ("isend", 1000, 2, 4): (60, 80),
            ("isendlocal", 0, 2, 1): (1, 2),
            ("isendlocal", 1000, 2, 1): (1, 2),
        },
    )


def message(size, contention=1, intra=False):
    return Transfer("MPI_Send", size=size, src=0, dst=1, intra_node=intra, contention=contention)


def test_block_contention_counts_messages_on_the_busiest_link():
    assert block_contention(BlockKey("isend", "", 0, 2, 1)) == 1
    assert block_contention(BlockKey("isend", "", 0, 4, 1)) == 1
    assert block_contention(BlockKey("isend", "", 0, 2, 8)) == 8
    assert block_contention(BlockKey("isend", "", 0, 1, 2)) == 1
    assert block_contention(BlockKey("isend", "", 0, 1, 8)) == 4


def test_baselines_interpolate_their_statistic_between_sizes(profile):
    models = compare_models(profile)
    assert set(models) == set(MODEL_NAMES)
    rng = np.random.default_rng(0)
    # 500 bytes is halfway between the 2x1 blocks: min (10+30)/2, mean (15+35)/2
    assert models["min2x1"].transfer_time(message(500, contention=4), rng) == pytest.approx(20 * US)
    assert models["mean2x1"].transfer_time(message(500, contention=4), rng) == pytest.approx(
        25 * US
    )
    # the matching n x p for contention 4 is 2x4: min (20+60)/2, mean (30+70)/2
    assert models["min-nxp"].transfer_time(message(500, contention=4), rng) == pytest.approx(
        40 * US
    )
    assert models["mean-nxp"].transfer_time(message(500, contention=4), rng) == pytest.approx(
        50 * US
    )
    # contention 3 is nearer 4 than 1 on a log scale
    assert models["min-nxp"].transfer_time(message(0, contention=3), rng) == pytest.approx(20 * US)
    assert models["min-nxp"].transfer_time(message(0, contention=1), rng) == pytest.approx(10 * US)


def test_full_model_mixes_quantiles_between_sizes(profile):
    full = ProfileCommModel.from_profile(profile, "full")
    rng = np.random.default_rng(1)
    draws = np.array([full.transfer_time(message(250), rng) for _ in range(4000)])
    # quarter of the way from U[10,20] to U[30,40] us: U[15, 25] us
    assert draws.min() >= 15 * US - 1e-12 and draws.max() <= 25 * US + 1e-12
    assert draws.mean() == pytest.approx(20 * US, rel=0.01)
    exact = np.array([full.transfer_time(message(1000), rng) for _ in range(2000)])
    assert exact.min() >= 30 * US - 1e-12 and exact.mean() == pytest.approx(35 * US, rel=0.01)


def test_bounded_models_are_deterministic_min_and_max(profile):
    full = ProfileCommModel.from_profile(profile, "full")
    low, high = full.bounded("min"), full.bounded("max")
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        assert low.transfer_time(message(500), rng) == pytest.approx(20 * US)
        assert high.transfer_time(message(500), rng) == pytest.approx(30 * US)
    with pytest.raises(ProfileError, match="bound must be 'min' or 'max'"):
        full.bounded("middle")


def test_local_completion_comes_from_isendlocal(profile):
    model = ProfileCommModel.from_profile(profile, "mean2x1")
    assert model.local_completion_time(message(0), np.random.default_rng(0)) == pytest.approx(
        1.5 * US
    )


def test_model_is_a_picklable_comm_model(profile):
    model = ProfileCommModel.from_profile(profile, "full")
    assert isinstance(model, CommModel)
    copy = pickle.loads(pickle.dumps(model))
    a = copy.transfer_time(message(700), np.random.default_rng(5))
    b = model.transfer_time(message(700), np.random.default_rng(5))
    assert a == b


def test_missing_node_class_falls_back_with_a_note(profile):
    model = ProfileCommModel.from_profile(profile, "min2x1")
    assert model.transfer_time(message(0, intra=True), np.random.default_rng(0)) == pytest.approx(
        10 * US
    )
    assert (
        model.notes[0] == "isend: only inter-node placements measured; intra-node messages use them"
    )


def test_size_outside_the_benchmarks_is_an_error_naming_what_exists(profile):
    model = ProfileCommModel.from_profile(profile, "min2x1")
    with pytest.raises(ProfileError) as error:
        model.transfer_time(message(4000), np.random.default_rng(0))
    assert str(error.value) == (
        "isend has no data for 4000 B at 2x1 (benchmarked sizes: 0, 1000 B); "
        "allow extrapolation to extend the nearest two sizes"
    )
    extended = ProfileCommModel.from_profile(profile, "min2x1", extrapolate=True)
    # min grows 20 us per 1000 B: 10 + 4 * 20
    assert extended.transfer_time(message(4000), np.random.default_rng(0)) == pytest.approx(90 * US)


def test_missing_operation_is_an_error_naming_what_exists(tmp_path):
    path = write_blocks(tmp_path / "s.db", {("sendrecv", 0, 2, 1): (1, 2)})
    with pytest.raises(ProfileError, match=r"profile has no isend blocks; it has: sendrecv"):
        ProfileCommModel.from_profile(path)
    only_isend = write_blocks(tmp_path / "i.db", {("isend", 0, 2, 1): (1, 2)})
    model = ProfileCommModel.from_profile(only_isend, "full")
    with pytest.raises(ProfileError, match=r"no isendlocal blocks .* it has: isend$"):
        model.local_completion_time(message(0), np.random.default_rng(0))


def test_fitted_source_needs_stored_fits(profile):
    with pytest.raises(
        ProfileError, match=r"no stored fits for isend 0 B 2x1; run `pevpm fit .*m.db` first"
    ):
        ProfileCommModel.from_profile(profile, "full", source="fitted")
    with pytest.raises(ProfileError, match="unknown distribution source 'guess'"):
        ProfileCommModel.from_profile(profile, "full", source="guess")
    with pytest.raises(ProfileError, match="unknown communication model 'median'"):
        ProfileCommModel.from_profile(profile, "median")


def test_fitted_source_samples_the_stored_distribution(tmp_path):
    machine = HypotheticalMachine(latency=2e-6, bandwidth=1e9, shape=4.0, spread=0.5)
    path = tmp_path / "hyp.db"
    write_profile(machine, path, sizes=(0, 4096), placements=("2x1",), samples=200, random_state=0)
    model = ProfileCommModel.from_profile(path, "full", source="fitted")
    rng = np.random.default_rng(2)
    draws = np.array([model.transfer_time(message(4096), rng) for _ in range(4000)])
    # the stored fit is the generating Pearson V: mean = 1.5 * (2 us + 4.096 us)
    assert draws.mean() == pytest.approx(machine.distribution(4096, 1).mean(), rel=0.03)
    assert model.bounded("min").transfer_time(message(4096), rng) == pytest.approx(6.096e-6)


def test_blocking_sends_use_the_send_test_when_measured(tmp_path):
    blocks = {
        ("isend", 0, 2, 1): (10, 20),
        ("send", 0, 2, 1): (6, 8),
    }
    both = ProfileCommModel.from_profile(write_blocks(tmp_path / "both.db", blocks), "mean2x1")
    rng = np.random.default_rng(0)
    isend = Transfer("MPI_Isend", size=0, src=0, dst=1, intra_node=False, contention=1)
    for op in ("MPI_Send", "MPI_Ssend"):
        blocking = Transfer(op, size=0, src=0, dst=1, intra_node=False, contention=1)
        assert both.transfer_time(blocking, rng) == pytest.approx(7 * US)
    assert both.transfer_time(isend, rng) == pytest.approx(15 * US)
    assert not any("send: not measured" in note for note in both.notes)
    del blocks[("send", 0, 2, 1)]
    only_isend = ProfileCommModel.from_profile(write_blocks(tmp_path / "isend.db", blocks),
                                               "mean2x1")
    assert only_isend.transfer_time(message(0), rng) == pytest.approx(15 * US)
    assert any(note.startswith("send: not measured; blocking sends use the isend times")
               for note in only_isend.notes)
