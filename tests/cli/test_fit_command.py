"""``pevpm fit``: table, stored fits, plots, trends and errors (on synthetic profiles)."""

import re
import shutil

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.errors import ProfileError
from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.machine.transfer import Transfer
from pevpm.profile.fits import fit_profile, pearson_trends
from pevpm.profile.store import BlockKey, Profile, ProfileWriter, default_profile_path
from pevpm.profile.synthetic import HypotheticalMachine, write_profile

MACHINE = HypotheticalMachine(latency=5e-6, bandwidth=1e9, shape=5.0, spread=0.3)


@pytest.fixture
def hypothetical(tmp_path):
    path = tmp_path / "hyp.db"
    write_profile(
        MACHINE,
        path,
        sizes=(0, 8192, 65536),
        placements=("2x1", "2x4"),
        samples=1000,
        random_state=1,
    )
    return path


def test_fit_prints_a_table_stores_fits_and_plots(hypothetical, tmp_path, capsys):
    plots = tmp_path / "plots"
    assert (
        main(["fit", str(hypothetical), "--tests", "isend", "--plots", str(plots), "--no-progress"])
        == 0
    )
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [
        "test",
        "size",
        "nxp",
        "best",
        "parameters",
        "KS",
        "p",
        "AD",
        "p",
        "indep",
    ]
    rows = [line.split() for line in lines[2:8]]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("isend", "0", "2x1"),
        ("isend", "8192", "2x1"),
        ("isend", "65536", "2x1"),
        ("isend", "0", "2x4"),
        ("isend", "8192", "2x4"),
        ("isend", "65536", "2x4"),
    ]
    # Pearson V data: Pearson V wins in most blocks
    assert sum(r[3] == "pearson5" for r in rows) >= 4
    trend = re.search(r"isend inter-node: location = ([0-9.]+)us \+ size / ([0-9.]+) GB/s", out)
    assert float(trend.group(1)) == pytest.approx(5.0, rel=0.05)
    assert float(trend.group(2)) == pytest.approx(1.0, rel=0.05)
    assert "stored 30 fits" in out
    assert sorted(p.name for p in plots.iterdir()) == [
        ".pevpm-folder",                # says: a plot folder pevpm wrote
        "isend.2x1.fits.png",
        "isend.2x4.fits.png",
        "isend.inter.trends.png",
    ]
    with Profile.open(hypothetical) as profile:
        fits = profile.fits("isend", 8192, nxp="2x4")
        ranks = sorted(record.goodness["rank"] for record in fits.values())
        assert ranks == [1, 2, 3, 4, 5]
        best = next(r for r in fits.values() if r.goodness["rank"] == 1)
        assert best.goodness["n_gof"] == 500 and 0 <= best.goodness["ks_pvalue"] <= 1
        assert best.goodness["independent"] is True


def test_fit_profile_recovers_the_machine_trend(hypothetical):
    blocks = fit_profile(hypothetical, tests=["isend"], store=False).blocks
    (group,) = pearson_trends(blocks)
    assert group.label == "isend inter-node"
    assert group.trend.latency == pytest.approx(5e-6, rel=0.05)
    assert group.trend.bandwidth == pytest.approx(1e9, rel=0.05)
    assert group.trend.shape(0, 4) < group.trend.shape(0, 1)  # shape falls with contention


def test_unfittable_blocks_are_skipped_with_the_reason(hypothetical, capsys):
    with ProfileWriter.open(hypothetical) as writer:
        run = writer.latest_run().id
        flat = np.full((2, 50), 5e-6)  # a clock too coarse to tell times apart
        writer.write_block(
            run,
            BlockKey("isend", "", 128, 2, 4),
            flat,
            reps=50,
            warmup=0,
            start_mode="barrier",
            sync_error=0.0,
            elapsed=0.0,
        )
    assert main(["fit", str(hypothetical), "--tests", "isend", "--no-plots", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert (
        "skipped isend 128 B 2x4: cannot fit a distribution to 100 identical samples (5e-06)" in out
    )
    assert "stored 30 fits" in out


def test_fit_errors_are_one_line(hypothetical, tmp_path, capsys):
    assert main(["fit", str(tmp_path / "none.db")]) == 2
    assert "none.db: no such profile file" in capsys.readouterr().err
    assert main(["fit", str(hypothetical), "--tests", "bcast", "--no-plots"]) == 2
    assert "no blocks for bcast; the profile has: isend, isendlocal" in capsys.readouterr().err
    assert main(["fit", str(hypothetical), "--families", "normal", "--no-plots"]) == 2
    assert "unknown family 'normal'" in capsys.readouterr().err


def test_fit_and_fitted_model_on_the_real_default_profile(tmp_path, capsys):
    # The profile shipped with pevpm was measured on this development machine
    # (mpiexec -n 2 and -n 4): real, noisy data.
    path = tmp_path / "real.db"
    shutil.copy(default_profile_path(), path)
    args = ["fit", str(path), "--tests", "isend", "--nxp", "1x4", "--no-plots", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    with Profile.open(path) as profile:
        sizes = [key.size for key in profile.blocks(test="isend", nxp="1x4")]
        rows = {tuple(line.split()[:3]) for line in out.splitlines()}
        assert all(("isend", str(size), "1x4") in rows for size in sizes)
        for size in sizes:
            best = [
                r
                for r in profile.fits("isend", size, nxp="1x4").values()
                if r.goodness["rank"] == 1
            ]
            assert (
                len(best) == 1
                and best[0].params["loc"] < profile.summary("isend", size, nxp="1x4").min
            )
    with pytest.raises(ProfileError, match="no stored fits for isend 0 B 1x2; run `pevpm fit"):
        ProfileCommModel.from_profile(path, "full", source="fitted")
    assert (
        main(["fit", str(path), "--tests", "isend,send,isendlocal", "--no-plots",
              "--no-progress"]) == 0
    )
    fitted = ProfileCommModel.from_profile(path, "full", source="fitted")
    message = Transfer("MPI_Send", sizes[1], 0, 1, intra_node=True, contention=2)
    assert fitted.transfer_time(message, np.random.default_rng(0)) > 0
