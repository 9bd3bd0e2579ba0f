"""Hypothetical machines and ``pevpm machine new``."""

import pytest
from scipy import stats

from pevpm.cli import main
from pevpm.errors import ModelError
from pevpm.profile.store import Profile
from pevpm.profile.synthetic import HypotheticalMachine, parse_bandwidth, write_profile


def test_bandwidth_units():
    assert parse_bandwidth("10GB/s") == 10e9
    assert parse_bandwidth("1.5 MB/s") == 1.5e6
    assert parse_bandwidth("100Mbit/s") == 12.5e6
    assert parse_bandwidth("8e9b/s") == 1e9
    with pytest.raises(ModelError, match="cannot read bandwidth '10 GB'"):
        parse_bandwidth("10 GB")


def test_machine_distribution_follows_latency_bandwidth_and_contention():
    m = HypotheticalMachine(latency=2e-6, bandwidth=10e9, shape=4.0, spread=0.25, shape_decay=0.5)
    alone = m.distribution(size=20_000, contention=1)
    assert alone.loc == pytest.approx(4e-6)
    assert alone.shape == pytest.approx(4.0)
    assert alone.mean() == pytest.approx(4e-6 * 1.25)
    crowded = m.distribution(size=20_000, contention=4)
    assert crowded.shape == pytest.approx(1 + 3 / 2)  # shape - 1 halves at c = 4
    assert crowded.mean() - crowded.loc == pytest.approx(4 * (alone.mean() - alone.loc))
    intra = HypotheticalMachine(2e-6, 10e9, intra_latency=0.5e-6, intra_bandwidth=20e9)
    assert intra.distribution(20_000, 1, intra_node=True).loc == pytest.approx(1.5e-6)
    assert intra.local_distribution(1).loc == pytest.approx(0.5e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"latency": 0.0, "bandwidth": 1e9}, "latency must be positive"),
        ({"latency": 1e-6, "bandwidth": 1e9, "shape": 1.0}, "shape must exceed 1"),
        ({"latency": 1e-6, "bandwidth": 1e9, "spread": -1.0}, "spread must be positive"),
    ],
)
def test_impossible_machines_are_rejected(kwargs, message):
    with pytest.raises(ModelError, match=message):
        HypotheticalMachine(**kwargs)


def test_written_profile_reads_like_a_measured_one(tmp_path):
    machine = HypotheticalMachine(latency=2e-6, bandwidth=10e9)
    path = tmp_path / "hyp.db"
    count = write_profile(
        machine, path, sizes=(0, 1024), placements=("1x2", "2x2"), samples=400, random_state=3
    )
    assert count == 8
    with Profile.open(path) as profile:
        assert [k.label for k in profile.blocks(test="isend")] == [
            "isend 0 B 1x2",
            "isend 1024 B 1x2",
            "isend 0 B 2x2",
            "isend 1024 B 2x2",
        ]
        x = profile.samples("isend", 1024, nxp="2x2")
        assert x.size == 400
        truth = machine.distribution(1024, contention=2)
        assert stats.kstest(x, truth.cdf).pvalue > 1e-3
        stored = profile.fits("isend", 1024, nxp="2x2")["pearson5"]
        assert stored.params == truth.params and stored.goodness["rank"] == 1


def test_machine_new_command(tmp_path, capsys):
    out = tmp_path / "hyp.db"
    args = [
        "machine",
        "new",
        "--latency",
        "2us",
        "--bandwidth",
        "10GB/s",
        "--shape",
        "3",
        "--sizes",
        "0,1K",
        "--placements",
        "2x1,2x2",
        "--samples",
        "100",
        "-o",
        str(out),
    ]
    assert main(args) == 0
    assert "wrote 8 blocks (2 placements)" in capsys.readouterr().out
    with Profile.open(out) as profile:
        fit = profile.fits("isend", 1024, nxp="2x1")["pearson5"]
        assert fit.params["loc"] == pytest.approx(2e-6 + 1024 / 10e9)
        assert fit.params["shape"] == pytest.approx(3.0)
    assert main(args) == 2
    assert "already exists; pass --force" in capsys.readouterr().err
    assert main(args + ["--force"]) == 0
    bad = [
        "machine",
        "new",
        "--latency",
        "2us",
        "--bandwidth",
        "fast",
        "-o",
        str(tmp_path / "b.db"),
    ]
    assert main(bad) == 2
    assert "pevpm: error: cannot read bandwidth 'fast'" in capsys.readouterr().err
    odd = args[:-2] + ["--placements", "2x1,3x1", "-o", str(tmp_path / "odd.db")]
    assert main(odd) == 2
    assert "placement 3x1: point-to-point blocks need an even rank count" in capsys.readouterr().err
    assert not (tmp_path / "odd.db").exists()
