"""Strong and weak scaling views of ``pevpm predict`` (issue 29)."""

import json

import pytest

from pevpm.cli import main

MACHINE = "constant:latency=0"

# Strong scaling: 8 ms of work shared, plus 1 ms every rank does whole.
STRONG = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder()
    b.serial("0.008 / numprocs + 0.001")
    return b
"""

# Weak scaling: every rank keeps its 4 ms, and a gather costs 1 ms per rank beyond the first.
WEAK = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder()
    b.serial("0.004 + 0.001 * (numprocs - 1)")
    return b
"""


def predict(capsys, tmp_path, text, *argv):
    path = tmp_path / "model.py"
    path.write_text(text)
    code = main(["predict", str(path), "--machine", MACHINE, "--runs", "2", "--workers", "1",
                 "-n", "1,2,4", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_strong_scaling_table_shows_speedup_and_efficiency(tmp_path, capsys):
    rows = predict(capsys, tmp_path, STRONG).splitlines()
    assert rows[0].split()[-2:] == ["speedup", "efficiency"]
    # t = 9, 5, 3 ms: speedups 1.8 and 3, efficiencies 0.9 and 0.75
    assert [r.split()[-2:] for r in rows[2:5]] == [["1.00", "1.000"], ["1.80", "0.900"],
                                                   ["3.00", "0.750"]]
    assert rows[5].startswith("speedup and efficiency relative to 1 rank")


def test_weak_scaling_table_shows_efficiency_and_time_per_rank_of_work(tmp_path, capsys):
    rows = predict(capsys, tmp_path, WEAK, "--weak").splitlines()
    assert rows[0].split()[-3:] == ["efficiency", "s/rank", "work"]
    assert "speedup" not in rows[0]
    # t = 4, 5, 7 ms: efficiency 1, 0.8, 0.571; per rank of work 4, 2.5, 1.75 ms
    assert [r.split()[-2:] for r in rows[2:5]] == [["1.000", "0.004"], ["0.800", "0.0025"],
                                                   ["0.571", "0.00175"]]
    assert rows[5].startswith("efficiency (weak scaling) relative to 1 rank")


def test_json_carries_the_scaling_views(tmp_path, capsys):
    doc = json.loads(predict(capsys, tmp_path, WEAK, "--weak", "--json"))
    assert doc["scaling"] == "weak"
    assert [p["efficiency"] for p in doc["predictions"]] == pytest.approx([1, 0.8, 4 / 7])
    assert [p["seconds_per_rank_work"] for p in doc["predictions"]] == pytest.approx(
        [0.004, 0.0025, 0.00175])
    strong = json.loads(predict(capsys, tmp_path, STRONG, "--json"))
    assert strong["scaling"] == "strong"
    assert [p["efficiency"] for p in strong["predictions"]] == pytest.approx([1, 0.9, 0.75])
