"""``predict`` with a profile of one host: every rank on it, sharing its cores,
unless ``--ppn`` or ``--nodes`` say otherwise; ``machine new --cores``."""

import json

import pytest

from pevpm.cli import main

ONE_SECOND = "int main(void) {\n// PEVPM Serial time = 1\n  return 0;\n}\n"


def predicted(capsys, *argv) -> float:
    assert main(["predict", *argv, "--runs", "1", "--no-bounds", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["predictions"][0]["mean"]


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "one_second.c"
    path.write_text(ONE_SECOND)
    return str(path)


@pytest.mark.parametrize("extra, seconds", [
    ([], 4.0),                      # 8 ranks on the profile's one 2-core host
    (["--ppn", "2"], 1.0),          # nodes of 2 ranks, one core each
    (["--nodes", "4"], 1.0),        # 8 ranks over 4 such hosts
    (["--nodes", "2"], 2.0),        # 4 ranks on each 2-core host
    (["--ppn", "4", "--nodes", "2"], 2.0),
])
def test_the_default_placement_is_the_profiles_own_host(model, capsys, extra, seconds):
    assert predicted(capsys, model, "-n", "8", "--machine", "default", *extra) == seconds


def test_machine_specs_take_cores_and_wait(model, capsys):
    spec = "constant:latency=1us,ppn=4,cores=2,wait=sleep"
    assert predicted(capsys, model, "-n", "4", "--machine", spec) == 2.0
    assert main(["predict", model, "-n", "4", "--machine", "constant:latency=1us,wait=spin"]) == 2
    assert "wait must be one of poll, sleep, got 'spin'" in capsys.readouterr().err


def test_machine_new_records_cores_for_predict(model, tmp_path, capsys):
    out = tmp_path / "m.db"
    assert main(["machine", "new", "-o", str(out), "--latency", "2us", "--bandwidth", "1GB/s",
                 "--placements", "1x2", "--samples", "20", "--cores", "1"]) == 0
    capsys.readouterr()
    # a one-node profile: 3 ranks on its single core
    assert predicted(capsys, model, "-n", "3", "--machine", str(out)) == 3.0
